// The Bluesky connector against a real PDS (@atproto/pds with an in-memory PLC, test/harness/pds.ts):
// sessions, blobs, records, validation and rate limits are the PDS's own. Only what a local PDS
// cannot do is stubbed: the video service (video.bsky.app) and failures on demand (502, a hang).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { createBlueskyConnector, MAX_IMAGE_BYTES, retryAfter, rkeyFor, type BlueskyConnectorOptions } from '../platforms/bluesky.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { createOutboundFetch } from '../lib/outbound.ts';
import { LOCAL_PDS_CONNECTOR, pds, publishRequest, stopPds, type TestAccount, type TestPds } from './harness/pds.ts';
import { perTestServer } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

let p: TestPds;
beforeAll(async () => {
  p = await pds();
}, 120_000);
afterAll(stopPds);

const serve = perTestServer();

const connector = (over: BlueskyConnectorOptions = {}) => createBlueskyConnector({ ...LOCAL_PDS_CONNECTOR, ...over });
const request = (acct: TestAccount, over: Partial<PublishRequest> = {}) => publishRequest(p, acct, over);

function media(id: string, type: MediaRef['type'], mimeType: string, bytes: Uint8Array, altText: string | null = null): MediaRef {
  return { id, type, mimeType, fileName: `${id}.${mimeType.split('/')[1]}`, altText, read: async () => bytes };
}

const png = async (width: number, height: number, background = '#f00') =>
  new Uint8Array(
    await sharp({ create: { width, height, channels: 3, background } })
      .png()
      .toBuffer(),
  );

/** A few bytes with an MP4 `ftyp` header; the PDS stores blobs without decoding them. */
const mp4 = (size = 64) => {
  const b = new Uint8Array(size);
  b.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]);
  return b;
};

async function getRecord(did: string, rkey: string) {
  const r = await p.xrpc('GET', 'com.atproto.repo.getRecord', { params: { repo: did, collection: 'app.bsky.feed.post', rkey } });
  expect(r.status).toBe(200);
  return r.body as { uri: string; value: Record<string, any> };
}

async function posts(did: string): Promise<{ uri: string; value: Record<string, any> }[]> {
  const r = await p.xrpc('GET', 'com.atproto.repo.listRecords', { params: { repo: did, collection: 'app.bsky.feed.post', limit: '100' } });
  expect(r.status).toBe(200);
  return r.body.records;
}

