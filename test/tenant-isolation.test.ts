// Tenant isolation over every endpoint (DESIGN.md §3): another organization's ids are unknown ids
// (404 not_found, the same answer as for an id that never existed), lists never show another
// organization's items, another organization's channels and media cannot be used (422), and a
// channel-limited key sees and touches only posts wholly within its channels. Signed storage
// URLs cannot be re-pointed at another organization's object.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { MediaItem, Post, PostChannel } from '../db/entities/index.ts';
import { call, makeChannel, makeKey, makeOrg, type CallResult } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const DAY = 86_400_000;

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let stack: Stack;

interface Tenant {
  orgId: string;
  name: string;
  key: string;
  channels: [string, string];
  /** Posts on [c1], on [c1, c2] and on [c2]. */
  posts: { one: string; both: string; two: string };
  /** A ready image (three-step upload) and a pending upload whose bytes never arrived. */
  media: { ready: string; pending: string; readyUrl: string; pendingUploadUrl: string; pendingUploadHeaders: Record<string, string> };
}

let A: Tenant;
let B: Tenant;
/** A's key limited to A's first channel. */
let limited: string;
let png: Buffer;
let base: number;
let serial = 0;

const later = (days: number) => new Date(base + days * DAY + ++serial * 1000).toISOString();

async function readyImage(key: string, name: string): Promise<{ id: string; url: string }> {
  const made = await call(stack.app, 'POST', '/v1/media/uploads', {
    key,
    body: { fileName: name, mimeType: 'image/png', fileSize: png.length },
  });
  expect(made.status).toBe(201);
  const { media, upload } = made.body;
  // The bytes go to upload.url with exactly upload.headers; the disk store is served by the app itself.
  const put = await stack.app.handle(new Request(upload.url, { method: upload.method, headers: upload.headers, body: png }));
  expect(put.status).toBe(200);
  const done = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
  expect(done.status).toBe(200);
  expect(done.body.status).toBe('ready');
  return { id: media.id, url: done.body.url };
}

async function tenant(name: string): Promise<Tenant> {
  const org = await makeOrg('ENTERPRISE', name);
  const c1 = (await makeChannel(org.id, 'MASTODON', { name: `${name} one` })).id;
  const c2 = (await makeChannel(org.id, 'MASTODON', { name: `${name} two` })).id;
  const { key } = await makeKey(org.id);
  const post = async (channelIds: string[], label: string) => {
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: `${name} ${label}`, channelIds, publishAt: later(200) } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const ready = await readyImage(key, `${name}.png`);
  const pending = await call(stack.app, 'POST', '/v1/media/uploads', {
    key,
    body: { fileName: `${name}-pending.png`, mimeType: 'image/png', fileSize: png.length },
  });
  expect(pending.status).toBe(201);
  return {
    orgId: org.id,
    name,
    key,
    channels: [c1, c2],
    posts: { one: await post([c1], 'one'), both: await post([c1, c2], 'both'), two: await post([c2], 'two') },
    media: {
      ready: ready.id,
      readyUrl: ready.url,
      pending: pending.body.media.id,
      pendingUploadUrl: pending.body.upload.url,
      pendingUploadHeaders: pending.body.upload.headers,
    },
  };
}

/** Row counts and the state of every row of an organization, to show a refused request changed nothing. */
async function snapshot(orgId: string) {
  const em = stack.h.orm.em.fork();
  const posts = await em.find(Post, { organization: orgId }, { orderBy: { id: 'asc' } });
  const pcs = await em.find(PostChannel, { post: { $in: posts.map((p) => p.id) } }, { orderBy: { id: 'asc' } });
  const media = await em.find(MediaItem, { organization: orgId }, { orderBy: { id: 'asc' } });
  return {
    posts: posts.map((p) => [p.id, p.status, p.content, p.contentByPlatform, p.mediaIds, p.scheduledAt.toISOString()]),
    postChannels: pcs.map((pc) => [pc.id, pc.post, pc.channel, pc.status, pc.content]),
    media: media.map((m) => [m.id, m.status, m.sizeBytes, m.altText]),
  };
}

function expectNotFound(r: CallResult, what: string) {
  expect({ what, status: r.status, code: r.body?.error?.code }).toEqual({ what, status: 404, code: 'not_found' });
  expect(r.headers.get('x-request-id')).toBeTruthy();
}

function expect422(r: CallResult, path: string) {
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('validation_failed');
  expect(r.body.error.details.fields.map((f: { path: string }) => f.path)).toContain(path);
}

const ids = (r: CallResult): string[] => r.body.data.map((x: { id: string }) => x.id);

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
  base = (await stack.syncClock()).getTime();
  png = await sharp({ create: { width: 16, height: 9, channels: 3, background: '#ff8800' } })
    .png()
    .toBuffer();
  A = await tenant('Org A');
  B = await tenant('Org B');
  limited = (await makeKey(A.orgId, { channels: [A.channels[0]], name: 'limited to a1' })).key;
});
afterAll(async () => stack?.stop());

