// Feed reads that meet: a read asked for and the sweep (or two sweeps) claim a feed once, so the
// feed server sees one request and each item is posted once; conditional GET by Last-Modified
// alone; more new items than one read posts; `feed.failed` once, at the pause; an item re-id'd
// under a link already seen is not new even when its text changed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Feed, FeedItem, Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { PAUSE_AFTER_FAILURES } from '../domain/feeds/feeds.ts';
import { readFeed } from '../domain/feeds/fetch.ts';
import { claimFeeds, feedPostId, pollFeed, type PollDeps } from '../domain/feeds/poll.ts';
import { hashKey, MAX_POSTS_PER_POLL } from '../domain/feeds/items.ts';
import { FEED_POLL_WORKFLOW_TYPE, feedPollNowWorkflowId, type FeedPollSummary } from '../workflows/feed-poll-types.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startEventReceiver, type ReceivedEvent } from './fakes/event-receiver.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { feedItem as item, startFeedServer, type FeedItemFixture, type FeedServer } from './fakes/feed-server.ts';
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
  stack = await startPostStack({ appDeps: { outbound: { allowPrivate: true } } });
});

afterAll(async () => {
  for (const s of servers) s.stop();
  await stack?.stop();
  await fake?.stop();
  receiver?.stop();
});

function feedServer(items: FeedItemFixture[]) {
  const s = startFeedServer(items);
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
  return { orgId: org.id, key, channelId: channel.id };
}

/** A feed whose statuses carry `[<its id>]`, so that tests sharing the fake instance tell theirs apart. */
async function createFeed(key: string, body: Record<string, unknown>) {
  const r = await call(stack.app, 'POST', '/v1/feeds', { key, body: { template: '{title} {link} [{feed}]', ...body } });
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
  const named = await call(stack.app, 'PATCH', `/v1/feeds/${r.body.id}`, { key, body: { name: r.body.id } });
  expect(named.status).toBe(200);
  return named.body as { id: string };
}

/** Asks for a read through the API; the read's workflow's summary. */
async function pollNow(key: string, feedId: string): Promise<FeedPollSummary> {
  const r = await call(stack.app, 'POST', `/v1/feeds/${feedId}/poll`, { key });
  expect(r.status).toBe(202);
  return stack.client.workflow.getHandle(feedPollNowWorkflowId(feedId)).result();
}

const sweep = () =>
  stack.client.workflow.execute(FEED_POLL_WORKFLOW_TYPE, {
    args: [{ limit: 50, rounds: 1 }],
    taskQueue: stack.taskQueue,
    workflowId: `feed-sweep-${crypto.randomUUID()}`,
  }) as Promise<FeedPollSummary>;

const texts = (feedId: string) =>
  fake.statuses.filter((s) => s.text.endsWith(`[${feedId}]`)).map((s) => s.text.replace(` [${feedId}]`, ''));

async function waitFor(what: string, fn: () => boolean | Promise<boolean>, tries = 500) {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await Bun.sleep(20);
  }
  throw new Error(`never: ${what}`);
}

const postsOf = (feedId: string) =>
  stack.h.orm.em.fork().find(Post, { id: { $like: `post_${feedId.replace(/^feed_/, '')}_%` } }, { orderBy: { createdAt: 'asc' } });

/**
 * The feed's statuses once `n` have arrived and no more can come, sorted. Called once the reads
 * are over (their posts all created): when every post's workflow has closed, none can send again.
 */
async function published(feedId: string, n: number) {
  await waitFor(`${n} statuses of ${feedId}`, () => texts(feedId).length >= n);
  for (const p of await postsOf(feedId)) await closed(stack.client, postWorkflowId(p.id));
  return texts(feedId).sort();
}

const due = (feedId: string) => stack.h.orm.em.fork().nativeUpdate(Feed, { id: feedId }, { nextPollAt: new Date(Date.now() - 1000) });

function deps(): PollDeps {
  return {
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    outbound: { allowPrivate: true },
    events: { write: async () => [], dispatch: async () => {} },
  };
}

