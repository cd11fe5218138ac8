// RSS and Atom feeds end to end: /v1/feeds against a local feed server that changes over time
// (new, edited, reordered and re-dated items, 304, 500, a page that is not a feed, a huge body, a
// body held back), read by the feed poll's workflow on a time-skipping server, each new item
// posted through the normal create path to a fake Mastodon — never twice, across concurrent
// reads, a poll cut off between a post and its record, and a worker restart mid-read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Feed, FeedItem, Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { readFeed } from '../domain/feeds/fetch.ts';
import { feedPostId, pollFeed, type FeedEvents, type PollDeps } from '../domain/feeds/poll.ts';
import { PAUSE_AFTER_FAILURES } from '../domain/feeds/feeds.ts';
import { hashKey } from '../domain/feeds/items.ts';
import { FEED_POLL_WORKFLOW_TYPE, feedPollNowWorkflowId } from '../workflows/feed-poll-types.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startEventReceiver, type ReceivedEvent } from './fakes/event-receiver.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { feedItem, startFeedServer, type FeedItemFixture, type FeedServer } from './fakes/feed-server.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { closed, deliveredEvents } from './harness/quiet.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let receiver: ReturnType<typeof startEventReceiver>;
let events: ReceivedEvent[];
const servers: FeedServer[] = [];

beforeAll(async () => {
  fake = await startFakeMastodon();
  receiver = startEventReceiver();
  events = receiver.events;
  // No sticky cache: a workflow task never waits for a stopped worker's sticky queue (the restart below).
  stack = await startPostStack({ maxCachedWorkflows: 0, appDeps: { outbound: { allowPrivate: true } } });
});

afterAll(async () => {
  for (const s of servers) s.stop();
  await stack?.stop();
  await fake?.stop();
  receiver?.stop();
});

const DAY = 86_400_000;
const item = feedItem;

function feedServer(items: FeedItemFixture[], format: 'rss' | 'atom' = 'rss') {
  const s = startFeedServer(items, format);
  servers.push(s);
  return s;
}

async function account(hookPath?: string) {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'feeds',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  if (hookPath) {
    const hook = await call(stack.app, 'POST', '/v1/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${receiver.port}${hookPath}`, events: ['feed.item.posted', 'feed.failed'] },
    });
    expect(hook.status).toBe(201);
  }
  return { org, key, channelId: channel.id };
}

/** Reads the feed now through the API and waits for that read's workflow to finish. */
async function pollNow(key: string, feedId: string) {
  const r = await call(stack.app, 'POST', `/v1/feeds/${feedId}/poll`, { key });
  expect(r.status).toBe(202);
  return stack.client.workflow.getHandle(feedPollNowWorkflowId(feedId)).result();
}

const texts = (feedId: string) =>
  fake.statuses.filter((s) => s.text.includes(`[${feedId}]`)).map((s) => s.text.replace(` [${feedId}]`, ''));

async function items(key: string, feedId: string) {
  const r = await call(stack.app, 'GET', `/v1/feeds/${feedId}/items?limit=100`, { key });
  expect(r.status).toBe(200);
  return r.body.data as { itemKey: string; outcome: string; postId: string | null; error: { code: string; message: string } | null }[];
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, tries = 500): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await Bun.sleep(20);
  }
  throw new Error(`never: ${what}`);
}

/** The feed's posts (their ids derive from the feed's: feedPostId), in the order they were created. */
const postsOf = (feedId: string) =>
  stack.h.orm.em.fork().find(Post, { id: { $like: `post_${feedId.replace(/^feed_/, '')}_%` } }, { orderBy: { createdAt: 'asc' } });

/**
 * Until each of the feed's posts has been published (its text on the fake instance); the texts
 * sorted (each post publishes on its own). Called once the reads are over (their posts all
 * created): when every post's workflow has closed, none can send again.
 */
