// POST /v1/posts/validate gives exactly the answer POST /v1/posts gives, for every rule create
// enforces (domain/posts/create.ts checkNewPost and assertSchedulable), and creates nothing:
// no post, channel row or idempotency record, and no call to Temporal. A body create accepts
// answers 200 with the texts and lengths create then stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@temporalio/client';
import { MediaItem } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { createApp } from '../server/app.ts';
import { setChannelStatus } from '../domain/channels.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const DAY = 86_400_000;
const FAMILY = '👨‍👩‍👧‍👦'; // one grapheme, 11 UTF-16 units; X weighs it 2

let stack: Awaited<ReturnType<typeof startPostStack>>;
let app: ReturnType<typeof createApp>;
/** Every call the API made to Temporal (start, Update, signal): validate must make none. */
let temporalCalls = 0;
let clock = new Date();

beforeAll(async () => {
  stack = await startPostStack();
  const count = async <T>(next: () => Promise<T>) => {
    temporalCalls++;
    return next();
  };
  const client = new Client({
    connection: stack.env.connection,
    namespace: stack.env.namespace ?? 'default',
    interceptors: {
      workflow: [
        {
          start: (input, next) => count(() => next(input)),
          startWithDetails: (input, next) => count(() => next(input)),
          startUpdate: (input, next) => count(() => next(input)),
          startUpdateWithStart: (input, next) => count(() => next(input)),
          signal: (input, next) => count(() => next(input)),
          signalWithStart: (input, next) => count(() => next(input)),
        },
      ],
    },
  });
  app = createApp({
    orm: stack.h.orm,
    log: () => {},
    now: () => clock,
    temporal: { client, taskQueue: stack.taskQueue },
    rateLimiter: stack.h.rateLimiter,
  });
  clock = await stack.syncClock();
});
afterAll(async () => stack?.stop());

async function rows(orgId: string) {
  const conn = stack.h.orm.em.fork().getConnection();
  const [r] = await conn.execute<{ posts: number; channels: number; idem: number }[]>(
    `select (select count(*)::int from posts where organization_id = ?) as posts,
            (select count(*)::int from post_channels pc join posts p on p.id = pc.post_id where p.organization_id = ?) as channels,
            (select count(*)::int from idempotency_keys where organization_id = ?) as idem`,
    [orgId, orgId, orgId],
  );
  return { ...r!, temporalCalls };
}

type Req = { body?: unknown; rawBody?: string };

/** Validate, then create, with the same request: the same status and body; neither wrote anything. */
async function sameAsCreate(orgId: string, key: string, req: Req, expected: { status: number; code: string; path?: string }) {
  const before = await rows(orgId);
  // An Idempotency-Key is ignored by validate: nothing is stored for it either.
  const v = await call(app, 'POST', '/v1/posts/validate', { key, ...req, headers: { 'idempotency-key': `v-${crypto.randomUUID()}` } });
  expect(await rows(orgId)).toEqual(before);
  const c = await call(app, 'POST', '/v1/posts', { key, ...req });
  expect({ status: v.status, body: v.body }).toEqual({ status: c.status, body: c.body });
  expect({ status: v.status, code: v.body?.error?.code }).toEqual({ status: expected.status, code: expected.code });
  if (expected.path !== undefined) expect(v.body.error.details.fields.map((f: { path: string }) => f.path)).toContain(expected.path);
  expect(await rows(orgId)).toEqual(before);
  return v.body;
}

async function account(plan = 'ENTERPRISE') {
  const org = await makeOrg(plan);
  const { key } = await makeKey(org.id);
  return { org, key };
}

async function media(orgId: string, type: 'image' | 'gif' | 'video' | 'audio' | 'document', status: 'ready' | 'pending' = 'ready') {
  const em = stack.h.orm.em.fork();
  const id = newId('med');
  em.create(MediaItem, {
    id,
    organization: orgId,
    type,
    status,
    fileName: `f.${type}`,
    mimeType: type === 'video' ? 'video/mp4' : type === 'audio' ? 'audio/mpeg' : type === 'document' ? 'application/pdf' : 'image/png',
    sizeBytes: 10,
    storageKey: `k/${id}`,
    uploadKey: `u/${id}`,
    apiKeyId: null,
    altText: null,
    uploadExpiresAt: new Date(clock.getTime() + 60_000),
  });
  await em.flush();
  return id;
}

