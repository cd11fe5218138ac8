import { describe, expect, test } from 'bun:test';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { IDEMPOTENCY_KEY_TTL_MS, REPLY_NOT_FOUND, startFakeMastodon, mastodonRequest } from './fakes/mastodon.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeMastodon);

// The fakes listen on 127.0.0.1: private addresses allowed, except in the tests of the guard itself.
const connector = (timeoutMs = 2_000, allowPrivate = true) =>
  createMastodonConnector({ timeoutMs, mediaPollIntervalMs: 5, mediaPollTimeoutMs: 2_000, outbound: { allowPrivate } });

const request = mastodonRequest;

function image(id: string, altText: string): MediaRef {
  return {
    id,
    type: 'image',
    mimeType: 'image/png',
    fileName: `${id}.png`,
    altText,
    read: async () => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, id.length]),
  };
}

describe('Mastodon publish', () => {
  test('text post: creates a status with the Idempotency-Key and returns its id and url', async () => {
    const f = await fake();
    const result = await connector().publish(request(f.url));

    expect(f.statuses).toHaveLength(1);
    const s = f.statuses[0]!;
    expect(s).toMatchObject({ text: 'Hello fediverse', media_ids: [], idempotencyKey: 'post-1:channel-1', token: 'good-token' });
    expect(result).toEqual({ platformPostId: s.id, url: `${f.url}/@user/${s.id}`, publishedAt: s.created_at });
    expect(s.id).toMatch(/^\d+$/);
  });

  test('two images: uploaded with descriptions, polled until processed (202 → 206 → 200), attached', async () => {
    const f = await fake();
    const result = await connector().publish(request(f.url, { media: [image('img-a', 'A red kite'), image('img-b', 'A blue sky')] }));

    expect(f.media.map((m) => [m.fileName, m.mimeType, m.description, m.processed])).toEqual([
      ['img-a.png', 'image/png', 'A red kite', true],
      ['img-b.png', 'image/png', 'A blue sky', true],
    ]);
    expect(f.media[0]!.size).toBe(9);
    const paths = f.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toEqual([
      'POST /api/v2/media',
      `GET /api/v1/media/${f.media[0]!.id}`,
      `GET /api/v1/media/${f.media[0]!.id}`,
      'POST /api/v2/media',
      `GET /api/v1/media/${f.media[1]!.id}`,
      `GET /api/v1/media/${f.media[1]!.id}`,
      'POST /api/v1/statuses',
    ]);
    expect(f.statuses[0]!.media_ids).toEqual(f.media.map((m) => m.id));
    expect(result.platformPostId).toBe(f.statuses[0]!.id);
  });

  test('media processed at upload (200 with url) is attached without polling', async () => {
    const f = await fake({ syncMedia: true });
    await connector().publish(request(f.url, { media: [image('img-a', 'alt')] }));
    expect(f.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/v2/media', 'POST /api/v1/statuses']);
    expect(f.statuses[0]!.media_ids).toEqual([f.media[0]!.id]);
  });

  test('media still processing past mediaPollTimeoutMs → transient', async () => {
    const f = await fake({ mediaPendingPolls: 1_000 });
    const c = createMastodonConnector({ mediaPollIntervalMs: 5, mediaPollTimeoutMs: 100, outbound: { allowPrivate: true } });
    const err = await failure(c.publish(request(f.url, { media: [image('img-a', 'alt')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('still processing');
    expect(f.statuses).toHaveLength(0);
  });

  test('a cancelled publish stops polling a processing attachment → transient, no status', async () => {
    // The poll would otherwise go on for ten minutes (past the test's own limit).
    const f = await fake({ mediaPendingPolls: 100_000 });
    const c = createMastodonConnector({ mediaPollIntervalMs: 20, mediaPollTimeoutMs: 600_000, outbound: { allowPrivate: true } });
    const cancel = new AbortController();
    const polled = new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (!f.requests.some((r) => r.path.startsWith('/api/v1/media/'))) return;
        clearInterval(t);
        resolve();
      }, 5);
    });
    const publishing = failure(c.publish(request(f.url, { media: [image('img-a', 'alt')], signal: cancel.signal })));
    await polled;
    cancel.abort();
    const err = await publishing;
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('aborted');
    const polls = f.requests.length;
    // No event shows a loop left behind: a bound does. One that went on would ask every 20 ms, so
    // a second is fifty of its polls (each a loopback round trip to the fake in this process).
    await Bun.sleep(1000);
    expect(f.requests.length).toBe(polls);
    expect(f.statuses).toHaveLength(0);
  });

  test('the same idempotency key twice → one status on the instance, same result', async () => {
    const f = await fake();
    const c = connector();
    const first = await c.publish(request(f.url));
    const second = await c.publish(request(f.url));
    expect(f.statuses).toHaveLength(1);
    expect(second).toEqual(first);
    expect(f.requests.filter((r) => r.path === '/api/v1/statuses').map((r) => r.idempotencyKey)).toEqual([
      'post-1:channel-1',
      'post-1:channel-1',
    ]);

    await c.publish(request(f.url, { idempotencyKey: 'post-2:channel-1' }));
    expect(f.statuses).toHaveLength(2);
  });

  test('a hang then a retry with the same key posts once', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const c = connector(300);
    expect((await failure(c.publish(request(f.url)))).kind).toBe('transient');
    await c.publish(request(f.url));
    expect(f.statuses).toHaveLength(1);
  });
});

describe('Mastodon error classes', () => {
  test('invalid token (401) → reauth with Mastodon message', async () => {
    const f = await fake();
    const err = await failure(connector().publish(request(f.url, { credentials: { instanceUrl: f.url, accessToken: 'revoked' } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts.status).toBe(401);
    expect(err.message).toBe('Mastodon 401: The access token is invalid');
    expect(f.statuses).toHaveLength(0);
  });

  test('invalid token on media upload → reauth before any status', async () => {
    const f = await fake();
    f.validTokens.clear();
    const err = await failure(connector().publish(request(f.url, { media: [image('img-a', 'alt')] })));
    expect(err.kind).toBe('reauth');
    expect(f.requests.map((r) => r.path)).toEqual(['/api/v2/media']);
  });

  test('403 (scope missing) → reauth', async () => {
    const f = await fake();
    f.failNext(1, { status: 403, body: { error: 'This action is outside the authorized scopes' } });
    const err = await failure(connector().publish(request(f.url)));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Mastodon 403: This action is outside the authorized scopes');
  });

  test('over the character limit (422) → permanent with Mastodon message', async () => {
    const f = await fake({ maxCharacters: 500 });
    const err = await failure(connector().publish(request(f.url, { text: 'x'.repeat(501) })));
    expect(err.kind).toBe('permanent');
    expect(err.opts.status).toBe(422);
    expect(err.message).toBe('Mastodon 422: Validation failed: Text character limit of 500 exceeded');
    expect(f.statuses).toHaveLength(0);
  });

  test('429 with Retry-After: 7 → transient, retryAfterMs 7000', async () => {
    const f = await fake();
    f.failNext(1, { status: 429, body: { error: 'Too many requests' }, headers: { 'Retry-After': '7' } });
    const err = await failure(connector().publish(request(f.url)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(err.message).toBe('Mastodon 429: Too many requests');
  });

  test('429 with only X-RateLimit-Reset (ISO 8601, as Mastodon sends it) → retryAfterMs until then', async () => {
    const f = await fake();
    const reset = new Date(Date.now() + 60_000).toISOString();
    f.failNext(1, { status: 429, body: { error: 'Too many requests' }, headers: { 'X-RateLimit-Reset': reset } });
    const err = await failure(connector().publish(request(f.url)));
    expect(err.kind).toBe('transient');
    expect(err.opts.retryAfterMs).toBeGreaterThan(55_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  test('503 → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: { error: 'Temporary problem' } });
    const err = await failure(connector().publish(request(f.url)));
    expect(err.kind).toBe('transient');
    expect(err.opts.status).toBe(503);
    expect(err.message).toBe('Mastodon 503: Temporary problem');
  });

  test('hang → transient after the connector timeout', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const started = Date.now();
    const err = await failure(connector(300).publish(request(f.url)));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('caller abort (req.signal) → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(10_000).publish(request(f.url, { signal: AbortSignal.timeout(100) })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('aborted');
  });

  test('network error (stopped instance, closed port) → transient', async () => {
    const f = await startFakeMastodon();
    await f.stop();
    const err = await failure(connector().publish(request(f.url)));
    expect(err.kind).toBe('transient');

    const closed = `http://127.0.0.1:${await freePort()}`;
    expect((await failure(connector().publish(request(closed)))).kind).toBe('transient');
  });
});

describe('Mastodon account limits', () => {
  test('reads configuration.statuses.max_characters and characters_reserved_per_url from /api/v2/instance', async () => {
    const f = await fake({ maxCharacters: 1000, charactersReservedPerUrl: 30 });
    expect(await connector().accountLimits!({ instanceUrl: f.url, accessToken: 'good-token' })).toEqual({
      maxChars: 1000,
      charactersReservedPerUrl: 30,
    });
    expect(f.requests.map((r) => r.path)).toEqual(['/api/v2/instance']);
  });

  test('falls back to /api/v1/instance when v2 is missing', async () => {
    const f = await fake({ maxCharacters: 700, v2Instance: false });
    expect(await connector().accountLimits!({ instanceUrl: `${f.url}/` })).toEqual({ maxChars: 700, charactersReservedPerUrl: 23 });
    expect(f.requests.map((r) => r.path)).toEqual(['/api/v2/instance', '/api/v1/instance']);
  });

  test('v1 fallback reads max_toot_chars on forks', async () => {
    const f = await fake({ maxCharacters: 5000, v2Instance: false, v1MaxTootChars: true });
    expect(await connector().accountLimits!({ instanceUrl: f.url })).toEqual({ maxChars: 5000 });
  });

  test('unreachable instance → transient', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect((await failure(connector().accountLimits!({ instanceUrl: closed }))).kind).toBe('transient');
  });
});

describe("Mastodon instance address and error text (the instance is the tenant's choice)", () => {
  test('an instance on a loopback address → permanent, nothing sent; publish and account limits alike', async () => {
    const f = await fake();
    const err = await failure(connector(2_000, false).publish(request(f.url)));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('outbound_refused');
    expect(err.message).toStartWith(`Mastodon instanceUrl refused: ${new URL(f.url).host} is a loopback address`);
    const limits = await failure(connector(2_000, false).accountLimits!({ instanceUrl: f.url }));
    expect([limits.kind, limits.opts.platformCode]).toEqual(['permanent', 'outbound_refused']);
    expect(f.requests).toHaveLength(0);
  });

  test('a redirect is not followed → permanent with the target origin', async () => {
    const f = await fake();
    const redirecting = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response(null, { status: 308, headers: { Location: `${f.url}/api/v1/statuses` } }),
    });
    try {
      const err = await failure(connector().publish(request(`http://127.0.0.1:${redirecting.port}`)));
      expect(err.kind).toBe('permanent');
      expect(err.message).toContain(`answered 308 with a redirect to ${f.url}; redirects are not followed`);
      expect(f.requests).toHaveLength(0);
    } finally {
      redirecting.stop(true);
    }
  });

  test("answers that are not Mastodon's error shape are never copied: only `error` / `error_description`", async () => {
    // What a channel pointed at some other service sees: the API's own 404 body, a text page, an internal JSON answer.
    const bodies: [number, string, string][] = [
      [404, JSON.stringify({ error: { code: 'not_found', message: 'Route GET /api/v1/statuses not found' } }), 'application/json'],
      [404, 'internal-secret-7f3a: no such route', 'text/plain'],
      [400, JSON.stringify({ message: 'internal-secret-7f3a', detail: 'internal-secret-7f3a' }), 'application/json'],
      [200, JSON.stringify({ ok: true, secret: 'internal-secret-7f3a' }), 'application/json'],
    ];
    for (const [status, body, type] of bodies) {
      const other = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: () => new Response(body, { status, headers: { 'Content-Type': type } }),
      });
      try {
        const err = await failure(connector().publish(request(`http://127.0.0.1:${other.port}`)));
        expect(err.message).not.toContain('internal-secret');
        expect(err.message).not.toContain('not_found');
        expect(err.message).toBe(
          status === 200 ? 'Mastodon answered 200 without a status id and URL' : `Mastodon ${status}: HTTP ${status}`,
        );
      } finally {
        other.stop(true);
      }
    }
    // Mastodon's own error entity still comes through.
    const f = await fake();
    f.failNext(1, {
      status: 422,
      body: { error: 'Validation failed: Text character limit of 500 exceeded', error_description: 'too long' },
    });
    expect((await failure(connector().publish(request(f.url)))).message).toBe(
      'Mastodon 422: Validation failed: Text character limit of 500 exceeded: too long',
    );
  });
});

/** What publishToChannel does on a later attempt (activities/posts.ts send): look the status up, send only if it is not there. */
async function retryAsTheActivityDoes(c: ReturnType<typeof connector>, req: PublishRequest) {
  return ((req.attempt ?? 1) > 1 && c.findPublished ? await c.findPublished(req) : null) ?? (await c.publish(req));
}

describe('Mastodon lost answer, retried after its Idempotency-Key expired', () => {
  test('answer lost, retry 2 h later (key expired): the look-up finds the status, one status, no second send', async () => {
    const f = await fake();
    const c = connector(500);
    const text = `lost answer ${crypto.randomUUID()}`;
    // Another status of the account's, so the look-up has to pick.
    await c.publish(request(f.url, { text: 'an older status', idempotencyKey: 'post-0:channel-1' }));
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(request(f.url, { text })))).kind).toBe('transient');
    expect(f.statuses.filter((s) => s.text === text)).toHaveLength(1);

    f.advance(2 * 60 * 60 * 1000);
    const result = await retryAsTheActivityDoes(c, request(f.url, { text, attempt: 2 }));

    const mine = f.statuses.filter((s) => s.text === text);
    expect(mine).toHaveLength(1);
    expect(result).toEqual({ platformPostId: mine[0]!.id, url: mine[0]!.url, publishedAt: mine[0]!.created_at });
    expect(f.sends.filter((s) => s.text === text)).toHaveLength(1);
  });

  test("within the key's hour the retry relies on the key, not the look-up: two channels of one account, the same text, each its own status", async () => {
    const f = await fake();
    const c = connector(500);
    const text = `same text ${crypto.randomUUID()}`;
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(request(f.url, { text, idempotencyKey: 'post-1:channel-b' })))).kind).toBe('transient');
    // The other channel's status is the newest with this text: a look-up would take it.
    const a = await c.publish(request(f.url, { text, idempotencyKey: 'post-1:channel-a' }));
    const b = await retryAsTheActivityDoes(
      c,
      request(f.url, { text, idempotencyKey: 'post-1:channel-b', attempt: 2, firstAttemptAt: new Date() }),
    );
    expect(b.platformPostId).not.toBe(a.platformPostId);
    expect(f.statuses.filter((s) => s.text === text)).toHaveLength(2);
  });

  test('the look-up finds nothing (the lost attempt never reached the instance): the retry sends, one status', async () => {
    const f = await fake();
    const c = connector(500);
    f.failNext(1, { status: 503 });
    expect((await failure(c.publish(request(f.url)))).kind).toBe('transient');
    f.advance(2 * 60 * 60 * 1000);
    await retryAsTheActivityDoes(c, request(f.url, { attempt: 2 }));
    expect(f.statuses).toHaveLength(1);
  });
});