describe('a feed is claimed once per read', () => {
  test('a sweep and a read asked for at the same instant, and two sweeps: one claim, one request, each item posted once', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    s.items = [item(3), item(2), ...s.items];
    await due(feed.id);
    const em = stack.h.orm.em;
    const now = new Date();
    // The sweep's claim and the read asked for's, at once: one of them takes the feed.
    const claims = await Promise.all([
      claimFeeds(em.fork(), { limit: 50, now }),
      claimFeeds(em.fork(), { limit: 1, now, feedId: feed.id }),
      claimFeeds(em.fork(), { limit: 50, now }),
    ]);
    expect(claims.filter((ids) => ids.includes(feed.id))).toHaveLength(1);
    // Held by that read: neither a read asked for nor a sweep claims it, even when due again.
    await due(feed.id);
    expect(await claimFeeds(em.fork(), { limit: 1, now: new Date(), feedId: feed.id })).toEqual([]);
    expect(await claimFeeds(em.fork(), { limit: 50, now: new Date() })).not.toContain(feed.id);
    const before = s.requests.length;
    await pollFeed(em.fork(), deps(), feed.id);
    expect(s.requests.length - before).toBe(1);
    expect(await published(feed.id, 2)).toEqual(['Item 2 https://blog.example/2', 'Item 3 https://blog.example/3']);
    // The read ended: a read asked for claims the feed again, though it is not due.
    expect(await claimFeeds(em.fork(), { limit: 1, now: new Date(), feedId: feed.id })).toEqual([feed.id]);
  });

  test('through the workflows: a read asked for while a sweep reads the feed, and a second sweep, read nothing more', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    s.items = [item(3), item(2), ...s.items];
    await due(feed.id);
    const before = s.requests.length;
    let release!: () => void;
    s.misbehave = { kind: 'hold', release: new Promise<void>((r) => (release = r)) };
    const arrived = s.nextRequest();
    const first = sweep();
    await arrived;
    s.misbehave = null;
    // The sweep's read is under way (its answer held back): these find the feed held.
    const [now, second] = await Promise.all([pollNow(key, feed.id), sweep()]);
    expect(now.polled).toBe(0);
    release();
    await first;
    expect(s.requests.length - before).toBe(1);
    expect(await published(feed.id, 2)).toEqual(['Item 2 https://blog.example/2', 'Item 3 https://blog.example/3']);
    expect((await postsOf(feed.id)).length).toBe(2);
    expect(second.posted).toBe(0);
    // And the other way round: while a read asked for is under way, the sweep does not take the feed.
    s.items = [item(4), ...s.items];
    s.misbehave = { kind: 'hold', release: new Promise<void>((r) => (release = r)) };
    const arrivedAgain = s.nextRequest();
    expect((await call(stack.app, 'POST', `/v1/feeds/${feed.id}/poll`, { key })).status).toBe(202);
    await arrivedAgain;
    s.misbehave = null;
    await due(feed.id);
    await sweep();
    release();
    await stack.client.workflow.getHandle(feedPollNowWorkflowId(feed.id)).result();
    expect(s.requests.length - before).toBe(2);
    expect(await published(feed.id, 3)).toEqual([
      'Item 2 https://blog.example/2',
      'Item 3 https://blog.example/3',
      'Item 4 https://blog.example/4',
    ]);
  });
});

