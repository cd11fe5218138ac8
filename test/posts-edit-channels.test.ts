// PATCH /v1/posts/{id} with `channelIds` (and `mediaIds`, `reddit`): the same checks as create
// with the new channel set, applied through the post's editPost Update; the post_channels rows
// are replaced, and the workflow publishes to the new set only (counted on the fake platform).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MediaItem } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { addChannel, setChannelStatus } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const DAY = 86_400_000;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;

beforeAll(async () => {
  stack = await startPostStack();
  fake = await startFakeMastodon();
  fake.validTokens.add('token-b');
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

async function mastodon(orgId: string, token: string) {
  return addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: orgId,
    platform: 'MASTODON',
    name: `mastodon ${token}`,
    credentials: { instanceUrl: fake.url, accessToken: token },
  });
}

async function media(orgId: string, type: 'image' | 'audio') {
  const em = stack.h.orm.em.fork();
  const id = newId('med');
  em.create(MediaItem, {
    id,
    organization: orgId,
    type,
    status: 'ready',
    fileName: `f.${type}`,
    mimeType: type === 'audio' ? 'audio/mpeg' : 'image/png',
    sizeBytes: 10,
    storageKey: `k/${id}`,
    uploadKey: `u/${id}`,
    apiKeyId: null,
    altText: null,
    uploadExpiresAt: new Date(Date.now() + 60_000),
  });
  await em.flush();
  return id;
}

async function schedule(key: string, body: Record<string, unknown>, inMs = 30 * DAY) {
  const at = new Date((await stack.syncClock()).getTime() + inMs).toISOString();
  const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { publishAt: at, ...body } });
  expect(r.status).toBe(201);
  return r.body;
}

const patch = (key: string, id: string, body: unknown) => call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body });
const get = async (key: string, id: string) => (await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).body;
const channelSet = (post: { channels: { channelId: string }[] }) => post.channels.map((c) => c.channelId).sort();

describe('PATCH channelIds', () => {
  test('moves a scheduled post to another channel: GET shows the new set as drafts; it publishes there only', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const a = await mastodon(org.id, 'good-token');
    const b = await mastodon(org.id, 'token-b');
    const text = `moved ${crypto.randomUUID()}`;
    const post = await schedule(key, { content: text, channelIds: [a.id] }, 10 * 60_000);

    const r = await patch(key, post.id, { channelIds: [b.id] });
    expect(r.status).toBe(200);
    expect(r.body.channels).toEqual([
      expect.objectContaining({ channelId: b.id, platform: 'MASTODON', status: 'draft', content: text, errorCode: null, retryable: null }),
    ]);
    expect((await get(key, post.id)).channels.map((c: { channelId: string; status: string }) => [c.channelId, c.status])).toEqual([
      [b.id, 'draft'],
    ]);

    await stack.env.sleep('11 minutes');
    await stack.settle(post.id);
    const sent = fake.statuses.filter((s) => s.text === text);
    expect(sent.map((s) => s.token)).toEqual(['token-b']);
    const done = await get(key, post.id);
    expect(done.status).toBe('published');
    expect(done.channels).toEqual([expect.objectContaining({ channelId: b.id, status: 'published' })]);
  });

  test('adding an X channel checks the text against X: too long → 422 and nothing changes', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const x = await makeChannel(org.id, 'X');
    const post = await schedule(key, { content: 'a'.repeat(400), channelIds: [m.id] });
    const r = await patch(key, post.id, { channelIds: [m.id, x.id] });
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields).toEqual([
      {
        path: 'content',
        message: `is 400 characters (X counts most CJK characters and emoji as 2 and every URL as 23); X channel ${x.id} allows 280`,
      },
    ]);
    expect(channelSet(await get(key, post.id))).toEqual([m.id]);
    // With a text of its own for X it fits.
    const ok = await patch(key, post.id, { channelIds: [m.id, x.id], contentByPlatform: { X: 'short for X' } });
    expect(ok.status).toBe(200);
    const byChannel = Object.fromEntries(ok.body.channels.map((c: { channelId: string; content: string }) => [c.channelId, c.content]));
    expect(byChannel).toEqual({ [m.id]: 'a'.repeat(400), [x.id]: 'short for X' });
  });

  test('per-platform texts of a platform no longer targeted are dropped', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const x = await makeChannel(org.id, 'X');
    const post = await schedule(key, { content: 'default', channelIds: [m.id, x.id], contentByPlatform: { X: 'for X' } });
    expect((await patch(key, post.id, { channelIds: [m.id] })).status).toBe(200);
    const back = await patch(key, post.id, { channelIds: [m.id, x.id] });
    expect(back.status).toBe(200);
    expect(back.body.channels.find((c: { channelId: string }) => c.channelId === x.id).content).toBe('default');
  });

  test('an added channel must be usable and known; a limited key cannot add one outside its list (403)', async () => {
    const org = await makeOrg();
    const other = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const second = await makeChannel(org.id, 'MASTODON');
    const third = await makeChannel(org.id, 'BLUESKY');
    const theirs = await makeChannel(other.id, 'MASTODON');
    const limited = await makeKey(org.id, { channels: [m.id, second.id] });
    const post = await schedule(limited.key, { content: 'limited', channelIds: [m.id] });

    const outside = await patch(limited.key, post.id, { channelIds: [m.id, third.id] });
    expect(outside.status).toBe(403);
    expect(outside.body.error).toMatchObject({ code: 'forbidden_scope', details: { channelIds: [third.id] } });
    expect((await patch(limited.key, post.id, { channelIds: [m.id, second.id] })).status).toBe(200);

    const foreign = await patch(key, post.id, { channelIds: [theirs.id] });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error.details.fields).toEqual([{ path: 'channelIds', message: `unknown channel ${theirs.id}` }]);

    await setChannelStatus(stack.h.orm.em.fork(), third.id, 'reauth_required');
    const reauth = await patch(key, post.id, { channelIds: [m.id, third.id] });
    expect(reauth.status).toBe(409);
    expect(reauth.body.error).toMatchObject({ code: 'reauth_required', details: { channelIds: [third.id] } });
    // A channel the post already has stays, whatever its status (as a text edit does).
    await setChannelStatus(stack.h.orm.em.fork(), second.id, 'reauth_required');
    expect((await patch(key, post.id, { channelIds: [second.id, m.id] })).status).toBe(200);
    expect(channelSet(await get(key, post.id))).toEqual([m.id, second.id].sort());
  });

  test('a REDDIT channel needs reddit fields; PATCH can give them', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const reddit = await makeChannel(org.id, 'REDDIT');
    const post = await schedule(key, { content: 'to reddit too', channelIds: [m.id] });
    const missing = await patch(key, post.id, { channelIds: [m.id, reddit.id] });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details.fields.map((f: { path: string }) => f.path)).toEqual(['reddit']);
    const ok = await patch(key, post.id, { channelIds: [m.id, reddit.id], reddit: { subreddit: 'test', title: 'Hello' } });
    expect(ok.status).toBe(200);
    expect(ok.body.reddit).toEqual({ subreddit: 'test', title: 'Hello' });
    expect(channelSet(ok.body)).toEqual([m.id, reddit.id].sort());
  });

  test('duplicate_post with the new channel set', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const n = await makeChannel(org.id, 'MASTODON');
    await schedule(key, { content: 'same text', channelIds: [n.id] });
    const post = await schedule(key, { content: 'same text', channelIds: [m.id] });
    const r = await patch(key, post.id, { channelIds: [m.id, n.id] });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'duplicate_post', details: { channelId: n.id } });
  });
});