async function published(feedId: string, n: number) {
  await waitFor(`${n} statuses of ${feedId}`, async () => texts(feedId).length >= n);
  for (const p of await postsOf(feedId)) await closed(stack.client, postWorkflowId(p.id));
  return texts(feedId).sort();
}

/** The texts of the feed's posts in the order they were created. */
async function created(feedId: string) {
  return (await postsOf(feedId)).map((p) => p.content.replace(` [${feedId}]`, ''));
}

/** A template that marks each status with its feed, so that tests sharing the fake instance tell theirs apart. */
const marked = (template = '{title} {link}') => `${template} [{feed}]`;

async function createFeed(key: string, body: Record<string, unknown>) {
  const r = await call(stack.app, 'POST', '/v1/feeds', { key, body });
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
  // The feed's name is its id, so `[{feed}]` marks its statuses.
  const named = await call(stack.app, 'PATCH', `/v1/feeds/${r.body.id}`, { key, body: { name: r.body.id } });
  expect(named.status).toBe(200);
  return named.body as { id: string; status: string; nextPollAt: string };
}

describe('POST /v1/feeds', () => {
  test('refuses what cannot be a feed, with the reason at its field; 404 across organizations', async () => {
    const { key, channelId } = await account();
    const ok = feedServer([item(1)]);
    const broken = feedServer([]);
    broken.misbehave = { kind: 'status', status: 500 };
    const html = feedServer([]);
    html.misbehave = { kind: 'html' };
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ url: 'ftp://example.com/feed' }, 'url', /must be an http\(s\) URL/],
      [{ url: broken.url }, 'url', /HTTP 500/],
      [{ url: html.url }, 'url', /not an RSS or Atom feed/],
      [{ url: ok.url, template: '{title} {nope}' }, 'template', /\{nope\}/],
      [{ url: ok.url, templateByPlatform: { MASTODON: '{link} {bogus}' } }, 'templateByPlatform.MASTODON', /\{bogus\}/],
      [{ url: ok.url, channelIds: ['ch_unknown'] }, 'channelIds', /unknown channel/],
      // As a post's text per platform: only for a platform of a target channel.
      [{ url: ok.url, templateByPlatform: { BLUESKY: '{title}' } }, 'templateByPlatform.BLUESKY', /no target channel is on this platform/],
      [{ url: ok.url, pollMinutes: 0 }, 'pollMinutes', /./],
      [{ url: ok.url, backfill: 21 }, 'backfill', /./],
    ];
    for (const [extra, path, message] of bad) {
      const r = await call(stack.app, 'POST', '/v1/feeds', { key, body: { channelIds: [channelId], ...extra } });
      expect({ extra, status: r.status, code: r.body.error?.code }).toEqual({ extra, status: 422, code: 'validation_failed' });
      const field = (r.body.error.details.fields as { path: string; message: string }[]).find((f) => f.path === path);
      expect({ extra, message: field?.message }).toEqual({ extra, message: expect.stringMatching(message) });
    }
    const created = await call(stack.app, 'POST', '/v1/feeds', { key, body: { url: ok.url, channelIds: [channelId] } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/feeds/${created.body.id}`);
    expect(created.body).toMatchObject({ name: 'Test blog', template: '{title} {link}', mode: 'now', status: 'active', pollMinutes: 15 });
    const other = await account();
    expect((await call(stack.app, 'GET', `/v1/feeds/${created.body.id}`, { key: other.key })).status).toBe(404);
    expect((await call(stack.app, 'GET', '/v1/feeds', { key: other.key })).body.data).toEqual([]);
    expect((await call(stack.app, 'GET', '/v1/feeds', { key })).body.data.map((f: { id: string }) => f.id)).toEqual([created.body.id]);
    // A key without the publish scope cannot add one.
    const { key: reader } = await makeKey((await account()).org.id, { scopes: ['read'] });
    expect((await call(stack.app, 'POST', '/v1/feeds', { key: reader, body: { url: ok.url, channelIds: [channelId] } })).status).toBe(403);
    // Deleted: gone, and never read again.
    expect((await call(stack.app, 'DELETE', `/v1/feeds/${created.body.id}`, { key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/feeds/${created.body.id}`, { key })).status).toBe(404);
    expect((await call(stack.app, 'POST', `/v1/feeds/${created.body.id}/poll`, { key })).status).toBe(404);
  });

  test('an Idempotency-Key makes one feed of a repeated create', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const body = { url: s.url, channelIds: [channelId] };
    const headers = { 'idempotency-key': `feed-${crypto.randomUUID()}` };
    const first = await call(stack.app, 'POST', '/v1/feeds', { key, body, headers });
    const again = await call(stack.app, 'POST', '/v1/feeds', { key, body, headers });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.id).toBe(first.body.id);
    expect((await call(stack.app, 'GET', '/v1/feeds', { key })).body.data).toHaveLength(1);
  });
});

