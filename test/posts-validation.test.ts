// Every validation rule and error code of POST /v1/posts and PATCH /v1/posts/{id}; nothing is
// written by a refused request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { setChannelStatus } from '../domain/channels.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
beforeAll(async () => {
  stack = await startPostStack();
});
afterAll(async () => stack?.stop());

async function postCount(orgId: string) {
  return stack.h.orm.em.fork().count(Post, { organization: orgId });
}

async function expect422(r: { status: number; body: any }, path: string | RegExp) {
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('validation_failed');
  const paths = r.body.error.details.fields.map((f: { path: string }) => f.path);
  expect(paths.some((p: string) => (typeof path === 'string' ? p === path : path.test(p)))).toBe(true);
}

describe('POST /v1/posts validation', () => {
  test('body shape: missing/wrong fields, unknown fields, bad channel lists, malformed JSON', async () => {
    const org = await makeOrg();
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    const app = stack.app;
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { channelIds: [ch.id] } }), 'content');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x' } }), 'channelIds');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [] } }), 'channelIds');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [ch.id, ch.id] } }), 'channelIds');
    await expect422(
      await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: Array.from({ length: 51 }, (_, i) => `ch_${i}`) } }),
      'channelIds',
    );
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 5, channelIds: [ch.id] } }), 'content');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [ch.id], surprise: 1 } }), /surprise|^$/);
    await expect422(await call(app, 'POST', '/v1/posts', { key, rawBody: '{"content":' }), '');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'nul \u0000 byte', channelIds: [ch.id] } }), 'content');
    expect(await postCount(org.id)).toBe(0);
  });

  test('channels: unknown or another organization’s → 422; outside a limited key → 403; reauth → 409; disabled → 422', async () => {
    const org = await makeOrg();
    const other = await makeOrg();
    const mine = await makeChannel(org.id, 'MASTODON');
    const second = await makeChannel(org.id, 'MASTODON');
    const theirs = await makeChannel(other.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    const limited = await makeKey(org.id, { channels: [mine.id] });
    const app = stack.app;
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: ['ch_nope'] } }), 'channelIds');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [theirs.id] } }), 'channelIds');
    const outside = await call(app, 'POST', '/v1/posts', { key: limited.key, body: { content: 'x', channelIds: [mine.id, second.id] } });
    expect(outside.status).toBe(403);
    expect(outside.body.error).toMatchObject({ code: 'forbidden_scope', details: { channelIds: [second.id] } });
    await setChannelStatus(stack.h.orm.em.fork(), second.id, 'reauth_required');
    const reauth = await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [mine.id, second.id] } });
    expect(reauth.status).toBe(409);
    expect(reauth.body.error).toMatchObject({ code: 'reauth_required', details: { channelIds: [second.id] } });
    await setChannelStatus(stack.h.orm.em.fork(), second.id, 'disabled');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [second.id] } }), 'channelIds');
    expect(await postCount(org.id)).toBe(0);
  });

  test('text per channel: maxChars counted as the platform counts, contentByPlatform chosen per platform', async () => {
    const org = await makeOrg();
    const m = await makeChannel(org.id, 'MASTODON');
    const x = await makeChannel(org.id, 'X');
    const { key } = await makeKey(org.id);
    const app = stack.app;
    // X weighs every emoji 2 (twitter-text): 140 family emoji (each one grapheme, many code units)
    // fit X exactly; 141 do not (test/weighted-length.test.ts has CJK, URLs and mixes).
    const family = '👨‍👩‍👧‍👦';
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: family.repeat(141), channelIds: [x.id] } }), 'content');
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: 'a'.repeat(501), channelIds: [m.id] } }), 'content');
    // Long default text is fine when each platform gets its own short one.
    await expect422(
      await call(app, 'POST', '/v1/posts', {
        key,
        body: { content: 'a'.repeat(400), channelIds: [m.id, x.id], contentByPlatform: { X: 'b'.repeat(281) } },
      }),
      'contentByPlatform.X',
    );
    await expect422(
      await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [m.id], contentByPlatform: { LINKEDIN: 'y' } } }),
      'contentByPlatform.LINKEDIN',
    );
    await expect422(await call(app, 'POST', '/v1/posts', { key, body: { content: '', channelIds: [m.id] } }), 'content');
    expect(await postCount(org.id)).toBe(0);
    const ok = await call(app, 'POST', '/v1/posts', {
      key,
      body: {
        content: 'a'.repeat(400),
        channelIds: [m.id, x.id],
        contentByPlatform: { X: family.repeat(140) },
        publishAt: new Date((await stack.syncClock()).getTime() + 86_400_000 * 30).toISOString(),
      },
    });
    expect(ok.status).toBe(201);
    const byChannel = Object.fromEntries(ok.body.channels.map((c: { channelId: string; content: string }) => [c.channelId, c.content]));
    expect(byChannel[m.id]).toBe('a'.repeat(400));
    expect(byChannel[x.id]).toBe(family.repeat(140));
  });

  test('requiresMedia and requiredFields (reddit)', async () => {
    const org = await makeOrg();
    const ig = await makeChannel(org.id, 'INSTAGRAM');
    const reddit = await makeChannel(org.id, 'REDDIT');
    const { key } = await makeKey(org.id);
    await expect422(await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [ig.id] } }), 'mediaIds');
    await expect422(await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [reddit.id] } }), 'reddit');
    await expect422(
      await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [reddit.id], reddit: { subreddit: 'test' } } }),
      /reddit/,
    );
    expect(await postCount(org.id)).toBe(0);
    const ok = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: 'x',
        channelIds: [reddit.id],
        reddit: { subreddit: 'test', title: 'Hello' },
        publishAt: new Date((await stack.syncClock()).getTime() + 86_400_000 * 30).toISOString(),
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.reddit).toEqual({ subreddit: 'test', title: 'Hello' });
  });

  test('publishAt: offset required, at most 5 minutes in the past', async () => {
    const org = await makeOrg();
    const m = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    const now = await stack.syncClock();
    const body = (publishAt: string) => ({ content: `t ${publishAt}`, channelIds: [m.id], publishAt });
    await expect422(await call(stack.app, 'POST', '/v1/posts', { key, body: body('tomorrow') }), 'publishAt');
    await expect422(await call(stack.app, 'POST', '/v1/posts', { key, body: body('2030-01-01T10:00:00') }), 'publishAt');
    await expect422(
      await call(stack.app, 'POST', '/v1/posts', { key, body: body(new Date(now.getTime() - 6 * 60_000).toISOString()) }),
      'publishAt',
    );
    expect(await postCount(org.id)).toBe(0);
    const recent = await call(stack.app, 'POST', '/v1/posts', { key, body: body(new Date(now.getTime() - 4 * 60_000).toISOString()) });
    expect(recent.status).toBe(201);
    const offset = await call(stack.app, 'POST', '/v1/posts', { key, body: body('2099-01-01T10:00:00+02:00') });
    expect(offset.status).toBe(201);
    expect(offset.body.scheduledAt).toBe('2099-01-01T08:00:00.000Z');
  });

  test('scopes: POST and PATCH need publish; GET needs read', async () => {
    const org = await makeOrg();
    const m = await makeChannel(org.id, 'MASTODON');
    const read = await makeKey(org.id, { scopes: ['read'] });
    const publish = await makeKey(org.id, { scopes: ['publish'] });
    const r = await call(stack.app, 'POST', '/v1/posts', { key: read.key, body: { content: 'x', channelIds: [m.id] } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('forbidden_scope');
    expect((await call(stack.app, 'PATCH', '/v1/posts/post_x', { key: read.key, body: { content: 'y' } })).body.error.code).toBe(
      'forbidden_scope',
    );
    expect((await call(stack.app, 'GET', '/v1/posts', { key: publish.key })).body.error.code).toBe('forbidden_scope');
    expect((await call(stack.app, 'GET', '/v1/posts/post_x', { key: publish.key })).body.error.code).toBe('forbidden_scope');
  });
});