describe('PATCH mediaIds', () => {
  test('onto an Instagram post: the platform’s rules apply; a valid set replaces the media', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const ig = await makeChannel(org.id, 'INSTAGRAM');
    const m = await makeChannel(org.id, 'MASTODON');
    const [one, two, audio] = [await media(org.id, 'image'), await media(org.id, 'image'), await media(org.id, 'audio')];
    const post = await schedule(key, { content: 'with an image', channelIds: [ig.id], mediaIds: [one] });
    const none = await patch(key, post.id, { mediaIds: [] });
    expect(none.status).toBe(422);
    expect(none.body.error.details.fields).toContainEqual({
      path: 'mediaIds',
      message: `INSTAGRAM channel ${ig.id} requires an image or video`,
    });
    const wrong = await patch(key, post.id, { mediaIds: [audio] });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details.fields).toContainEqual({
      path: 'mediaIds',
      message: `INSTAGRAM channel ${ig.id} does not accept audio files`,
    });
    const ok = await patch(key, post.id, { mediaIds: [two, one] });
    expect(ok.status).toBe(200);
    expect(ok.body.media.map((x: { id: string }) => x.id)).toEqual([two, one]);

    // A text-only Mastodon post gains an Instagram channel only together with media.
    const text = await schedule(key, { content: 'text only', channelIds: [m.id] });
    const noMedia = await patch(key, text.id, { channelIds: [m.id, ig.id] });
    expect(noMedia.status).toBe(422);
    expect(noMedia.body.error.details.fields).toContainEqual({
      path: 'mediaIds',
      message: `INSTAGRAM channel ${ig.id} requires an image or video`,
    });
    const both = await patch(key, text.id, { channelIds: [m.id, ig.id], mediaIds: [one] });
    expect(both.status).toBe(200);
    expect(channelSet(both.body)).toEqual([m.id, ig.id].sort());
    expect(both.body.media.map((x: { id: string }) => x.id)).toEqual([one]);
  });

  test('a limited key cannot attach media only posts on other channels use (unknown, as on create)', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const m = await makeChannel(org.id, 'MASTODON');
    const x = await makeChannel(org.id, 'X');
    const image = await media(org.id, 'image');
    await schedule(key, { content: 'uses it', channelIds: [x.id], mediaIds: [image] });
    const limited = await makeKey(org.id, { channels: [m.id] });
    const post = await schedule(limited.key, { content: 'mine', channelIds: [m.id] });
    const r = await patch(limited.key, post.id, { mediaIds: [image] });
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields).toEqual([{ path: 'mediaIds', message: `unknown media ${image}` }]);
  });
});