describe('Mastodon replies', () => {
  test('a reply names its parent: POST /api/v1/statuses with in_reply_to_id and the item’s Idempotency-Key', async () => {
    const f = await fake();
    const c = connector();
    const first = await c.publish(request(f.url, { text: 'The first post' }));
    const reply = await c.publish(
      request(f.url, { text: 'The second item', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: first, parent: first } }),
    );

    const s = f.statuses.find((x) => x.id === reply.platformPostId)!;
    expect(s).toMatchObject({ text: 'The second item', in_reply_to_id: first.platformPostId, idempotencyKey: 'post-1:channel-1:2' });
    const shown = await fetch(`${f.url}/api/v1/statuses/${s.id}`, { headers: { Authorization: 'Bearer good-token' } });
    expect(await shown.json()).toMatchObject({ in_reply_to_id: first.platformPostId, in_reply_to_account_id: '1' });
    expect(f.statuses[0]!.replies_count).toBe(1);
  });

  test('a reply to a status the instance does not have → 404 permanent with Mastodon message, no status', async () => {
    const f = await fake();
    const gone = { platformPostId: '999', url: `${f.url}/@user/999` };
    const err = await failure(connector().publish(request(f.url, { text: 'Orphan', replyTo: { root: gone, parent: gone } })));
    expect(err.kind).toBe('permanent');
    expect(err.opts.status).toBe(404);
    expect(err.message).toBe(`Mastodon 404: ${REPLY_NOT_FOUND}`);
    expect(f.statuses).toHaveLength(0);
  });

  test('a thread of 3: each item answers the one before', async () => {
    const f = await fake();
    const c = connector();
    const first = await c.publish(request(f.url, { text: 'Thread 1/3' }));
    const second = await c.publish(
      request(f.url, { text: 'Thread 2/3', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: first, parent: first } }),
    );
    const third = await c.publish(
      request(f.url, { text: 'Thread 3/3', idempotencyKey: 'post-1:channel-1:3', replyTo: { root: first, parent: second } }),
    );

    expect(f.statuses.map((s) => [s.id, s.text, s.in_reply_to_id])).toEqual([
      [first.platformPostId, 'Thread 1/3', null],
      [second.platformPostId, 'Thread 2/3', first.platformPostId],
      [third.platformPostId, 'Thread 3/3', second.platformPostId],
    ]);
  });

  test('findPublished: a reply accepted whose answer was lost, retried after the key expired, is found — one status', async () => {
    const f = await fake();
    const c = connector(500);
    const first = await c.publish(request(f.url, { text: 'The first post' }));
    const req = request(f.url, { text: 'The second item', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: first, parent: first } });
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(req))).kind).toBe('transient');

    f.advance(2 * 60 * 60 * 1000);
    const result = await retryAsTheActivityDoes(c, { ...req, attempt: 2 });

    const replies = f.statuses.filter((s) => s.text === 'The second item');
    expect(replies).toHaveLength(1);
    expect(result).toEqual({ platformPostId: replies[0]!.id, url: replies[0]!.url, publishedAt: replies[0]!.created_at });
    expect(f.sends.filter((s) => s.text === 'The second item')).toHaveLength(1);
    // Replies listed: forks drop every reply under exclude_replies.
    const list = new URLSearchParams(f.requests.find((r) => r.path === '/api/v1/accounts/1/statuses')!.search);
    expect(list.has('exclude_replies')).toBe(false);
  });

  test('findPublished: null when the reply is not there — the same text answering another status, or as a post, is not it', async () => {
    const f = await fake();
    const c = connector();
    const first = await c.publish(request(f.url, { text: 'The first post' }));
    const other = await c.publish(request(f.url, { text: 'Another post', idempotencyKey: 'post-2:channel-1' }));
    const req = request(f.url, { text: 'The second item', attempt: 2, replyTo: { root: first, parent: first } });
    expect(await c.findPublished!(req)).toBeNull();

    const post = await c.publish(request(f.url, { text: 'The second item', idempotencyKey: 'post-3:channel-1' }));
    await c.publish(
      request(f.url, { text: 'The second item', idempotencyKey: 'post-2:channel-1:2', replyTo: { root: other, parent: other } }),
    );
    expect(await c.findPublished!(req)).toBeNull();
    // Nor is a reply taken for the post itself.
    expect(await c.findPublished!(request(f.url, { text: 'The second item', attempt: 2 }))).toEqual(post);
  });
});