describe('reading a feed', () => {
  test('the backlog is never posted; new items are, once, even when the feed reorders, re-dates, edits or re-ids them', async () => {
    const { org, key, channelId } = await account('/feeds-main');
    const s = feedServer([item(3), item(2), item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked() });
    expect(new Date(feed.nextPollAt).getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
    expect((await items(key, feed.id)).map((i) => [i.itemKey, i.outcome])).toEqual(
      expect.arrayContaining([
        ['urn:item:1', 'backlog'],
        ['urn:item:2', 'backlog'],
        ['urn:item:3', 'backlog'],
      ]),
    );
    // Nothing new: nothing posted.
    await pollNow(key, feed.id);
    expect(texts(feed.id)).toEqual([]);
    // Two new items: posted oldest first, each once, from the template.
    s.items = [item(5), item(4), ...s.items];
    await pollNow(key, feed.id);
    expect(await published(feed.id, 2)).toEqual(['Item 4 https://blog.example/4', 'Item 5 https://blog.example/5']);
    expect(await created(feed.id)).toEqual(['Item 4 https://blog.example/4', 'Item 5 https://blog.example/5']);
    const posted = (await items(key, feed.id)).filter((i) => i.outcome === 'posted');
    expect(posted.map((i) => i.postId).sort()).toEqual(
      [feedPostId(feed.id, hashKey('urn:item:4')), feedPostId(feed.id, hashKey('urn:item:5'))].sort(),
    );
    // Unchanged: the read is conditional and answered 304.
    await pollNow(key, feed.id);
    const last = s.requests[s.requests.length - 1]!;
    expect(last.status).toBe(304);
    expect(last.ifNoneMatch).toMatch(/^"/);
    expect(new Date(last.ifModifiedSince ?? '').getTime()).toBe(Date.UTC(2026, 0, 5));
    // Reordered, re-dated and edited items, one with a new id but its old link, and one new item.
    s.items = [
      item(2, { pubDate: new Date(Date.UTC(2026, 5, 1)) }),
      item(5, { title: 'Item 5, corrected' }),
      item(4, { guid: 'urn:changed:4' }),
      item(6),
      item(3),
      item(1),
    ];
    await pollNow(key, feed.id);
    expect(await published(feed.id, 3)).toEqual([
      'Item 4 https://blog.example/4',
      'Item 5 https://blog.example/5',
      'Item 6 https://blog.example/6',
    ]);
    // The webhooks: one feed.item.posted per posted item, with its post.
    // Written with each item's record, so all there once the read is over; every delivery done.
    expect(await deliveredEvents(stack.client, stack.h.orm, org.id, 'feed.item.posted')).toBe(3);
    const posts = events.filter((e) => e.path === '/feeds-main' && e.type === 'feed.item.posted');
    expect(posts.map((e) => e.data.item.key).sort()).toEqual(['urn:item:4', 'urn:item:5', 'urn:item:6']);
    expect(posts.every((e) => e.data.feed.id === feed.id && typeof e.data.postId === 'string')).toBe(true);
    const state = await call(stack.app, 'GET', `/v1/feeds/${feed.id}`, { key });
    expect(state.body).toMatchObject({ consecutiveFailures: 0, lastError: null, status: 'active' });
    expect(state.body.lastSuccessAt).not.toBeNull();
  });

  test('backfill posts the newest items present at creation; Atom, a per-platform template and the filter', async () => {
    const { key, channelId } = await account();
    const s = feedServer(
      [
        item(4, { categories: ['sports'] }),
        item(3, { categories: ['news'] }),
        item(2, { description: 'An update on the <b>release</b>' }),
        item(1),
      ],
      'atom',
    );
    const feed = await createFeed(key, {
      url: s.url,
      channelIds: [channelId],
      template: 'generic {title}',
      templateByPlatform: { MASTODON: marked('{title}: {summary}') },
      filter: { exclude: ['SPORTS'] },
      backfill: 3,
    });
    await pollNow(key, feed.id);
    // Items 2–4 were the newest three; 4 is filtered out; 1 is backlog. The summary is plain text.
    expect(await published(feed.id, 2)).toEqual(['Item 2: An update on the release', 'Item 3: About item 3']);
    const byKey = Object.fromEntries((await items(key, feed.id)).map((i) => [i.itemKey, i.outcome]));
    expect(byKey).toEqual({ 'urn:item:1': 'backlog', 'urn:item:2': 'posted', 'urn:item:3': 'posted', 'urn:item:4': 'filtered' });
  });

  test('mode queue: each new item takes the next free slot of the channels’ posting queue', async () => {
    const { key, channelId } = await account();
    const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
    const slots = weekdays.flatMap((weekday) => ['09:00', '15:00'].map((time) => ({ weekday, time })));
    expect((await call(stack.app, 'PUT', `/v1/channels/${channelId}/queue`, { key, body: { slots, timeZone: 'UTC' } })).status).toBe(200);
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked(), mode: 'queue' });
    s.items = [item(3), item(2), ...s.items];
    await pollNow(key, feed.id);
    const posts = await stack.h.orm.em
      .fork()
      .find(Post, { id: { $like: `post_${feed.id.replace(/^feed_/, '')}_%` } }, { orderBy: { scheduledAt: 'asc' } });
    expect(posts.map((p) => p.status)).toEqual(['scheduled', 'scheduled']);
    // Two slots, one after the other, in the future, each at 09:00 or 15:00 UTC.
    const [first, second] = posts.map((p) => p.scheduledAt);
    expect(first!.getTime()).toBeGreaterThan(Date.now());
    expect(second!.getTime()).toBeGreaterThan(first!.getTime());
    for (const at of [first!, second!]) expect([9, 15]).toContain(at.getUTCHours());
    expect(texts(feed.id)).toEqual([]);
  });

  test('an item whose post is refused is recorded with the reason and not tried again', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked('{title} {summary}') });
    s.items = [item(2, { description: 'y'.repeat(600) }), item(3, { title: 'z'.repeat(501) }), ...s.items];
    await pollNow(key, feed.id);
    await pollNow(key, feed.id);
    const byKey = Object.fromEntries((await items(key, feed.id)).map((i) => [i.itemKey, i]));
    // Cut to 300 characters, the summary fits Mastodon's 500.
    expect(byKey['urn:item:2']!.outcome).toBe('posted');
    // A text over Mastodon's 500 characters is refused as Schedule a post refuses it.
    expect(byKey['urn:item:3']).toMatchObject({ outcome: 'refused', postId: null, error: { code: 'validation_failed' } });
    // Its message names the rule: the field and its problem.
    expect(byKey['urn:item:3']!.error!.message).toMatch(/content: is \d+ characters.*allows 500/);
    expect(await published(feed.id, 1)).toHaveLength(1);
  });
});