describe('PATCH /v1/posts/{id} validation', () => {
  test('same rules as create; unknown and other organizations’ posts → 404; empty body → 422', async () => {
    const org = await makeOrg();
    const other = await makeOrg();
    const x = await makeChannel(org.id, 'X');
    const { key } = await makeKey(org.id);
    const otherKey = await makeKey(other.id);
    const future = new Date((await stack.syncClock()).getTime() + 86_400_000 * 30).toISOString();
    const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'short', channelIds: [x.id], publishAt: future } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await expect422(await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { content: 'z'.repeat(281) } }), 'content');
    await expect422(await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { publishAt: '2000-01-01T00:00:00Z' } }), 'publishAt');
    await expect422(await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: {} }), /.*/);
    await expect422(await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { channelIds: [] } }), /.*/);
    expect((await call(stack.app, 'PATCH', '/v1/posts/post_unknown', { key, body: { content: 'y' } })).status).toBe(404);
    const foreign = await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key: otherKey.key, body: { content: 'y' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await call(stack.app, 'GET', `/v1/posts/${id}`, { key: otherKey.key })).status).toBe(404);
    // Nothing changed.
    const after = await call(stack.app, 'GET', `/v1/posts/${id}`, { key });
    expect(after.body).toMatchObject({ content: 'short', scheduledAt: future, status: 'scheduled' });
    // A valid edit works and only changes what it names.
    const ok = await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { contentByPlatform: { X: 'for X' } } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ content: 'short', scheduledAt: future });
    expect(ok.body.channels[0].content).toBe('for X');
  });
});