describe('another organization’s ids are unknown ids', () => {
  const pairs = () => [
    { viewer: B, owner: A, label: 'B on A' },
    { viewer: A, owner: B, label: 'A on B' },
  ];

  test('every endpoint that takes an id → 404 not_found, the same answer as for an id that never existed; nothing changes', async () => {
    for (const { viewer, owner, label } of pairs()) {
      const before = { owner: await snapshot(owner.orgId), viewer: await snapshot(viewer.orgId) };
      const requests: [string, string, unknown?][] = [
        ...Object.values(owner.posts).flatMap((id): [string, string, unknown?][] => [
          ['GET', `/v1/posts/${id}`],
          ['PATCH', `/v1/posts/${id}`, { content: 'hijacked' }],
          ['PATCH', `/v1/posts/${id}`, { publishAt: later(1) }],
          ['PATCH', `/v1/posts/${id}`, { contentByPlatform: { MASTODON: 'hijacked' } }],
          ['PATCH', `/v1/posts/${id}`, { mediaIds: [viewer.media.ready] }],
        ]),
        ['GET', `/v1/media/${owner.media.ready}`],
        ['GET', `/v1/media/${owner.media.pending}`],
        ['POST', `/v1/media/${owner.media.ready}/complete`],
        ['POST', `/v1/media/${owner.media.pending}/complete`],
      ];
      for (const [method, path, body] of requests) {
        const foreign = await call(stack.app, method, path, { key: viewer.key, body });
        expectNotFound(foreign, `${label}: ${method} ${path}`);
        // Never reveal that it exists: the answer for an id that never existed is the same.
        const fakeId = path.replace(/(post|med)_[0-9a-z]{26}/, (m, prefix: string) => `${prefix}_${'0'.repeat(26)}`);
        const unknown = await call(stack.app, method, fakeId, { key: viewer.key, body });
        expect(foreign.body).toEqual(unknown.body);
        expect(foreign.status).toBe(unknown.status);
      }
      expect(await snapshot(owner.orgId)).toEqual(before.owner);
      expect(await snapshot(viewer.orgId)).toEqual(before.viewer);
      // The owner still sees its own items as they were.
      const own = await call(stack.app, 'GET', `/v1/posts/${owner.posts.one}`, { key: owner.key });
      expect(own.status).toBe(200);
      expect(own.body.content).toBe(`${owner.name} one`);
      const pending = await call(stack.app, 'GET', `/v1/media/${owner.media.pending}`, { key: owner.key });
      expect(pending.body.status).toBe('pending');
    }
  });

  test('lists show only the caller’s own posts and channels, whatever the filters and cursors', async () => {
    for (const { viewer, owner } of pairs()) {
      const ownPosts = Object.values(viewer.posts);
      const theirPosts = Object.values(owner.posts);
      const all = await call(stack.app, 'GET', '/v1/posts?limit=100', { key: viewer.key });
      expect(all.status).toBe(200);
      expect(ids(all).sort()).toEqual([...ownPosts].sort());
      // Filtering on the other organization's channel finds nothing (not their posts).
      for (const ch of owner.channels) {
        const filtered = await call(stack.app, 'GET', `/v1/posts?channelId=${ch}`, { key: viewer.key });
        expect(filtered.status).toBe(200);
        expect(filtered.body.data).toEqual([]);
      }
      // Paging with a cursor taken from the other organization's list stays in the caller's own posts.
      const theirPage = await call(stack.app, 'GET', '/v1/posts?limit=1', { key: owner.key });
      expect(theirPage.body.nextCursor).toEqual(expect.any(String));
      const crossed = await call(stack.app, 'GET', `/v1/posts?limit=100&cursor=${theirPage.body.nextCursor}`, { key: viewer.key });
      expect(crossed.status).toBe(200);
      for (const id of ids(crossed)) expect(ownPosts).toContain(id);
      // Every page of the caller's own list, walked to the end.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: CallResult = await call(stack.app, 'GET', `/v1/posts?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: viewer.key });
        expect(page.status).toBe(200);
        seen.push(...ids(page));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen.sort()).toEqual([...ownPosts].sort());
      for (const id of theirPosts) expect(seen).not.toContain(id);
      for (const status of ['scheduled', 'publishing', 'published', 'failed']) {
        const byStatus = await call(stack.app, 'GET', `/v1/posts?status=${status}&limit=100`, { key: viewer.key });
        for (const id of ids(byStatus)) expect(ownPosts).toContain(id);
      }

      const channels = await call(stack.app, 'GET', '/v1/channels', { key: viewer.key });
      expect(channels.status).toBe(200);
      expect(ids(channels).sort()).toEqual([...viewer.channels].sort());
      const me = await call(stack.app, 'GET', '/v1/me', { key: viewer.key });
      expect(me.body.organization.id).toBe(viewer.orgId);
      // Nothing of the other organization appears anywhere in these answers.
      const text = JSON.stringify([all.body, channels.body, me.body, crossed.body]);
      for (const id of [owner.orgId, ...owner.channels, ...theirPosts, owner.media.ready, owner.media.pending])
        expect(text).not.toContain(id);
    }
  });

  test('POST /v1/posts with the other organization’s channelIds or mediaIds → 422; nothing written', async () => {
    for (const { viewer, owner } of pairs()) {
      const before = { owner: await snapshot(owner.orgId), viewer: await snapshot(viewer.orgId) };
      const post = (body: Record<string, unknown>) =>
        call(stack.app, 'POST', '/v1/posts', { key: viewer.key, body: { content: `cross ${++serial}`, publishAt: later(300), ...body } });
      expect422(await post({ channelIds: [owner.channels[0]] }), 'channelIds');
      expect422(await post({ channelIds: [viewer.channels[0], owner.channels[1]] }), 'channelIds');
      expect422(await post({ channelIds: [viewer.channels[0]], mediaIds: [owner.media.ready] }), 'mediaIds');
      expect422(await post({ channelIds: [viewer.channels[0]], mediaIds: [viewer.media.ready, owner.media.ready] }), 'mediaIds');
      expect422(await post({ channelIds: [viewer.channels[0]], mediaIds: [owner.media.pending] }), 'mediaIds');
      // The message names the id as unknown, exactly as for an id that never existed.
      const foreign = await post({ channelIds: [viewer.channels[0]], mediaIds: [owner.media.ready] });
      const never = await post({ channelIds: [viewer.channels[0]], mediaIds: [`med_${'0'.repeat(26)}`] });
      expect(foreign.body.error.details.fields[0].message).toBe(
        never.body.error.details.fields[0].message.replace(`med_${'0'.repeat(26)}`, owner.media.ready),
      );
      // PATCH of the caller's own post with the other organization's media → 422 as well.
      expect422(
        await call(stack.app, 'PATCH', `/v1/posts/${viewer.posts.one}`, { key: viewer.key, body: { mediaIds: [owner.media.ready] } }),
        'mediaIds',
      );
      expect(await snapshot(owner.orgId)).toEqual(before.owner);
      expect(await snapshot(viewer.orgId)).toEqual(before.viewer);
    }
  });

  test('an Idempotency-Key another organization used replays nothing of theirs', async () => {
    const body = (t: Tenant) => ({
      content: 'idempotent twin',
      channelIds: [t.channels[0]],
      publishAt: new Date(base + 400 * DAY).toISOString(),
    });
    const a = await call(stack.app, 'POST', '/v1/posts', { key: A.key, body: body(A), headers: { 'idempotency-key': 'shared-key' } });
    expect(a.status).toBe(201);
    const b = await call(stack.app, 'POST', '/v1/posts', { key: B.key, body: body(B), headers: { 'idempotency-key': 'shared-key' } });
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.channels[0].channelId).toBe(B.channels[0]);
    // Same key with A's exact body from B: B's channel list would not even validate: 422, not A's answer.
    const replayAttempt = await call(stack.app, 'POST', '/v1/posts', {
      key: B.key,
      body: body(A),
      headers: { 'idempotency-key': 'shared-key-2' },
    });
    expect422(replayAttempt, 'channelIds');
  });
});