describe('reading', () => {
  test('a read with only a Last-Modified validator is answered 304 while the feed has not changed', async () => {
    const s = feedServer([item(2), item(1)]);
    const outbound = { allowPrivate: true };
    const first = await readFeed(s.url, { outbound });
    expect(first.status).toBe('ok');
    const lastModified = first.status === 'ok' ? first.lastModified : null;
    expect(lastModified).toBe(new Date(Date.UTC(2026, 0, 2)).toUTCString());
    expect((await readFeed(s.url, { outbound, lastModified })).status).toBe('not_modified');
    expect(s.requests.at(-1)).toEqual({ ifNoneMatch: null, ifModifiedSince: lastModified, status: 304 });
    // Changed since: read in full.
    s.items = [item(3), ...s.items];
    expect((await readFeed(s.url, { outbound, lastModified })).status).toBe('ok');
    // Through a feed that keeps only its Last-Modified.
    const { key, channelId } = await account();
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    await pollNow(key, feed.id);
    await stack.h.orm.em.fork().nativeUpdate(Feed, { id: feed.id }, { etag: null });
    await pollNow(key, feed.id);
    expect(s.requests.at(-1)).toMatchObject({ ifNoneMatch: null, status: 304 });
  });

  test(`more than ${MAX_POSTS_PER_POLL} new items: ${MAX_POSTS_PER_POLL} posted by one read, the rest by the next, none twice`, async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    const numbers = Array.from({ length: MAX_POSTS_PER_POLL + 3 }, (_, i) => i + 2);
    s.items = [...numbers.map((n) => item(n)).reverse(), ...s.items];
    const text = (n: number) => `Item ${n} https://blog.example/${n}`;
    expect((await pollNow(key, feed.id)).posted).toBe(MAX_POSTS_PER_POLL);
    expect((await postsOf(feed.id)).map((p) => p.content.replace(` [${feed.id}]`, ''))).toEqual(
      numbers.slice(0, MAX_POSTS_PER_POLL).map(text),
    );
    // The rest wait: due at once, and read again in full (no validators kept).
    const after = await stack.h.orm.em.fork().findOneOrFail(Feed, { id: feed.id });
    expect(after.nextPollAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(after.etag ?? null).toBeNull();
    expect((await pollNow(key, feed.id)).posted).toBe(3);
    expect((await pollNow(key, feed.id)).posted).toBe(0);
    expect(s.requests.at(-1)!.status).toBe(304);
    expect((await postsOf(feed.id)).map((p) => p.content.replace(` [${feed.id}]`, ''))).toEqual(numbers.map(text));
    expect(await stack.h.orm.em.fork().count(FeedItem, { feed: feed.id, outcome: 'posted' })).toBe(numbers.length);
    expect(await published(feed.id, numbers.length)).toEqual(numbers.map(text).sort());
  });

  test('feed.failed is sent once, at the pause, not at each failure', async () => {
    const { orgId, key, channelId } = await account('/reads-failing');
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    s.misbehave = { kind: 'status', status: 500 };
    const failedEvents = () => events.filter((e) => e.path === '/reads-failing' && e.type === 'feed.failed');
    // The event is written with the failure it announces: once each read is over, the outbox has
    // every event of it, and each delivery of them is done.
    const written = () => deliveredEvents(stack.client, stack.h.orm, orgId, 'feed.failed');
    for (let i = 1; i < PAUSE_AFTER_FAILURES; i++) await pollNow(key, feed.id);
    expect(await written()).toBe(0);
    expect(failedEvents()).toHaveLength(0);
    await pollNow(key, feed.id);
    expect(await written()).toBe(1);
    expect(failedEvents()).toHaveLength(1);
    expect(failedEvents()[0]!.data.feed).toMatchObject({ id: feed.id, status: 'paused', consecutiveFailures: PAUSE_AFTER_FAILURES });
  });

  test('an item re-id’d under a link already seen is not new, even with a new title (its post would not be a duplicate)', async () => {
    const { key, channelId } = await account();
    const s = feedServer([item(1)]);
    const feed = await createFeed(key, { url: s.url, channelIds: [channelId] });
    s.items = [item(2), ...s.items];
    await pollNow(key, feed.id);
    expect(await published(feed.id, 1)).toEqual(['Item 2 https://blog.example/2']);
    s.items = [item(2, { guid: 'urn:changed:2', title: 'Item 2, retitled' }), item(1)];
    const summary = await pollNow(key, feed.id);
    expect(s.requests.at(-1)!.status).toBe(200);
    expect(summary.posted).toBe(0);
    const em = stack.h.orm.em.fork();
    expect(await em.findOne(Post, { id: feedPostId(feed.id, hashKey('urn:changed:2')) })).toBeNull();
    expect(await em.find(FeedItem, { feed: feed.id, itemKey: 'urn:changed:2' })).toEqual([]);
    expect((await postsOf(feed.id)).length).toBe(1);
    expect(await published(feed.id, 1)).toEqual(['Item 2 https://blog.example/2']);
  });
});