describe('failures', () => {
  test('500, a page that is not a feed, a huge body: recorded; the fifth failure in a row pauses the feed with feed.failed', async () => {
    const { key, channelId } = await account('/feeds-failing');
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked() });
    const misbehaviours = [
      [{ kind: 'status', status: 500 }, /HTTP 500/],
      [{ kind: 'html' }, /not an RSS or Atom feed/],
      [{ kind: 'huge', bytes: 6 * 1024 * 1024 }, /larger than 5 MB/],
    ] as const;
    for (const [m, message] of misbehaviours) {
      s.misbehave = m;
      await pollNow(key, feed.id);
      const f = (await call(stack.app, 'GET', `/v1/feeds/${feed.id}`, { key })).body;
      expect(f.lastError?.message).toMatch(message);
      expect(f.status).toBe('active');
    }
    s.misbehave = { kind: 'status', status: 503 };
    for (let i = misbehaviours.length; i < PAUSE_AFTER_FAILURES; i++) await pollNow(key, feed.id);
    const paused = (await call(stack.app, 'GET', `/v1/feeds/${feed.id}`, { key })).body;
    expect(paused).toMatchObject({ status: 'paused', consecutiveFailures: PAUSE_AFTER_FAILURES, nextPollAt: null });
    expect(paused.pausedReason).toMatch(/5 reads in a row failed; the last: the feed answered HTTP 503/);
    await waitFor('feed.failed', async () => events.some((e) => e.path === '/feeds-failing' && e.type === 'feed.failed'));
    expect(events.find((e) => e.path === '/feeds-failing' && e.type === 'feed.failed')!.data.feed).toMatchObject({
      id: feed.id,
      status: 'paused',
    });
    // Paused: not read on demand, not claimed by the sweep.
    const refused = await call(stack.app, 'POST', `/v1/feeds/${feed.id}/poll`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details.pausedReason).toBe(paused.pausedReason);
    // Resumed: the failures are forgotten and the next new item is posted.
    s.misbehave = null;
    s.items = [item(2), ...s.items];
    const resumed = await call(stack.app, 'PATCH', `/v1/feeds/${feed.id}`, { key, body: { status: 'active' } });
    expect(resumed.body).toMatchObject({ status: 'active', pausedReason: null, consecutiveFailures: 0 });
    await pollNow(key, feed.id);
    expect(await published(feed.id, 1)).toEqual(['Item 2 https://blog.example/2']);
  });

  test('a body that does not come within the time limit is a failure, not a hang', async () => {
    const s = feedServer([item(1)]);
    let release!: () => void;
    s.misbehave = { kind: 'hold', release: new Promise<void>((r) => (release = r)) };
    const started = Date.now();
    await expect(readFeed(s.url, { outbound: { allowPrivate: true }, timeoutMs: 300 })).rejects.toThrow(/did not answer within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(5000);
    release();
  });

  test('the address guard applies: a private address is refused without OUTBOUND_ALLOW_PRIVATE', async () => {
    const s = feedServer([item(1)]);
    await expect(readFeed(s.url, { outbound: { allowPrivate: false } })).rejects.toThrow(/loopback/);
  });
});