async function blobs(did: string): Promise<string[]> {
  const r = await p.xrpc('GET', 'com.atproto.sync.listBlobs', { params: { did } });
  expect(r.status).toBe(200);
  return r.body.cids;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('Bluesky publish (real PDS)', () => {
  test('text with a link, a hashtag and mentions: facets at UTF-8 byte offsets, url on bsky.app', async () => {
    const acct = await p.newAccount('text');
    const friend = await p.newAccount('friend');
    const url = 'https://example.com/launch?x=1';
    const text = `Grüße 👋🏽 read ${url} #ship it, @${friend.handle} and @nobody-here.test`;
    const req = request(acct, { text });
    const result = await connector().publish(req);

    const rkey = rkeyFor(req.idempotencyKey);
    expect(result.platformPostId).toBe(`at://${acct.did}/app.bsky.feed.post/${rkey}`);
    expect(result.url).toBe(`https://bsky.app/profile/${acct.handle}/post/${rkey}`);
    expect(Date.parse(result.publishedAt!)).toBeGreaterThan(Date.now() - 60_000);

    const { value } = await getRecord(acct.did, rkey);
    expect(value.text).toBe(text);
    expect(value.createdAt).toBe(result.publishedAt);
    const at = (s: string) => bytes(text.slice(0, text.indexOf(s)));
    const mention = `@${friend.handle}`;
    expect(value.facets).toEqual([
      { index: { byteStart: at(url), byteEnd: at(url) + bytes(url) }, features: [{ $type: 'app.bsky.richtext.facet#link', uri: url }] },
      { index: { byteStart: at('#ship'), byteEnd: at('#ship') + 5 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'ship' }] },
      {
        $type: 'app.bsky.richtext.facet',
        index: { byteStart: at(mention), byteEnd: at(mention) + bytes(mention) },
        features: [{ $type: 'app.bsky.richtext.facet#mention', did: friend.did }],
      },
    ]);
    // The multi-byte text before the link is what makes byte and character offsets differ.
    expect(at(url)).toBeGreaterThan(text.indexOf(url));
  });

  test('plain text without facets has no facets field', async () => {
    const acct = await p.newAccount('plain');
    const req = request(acct, { text: 'Nothing to link here' });
    await connector().publish(req);
    const { value } = await getRecord(acct.did, rkeyFor(req.idempotencyKey));
    expect(value).toEqual({ $type: 'app.bsky.feed.post', text: 'Nothing to link here', createdAt: expect.any(String) });
  });

  test('two images: blobs uploaded, alt text and aspect ratio in the embed read back from the PDS', async () => {
    const acct = await p.newAccount('images');
    const a = await png(16, 9, '#f00');
    const b = await png(8, 8, '#00f');
    const req = request(acct, {
      text: 'Two pictures',
      media: [media('img-a', 'image', 'image/png', a, 'A red banner'), media('img-b', 'image', 'image/png', b, 'A blue square')],
    });
    await connector().publish(req);

    const { value } = await getRecord(acct.did, rkeyFor(req.idempotencyKey));
    expect(value.embed.$type).toBe('app.bsky.embed.images');
    expect(value.embed.images).toEqual([
      {
        alt: 'A red banner',
        aspectRatio: { width: 16, height: 9 },
        image: { $type: 'blob', ref: { $link: expect.any(String) }, mimeType: 'image/png', size: a.byteLength },
      },
      {
        alt: 'A blue square',
        aspectRatio: { width: 8, height: 8 },
        image: { $type: 'blob', ref: { $link: expect.any(String) }, mimeType: 'image/png', size: b.byteLength },
      },
    ]);
    const stored = await blobs(acct.did);
    expect(stored.sort()).toEqual(value.embed.images.map((i: any) => i.image.ref.$link).sort());
  });

  test('an image over 2,000,000 bytes (the embed lexicon limit) is re-encoded as JPEG under it', async () => {
    const acct = await p.newAccount('bigimg');
    const noise = new Uint8Array(1000 * 800 * 3);
    crypto.getRandomValues(noise.subarray(0, 65_536));
    for (let i = 65_536; i < noise.length; i += 65_536) noise.copyWithin(i, 0, Math.min(65_536, noise.length - i));
    for (let i = 0; i < noise.length; i += 7) noise[i] = (i * 31) & 0xff;
    const big = new Uint8Array(
      await sharp(noise, { raw: { width: 1000, height: 800, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer(),
    );
    expect(big.byteLength).toBeGreaterThan(MAX_IMAGE_BYTES);

    const req = request(acct, { text: 'Big one', media: [media('big', 'image', 'image/png', big, 'Noise')] });
    await connector().publish(req);
    const { value } = await getRecord(acct.did, rkeyFor(req.idempotencyKey));
    const [img] = value.embed.images;
    expect(img.image.mimeType).toBe('image/jpeg');
    expect(img.image.size).toBeLessThanOrEqual(MAX_IMAGE_BYTES);
    expect(img.aspectRatio).toEqual({ width: 1000, height: 800 });
  });

  test('a video as a plain blob on the PDS (no video service): app.bsky.embed.video with alt', async () => {
    const acct = await p.newAccount('video');
    const clip = mp4();
    const req = request(acct, { text: 'A clip', media: [media('clip', 'video', 'video/mp4', clip, 'Waves')] });
    await connector().publish(req);
    const { value } = await getRecord(acct.did, rkeyFor(req.idempotencyKey));
    expect(value.embed).toEqual({
      $type: 'app.bsky.embed.video',
      alt: 'Waves',
      video: { $type: 'blob', ref: { $link: expect.any(String) }, mimeType: 'video/mp4', size: clip.byteLength },
    });
  });

  test('a video through the video service: service auth from the PDS, job polled until the blob is there', async () => {
    const acct = await p.newAccount('vsvc');
    const svc = videoService(p.url);
    const req = request(acct, { text: 'Processed clip', media: [media('clip', 'video', 'video/mp4', mp4(128), null)] });
    await connector({ videoServiceUrl: svc.url }).publish(req);

    expect(svc.uploads).toHaveLength(1);
    // The service stored the video on the PDS with the token the connector got from it.
    expect(svc.uploads[0]).toMatchObject({ did: acct.did, name: 'clip.mp4', contentType: 'video/mp4', pdsStatus: 200, size: 128 });
    expect(svc.statusPolls).toBe(2);
    const { value } = await getRecord(acct.did, rkeyFor(req.idempotencyKey));
    expect(value.embed).toEqual({
      $type: 'app.bsky.embed.video',
      video: { $type: 'blob', ref: { $link: svc.uploads[0]!.cid }, mimeType: 'video/mp4', size: 128 },
    });
  });

  test('a failed video job → permanent with the service message; no post', async () => {
    const acct = await p.newAccount('vfail');
    const svc = videoService(p.url, { fail: true });
    const err = await failure(
      connector({ videoServiceUrl: svc.url }).publish(request(acct, { media: [media('clip', 'video', 'video/mp4', mp4(), null)] })),
    );
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Bluesky video processing failed: Video is too long');
    expect(err.opts.platformCode).toBe('validation_failure');
    expect(await posts(acct.did)).toHaveLength(0);
  });

  test('300 graphemes of multi-code-point emoji are within the limit', async () => {
    const acct = await p.newAccount('emoji');
    const text = '👍🏽'.repeat(300);
    const req = request(acct, { text });
    await connector().publish(req);
    expect((await getRecord(acct.did, rkeyFor(req.idempotencyKey))).value.text).toBe(text);
  });
});

describe('Bluesky replies (real PDS)', () => {
  test('a reply names its root and parent by URI and CID, as the PDS stores them', async () => {
    const acct = await p.newAccount('reply');
    const c = connector();
    const root = await c.publish(request(acct, { text: 'root' }));
    const child = await c.publish(request(acct, { text: 'child', replyTo: { root, parent: root } }));
    const grandchild = await c.publish(request(acct, { text: 'grandchild', replyTo: { root, parent: child } }));
    const record = async (uri: string) => {
      const [, , repo, collection, rkey] = uri.split('/');
      const r = await p.xrpc('GET', 'com.atproto.repo.getRecord', { params: { repo: repo!, collection: collection!, rkey: rkey! } });
      return r.body as { uri: string; cid: string; value: any };
    };
    const [r0, r1, r2] = await Promise.all([root, child, grandchild].map((x) => record(x.platformPostId)));
    expect(r1!.value.reply).toEqual({ root: { uri: r0!.uri, cid: r0!.cid }, parent: { uri: r0!.uri, cid: r0!.cid } });
    expect(r2!.value.reply).toEqual({ root: { uri: r0!.uri, cid: r0!.cid }, parent: { uri: r1!.uri, cid: r1!.cid } });
  });

  test('a reply to a post that is not there → permanent, nothing written', async () => {
    const acct = await p.newAccount('orphan');
    const gone = { platformPostId: `at://${acct.did}/app.bsky.feed.post/3kabcdefghij2`, url: 'https://bsky.app/x' };
    const err = await failure(connector().publish(request(acct, { text: 'orphan', replyTo: { root: gone, parent: gone } })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('is not there');
    const listed = await p.xrpc('GET', 'com.atproto.repo.listRecords', { params: { repo: acct.did, collection: 'app.bsky.feed.post' } });
    expect(listed.body.records).toEqual([]);
  });
});

describe('Bluesky never posts twice', () => {
  test('the same idempotency key twice → one record, the same result', async () => {
    const acct = await p.newAccount('idem');
    const c = connector();
    const req = request(acct);
    const first = await c.publish(req);
    const second = await c.publish({ ...req, attempt: 2 });
    expect(second.platformPostId).toBe(first.platformPostId);
    expect(second.url).toBe(first.url);
    expect(second.publishedAt).toBe(first.publishedAt!);
    expect(await posts(acct.did)).toHaveLength(1);

    await c.publish(request(acct, { idempotencyKey: 'another-post:channel-1' }));
    expect(await posts(acct.did)).toHaveLength(2);
  });

  test('an answer lost after the PDS wrote the post: findPublished finds it, publish does not repeat it', async () => {
    const acct = await p.newAccount('lost');
    let lose = true;
    const losingFetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      if (lose && String(input instanceof Request ? input.url : input).includes('com.atproto.repo.createRecord')) {
        lose = false;
        throw new TypeError('socket hang up');
      }
      return res;
    }) as typeof fetch;
    const c = connector({ fetch: losingFetch });
    const req = request(acct, { text: 'Sent once' });

    const err = await failure(c.publish(req));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('socket hang up');
    expect(await posts(acct.did)).toHaveLength(1);

    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toEqual({
      platformPostId: `at://${acct.did}/app.bsky.feed.post/${rkeyFor(req.idempotencyKey)}`,
      url: `https://bsky.app/profile/${acct.handle}/post/${rkeyFor(req.idempotencyKey)}`,
      publishedAt: expect.any(String),
    });
    // Without the look-up, a second create under the same key is refused and answered with the first post.
    expect(await c.publish({ ...req, attempt: 2 })).toEqual(found!);
    expect(await posts(acct.did)).toHaveLength(1);
  });

  test('findPublished → null when the post is not there', async () => {
    const acct = await p.newAccount('notyet');
    expect(await connector().findPublished!(request(acct, { attempt: 2 }))).toBeNull();
  });

  test('sessions are reused: a later publish refreshes the session instead of logging in again', async () => {
    const acct = await p.newAccount('reuse');
    const paths: string[] = [];
    const c = connector({ fetch: recording(paths) });
    await c.publish(request(acct));
    await c.findPublished!(request(acct, { attempt: 2 }));
    await c.publish(request(acct));
    const count = (nsid: string) => paths.filter((x) => x === `/xrpc/${nsid}`).length;
    expect(count('com.atproto.server.createSession')).toBe(1);
    expect(count('com.atproto.server.refreshSession')).toBe(2);
    expect(await posts(acct.did)).toHaveLength(2);
  });

  test('a revoked app password: the kept session is refused, so is a new login → reauth', async () => {
    const acct = await p.newAccount('revoked');
    const c = connector();
    await c.publish(request(acct));
    await p.revokeAppPassword(acct);
    const err = await failure(c.publish(request(acct)));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Bluesky 401: Invalid identifier or password');
    expect(await posts(acct.did)).toHaveLength(1);
  });

  test('record keys: valid TIDs, stable per idempotency key, distinct across keys, dated in the past', () => {
    const a = rkeyFor('post-1:channel-1');
    expect(a).toMatch(/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/);
    expect(rkeyFor('post-1:channel-1')).toBe(a);
    const many = new Set(Array.from({ length: 2000 }, (_, i) => rkeyFor(`post-${i}:channel-1`)));
    expect(many.size).toBe(2000);
    for (const k of many) {
      let v = 0n;
      for (const ch of k) v = (v << 5n) | BigInt('234567abcdefghijklmnopqrstuvwxyz'.indexOf(ch));
      const ms = Number(v >> 10n) / 1000;
      expect(ms).toBeGreaterThanOrEqual(Date.UTC(2024, 0, 1));
      expect(ms).toBeLessThan(Date.now());
    }
  });
});

describe("Bluesky service address and error text (the service is the tenant's choice)", () => {
  test('a service on a loopback address → permanent (not reauth), nothing sent', async () => {
    const acct = await p.newAccount('loopback');
    const paths: string[] = [];
    const err = await failure(connector({ fetch: recording(paths), outbound: { allowPrivate: false } }).publish(request(acct)));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('outbound_refused');
    expect(err.message).toStartWith(`Bluesky service refused: ${new URL(p.url).host} resolves to 127.0.0.1, which is a loopback address`);
    expect(paths).toEqual([]);
  });

  test("the PDS that the account's DID document names is checked too, not only the service URL", async () => {
    const acct = await p.newAccount('didpds');
    const port = new URL(p.url).port;
    const dialled: string[] = [];
    // The service is a "public" entryway (93.184.216.34, relayed here to the local PDS) that, like
    // bsky.social, answers createSession with the account's DID document; the agent then
    // switches to the PDS that document names: http://localhost:<port>.
    const relay = (async (input: string | URL | Request, init?: RequestInit) => {
      const u = new URL(input instanceof Request ? input.url : String(input));
      dialled.push(`${u.hostname} ${u.pathname}`);
      if (u.hostname === '93.184.216.34') u.hostname = '127.0.0.1';
      const res = await fetch(u, init);
      if (!u.pathname.endsWith('/com.atproto.server.createSession') || res.status !== 200) return res;
      const session = (await res.json()) as { did: string; handle: string };
      const didDoc = {
        '@context': ['https://www.w3.org/ns/did/v1'],
        id: session.did,
        alsoKnownAs: [`at://${session.handle}`],
        service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: `http://localhost:${port}` }],
      };
      return Response.json({ ...session, didDoc });
    }) as typeof fetch;
    const resolve = async (name: string) => (name === 'entryway.invalid' ? ['93.184.216.34'] : ['127.0.0.1']);
    const c = connector({ fetch: relay, outbound: { allowPrivate: false, resolve } });
    const err = await failure(
      c.publish(
        request(acct, {
          credentials: { service: `http://entryway.invalid:${port}`, identifier: acct.handle, appPassword: acct.appPassword },
        }),
      ),
    );
    expect(dialled).toEqual(['93.184.216.34 /xrpc/com.atproto.server.createSession']);
    expect([err.kind, err.opts.platformCode]).toEqual(['permanent', 'outbound_refused']);
    expect(err.message).toContain(`localhost:${port} resolves to 127.0.0.1, which is a loopback address`);
    expect(await posts(acct.did)).toHaveLength(0);
  });

  test('an answer that is not XRPC is never quoted', async () => {
    const acct = await p.newAccount('notxrpc');
    const answers: [number, string, string][] = [
      [200, 'internalsecret7f3a', 'application/json'],
      [404, '<html>internalsecret7f3a</html>', 'text/html'],
      [400, 'internalsecret7f3a', 'text/plain'],
    ];
    for (const [status, body, type] of answers) {
      const stub = (async () => new Response(body, { status, headers: { 'Content-Type': type } })) as unknown as typeof fetch;
      const err = await failure(connector({ fetch: stub }).publish(request(acct)));
      expect(err.message).not.toContain('internalsecret');
    }
  });
});

describe('Bluesky error classes', () => {
  test('wrong app password → reauth with the PDS message', async () => {
    const acct = await p.newAccount('wrongpw');
    const err = await failure(
      connector().publish(request(acct, { credentials: { service: p.url, identifier: acct.handle, appPassword: 'aaaa-bbbb-cccc-dddd' } })),
    );
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Bluesky 401: Invalid identifier or password');
    expect(err.opts).toMatchObject({ status: 401, platformCode: 'AuthenticationRequired' });
  });

  test('unknown account (identifier by DID) → reauth', async () => {
    const acct = await p.newAccount('ghost');
    const err = await failure(
      connector().publish(
        request(acct, { credentials: { service: p.url, identifier: 'did:plc:aaaaaaaaaaaaaaaaaaaaaaaa', appPassword: acct.appPassword } }),
      ),
    );
    expect(err.kind).toBe('reauth');
  });

  test('missing credentials → reauth before any request', async () => {
    const acct = await p.newAccount('nocreds');
    const err = await failure(connector().publish(request(acct, { credentials: { service: p.url, identifier: acct.handle } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toContain('appPassword');
  });

  test('taken-down account → reauth', async () => {
    const acct = await p.newAccount('takedown');
    await p.takedown(acct.did);
    const err = await failure(connector().publish(request(acct)));
    expect(err.kind).toBe('reauth');
    expect(err.opts.status).toBe(401);
  });

  test('deactivated account → reauth, nothing uploaded', async () => {
    const acct = await p.newAccount('deact');
    await p.deactivate(acct);
    const paths: string[] = [];
    const err = await failure(
      connector({ fetch: recording(paths) }).publish(request(acct, { media: [media('a', 'image', 'image/png', await png(4, 4))] })),
    );
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe(`Bluesky account ${acct.handle} is deactivated`);
    expect(paths).toEqual(['/xrpc/com.atproto.server.createSession']);
  });

  test('text over 300 graphemes → permanent, rejected by the PDS with its message', async () => {
    const acct = await p.newAccount('toolong');
    const err = await failure(connector().publish(request(acct, { text: 'a'.repeat(301) })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Bluesky 400: Invalid app.bsky.feed.post record: grapheme too big (maximum 300, got 301) at $.record.text');
    expect(err.opts).toMatchObject({ status: 400, platformCode: 'InvalidRequest' });
    expect(await posts(acct.did)).toHaveLength(0);
  });

  test('a blob over the PDS upload limit → permanent (413 from the PDS)', async () => {
    const acct = await p.newAccount('hugeblob');
    const err = await failure(connector().publish(request(acct, { media: [media('huge', 'video', 'video/mp4', mp4(6 * 1024 * 1024))] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Bluesky 413: request entity too large');
    expect(err.opts).toMatchObject({ status: 413, platformCode: 'PayloadTooLarge' });
  });

  test('media Bluesky cannot carry → permanent before any request', async () => {
    const acct = await p.newAccount('badmedia');
    const img = media('i', 'image', 'image/png', await png(4, 4));
    const cases: [MediaRef[], string][] = [
      [[media('d', 'document', 'application/pdf', new Uint8Array(4))], 'Bluesky cannot attach document files (d.pdf)'],
      [[img, img, img, img, img], 'Bluesky posts carry at most 4 images (got 5)'],
      [[media('v', 'video', 'video/mp4', mp4()), img], 'Bluesky posts carry one video and nothing else'],
    ];
    let requests = 0;
    const counting = ((input: string | URL | Request, init?: RequestInit) => (requests++, fetch(input, init))) as typeof fetch;
    for (const [m, message] of cases) {
      const err = await failure(connector({ fetch: counting }).publish(request(acct, { media: m })));
      expect([err.kind, err.message]).toEqual(['permanent', message]);
    }
    expect(requests).toBe(0);
  });

  test('createSession rate limit (429 from the PDS) → transient with retryAfterMs from its headers', async () => {
    const acct = await p.newAccount('ratelimit');
    // The PDS allows 30 sessions per account and client address in 5 minutes; spend them, as a
    // busy client would, from the address the connector connects from (its outbound guard
    // resolves "localhost" to 127.0.0.1, where a plain fetch may use ::1).
    const guarded = createOutboundFetch({ allowPrivate: true });
    for (let i = 0; i < 30; i++) {
      const r = await guarded(new URL('/xrpc/com.atproto.server.createSession', p.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ identifier: acct.handle, password: acct.appPassword }),
      });
      expect(r.status).toBe(200);
    }
    const err = await failure(connector().publish(request(acct)));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Bluesky 429: Rate Limit Exceeded');
    expect(err.opts.status).toBe(429);
    expect(err.opts.platformCode).toBe('RateLimitExceeded');
    expect(err.opts.retryAfterMs).toBeGreaterThan(200_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(300_000);
  });

  test('429 with only RateLimit-Reset (epoch seconds) → retryAfterMs until then (stub fetch)', async () => {
    const reset = Math.floor(Date.now() / 1000) + 42;
    const stub = xrpcStub(429, { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' }, { 'RateLimit-Reset': String(reset) });
    const err = await failure(connector({ fetch: stub }).publish(request(await p.newAccount('reset'))));
    expect(err.kind).toBe('transient');
    expect(err.opts.retryAfterMs).toBeGreaterThan(40_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(42_000);

    expect(retryAfter(new Headers({ 'retry-after': '7', 'ratelimit-reset': String(reset) }))).toBe(7_000);
    expect(retryAfter(new Headers())).toBeUndefined();
  });

  test('5xx (502 UpstreamFailure) → transient with the message', async () => {
    const stub = xrpcStub(502, { error: 'UpstreamFailure', message: 'Upstream Failure' });
    const err = await failure(connector({ fetch: stub }).publish(request(await p.newAccount('fivexx'))));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Bluesky 502: Upstream Failure');
    expect(err.opts.platformCode).toBe('UpstreamFailure');
  });

  test('session errors by XRPC name (stub fetch): expired/invalid token, takedown → reauth; 503 → transient', async () => {
    const acct = await p.newAccount('codes');
    const cases: [number, string, string, string][] = [
      [400, 'ExpiredToken', 'Token has expired', 'reauth'],
      [400, 'InvalidToken', 'Bad token scope', 'reauth'],
      [401, 'AccountTakedown', 'Account has been taken down', 'reauth'],
      [400, 'InvalidRequest', 'Error: identifier must be a handle or did', 'reauth'],
      [503, 'NotEnoughResources', 'Not Enough Resources', 'transient'],
    ];
    for (const [status, error, message, kind] of cases) {
      const err = await failure(connector({ fetch: xrpcStub(status, { error, message }) }).publish(request(acct)));
      expect([err.kind, err.message, err.opts.platformCode]).toEqual([kind, `Bluesky ${status}: ${message}`, error]);
    }
  });

  test('caller abort (req.signal) → transient', async () => {
    const acct = await p.newAccount('abort');
    const hanging = serve(() => new Promise<Response>(() => {}));
    const creds = { service: `http://127.0.0.1:${hanging.port}`, identifier: acct.handle, appPassword: acct.appPassword };
    const err = await failure(
      connector({ timeoutMs: 10_000 }).publish(request(acct, { credentials: creds, signal: AbortSignal.timeout(100) })),
    );
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Bluesky POST /xrpc/com.atproto.server.createSession aborted');
  });

  test('PDS down (closed port) → transient', async () => {
    const acct = await p.newAccount('down');
    const closed = `http://127.0.0.1:${await freePort()}`;
    const err = await failure(
      connector().publish(request(acct, { credentials: { service: closed, identifier: acct.handle, appPassword: acct.appPassword } })),
    );
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('Bluesky POST /xrpc/com.atproto.server.createSession failed');
  });

  test('a PDS that never answers → transient after the connector timeout', async () => {
    const acct = await p.newAccount('hang');
    const hanging = serve(() => new Promise<Response>(() => {}));
    const started = Date.now();
    const err = await failure(
      connector({ timeoutMs: 300 }).publish(
        request(acct, {
          credentials: { service: `http://127.0.0.1:${hanging.port}`, identifier: acct.handle, appPassword: acct.appPassword },
        }),
      ),
    );
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Bluesky POST /xrpc/com.atproto.server.createSession timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

/** The real fetch, noting each request's path. */
function recording(paths: string[]): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  }) as typeof fetch;
}

/** A fetch that answers every XRPC call with one error (what the local PDS cannot produce on demand). */
function xrpcStub(status: number, body: unknown, headers: Record<string, string> = {}): typeof fetch {
  return (async () =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } })) as unknown as typeof fetch;
}

interface VideoUpload {
  did: string | null;
  name: string | null;
  contentType: string | null;
  size: number;
  pdsStatus: number;
  cid?: string;
}

/**
 * Stands in for video.bsky.app (app.bsky.video.uploadVideo + getJobStatus). Like the real
 * service it stores the video on the account's PDS with the caller's service-auth token, so the
 * PDS checks that token's audience and lxm.
 */
function videoService(pdsUrl: string, opts: { fail?: boolean } = {}) {
  const uploads: VideoUpload[] = [];
  const jobs = new Map<string, { did: string; blob: unknown; polls: number }>();
  let statusPolls = 0;
  const server = serve(async (req) => {
    const url = new URL(req.url);
    if (req.method === 'POST' && url.pathname === '/xrpc/app.bsky.video.uploadVideo') {
      const token = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
      if (!token) return Response.json({ error: 'AuthMissing', message: 'Authentication Required' }, { status: 401 });
      const body = new Uint8Array(await req.arrayBuffer());
      const stored = await fetch(`${pdsUrl}/xrpc/com.atproto.repo.uploadBlob`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': req.headers.get('content-type') ?? 'video/mp4' },
        body,
      });
      const blob = (await stored.json()) as { blob?: { ref: { $link: string } }; message?: string };
      const upload: VideoUpload = {
        did: url.searchParams.get('did'),
        name: url.searchParams.get('name'),
        contentType: req.headers.get('content-type'),
        size: body.byteLength,
        pdsStatus: stored.status,
        cid: blob.blob?.ref.$link,
      };
      uploads.push(upload);
      if (stored.status !== 200) return Response.json({ error: 'Unauthorized', message: blob.message }, { status: 401 });
      const jobId = `job-${uploads.length}`;
      jobs.set(jobId, { did: upload.did!, blob: blob.blob, polls: 0 });
      return Response.json({ jobId, did: upload.did, state: 'JOB_STATE_CREATED' });
    }
    if (req.method === 'GET' && url.pathname === '/xrpc/app.bsky.video.getJobStatus') {
      statusPolls++;
      const jobId = url.searchParams.get('jobId') ?? '';
      const job = jobs.get(jobId);
      if (!job) return Response.json({ error: 'InvalidRequest', message: 'job not found' }, { status: 400 });
      job.polls++;
      if (opts.fail) {
        return Response.json({
          jobStatus: { jobId, did: job.did, state: 'JOB_STATE_FAILED', error: 'Video is too long', failureCode: 'validation_failure' },
        });
      }
      if (job.polls < 2) return Response.json({ jobStatus: { jobId, did: job.did, state: 'JOB_STATE_ENCODING', progress: 50 } });
      return Response.json({ jobStatus: { jobId, did: job.did, state: 'JOB_STATE_COMPLETED', blob: job.blob } });
    }
    return Response.json({ error: 'MethodNotImplemented', message: 'Method Not Implemented' }, { status: 501 });
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    uploads,
    get statusPolls() {
      return statusPolls;
    },
  };
}
