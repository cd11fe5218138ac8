// All thirteen platforms end to end in one go: API → Postgres → post workflows (time-skipping
// server) → the real connectors from createConnectors() → each platform's local fake (and a real
// Bluesky PDS). Media goes through the real three-step upload on the disk store.
//
// One post cannot reach every platform: TikTok and YouTube take exactly one video, Pinterest and
// Instagram need an image, and a video must be alone on most others. So the fan-out is two posts
// created at once: a PNG to the eleven image-capable platforms, an MP4 to TikTok and YouTube, each
// with its own text per platform (contentByPlatform) so every fake's post can be told apart.
//
// Instagram and Threads fetch media by URL. The disk store signs http://localhost/storage/object/…
// URLs (the stack's publicBaseUrl), which the app serves — but in tests the app answers only
// app.handle(), so nothing listens there. The app is therefore also put on a real socket
// (127.0.0.1:<port>) for this file, and the Instagram/Threads connectors are wrapped so the
// signed URL they hand to Meta is the same URL on that socket (same path and token: the disk
// store's signature covers the token, not the host). The Meta fakes then download the bytes over
// HTTP from the app itself, as Meta does from a public API host in production.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { Channel, Post, PostChannel } from '../db/entities/index.ts';
import { COMMENTS, FOLLOW_UPS, MEDIA_LIMITS, PLATFORMS, type Platform } from '../platforms/catalog.ts';
import { BOARD_ID } from './fakes/pinterest.ts';
import { createConnectors } from '../platforms/index.ts';
import type { Connector, MediaRef, PublishRequest } from '../platforms/types.ts';
import { addChannel } from '../domain/channels.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { createMediaFixtures, type MediaFixtures } from './fixtures/media.ts';
import { startAllFakes, type AllFakes } from './harness/all-fakes.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;

const VIDEO_PLATFORMS: Platform[] = ['TIKTOK', 'YOUTUBE'];
const IMAGE_PLATFORMS: Platform[] = PLATFORMS.filter((p) => !VIDEO_PLATFORMS.includes(p));
/** The choices TikTok and YouTube leave to the creator (each platform gives no default). */
const VIDEO_CHOICES = { tiktok: { privacyLevel: 'PUBLIC_TO_EVERYONE' }, youtube: { madeForKids: false } };

let fx: MediaFixtures;
let fakes: AllFakes;
let stack: Stack;
let appServer: ReturnType<typeof Bun.serve>;
/** Signed media URLs the wrapped Instagram/Threads/TikTok connectors handed out, as rewritten. */
const handedOut: string[] = [];

/** The signed disk-store URL, on the socket the app listens on. */
function onAppSocket(url: string): string {
  const u = new URL(url);
  if (u.origin !== 'http://localhost') return url;
  const out = `http://127.0.0.1:${appServer.port}${u.pathname}${u.search}`;
  handedOut.push(out);
  return out;
}

/** A connector that hands out media URLs (Instagram, Threads, TikTok photos) its fake can reach (see the header). */
function withReachableMedia(c: Connector): Connector {
  const media = (m: MediaRef): MediaRef => (m.url ? { ...m, url: async () => onAppSocket(await m.url!()) } : m);
  const req = (r: PublishRequest): PublishRequest => ({ ...r, media: r.media.map(media) });
  return {
    ...c,
    publish: (r) => c.publish(req(r)),
    ...(c.findPublished ? { findPublished: (r: PublishRequest) => c.findPublished!(req(r)) } : {}),
  };
}

beforeAll(async () => {
  [fx, fakes] = await Promise.all([createMediaFixtures(), startAllFakes()]);
  const connectors = createConnectors(fakes.settings, { allowPrivate: true }); // the fakes listen on 127.0.0.1
  connectors.INSTAGRAM = withReachableMedia(connectors.INSTAGRAM!);
  connectors.THREADS = withReachableMedia(connectors.THREADS!);
  connectors.TIKTOK = withReachableMedia(connectors.TIKTOK!);
  stack = await startPostStack({ storage: 'disk', connectors });
  appServer = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => stack.app.handle(r) });
  // TikTok pulls a photo post's images only from URL prefixes verified for the app: the app's store.
  fakes.tiktok.verifiedUrlPrefixes.push(`http://127.0.0.1:${appServer.port}/storage/object/`);
}, 120_000);

afterAll(async () => {
  appServer?.stop(true);
  await stack?.stop();
  await fakes?.stop();
  await fx?.cleanup();
}, 30_000);

// ---- helpers ---------------------------------------------------------------------------------

/** The three-step upload on the disk store: create, PUT through the app, complete → ready. */
async function uploadMedia(key: string, file: string, fileName: string, mimeType: string) {
  const bytes = readFileSync(file);
  const created = await call(stack.app, 'POST', '/v1/media/uploads', { key, body: { fileName, mimeType, fileSize: bytes.length } });
  expect(created.status).toBe(201);
  const { media, upload } = created.body;
  const put = await stack.app.handle(new Request(upload.url, { method: upload.method, headers: upload.headers, body: bytes }));
  expect(put.status).toBe(200);
  const done = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
  expect(done.status).toBe(200);
  expect(done.body.status).toBe('ready');
  return { id: done.body.id as string, bytes };
}

/** An organization with one channel on every platform, each with the credentials its fake accepts. */
async function setup() {
  // An earlier test may have moved the server's clock: the upload window is counted on the API's.
  await stack.syncClock();
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channels = {} as Record<Platform, string>;
  for (const platform of PLATFORMS) {
    const ch = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform,
      name: `${platform.toLowerCase()} channel`,
      credentials: fakes.credentials[platform],
    });
    channels[platform] = ch.id;
  }
  const image = await uploadMedia(key, fx.files.png, 'photo.png', 'image/png');
  const video = await uploadMedia(key, fx.files.mp4, 'clip.mp4', 'video/mp4');
  return { org, key, channels, image, video };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The two posts of the fan-out, created back to back (publish now). */