describe('never twice', () => {
  /** pollFeed as the activity runs it, with events recorded (or failing) here. */
  function deps(onWrite?: () => void): PollDeps & { written: string[] } {
    const written: string[] = [];
    const events: FeedEvents = {
      async write(_em, _org, type) {
        onWrite?.();
        written.push(type);
        return [];
      },
      async dispatch() {},
    };
    return { temporal: { client: stack.client, taskQueue: stack.taskQueue }, outbound: { allowPrivate: true }, events, written };
  }

  test('two reads at once post each item once', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked() });
    s.items = [item(4), item(3), item(2), ...s.items];
    const em = stack.h.orm.em;
    const d = deps();
    await Promise.all([pollFeed(em.fork(), d, feed.id), pollFeed(em.fork(), d, feed.id), pollFeed(em.fork(), d, feed.id)]);
    expect(await published(feed.id, 3)).toEqual([
      'Item 2 https://blog.example/2',
      'Item 3 https://blog.example/3',
      'Item 4 https://blog.example/4',
    ]);
    expect(d.written).toEqual(['feed.item.posted', 'feed.item.posted', 'feed.item.posted']);
  });

  test('a read cut off between a post and its record finds the post again and records it once', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked() });
    s.items = [item(3), item(2), ...s.items];
    const em = stack.h.orm.em;
    let crashes = 1;
    const crashing = deps(() => {
      if (crashes-- > 0) throw new Error('the worker died here');
    });
    await expect(pollFeed(em.fork(), crashing, feed.id)).rejects.toThrow('the worker died here');
    // Item 2's post exists; its record does not.
    const firstPost = feedPostId(feed.id, hashKey('urn:item:2'));
    expect(await em.fork().findOne(Post, { id: firstPost })).not.toBeNull();
    expect(await em.fork().findOne(FeedItem, { feed: feed.id, itemKey: 'urn:item:2' })).toBeNull();
    const retry = deps();
    await pollFeed(em.fork(), retry, feed.id);
    expect(await published(feed.id, 2)).toEqual(['Item 2 https://blog.example/2', 'Item 3 https://blog.example/3']);
    expect((await em.fork().find(FeedItem, { feed: feed.id, outcome: 'posted' })).map((i) => i.postId)).toContain(firstPost);
  });

  test('a worker restart in the middle of a read: the read is retried on the new worker and each item posted once', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId], template: marked() });
    s.items = [item(3), item(2), ...s.items];
    let release!: () => void;
    s.misbehave = { kind: 'hold', release: new Promise<void>((r) => (release = r)) };
    const arrived = s.nextRequest();
    expect((await call(stack.app, 'POST', `/v1/feeds/${feed.id}/poll`, { key })).status).toBe(202);
    await arrived;
    await stack.restartWorker();
    s.misbehave = null;
    release();
    await stack.client.workflow.getHandle(feedPollNowWorkflowId(feed.id)).result();
    expect(await published(feed.id, 2)).toEqual(['Item 2 https://blog.example/2', 'Item 3 https://blog.example/3']);
    expect(s.requests.length).toBeGreaterThanOrEqual(3); // the creation's read, the held one, the retry's
  });
});