describe('a key limited to channel a1', () => {
  test('reads only posts wholly within its channels: GET → 404 for the others, lists exclude them', async () => {
    expect((await call(stack.app, 'GET', `/v1/posts/${A.posts.one}`, { key: limited })).status).toBe(200);
    expectNotFound(await call(stack.app, 'GET', `/v1/posts/${A.posts.both}`, { key: limited }), 'post on [a1, a2]');
    expectNotFound(await call(stack.app, 'GET', `/v1/posts/${A.posts.two}`, { key: limited }), 'post on [a2]');
    expectNotFound(await call(stack.app, 'GET', `/v1/posts/${B.posts.one}`, { key: limited }), 'post of B');
    const list = await call(stack.app, 'GET', '/v1/posts?limit=100', { key: limited });
    expect(list.status).toBe(200);
    expect(ids(list)).toContain(A.posts.one);
    expect(ids(list)).not.toContain(A.posts.both);
    expect(ids(list)).not.toContain(A.posts.two);
    for (const p of list.body.data) for (const c of p.channels) expect(c.channelId).toBe(A.channels[0]);
    const byOther = await call(stack.app, 'GET', `/v1/posts?channelId=${A.channels[1]}`, { key: limited });
    expect(byOther.status).toBe(200);
    expect(byOther.body.data).toEqual([]);
    const channels = await call(stack.app, 'GET', '/v1/channels', { key: limited });
    expect(ids(channels)).toEqual([A.channels[0]]);
    const me = await call(stack.app, 'GET', '/v1/me', { key: limited });
    expect(me.body.key.channels).toEqual([A.channels[0]]);
  });

  test('writes only within its channels: POST to a2 → 403 forbidden_scope, PATCH of a post on [a1, a2] → 404; nothing changes', async () => {
    const before = await snapshot(A.orgId);
    for (const channelIds of [[A.channels[1]], [A.channels[0], A.channels[1]]]) {
      const r = await call(stack.app, 'POST', '/v1/posts', {
        key: limited,
        body: { content: `limited ${++serial}`, channelIds, publishAt: later(500) },
      });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'forbidden_scope', details: { channelIds: [A.channels[1]] } });
    }
    // Another organization's channel is outside the list too.
    const theirs = await call(stack.app, 'POST', '/v1/posts', {
      key: limited,
      body: { content: `limited ${++serial}`, channelIds: [B.channels[0]], publishAt: later(500) },
    });
    expect(theirs.status).toBe(403);
    expect(theirs.body.error.code).toBe('forbidden_scope');
    for (const id of [A.posts.both, A.posts.two]) {
      for (const body of [{ content: 'edited by a limited key' }, { publishAt: later(2) }]) {
        expectNotFound(await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key: limited, body }), `PATCH ${id}`);
      }
    }
    expect(await snapshot(A.orgId)).toEqual(before);
    // Within its channel it works.
    const own = await call(stack.app, 'PATCH', `/v1/posts/${A.posts.one}`, { key: limited, body: { content: 'Org A one (edited)' } });
    expect(own.status).toBe(200);
    expect(own.body.content).toBe('Org A one (edited)');
  });
});