async function postEverywhere(s: Setup, tag: string) {
  const textFor = (p: Platform) => `Launch ${tag} on ${p.toLowerCase()}`;
  const body = (platforms: Platform[], mediaId: string, extra: Record<string, unknown> = {}) => ({
    content: `Launch ${tag}`,
    contentByPlatform: Object.fromEntries(platforms.map((p) => [p, textFor(p)])),
    channelIds: platforms.map((p) => s.channels[p]),
    mediaIds: [mediaId],
    ...extra,
  });
  const [imagePost, videoPost] = await Promise.all([
    call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: body(IMAGE_PLATFORMS, s.image.id, { reddit: { subreddit: 'test', title: `Launch ${tag}` } }),
    }),
    call(stack.app, 'POST', '/v1/posts', { key: s.key, body: body(VIDEO_PLATFORMS, s.video.id, { options: VIDEO_CHOICES }) }),
  ]);
  expect(imagePost.status).toBe(201);
  expect(videoPost.status).toBe(201);
  return { ids: [imagePost.body.id as string, videoPost.body.id as string], textFor };
}

async function getPost(key: string, id: string) {
  const r = await call(stack.app, 'GET', `/v1/posts/${id}`, { key });
  expect(r.status).toBe(200);
  return r.body;
}

/** Every channel of both posts, by platform. */
async function channelsByPlatform(key: string, ids: string[]) {
  const out = {} as Record<Platform, any>;
  for (const id of ids) for (const ch of (await getPost(key, id)).channels) out[ch.platform as Platform] = ch;
  return out;
}

/** The channel rows of both posts by platform, read from Postgres (polling the API would hit its rate limit). */
async function rowsByPlatform(ids: string[]) {
  const rows = await stack.h.orm.em.fork().find(PostChannel, { post: { $in: ids } });
  return Object.fromEntries(rows.map((r) => [r.platform, r])) as Record<Platform, (typeof rows)[number]>;
}

/** Polls in real time (the server clock is not moved) until `done` holds. */
async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await Bun.sleep(50);
  }
}

const workflowStatus = async (postId: string) => (await stack.env.client.workflow.getHandle(postWorkflowId(postId)).describe()).status.name;

/**
 * Until the posts' workflows have finished. Nothing needs the clock moved: every fake answers
 * within seconds (TikTok's status polls are 5 s apart). Waiting in real time first keeps stack.settle from stepping the shared clock
 * while publishes are still in flight (a step could outrun their 10 s heartbeat timeout).
 */
async function untilDone(ids: string[]) {
  await waitFor(
    'the workflows to finish',
    () => Promise.all(ids.map(workflowStatus)),
    (st) => st.every((x) => x !== 'RUNNING'),
  );
  await Promise.all(ids.map((id) => stack.settle(id)));
}

/** The URL each platform's connector reports for the post `id` (the title slug is Reddit's). */
function expectedUrl(platform: Platform, id: string, tag: string): string {
  const shortcode = (meta: AllFakes['instagram']) => meta.posts.find((p) => p.id === id)?.shortcode;
  switch (platform) {
    case 'X':
      return `https://x.com/i/web/status/${id}`;
    case 'BLUESKY':
      return `https://bsky.app/profile/${fakes.bluesky.handle}/post/${id.split('/').pop()}`;
    case 'THREADS':
      return `https://www.threads.com/@fakeaccount/post/${shortcode(fakes.threads)}`;
    case 'LINKEDIN':
      return `https://www.linkedin.com/feed/update/${id}`;
    case 'MASTODON':
      return `${fakes.mastodon.url}/@user/${id}`;
    case 'INSTAGRAM':
      return `https://www.instagram.com/p/${shortcode(fakes.instagram)}/`;
    case 'FACEBOOK':
      return `https://www.facebook.com/${id}`;
    case 'TIKTOK':
      return `https://www.tiktok.com/@${fakes.tiktok.creator.creator_username}/video/${id}`;
    case 'YOUTUBE':
      return `https://www.youtube.com/watch?v=${id}`;
    case 'PINTEREST':
      return `https://www.pinterest.com/pin/${id}/`;
    case 'REDDIT':
      return `https://www.reddit.com/r/test/comments/${id.replace(/^t3_/, '')}/launch_${tag}/`;
    case 'TELEGRAM':
      return `https://t.me/postpilot_news/${id}`;
    case 'DISCORD':
      return `https://discord.com/channels/${fakes.discord.webhook.guild_id}/${fakes.discord.webhook.channel_id}/${id}`;
  }
}

// ---- tests -----------------------------------------------------------------------------------