describe('fake Mastodon contract', () => {
  test('an Idempotency-Key is honoured for an hour; after that the same key makes a new status', async () => {
    const f = await fake();
    const post = async () => {
      const res = await fetch(`${f.url}/api/v1/statuses`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Idempotency-Key': 'k1', 'Content-Type': 'application/json' },
        body: JSON.stringify({ status: 'same key' }),
      });
      return ((await res.json()) as { id: string }).id;
    };
    const a = await post();
    f.advance(IDEMPOTENCY_KEY_TTL_MS - 1000);
    expect(await post()).toBe(a);
    f.advance(2000);
    expect(await post()).not.toBe(a);
    expect(f.statuses).toHaveLength(2);
    expect(f.sends).toHaveLength(3);
  });

  test('accepts form bodies with media_ids[] and honours Idempotency-Key per token', async () => {
    const f = await fake({ syncMedia: true });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/jpeg' }), 'a.jpg');
    const up = await fetch(`${f.url}/api/v2/media`, { method: 'POST', headers: { Authorization: 'Bearer good-token' }, body: form });
    expect(up.status).toBe(200);
    const { id } = (await up.json()) as { id: string };

    const post = () =>
      fetch(`${f.url}/api/v1/statuses`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Idempotency-Key': 'k1' },
        body: new URLSearchParams([
          ['status', 'form post'],
          ['media_ids[]', id],
          ['visibility', 'unlisted'],
        ]),
      });
    const a = (await (await post()).json()) as { id: string; visibility: string; media_attachments: unknown[] };
    const b = (await (await post()).json()) as { id: string };
    expect(a.id).toBe(b.id);
    expect(a.visibility).toBe('unlisted');
    expect(a.media_attachments).toHaveLength(1);
    expect(f.statuses).toHaveLength(1);
    expect(f.statuses[0]!.media_ids).toEqual([id]);
  });

  test('rejects an unknown media id with 422 in Mastodon wording', async () => {
    const f = await fake();
    const res = await fetch(`${f.url}/api/v1/statuses`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: 'x', media_ids: ['999'] }),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: 'Media 999 not found or already attached to another post' });
  });
});