describe('signed storage URLs', () => {
  /** Re-points a disk-store token at another object key, keeping the original signature. */
  function repoint(url: string, key: string): string {
    const u = new URL(url);
    const token = u.pathname.split('/').pop()!;
    const [payload, signature] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, key })).toString('base64url');
    return `${u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1)}${forged}.${signature}`;
  }
  const claimsOf = (url: string) =>
    JSON.parse(Buffer.from(new URL(url).pathname.split('/').pop()!.split('.')[0]!, 'base64url').toString('utf8'));

  test('a download token altered to point at the other organization’s object → 401; the genuine ones still work', async () => {
    const bKey = claimsOf(B.media.readyUrl).key as string;
    expect(bKey.startsWith(`${B.orgId}/`)).toBe(true);
    const forged = await stack.app.handle(new Request(`http://localhost${repoint(A.media.readyUrl, bKey)}`));
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    // Flipping one character of the signature or of the payload → 401 too.
    const path = new URL(A.media.readyUrl).pathname;
    const flipped = path.slice(0, -1) + (path.endsWith('A') ? 'B' : 'A');
    expect((await stack.app.handle(new Request(`http://localhost${flipped}`))).status).toBe(401);
    const dot = path.lastIndexOf('.');
    const payloadFlip = path.slice(0, dot - 1) + (path[dot - 1] === 'A' ? 'B' : 'A') + path.slice(dot);
    expect((await stack.app.handle(new Request(`http://localhost${payloadFlip}`))).status).toBe(401);
    // The genuine URLs serve each organization its own bytes.
    for (const url of [A.media.readyUrl, B.media.readyUrl]) {
      const r = await stack.app.handle(new Request(url));
      expect(r.status).toBe(200);
      expect(Buffer.from(await r.arrayBuffer()).equals(png)).toBe(true);
    }
  });

  test('an upload token altered to point at the other organization’s object → 401; their object is untouched', async () => {
    const bKey = claimsOf(B.media.readyUrl).key as string;
    const forged = repoint(A.media.pendingUploadUrl, bKey);
    const evil = Buffer.alloc(png.length, 0x41);
    const r = await stack.app.handle(
      new Request(`http://localhost${forged}`, { method: 'PUT', headers: A.media.pendingUploadHeaders, body: evil }),
    );
    expect(r.status).toBe(401);
    const still = await stack.app.handle(new Request(B.media.readyUrl));
    expect(Buffer.from(await still.arrayBuffer()).equals(png)).toBe(true);
    // B's key cannot complete A's upload either (404), and A's item stays pending.
    expectNotFound(
      await call(stack.app, 'POST', `/v1/media/${A.media.pending}/complete`, { key: B.key }),
      'complete of A’s pending media by B',
    );
    expect((await call(stack.app, 'GET', `/v1/media/${A.media.pending}`, { key: A.key })).body.status).toBe('pending');
  });
});