describe('every platform at once', () => {
  test('one fan-out to all 13 channels: every channel published with an id and a URL of its platform; each fake got exactly one post', async () => {
    const s = await setup();
    await stack.syncClock();
    const tag = crypto.randomUUID().slice(0, 8);
    const started = Date.now();
    const { ids, textFor } = await postEverywhere(s, tag);

    await untilDone(ids);
    const elapsed = Date.now() - started;

    for (const id of ids) {
      const post = await getPost(s.key, id);
      expect(post.status).toBe('published');
      expect(post.publishedAt).toBeTruthy();
    }
    const byPlatform = await channelsByPlatform(s.key, ids);
    expect(Object.keys(byPlatform).sort()).toEqual([...PLATFORMS].sort());
    for (const platform of PLATFORMS) {
      const ch = byPlatform[platform];
      expect({ platform, status: ch.status, error: ch.error }).toEqual({ platform, status: 'published', error: null });
      expect(ch.content).toBe(textFor(platform));
      expect(ch.platformPostId).toBeTruthy();
      expect(ch.publishedAt).toBeTruthy();
      // Exactly one post on the platform, and it is the one the channel reports.
      const got = await fakes.received(platform, textFor(platform));
      expect({ platform, count: got.length }).toEqual({ platform, count: 1 });
      expect({ platform, id: ch.platformPostId }).toEqual({ platform, id: got[0]!.id });
      expect({ platform, url: ch.url }).toEqual({ platform, url: expectedUrl(platform, ch.platformPostId, tag) });
    }
    expect(byPlatform.BLUESKY.platformPostId).toStartWith(`at://${fakes.bluesky.did}/app.bsky.feed.post/`);
    expect(byPlatform.FACEBOOK.platformPostId).toMatch(new RegExp(`^${fakes.facebook.accountId}_\\d+$`));
    expect(byPlatform.LINKEDIN.platformPostId).toMatch(/^urn:li:share:\d+$/);
    expect(byPlatform.REDDIT.platformPostId).toMatch(/^t3_[a-z0-9]+$/);

    // The media reached each platform. Instagram and Threads downloaded the PNG from the app's
    // signed disk-store URL themselves.
    for (const meta of [fakes.instagram, fakes.threads]) {
      const post = meta.posts.find((p) => p.text.includes(tag))!;
      const container = meta.containers.find((c) => c.id === post.media[0])!;
      expect(container.mediaType).toBe('IMAGE');
      expect(container.fetched).toEqual({
        url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${appServer.port}/storage/object/`)),
        contentType: 'image/png',
        size: s.image.bytes.length,
      });
      expect(handedOut).toContain(container.fetched!.url);
    }
    expect(fakes.x.tweets.find((t) => t.text === textFor('X'))!.mediaIds).toHaveLength(1);
    expect(fakes.facebook.posts.find((p) => p.text === textFor('FACEBOOK'))!).toMatchObject({
      kind: 'added_photos',
      media: [expect.any(String)],
    });
    expect(fakes.pinterest.pins.find((p) => p.description === textFor('PINTEREST'))!.media).toMatchObject({ type: 'image' });
    expect(fakes.reddit.posts.find((p) => p.title === `Launch ${tag}`)).toMatchObject({ kind: 'image', subreddit: 'test' });
    expect(fakes.telegram.messages.find((m) => m.caption === textFor('TELEGRAM'))).toMatchObject({ kind: 'photo' });
    expect(fakes.discord.messages.find((m) => m.content === textFor('DISCORD'))!.attachments).toHaveLength(1);
    expect(fakes.mastodon.statuses.find((m) => m.text === textFor('MASTODON'))!.media_ids).toHaveLength(1);
    const tiktok = fakes.tiktok.publishes.find((p) => p.post?.caption === textFor('TIKTOK'))!;
    expect(tiktok.received).toBe(s.video.bytes.length);
    expect(fakes.youtube.videos.find((v) => `${v.title}\n${v.description}`.includes(textFor('YOUTUBE')))!.size).toBe(s.video.bytes.length);

    console.log(`all 13 channels published in ${elapsed} ms`);
  }, 90_000);

  test('a conversation wherever the platform has one: a thread of replies on X, Bluesky, Mastodon and Threads, a first comment under the post on the others', async () => {
    const s = await setup();
    await stack.syncClock();
    const tag = crypto.randomUUID().slice(0, 8);
    const THREADED: Platform[] = ['X', 'BLUESKY', 'MASTODON', 'THREADS'];
    const COMMENTED: Platform[] = ['FACEBOOK', 'INSTAGRAM', 'LINKEDIN', 'REDDIT'];
    const post = (platforms: Platform[], mediaId: string, extra: Record<string, unknown>) =>
      call(stack.app, 'POST', '/v1/posts', {
        key: s.key,
        body: {
          content: `Talk ${tag}`,
          contentByPlatform: Object.fromEntries(platforms.map((p) => [p, `Talk ${tag} on ${p.toLowerCase()}`])),
          channelIds: platforms.map((p) => s.channels[p]),
          mediaIds: [mediaId],
          firstComment: { content: `First ${tag}` },
          ...extra,
        },
      });
    const [images, video] = await Promise.all([
      post([...THREADED, ...COMMENTED], s.image.id, {
        thread: [{ content: `Reply ${tag}` }],
        threadByPlatform: Object.fromEntries(COMMENTED.map((p) => [p, []])),
        reddit: { subreddit: 'test', title: `Talk ${tag}` },
      }),
      post(['YOUTUBE'], s.video.id, { options: { youtube: VIDEO_CHOICES.youtube } }),
    ]);
    expect(images.status).toBe(201);
    expect(video.status).toBe(201);
    const ids = [images.body.id as string, video.body.id as string];
    await untilDone(ids);
    const byPlatform = await channelsByPlatform(s.key, ids);
    const items = (p: Platform) => byPlatform[p].items as { kind: string; status: string; platformPostId: string; content: string }[];
    for (const p of [...THREADED, ...COMMENTED, 'YOUTUBE' as Platform]) {
      expect({ p, status: byPlatform[p].status }).toEqual({ p, status: 'published' });
      const want = THREADED.includes(p) ? ['post', 'reply', 'reply'] : ['post', 'comment'];
      expect({ p, kinds: items(p).map((i) => i.kind) }).toEqual({ p, kinds: want });
      expect({ p, statuses: items(p).map((i) => i.status) }).toEqual({ p, statuses: want.map(() => 'published') });
      expect(new Set(items(p).map((i) => i.platformPostId)).size).toBe(want.length);
    }
    // Each follow-up answers the item before (a reply) or sits under the post (a comment), on the platform itself.
    const [x0, x1, x2] = items('X').map((i) => fakes.x.tweets.find((t) => t.id === i.platformPostId)!);
    expect([x1!.inReplyTo, x2!.inReplyTo]).toEqual([x0!.id, x1!.id]);
    expect(x1!.text).toBe(`First ${tag}`);
    const [m0, m1, m2] = items('MASTODON').map((i) => fakes.mastodon.statuses.find((st) => st.id === i.platformPostId)!);
    expect([m1!.in_reply_to_id, m2!.in_reply_to_id]).toEqual([m0!.id, m1!.id]);
    const [t0, t1, t2] = items('THREADS').map((i) => fakes.threads.posts.find((pp) => pp.id === i.platformPostId)!);
    expect([t1!.replyTo, t2!.replyTo]).toEqual([t0!.id, t1!.id]);
    const bsky = await fakes.received('BLUESKY', `Reply ${tag}`);
    expect(bsky).toHaveLength(1);
    for (const [p, comments] of [
      ['FACEBOOK', fakes.facebook.comments.map((c) => [c.postId, c.text])],
      ['INSTAGRAM', fakes.instagram.comments.map((c) => [c.postId, c.text])],
      ['LINKEDIN', fakes.linkedin.comments.map((c) => [c.object, c.text])],
      ['REDDIT', fakes.reddit.comments.map((c) => [c.parentId, c.body])],
      ['YOUTUBE', fakes.youtube.comments.map((c) => [c.videoId, c.text])],
    ] as [Platform, string[][]][]) {
      const mine = comments.filter(([, text]) => text === `First ${tag}`);
      expect({ p, under: mine.map(([parent]) => parent) }).toEqual({ p, under: [items(p)[0]!.platformPostId] });
    }
  }, 90_000);

  test('LinkedIn down (503 on every create): the other 12 publish at once; LinkedIn fails after all its retries with LinkedIn’s message', async () => {
    const s = await setup();
    await stack.syncClock();
    const tag = crypto.randomUUID().slice(0, 8);
    // workflows/post.ts publishOptions.retry: 10 attempts, backoff 5 s doubling, capped at 10 min.
    const ATTEMPTS = 10;
    const BACKOFF_S = Array.from({ length: ATTEMPTS - 1 }, (_, i) => Math.min(5 * 2 ** i, 600)).reduce((a, b) => a + b, 0); // 1835 s
    const linkedin = fakes.linkedin;
    const createsBefore = linkedin.count('posts');
    linkedin.failNext(ATTEMPTS, { status: 503, body: { status: 503, message: 'Service Unavailable' } }, 'posts');
    const { ids, textFor } = await postEverywhere(s, tag);
    const [imagePostId, videoPostId] = ids as [string, string];
    const others = PLATFORMS.filter((p) => p !== 'LINKEDIN');

    // In real time, with the clock left alone: the twelve others are published while LinkedIn's
    // channel is still retrying and its post's workflow still runs.
    const early = await waitFor(
      'the other twelve channels',
      () => rowsByPlatform(ids),
      (c) => others.every((p) => c[p]?.status === 'published'),
    );
    expect(early.LINKEDIN.status).toBe('publishing');
    expect(await workflowStatus(imagePostId)).toBe('RUNNING');
    expect(linkedin.count('posts') - createsBefore).toBeLessThan(ATTEMPTS);
    await waitFor(
      'the video post',
      () => workflowStatus(videoPostId),
      (st) => st !== 'RUNNING',
    );
    await stack.settle(videoPostId);

    // Now the backoff (about half an hour) passes in bounded steps of the test server's clock.
    await stack.settle(imagePostId, { step: '5 minutes', maxSteps: 40 });

    const imagePost = await getPost(s.key, imagePostId);
    expect(imagePost.status).toBe('failed');
    expect(imagePost.publishedAt).toBeNull();
    expect((await getPost(s.key, videoPostId)).status).toBe('published');
    const byPlatform = await channelsByPlatform(s.key, ids);
    expect(byPlatform.LINKEDIN).toMatchObject({
      status: 'failed',
      error: 'LinkedIn 503: Service Unavailable',
      platformPostId: null,
      url: null,
      publishedAt: null,
    });
    for (const platform of others) {
      const ch = byPlatform[platform];
      expect({ platform, status: ch.status, error: ch.error }).toEqual({ platform, status: 'published', error: null });
      const got = await fakes.received(platform, textFor(platform));
      expect({ platform, count: got.length }).toEqual({ platform, count: 1 });
      expect({ platform, id: ch.platformPostId, url: ch.url }).toEqual({
        platform,
        id: got[0]!.id,
        url: expectedUrl(platform, got[0]!.id, tag),
      });
    }
    // LinkedIn was asked exactly once per attempt, and nothing was created there.
    expect(linkedin.count('posts') - createsBefore).toBe(ATTEMPTS);
    expect(await fakes.received('LINKEDIN', textFor('LINKEDIN'))).toHaveLength(0);
    const em = stack.h.orm.em.fork();
    const pcs = await em.find(PostChannel, { post: imagePostId });
    const li = pcs.find((pc) => pc.platform === 'LINKEDIN')!;
    expect(li.attempts).toBe(ATTEMPTS);
    // A platform outage is not the account's fault: the channel stays usable.
    expect((await em.findOneOrFail(Channel, { id: s.channels.LINKEDIN })).status).toBe('active');

    // The timing, from the workflow's history (the test server's clock): every other channel's
    // publish completed within a minute of the start; LinkedIn's failed only after the whole
    // backoff, on its last attempt.
    const events = (await stack.env.client.workflow.getHandle(postWorkflowId(imagePostId)).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
    const t0 = at(events[0]!);
    const channelOf = new Map<string, string>();
    for (const e of events) {
      const a = e.activityTaskScheduledEventAttributes;
      if (a?.activityType?.name !== 'publishToChannel') continue;
      channelOf.set(String(e.eventId), JSON.parse(new TextDecoder().decode(a.input!.payloads![0]!.data!)).channelId);
    }
    const attempt = new Map<string, number>();
    const outcome = new Map<string, { kind: 'completed' | 'failed'; ms: number; attempt?: number }>();
    for (const e of events) {
      // Retries happen on the server: history holds the last attempt's start and its outcome.
      const started = e.activityTaskStartedEventAttributes;
      if (started) attempt.set(String(started.scheduledEventId), started.attempt ?? 1);
      const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      const channel = done && channelOf.get(String(done.scheduledEventId));
      if (channel) {
        const kind = e.activityTaskCompletedEventAttributes ? 'completed' : 'failed';
        outcome.set(channel, { kind, ms: at(e) - t0, attempt: attempt.get(String(done.scheduledEventId)) });
      }
    }
    expect(channelOf.size).toBe(IMAGE_PLATFORMS.length);
    const othersDone = IMAGE_PLATFORMS.filter((p) => p !== 'LINKEDIN').map((p) => ({ platform: p, ...outcome.get(s.channels[p]) }));
    for (const o of othersDone) {
      expect(o.kind).toBe('completed');
      expect(o.ms).toBeLessThan(60_000);
    }
    const liOutcome = outcome.get(s.channels.LINKEDIN)!;
    expect(liOutcome).toMatchObject({ kind: 'failed', attempt: ATTEMPTS });
    expect(liOutcome.ms).toBeGreaterThanOrEqual(BACKOFF_S * 1000);
    expect(Math.max(...othersDone.map((o) => o.ms!))).toBeLessThan(liOutcome.ms - BACKOFF_S * 1000 + 60_000);
    // And in wall-clock time: LinkedIn's row changed last.
    const lastOther = Math.max(...pcs.filter((pc) => pc.platform !== 'LINKEDIN').map((pc) => pc.updatedAt.getTime()));
    expect(li.updatedAt.getTime()).toBeGreaterThan(lastOther);
  }, 90_000);
});

describe('what each account can do now (GET /v1/channels/{id}/capabilities)', () => {
  const capabilities = (key: string, id: string, query = '') => call(stack.app, 'GET', `/v1/channels/${id}/capabilities${query}`, { key });

  test('fixed facts for every platform; live ones read from TikTok, Pinterest, Reddit (a subreddit) and YouTube', async () => {
    const s = await setup();
    for (const platform of PLATFORMS) {
      const r = await capabilities(s.key, s.channels[platform]);
      expect({ platform, status: r.status }).toEqual({ platform, status: 200 });
      expect(r.body.fixed.media).toEqual(MEDIA_LIMITS[platform]);
      expect(r.body.fixed.followUps).toEqual(FOLLOW_UPS[platform]);
      expect(r.body.fixed.comments).toEqual(COMMENTS[platform]);
      const live = ['TIKTOK', 'PINTEREST', 'YOUTUBE'].includes(platform);
      expect({ platform, live: r.body.live !== null, error: r.body.liveError }).toEqual({ platform, live, error: null });
    }
    const tiktok = (await capabilities(s.key, s.channels.TIKTOK)).body;
    expect(tiktok.live).toMatchObject({ platform: 'TIKTOK', privacyLevelOptions: fakes.tiktok.creator.privacy_level_options });
    expect(tiktok.fixed).toMatchObject({ maxChars: 2200, requiresMedia: true });
    const pinterest = (await capabilities(s.key, s.channels.PINTEREST)).body;
    expect(pinterest.live.boards).toContainEqual({ id: BOARD_ID, name: 'Red squares', privacy: 'PUBLIC' });
    expect((await capabilities(s.key, s.channels.YOUTUBE)).body.live.categories.length).toBeGreaterThan(0);
    const reddit = await capabilities(s.key, s.channels.REDDIT, '?subreddit=test');
    expect(reddit.status).toBe(200);
    expect(reddit.body.live).toMatchObject({ platform: 'REDDIT', subreddit: 'test', allows: { text: true } });
  });

  test('kept five minutes per channel: the second read does not ask the platform', async () => {
    const s = await setup();
    const asked = () => fakes.tiktok.requests.filter((r) => r.path === '/v2/post/publish/creator_info/query/').length;
    const before = asked();
    const first = (await capabilities(s.key, s.channels.TIKTOK)).body;
    const second = (await capabilities(s.key, s.channels.TIKTOK)).body;
    expect(asked()).toBe(before + 1);
    expect(second.readAt).toBe(first.readAt);
  });

  test('a refused read answers why, and leaves the channel as it is; a subreddit asked of another platform is 422', async () => {
    const s = await setup();
    const bad = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: (await stack.h.orm.em.fork().findOneOrFail(Channel, { id: s.channels.TIKTOK })).organization,
      platform: 'TIKTOK',
      name: 'revoked',
      credentials: { ...fakes.credentials.TIKTOK, accessToken: 'revoked-token' },
    });
    const r = await capabilities(s.key, bad.id);
    expect(r.status).toBe(200);
    expect(r.body.live).toBeNull();
    expect(r.body.liveError.kind).toBe('reauth');
    expect((await stack.h.orm.em.fork().findOneOrFail(Channel, { id: bad.id })).status).toBe('active');
    const wrong = await capabilities(s.key, s.channels.X, '?subreddit=test');
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details.fields[0].path).toBe('subreddit');
    const other = await makeKey((await makeOrg()).id);
    expect((await capabilities(other.key, s.channels.TIKTOK)).status).toBe(404);
  });
});

describe('per-platform options, through the workflow to each platform', () => {
  test('each option reaches its platform as its API names it', async () => {
    const s = await setup();
    const tag = crypto.randomUUID().slice(0, 8);
    const text = (p: Platform) => `Options ${tag} on ${p.toLowerCase()}`;
    const body = (platforms: Platform[], mediaId: string, extra: Record<string, unknown>) => ({
      content: `Options ${tag}`,
      contentByPlatform: Object.fromEntries(platforms.map((p) => [p, text(p)])),
      channelIds: platforms.map((p) => s.channels[p]),
      mediaIds: [mediaId],
      ...extra,
    });
    const imagePlatforms: Platform[] = ['X', 'LINKEDIN', 'REDDIT', 'PINTEREST', 'TELEGRAM', 'DISCORD', 'INSTAGRAM', 'FACEBOOK'];
    const [images, video] = await Promise.all([
      call(stack.app, 'POST', '/v1/posts', {
        key: s.key,
        body: body(imagePlatforms, s.image.id, {
          reddit: { subreddit: 'test', title: `Options ${tag}` },
          options: {
            x: { replySettings: 'following' },
            linkedin: { visibility: 'CONNECTIONS' },
            reddit: { nsfw: true, spoiler: true },
            pinterest: { title: `Pin ${tag}`, link: 'https://example.com/pin', altText: 'a red square' },
            telegram: { disableNotification: true, protectContent: true },
            discord: { username: 'Launch desk' },
            instagram: { type: 'feed', collaborators: ['ana.studio'] },
            facebook: { link: 'https://example.com/launch' },
          },
        }),
      }),
      call(stack.app, 'POST', '/v1/posts', {
        key: s.key,
        body: body(VIDEO_PLATFORMS, s.video.id, {
          options: {
            tiktok: { privacyLevel: 'SELF_ONLY', disableComment: true },
            youtube: {
              title: `Video ${tag}`,
              tags: ['launch', 'demo'],
              privacyStatus: 'unlisted',
              madeForKids: false,
              notifySubscribers: false,
            },
          },
        }),
      }),
    ]);
    expect(images.status).toBe(201);
    expect(video.status).toBe(201);
    expect(images.body.options.telegram).toEqual({ disableNotification: true, protectContent: true });
    const ids = [images.body.id as string, video.body.id as string];
    await untilDone(ids);
    for (const id of ids) expect((await getPost(s.key, id)).status).toBe('published');

    expect(fakes.x.tweets.find((t) => t.text === text('X'))!.replySettings).toBe('following');
    expect(fakes.linkedin.posts.find((p) => p.rendered === text('LINKEDIN'))!.visibility).toBe('CONNECTIONS');
    expect(fakes.reddit.posts.find((p) => p.title === `Options ${tag}`)).toMatchObject({ nsfw: true, spoiler: true });
    expect(fakes.pinterest.pins.find((p) => p.description === text('PINTEREST'))).toMatchObject({
      title: `Pin ${tag}`,
      link: 'https://example.com/pin',
      altText: 'a red square',
    });
    expect(fakes.telegram.messages.find((m) => m.caption === text('TELEGRAM'))).toMatchObject({
      disable_notification: true,
      protect_content: true,
    });
    expect(fakes.discord.messages.find((m) => m.content === text('DISCORD'))!.username).toBe('Launch desk');
    const instagram = fakes.instagram.posts.find((p) => p.text === text('INSTAGRAM'))!;
    expect(fakes.instagram.containers.find((c) => c.id === instagram.media[0])!.collaborators).toEqual(['ana.studio']);
    // With a photo Facebook shows no link preview: the link ends the message.
    expect(fakes.facebook.posts.find((p) => p.text.startsWith(text('FACEBOOK')))!.text).toBe(
      `${text('FACEBOOK')}\n\nhttps://example.com/launch`,
    );
    const tiktok = fakes.tiktok.publishes.find((p) => p.postInfo.title === text('TIKTOK'))!;
    expect(tiktok.postInfo).toMatchObject({ privacy_level: 'SELF_ONLY', disable_comment: true });
    expect(fakes.youtube.videos.find((v) => v.title === `Video ${tag}`)).toMatchObject({
      tags: ['launch', 'demo'],
      privacyStatus: 'unlisted',
      selfDeclaredMadeForKids: false,
    });
  }, 90_000);

  test('each post type and the other options reach their platform: Instagram reel, carousel with alt text and story; X poll; Reddit flair; Pinterest board; TikTok interactions and a photo post; a YouTube Short', async () => {
    const s = await setup();
    const tag = crypto.randomUUID().slice(0, 8);
    const jpeg = await uploadMedia(s.key, fx.files.jpeg, 'photo.jpg', 'image/jpeg');
    const upright = await uploadMedia(s.key, fx.files.mp4Rotated, 'upright.mp4', 'video/mp4');
    const sr = `news${tag}`;
    fakes.reddit.subreddits[sr] = { flairs: [{ id: 'flair-news', text: 'News' }] };
    const board = fakes.pinterest.addBoard({ name: `Launches ${tag}` });
    const stories = fakes.instagram.containers.filter((c) => c.mediaType === 'STORIES').length;
    const post = (platform: Platform, what: string, mediaIds: string[], options: Record<string, unknown>, extra = {}) =>
      call(stack.app, 'POST', '/v1/posts', {
        key: s.key,
        body: { content: `${what} ${tag}`, channelIds: [s.channels[platform]], mediaIds, options, ...extra },
      });
    const answers = await Promise.all([
      post('INSTAGRAM', 'Reel', [s.video.id], { instagram: { type: 'reel', shareToFeed: false, thumbOffsetMs: 1000 } }),
      post('INSTAGRAM', 'Carousel', [s.image.id, jpeg.id], { instagram: { type: 'carousel', altText: { [jpeg.id]: 'a test card' } } }),
      post('INSTAGRAM', 'Story', [s.image.id], { instagram: { type: 'story' } }),
      post('X', 'Poll', [], { x: { poll: { options: ['Yes', 'No'], durationMinutes: 60 } } }),
      post('REDDIT', 'Flair', [], { reddit: { flairId: 'flair-news' } }, { reddit: { subreddit: sr, title: `Flair ${tag}` } }),
      post('PINTEREST', 'Board', [s.image.id], { pinterest: { boardId: board } }),
      post('TIKTOK', 'Interactions', [s.video.id], {
        tiktok: { privacyLevel: 'SELF_ONLY', disableDuet: true, disableStitch: true, brandOrganicToggle: true, isAigc: true },
      }),
      post('TIKTOK', 'Photo', [jpeg.id], { tiktok: { privacyLevel: 'SELF_ONLY', autoAddMusic: true } }),
      post('YOUTUBE', 'Short', [upright.id], {
        youtube: { madeForKids: true, description: `About ${tag}`, categoryId: '10', short: true },
      }),
    ]);
    for (const a of answers) expect({ status: a.status, error: a.body.error }).toEqual({ status: 201, error: undefined });
    const ids = answers.map((a) => a.body.id as string);
    await untilDone(ids);
    for (const id of ids) expect((await getPost(s.key, id)).status).toBe('published');

    const ig = fakes.instagram;
    const containerOf = (text: string) => ig.containers.find((c) => c.id === ig.posts.find((p) => p.text === text)!.media[0])!;
    const reel = containerOf(`Reel ${tag}`);
    expect({ type: reel.mediaType, feed: reel.params.share_to_feed, thumb: reel.params.thumb_offset }).toEqual({
      type: 'REELS',
      feed: 'false',
      thumb: '1000',
    });
    const carousel = containerOf(`Carousel ${tag}`);
    expect(carousel.mediaType).toBe('CAROUSEL');
    const children = carousel.children.map((id) => ig.containers.find((c) => c.id === id)!);
    expect(children.map((c) => c.params.alt_text ?? null)).toEqual([null, 'a test card']);
    expect(ig.containers.filter((c) => c.mediaType === 'STORIES').length).toBe(stories + 1);
    expect(fakes.x.tweets.find((t) => t.text === `Poll ${tag}`)!.poll).toEqual({ options: ['Yes', 'No'], durationMinutes: 60 });
    expect(fakes.reddit.posts.find((p) => p.title === `Flair ${tag}`)).toMatchObject({ subreddit: sr, flairId: 'flair-news' });
    expect(fakes.pinterest.pins.find((p) => p.description === `Board ${tag}`)!.boardId).toBe(board);
    const tiktok = (title: string) => fakes.tiktok.publishes.find((p) => p.postInfo.title === title || p.postInfo.description === title)!;
    expect(tiktok(`Interactions ${tag}`).postInfo).toMatchObject({
      privacy_level: 'SELF_ONLY',
      disable_duet: true,
      disable_stitch: true,
      brand_organic_toggle: true,
      is_aigc: true,
    });
    const photo = tiktok(`Photo ${tag}`);
    expect({ kind: photo.kind, music: photo.postInfo.auto_add_music, photos: photo.photos.length }).toEqual({
      kind: 'photo',
      music: true,
      photos: 1,
    });
    const short = fakes.youtube.videos.find((v) => v.description.includes(`About ${tag}`))!;
    expect(short).toMatchObject({ title: `Short ${tag} #Shorts`, categoryId: '10', selfDeclaredMadeForKids: true });
  }, 90_000);

  test('options for a platform the post does not go to are refused at their path', async () => {
    const s = await setup();
    const r = await call(stack.app, 'POST', '/v1/posts/validate', {
      key: s.key,
      body: {
        content: 'Hi',
        channelIds: [s.channels.X],
        options: { x: { replySettings: 'verified' }, tiktok: { privacyLevel: 'SELF_ONLY' } },
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields).toEqual([{ path: 'options.tiktok', message: 'no target channel is on this platform' }]);
  });

  const validate = (key: string, body: Record<string, unknown>) => call(stack.app, 'POST', '/v1/posts/validate', { key, body });
  const problems = (r: { status: number; body: any }) => ({ status: r.status, fields: r.body.error?.details?.fields });

  test('the choices TikTok and YouTube leave to the creator are required, at their paths; create refuses as validate does', async () => {
    const s = await setup();
    const body = { content: 'Clip', channelIds: [s.channels.TIKTOK, s.channels.YOUTUBE], mediaIds: [s.video.id] };
    const required = [
      { path: 'options.tiktok.privacyLevel', message: expect.stringContaining('is required') },
      { path: 'options.youtube.madeForKids', message: expect.stringContaining('is required') },
    ];
    expect(problems(await validate(s.key, body))).toEqual({ status: 422, fields: required });
    expect(problems(await call(stack.app, 'POST', '/v1/posts', { key: s.key, body }))).toEqual({ status: 422, fields: required });
    // madeForKids false is a choice, as true is.
    const chosen = await validate(s.key, { ...body, options: { tiktok: { privacyLevel: 'SELF_ONLY' }, youtube: { madeForKids: false } } });
    expect(chosen.status).toBe(200);
  });

  test('checked against what each account can do now: each refusal at its path, nothing created', async () => {
    const s = await setup();
    const video = (await call(stack.app, 'GET', `/v1/media/${s.video.id}`, { key: s.key })).body;
    const tiktok = (options: Record<string, unknown>) =>
      validate(s.key, { content: 'Clip', channelIds: [s.channels.TIKTOK], mediaIds: [s.video.id], options: { tiktok: options } });

    // TikTok: a privacy level the creator is not offered; a video longer than the creator may post.
    const offered = fakes.tiktok.creator.privacy_level_options;
    const refused = await tiktok({ privacyLevel: 'FOLLOWER_OF_CREATOR' });
    expect(problems(refused)).toEqual({
      status: 422,
      fields: [{ path: 'options.tiktok.privacyLevel', message: `is not offered to this TikTok account; it offers ${offered.join(', ')}` }],
    });
    expect(fakes.tiktok.creator.privacy_level_options).not.toContain('FOLLOWER_OF_CREATOR');
    const longest = fakes.tiktok.creator.max_video_post_duration_sec;
    fakes.tiktok.creator.max_video_post_duration_sec = video.durationSeconds - 1;
    try {
      // A channel not read yet (each channel's answer is kept five minutes).
      const fresh = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: s.org.id,
        platform: 'TIKTOK',
        name: 'short clips',
        credentials: fakes.credentials.TIKTOK,
      });
      const long = await validate(s.key, {
        content: 'Clip',
        channelIds: [fresh.id],
        mediaIds: [s.video.id],
        options: { tiktok: { privacyLevel: 'SELF_ONLY' } },
      });
      expect(problems(long)).toEqual({
        status: 422,
        fields: [{ path: 'mediaIds', message: expect.stringContaining(`up to ${video.durationSeconds - 1} s`) }],
      });
    } finally {
      fakes.tiktok.creator.max_video_post_duration_sec = longest;
    }

    // Pinterest: a board that is not the account's; without one, the channel's own.
    const pin = (options?: Record<string, unknown>) =>
      validate(s.key, {
        content: 'Pin',
        channelIds: [s.channels.PINTEREST],
        mediaIds: [s.image.id],
        ...(options ? { options: { pinterest: options } } : {}),
      });
    expect(problems(await pin({ boardId: '999999999' }))).toEqual({
      status: 422,
      fields: [{ path: 'options.pinterest.boardId', message: "is not one of this Pinterest account's boards" }],
    });
    expect((await pin()).status).toBe(200);
    expect((await pin({ boardId: BOARD_ID })).status).toBe(200);

    // Reddit: a subreddit that requires a flair; a flair it does not have; a title outside its bounds.
    const sr = `flaired${s.org.id.slice(-6)}`.toLowerCase();
    fakes.reddit.subreddits[sr] = { flairRequired: true, flairs: [{ id: 'flair-news', text: 'News' }], titleMin: 10 };
    const reddit = (title: string, options?: Record<string, unknown>) =>
      validate(s.key, {
        content: 'Hello',
        channelIds: [s.channels.REDDIT],
        reddit: { subreddit: sr, title },
        ...(options ? { options: { reddit: options } } : {}),
      });
    expect(problems(await reddit('A long enough title'))).toEqual({
      status: 422,
      fields: [{ path: 'options.reddit.flairId', message: `is required: r/${sr} requires a flair` }],
    });
    expect(problems(await reddit('Short', { flairId: 'flair-none' }))).toEqual({
      status: 422,
      fields: [
        { path: 'options.reddit.flairId', message: `is not a flair of r/${sr}` },
        { path: 'reddit.title', message: `is 5 characters; r/${sr} asks for at least 10` },
      ],
    });
    expect((await reddit('A long enough title', { flairId: 'flair-news' })).status).toBe(200);

    // YouTube: a category that cannot be assigned.
    const yt = await validate(s.key, {
      content: 'Clip',
      channelIds: [s.channels.YOUTUBE],
      mediaIds: [s.video.id],
      options: { youtube: { madeForKids: false, categoryId: '9999' } },
    });
    expect(problems(yt).fields[0].path).toBe('options.youtube.categoryId');

    // Create refuses what validate refuses, and writes nothing.
    const before = await stack.h.orm.em.fork().count(Post, { organization: s.org.id });
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: {
        content: 'Clip',
        channelIds: [s.channels.TIKTOK],
        mediaIds: [s.video.id],
        options: { tiktok: { privacyLevel: 'FOLLOWER_OF_CREATOR' } },
      },
    });
    expect(problems(created).fields[0].path).toBe('options.tiktok.privacyLevel');
    expect(await stack.h.orm.em.fork().count(Post, { organization: s.org.id })).toBe(before);
  }, 60_000);

  test('a platform that cannot be asked leaves its checks to the publish: the post is accepted; asked again, it is refused', async () => {
    const s = await setup();
    // A level this creator is not offered: only the unanswered read lets it through.
    const body = {
      content: 'Clip',
      channelIds: [s.channels.TIKTOK],
      mediaIds: [s.video.id],
      options: { tiktok: { privacyLevel: 'FOLLOWER_OF_CREATOR' } },
    };
    expect(fakes.tiktok.creator.privacy_level_options).not.toContain('FOLLOWER_OF_CREATOR');
    fakes.tiktok.failNext(1, { status: 503, body: { error: { code: 'internal_error', message: 'down' } } }, 'creator_info');
    expect((await validate(s.key, body)).status).toBe(200);
    // A failed read is not kept: the next request asks again, and refuses.
    expect(problems(await validate(s.key, body)).fields[0].path).toBe('options.tiktok.privacyLevel');
  });

  test('what a type needs of the media: an Instagram carousel of one, a reel of an image, reel options on a feed post, an X poll with media', async () => {
    const s = await setup();
    const ig = (mediaIds: string[], instagram: Record<string, unknown>) =>
      validate(s.key, { content: 'Hi', channelIds: [s.channels.INSTAGRAM], mediaIds, options: { instagram } });
    expect(problems(await ig([s.image.id], { type: 'carousel' }))).toEqual({
      status: 422,
      fields: [{ path: 'options.instagram.type', message: 'a carousel has 2 to 10 media items; this post has 1' }],
    });
    expect(problems(await ig([s.image.id], { type: 'reel' })).fields).toEqual([
      { path: 'options.instagram.type', message: 'a reel is one video' },
    ]);
    expect(problems(await ig([s.image.id], { shareToFeed: true })).fields).toEqual([
      { path: 'options.instagram.shareToFeed', message: 'applies to reels only (type: reel)' },
    ]);
    expect((await ig([s.video.id], { type: 'reel', shareToFeed: false })).status).toBe(200);
    const poll = await validate(s.key, {
      content: 'Which?',
      channelIds: [s.channels.X],
      mediaIds: [s.image.id],
      options: { x: { poll: { options: ['a', 'b'], durationMinutes: 60 } } },
    });
    expect(problems(poll).fields).toEqual([{ path: 'options.x.poll', message: 'a post with a poll carries no media on X' }]);
    // Instagram alt text is keyed by the post's images.
    const alt = await ig([s.image.id, s.video.id], { type: 'carousel', altText: { [s.image.id]: 'a red square', [s.video.id]: 'a clip' } });
    expect(problems(alt).fields).toEqual([
      { path: `options.instagram.altText.${s.video.id}`, message: 'is a video: Instagram takes alt text on images only' },
    ]);
    // A YouTube Short is a vertical or square video of at most 180 s.
    const short = (mediaId: string) =>
      validate(s.key, {
        content: 'Clip',
        channelIds: [s.channels.YOUTUBE],
        mediaIds: [mediaId],
        options: { youtube: { madeForKids: false, short: true } },
      });
    expect(problems(await short(s.video.id)).fields).toEqual([
      {
        path: 'options.youtube.short',
        message: `video ${s.video.id} is 160×120: a Short is vertical or square (height at least the width)`,
      },
    ]);
    const upright = await uploadMedia(s.key, fx.files.mp4Rotated, 'upright.mp4', 'video/mp4');
    expect((await short(upright.id)).status).toBe(200);
  });

  test('options.reddit.subreddit and title are another spelling of reddit: the post shows them there; given twice they must agree', async () => {
    const s = await setup();
    const body = (extra: Record<string, unknown>) => ({ content: 'Hello', channelIds: [s.channels.REDDIT], ...extra });
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: body({
        publishAt: new Date((await stack.syncClock()).getTime() + 3_600_000).toISOString(),
        options: { reddit: { subreddit: 'test', title: 'Spelled in options', spoiler: true } },
      }),
    });
    expect(created.status).toBe(201);
    expect(created.body.reddit).toEqual({ subreddit: 'test', title: 'Spelled in options' });
    expect(created.body.options).toEqual({ reddit: { spoiler: true } });
    const twice = await validate(s.key, body({ reddit: { subreddit: 'test', title: 'A' }, options: { reddit: { subreddit: 'pics' } } }));
    expect(problems(twice).fields).toEqual([
      { path: 'options.reddit.subreddit', message: 'differs from reddit.subreddit (test); give it once' },
    ]);
    const half = await validate(s.key, body({ options: { reddit: { subreddit: 'test' } } }));
    expect(problems(half).fields).toContainEqual({ path: 'options.reddit.title', message: 'is required with options.reddit.subreddit' });
    // PATCH takes them the same way.
    const moved = await call(stack.app, 'PATCH', `/v1/posts/${created.body.id}`, {
      key: s.key,
      body: { options: { reddit: { subreddit: 'test', title: 'Renamed', nsfw: true } } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ reddit: { subreddit: 'test', title: 'Renamed' }, options: { reddit: { nsfw: true } } });
  });

  test('a privacy level the TikTok account no longer offers when the post is due: the channel fails, nothing is sent', async () => {
    const s = await setup();
    const now = await stack.syncClock();
    const before = fakes.tiktok.publishes.length;
    const r = await call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: {
        content: 'Later',
        channelIds: [s.channels.TIKTOK],
        mediaIds: [s.video.id],
        publishAt: new Date(now.getTime() + 2 * 60_000).toISOString(),
        options: { tiktok: { privacyLevel: 'PUBLIC_TO_EVERYONE' } },
      },
    });
    expect(r.status).toBe(201);
    const offered = fakes.tiktok.creator.privacy_level_options;
    fakes.tiktok.creator.privacy_level_options = ['SELF_ONLY'];
    try {
      await stack.settle(r.body.id);
    } finally {
      fakes.tiktok.creator.privacy_level_options = offered;
    }
    const post = await getPost(s.key, r.body.id);
    expect(post.status).toBe('failed');
    expect(post.channels[0]).toMatchObject({ status: 'failed', errorCode: 'rejected_content', retryable: false });
    expect(post.channels[0].error).toContain('PUBLIC_TO_EVERYONE');
    expect(fakes.tiktok.publishes.length).toBe(before);
  }, 90_000);
});