const later = (days = 30) => new Date(clock.getTime() + days * DAY).toISOString();

describe('POST /v1/posts/validate answers as create does, and creates nothing', () => {
  test('body shapes the schema refuses', async () => {
    const { org, key } = await account();
    const ch = await makeChannel(org.id, 'MASTODON');
    const bad: [Req, string][] = [
      [{ body: { channelIds: [ch.id] } }, 'content'],
      [{ body: { content: 'x' } }, 'channelIds'],
      [{ body: { content: 'x', channelIds: [] } }, 'channelIds'],
      [{ body: { content: 'x', channelIds: [ch.id, ch.id] } }, 'channelIds'],
      [{ body: { content: 'x', channelIds: Array.from({ length: 51 }, (_, i) => `ch_${i}`) } }, 'channelIds'],
      [{ body: { content: 5, channelIds: [ch.id] } }, 'content'],
      [{ body: { content: 'nul \u0000', channelIds: [ch.id] } }, 'content'],
      [{ body: { content: 'x', channelIds: [ch.id], publishAt: 'tomorrow' } }, 'publishAt'],
      [{ body: { content: 'x', channelIds: [ch.id], contentByPlatform: { NOPE: 'y' } } }, 'contentByPlatform'],
      [{ body: { content: 'x', channelIds: [ch.id], reddit: { subreddit: 'r' } } }, 'reddit'],
      [{ body: { content: 'x', channelIds: [ch.id], mediaIds: ['a', 'a'] } }, 'mediaIds'],
      [{ rawBody: '{"content":' }, ''],
    ];
    for (const [req] of bad) await sameAsCreate(org.id, key, req, { status: 422, code: 'validation_failed' });
    // An unknown field: refused, whatever path the schema names.
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [ch.id], surprise: 1 } },
      { status: 422, code: 'validation_failed' },
    );
  });

  test('publishAt: more than 5 minutes in the past, or at/after 9999-12-31', async () => {
    const { org, key } = await account();
    const ch = await makeChannel(org.id, 'MASTODON');
    const past = new Date(clock.getTime() - 6 * 60_000).toISOString();
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [ch.id], publishAt: past } },
      { status: 422, code: 'validation_failed', path: 'publishAt' },
    );
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [ch.id], publishAt: '9999-12-31T12:00:00Z' } },
      { status: 422, code: 'validation_failed', path: 'publishAt' },
    );
  });

  test('channels: unknown, another organization’s, disabled → 422; reauth → 409; outside a limited key → 403', async () => {
    const { org, key } = await account();
    const other = await makeOrg('ENTERPRISE');
    const mine = await makeChannel(org.id, 'MASTODON');
    const second = await makeChannel(org.id, 'MASTODON');
    const theirs = await makeChannel(other.id, 'MASTODON');
    const limited = await makeKey(org.id, { channels: [mine.id] });
    const ok = { status: 422, code: 'validation_failed', path: 'channelIds' };
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: ['ch_nope'] } }, ok);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [theirs.id] } }, ok);
    const outside = await sameAsCreate(
      org.id,
      limited.key,
      { body: { content: 'x', channelIds: [mine.id, second.id] } },
      { status: 403, code: 'forbidden_scope' },
    );
    expect(outside.error.details).toEqual({ channelIds: [second.id] });
    await setChannelStatus(stack.h.orm.em.fork(), second.id, 'reauth_required');
    const reauth = await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [mine.id, second.id] } },
      { status: 409, code: 'reauth_required' },
    );
    expect(reauth.error.details).toEqual({ channelIds: [second.id] });
    await setChannelStatus(stack.h.orm.em.fork(), second.id, 'disabled');
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [second.id] } }, ok);
  });

  test('text per channel as each platform counts it: X weighted, Mastodon URLs as 23, graphemes elsewhere', async () => {
    const { org, key } = await account();
    const x = await makeChannel(org.id, 'X');
    const m = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'BLUESKY');
    const url = `https://example.com/${'p'.repeat(200)}`;
    const tooLong = { status: 422, code: 'validation_failed' };
    const xBody = await sameAsCreate(
      org.id,
      key,
      { body: { content: FAMILY.repeat(141), channelIds: [x.id] } },
      { ...tooLong, path: 'content' },
    );
    expect(xBody.error.details.fields[0].message).toStartWith('is 282 characters');
    // 478 + space + URL (23) = 502 on Mastodon, though far fewer than the text's 700 code points matter.
    const mBody = await sameAsCreate(
      org.id,
      key,
      { body: { content: `${'a'.repeat(478)} ${url}`, channelIds: [m.id] } },
      { ...tooLong, path: 'content' },
    );
    expect(mBody.error.details.fields[0].message).toStartWith('is 502 characters');
    await sameAsCreate(org.id, key, { body: { content: FAMILY.repeat(301), channelIds: [b.id] } }, { ...tooLong, path: 'content' });
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'short', channelIds: [m.id, x.id], contentByPlatform: { X: 'b'.repeat(281) } } },
      { ...tooLong, path: 'contentByPlatform.X' },
    );
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [m.id], contentByPlatform: { LINKEDIN: 'y' } } },
      { ...tooLong, path: 'contentByPlatform.LINKEDIN' },
    );
    await sameAsCreate(org.id, key, { body: { content: '', channelIds: [m.id] } }, { ...tooLong, path: 'content' });
  });

  test('media: required, types, counts, a video alone, unknown, pending, hidden from a limited key', async () => {
    const { org, key } = await account();
    const ig = await makeChannel(org.id, 'INSTAGRAM');
    const x = await makeChannel(org.id, 'X');
    const yt = await makeChannel(org.id, 'YOUTUBE');
    const m = await makeChannel(org.id, 'MASTODON');
    const images = await Promise.all([1, 2, 3, 4, 5].map(() => media(org.id, 'image')));
    const video = await media(org.id, 'video');
    const audio = await media(org.id, 'audio');
    const pending = await media(org.id, 'image', 'pending');
    const refused = { status: 422, code: 'validation_failed', path: 'mediaIds' };
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [ig.id] } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [x.id], mediaIds: images } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [x.id], mediaIds: [audio] } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [x.id], mediaIds: [video, images[0]] } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [yt.id], mediaIds: [images[0]] } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [m.id], mediaIds: ['med_unknown'] } }, refused);
    await sameAsCreate(org.id, key, { body: { content: 'x', channelIds: [m.id], mediaIds: [pending] } }, refused);
    // An image a post on another channel uses is not the limited key's to attach: "unknown".
    const used = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: 'uses the image', channelIds: [x.id], mediaIds: [images[4]], publishAt: later(40) },
    });
    expect(used.status).toBe(201);
    const limited = await makeKey(org.id, { channels: [m.id] });
    const hidden = await sameAsCreate(org.id, limited.key, { body: { content: 'x', channelIds: [m.id], mediaIds: [images[4]] } }, refused);
    expect(hidden.error.details.fields[0].message).toBe(`unknown media ${images[4]}`);
  });

  test('reddit: subreddit and title required for a REDDIT channel', async () => {
    const { org, key } = await account();
    const reddit = await makeChannel(org.id, 'REDDIT');
    await sameAsCreate(
      org.id,
      key,
      { body: { content: 'x', channelIds: [reddit.id] } },
      { status: 422, code: 'validation_failed', path: 'reddit' },
    );
  });

  test('duplicate_post: the same text to the same channel within 24 hours', async () => {
    const { org, key } = await account();
    const m = await makeChannel(org.id, 'MASTODON');
    const first = await call(app, 'POST', '/v1/posts', { key, body: { content: 'same  text', channelIds: [m.id], publishAt: later(10) } });
    expect(first.status).toBe(201);
    const dup = await sameAsCreate(
      org.id,
      key,
      { body: { content: ' same text ', channelIds: [m.id], publishAt: new Date(Date.parse(later(10)) + 3_600_000).toISOString() } },
      { status: 409, code: 'duplicate_post' },
    );
    expect(dup.error.details).toEqual({ postId: first.body.id, channelId: m.id });
  });

  test('limit_reached: the plan’s pending scheduled posts', async () => {
    const { org, key } = await account('PRO');
    const m = await makeChannel(org.id, 'MASTODON');
    // PRO allows 1000 pending posts: 1000 scheduled rows (no workflows needed for the count).
    await stack.h.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
         select 'post_fill_' || ? || '_' || g, ?, 'scheduled', 'fill ' || g, 'api', now() + interval '30 days', now(), now()
           from generate_series(1, 1000) g`,
        [org.id, org.id],
      );
    const limit = await sameAsCreate(
      org.id,
      key,
      { body: { content: 'one more', channelIds: [m.id], publishAt: later() } },
      { status: 403, code: 'limit_reached' },
    );
    expect(limit.error.details).toEqual({ limit: 1000, used: 1000 });
  });
});

describe('a body create accepts', () => {
  test('200 with each channel’s text and length, as create then stores them; nothing created by validate', async () => {
    const { org, key } = await account();
    const x = await makeChannel(org.id, 'X');
    const m = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'BLUESKY');
    const reddit = await makeChannel(org.id, 'REDDIT');
    const image = await media(org.id, 'image');
    const url = `https://example.com/${'p'.repeat(200)}`;
    const body = {
      content: `${'a'.repeat(470)} ${url}`,
      channelIds: [x.id, m.id, b.id, reddit.id],
      contentByPlatform: { X: FAMILY.repeat(140), BLUESKY: FAMILY.repeat(300), REDDIT: 'for reddit' },
      mediaIds: [image],
      reddit: { subreddit: 'test', title: 'Hello' },
      publishAt: '2099-01-01T10:00:00+02:00',
    };
    const before = await rows(org.id);
    const v = await call(app, 'POST', '/v1/posts/validate', { key, body, headers: { 'idempotency-key': 'ignored' } });
    expect(v.status).toBe(200);
    expect(await rows(org.id)).toEqual(before);
    expect(v.body).toEqual({
      valid: true,
      publishAt: '2099-01-01T08:00:00.000Z',
      channels: [
        { channelId: x.id, platform: 'X', content: FAMILY.repeat(140), characters: 280, maxChars: 280, items: [] },
        { channelId: m.id, platform: 'MASTODON', content: body.content, characters: 494, maxChars: 500, items: [] },
        { channelId: b.id, platform: 'BLUESKY', content: FAMILY.repeat(300), characters: 300, maxChars: 300, items: [] },
        { channelId: reddit.id, platform: 'REDDIT', content: 'for reddit', characters: 10, maxChars: expect.any(Number), items: [] },
      ],
    });
    const c = await call(app, 'POST', '/v1/posts', { key, body });
    expect(c.status).toBe(201);
    expect(c.body.scheduledAt).toBe(v.body.publishAt);
    const stored = Object.fromEntries(c.body.channels.map((ch: { channelId: string; content: string }) => [ch.channelId, ch.content]));
    for (const ch of v.body.channels) expect(stored[ch.channelId]).toBe(ch.content);
    // GET /channels reports the same limits.
    const listed = await call(app, 'GET', '/v1/channels', { key });
    for (const ch of v.body.channels)
      expect(listed.body.data.find((l: { id: string }) => l.id === ch.channelId).rules.maxChars).toBe(ch.maxChars);
    // Publish now: publishAt null.
    const now = await call(app, 'POST', '/v1/posts/validate', { key, body: { content: 'now', channelIds: [m.id] } });
    expect(now.body).toEqual({
      valid: true,
      publishAt: null,
      channels: [{ channelId: m.id, platform: 'MASTODON', content: 'now', characters: 3, maxChars: 500, items: [] }],
    });
  });

  test('needs the publish scope; a read-only key gets forbidden_scope', async () => {
    const org = await makeOrg('ENTERPRISE');
    const m = await makeChannel(org.id, 'MASTODON');
    const read = await makeKey(org.id, { scopes: ['read'] });
    const r = await call(app, 'POST', '/v1/posts/validate', { key: read.key, body: { content: 'x', channelIds: [m.id] } });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'forbidden_scope', details: { requiredScope: 'publish' } });
  });
});