describe('the poll schedule', () => {
  test('the sweep reads the feeds that are due, and only those', async () => {
    const { key, channelId } = await account();
    const due = feedServer([item(1)]);
    const notDue = feedServer([item(1)]);
    const a = await createFeed(key, { url: due.url, channelIds: [channelId], template: marked() });
    const b = await createFeed(key, { url: notDue.url, channelIds: [channelId], template: marked() });
    due.items = [item(2), ...due.items];
    notDue.items = [item(2), ...notDue.items];
    await stack.h.orm.em.fork().nativeUpdate(Feed, { id: a.id }, { nextPollAt: new Date(Date.now() - 1000) });
    await stack.h.orm.em.fork().nativeUpdate(Feed, { id: b.id }, { nextPollAt: new Date(Date.now() + DAY) });
    const summary = await stack.client.workflow.execute(FEED_POLL_WORKFLOW_TYPE, {
      args: [{ limit: 50, rounds: 2 }],
      taskQueue: stack.taskQueue,
      workflowId: `feed-sweep-${crypto.randomUUID()}`,
    });
    // At least the due feed was read and its item posted (feeds of earlier tests may be due too).
    expect(summary.polled).toBeGreaterThanOrEqual(1);
    expect(summary.posted).toBeGreaterThanOrEqual(1);
    expect(await published(a.id, 1)).toEqual(['Item 2 https://blog.example/2']);
    expect(texts(b.id)).toEqual([]);
    // Claimed: its next read is a poll interval away.
    const after = await stack.h.orm.em.fork().findOneOrFail(Feed, { id: a.id });
    expect(after.nextPollAt.getTime()).toBeGreaterThan(Date.now() + 14 * 60_000);
  });
});
