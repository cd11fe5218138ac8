// GET /v1/posts and GET /v1/posts/{id} (SPEC.md §4.4–4.5, DESIGN.md §3): keyset paging newest
// first by (scheduledAt, id), every filter alone and combined, cursor stability while posts are
// added, channel-limited keys, other organizations, and bad query values.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@temporalio/client';
import { addChannel } from '../domain/channels.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;

const MIN = 60_000;
const DAY = 86_400_000;
/** Nothing listens there: the scheduled posts never come due within the test. */
const DEAD_INSTANCE = 'http://127.0.0.1:9';

interface Rec {
  id: string;
  scheduledAt: string;
  channelIds: string[];
}

interface ApiPost {
  id: string;
  status: string;
  scheduledAt: string;
  channels: { channelId: string }[];
}

/** Newest first by scheduledAt, then id (both descending). */
function byKeyDesc(a: { scheduledAt: string; id: string }, b: { scheduledAt: string; id: string }): number {
  const ta = Date.parse(a.scheduledAt);
  const tb = Date.parse(b.scheduledAt);
  if (ta !== tb) return tb - ta;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
/** a sorts strictly after b in the list order (a is "older" than b). */
const after = (a: Rec, b: Rec) => byKeyDesc(a, b) > 0;
const ordered = (recs: Rec[]) =>
  recs
    .slice()
    .sort(byKeyDesc)
    .map((r) => r.id);

async function pool<T, R>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Deterministic shuffle (mulberry32), so creation order — hence id order — is unrelated to time. */
function shuffled<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const a = items.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

async function mastodonChannel(orgId: string, name: string, instanceUrl = DEAD_INSTANCE, accessToken = 'good-token') {
  return addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: orgId,
    platform: 'MASTODON',
    name,
    credentials: { instanceUrl, accessToken },
  });
}

async function createPost(
  key: string,
  channelIds: string[],
  publishAt: Date | null,
  content = `post ${crypto.randomUUID()}`,
): Promise<Rec> {
  const body: Record<string, unknown> = { content, channelIds };
  if (publishAt) body.publishAt = publishAt.toISOString();
  const r = await call(stack.app, 'POST', '/v1/posts', { key, body });
  if (r.status !== 201) throw new Error(`POST /v1/posts → ${r.status} ${JSON.stringify(r.body)}`);
  if (publishAt) expect(r.body.scheduledAt).toBe(publishAt.toISOString());
  return { id: r.body.id, scheduledAt: r.body.scheduledAt, channelIds };
}

function listUrl(query: Record<string, string | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, v);
  const s = qs.toString();
  return s ? `/v1/posts?${s}` : '/v1/posts';
}

/**
 * Pages through GET /v1/posts until nextCursor is null. Every page but the last is full and has a
 * string cursor; the last has nextCursor null; the number of pages is exactly ceil(n / limit)
 * (at least 1), so nextCursor is null on the last page and only there.
 */
async function listAll(key: string, query: Record<string, string | undefined>, limit?: number, startCursor?: string) {
  const size = limit ?? 20;
  const posts: ApiPost[] = [];
  const pages: ApiPost[][] = [];
  let cursor = startCursor;
  for (;;) {
    const r = await call(stack.app, 'GET', listUrl({ ...query, limit: limit === undefined ? undefined : String(limit), cursor }), { key });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'nextCursor']);
    const data = r.body.data as ApiPost[];
    expect(data.length).toBeLessThanOrEqual(size);
    pages.push(data);
    posts.push(...data);
    if (r.body.nextCursor === null) break;
    expect(typeof r.body.nextCursor).toBe('string');
    expect(data.length).toBe(size);
    cursor = r.body.nextCursor;
    if (pages.length > 1000) throw new Error('paging does not end');
  }
  expect(pages.length).toBe(Math.max(1, Math.ceil(posts.length / size)));
  const ids = posts.map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length); // no duplicates
  return { posts, ids, pages };
}

// ---------------------------------------------------------------------------------------------
// The big set: one organization, 3 channels on a dead instance (a, b, c) with 250 scheduled posts
// over the next 60 days, plus a live channel on the fake Mastodon (2 published posts) and a
// revoked one (1 failed post).
// ---------------------------------------------------------------------------------------------
const big = {
  orgId: '',
  key: '',
  ch: { a: '', b: '', c: '', live: '', revoked: '' },
  scheduled: [] as Rec[],
  published: [] as Rec[],
  failed: [] as Rec[],
  all: [] as Rec[],
  /** scheduledAt of each tie group (5 posts each), in time order. */
  groupTimes: [] as string[],
  t0: new Date(0),
};

beforeAll(async () => {
  stack = await startPostStack();
  fake = await startFakeMastodon();

  const org = await makeOrg('ENTERPRISE');
  big.orgId = org.id;
  big.key = (await makeKey(org.id)).key;
  big.ch.a = (await mastodonChannel(org.id, 'a')).id;
  big.ch.b = (await mastodonChannel(org.id, 'b')).id;
  big.ch.c = (await mastodonChannel(org.id, 'c')).id;
  big.ch.live = (await mastodonChannel(org.id, 'live', fake.url)).id;
  big.ch.revoked = (await mastodonChannel(org.id, 'revoked', fake.url, 'revoked-token')).id;

  // Publish-now posts first, waiting for their workflows: waiting lets the time-skipping server
  // jump ahead, which must happen before the 250 scheduled posts exist.
  await stack.syncClock();
  for (let i = 0; i < 2; i++) big.published.push(await createPost(big.key, [big.ch.live], null));
  big.failed.push(await createPost(big.key, [big.ch.revoked], null));
  // Waited on with a plain client, not stack.env.client: the time-skipping client unlocks time
  // skipping while it waits, and the test server then sometimes jumped 10 years ahead (to the
  // default run timeout) while an activity task sat queued: "Workflow execution timed out".
  const plain = new Client({ connection: stack.env.connection, namespace: stack.env.namespace ?? 'default' });
  await Promise.all(big.published.map((p) => plain.workflow.getHandle(postWorkflowId(p.id)).result()));
  // A failed post's workflow does not end: it waits (30 days) for a retry. settle sees that wait.
  await Promise.all(big.failed.map((p) => stack.settle(p.id)));

  // 150 distinct times plus 20 groups of 5 posts sharing one scheduledAt, all within 60 days of
  // the server's current time, created in a shuffled order (ids unrelated to times).
  const t0 = await stack.syncClock();
  big.t0 = t0;
  const base = t0.getTime() + 60 * MIN;
  const step = Math.floor((58 * DAY) / 150);
  const plan: { at: Date; channels: string[] }[] = [];
  const { a, b, c } = big.ch;
  const combos = [[a], [b], [c], [b, a], [a, c], [c, b], [c, a, b]];
  for (let i = 0; i < 150; i++) plan.push({ at: new Date(base + i * step + 123), channels: combos[i % combos.length]! });
  for (let g = 0; g < 20; g++) {
    const at = new Date(base + Math.round((g * 2.9 + 0.5) * DAY) + 456);
    big.groupTimes.push(at.toISOString());
    for (let k = 0; k < 5; k++) plan.push({ at, channels: combos[(g + k) % combos.length]! });
  }
  expect(plan.every((p) => p.at.getTime() < t0.getTime() + 60 * DAY)).toBe(true);
  big.scheduled = await pool(shuffled(plan, 42), 10, (p) => createPost(big.key, p.channels, p.at));
  big.all = [...big.scheduled, ...big.published, ...big.failed];
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

describe('GET /v1/posts paging', () => {
  test('250+ posts: limit 1, 7, 20 (default) and 100 each page through the exact order with no gaps or duplicates', async () => {
    expect(big.scheduled).toHaveLength(250);
    expect(new Set(big.all.map((p) => p.id)).size).toBe(253);
    const expected = ordered(big.all);
    // The set exercises the id tie-break across page boundaries: some boundary of a 7- and of a
    // 20-item page falls inside a group of posts sharing one scheduledAt.
    const sorted = big.all.slice().sort(byKeyDesc);
    for (const size of [7, 20]) {
      const splits = sorted.filter((p, i) => i > 0 && i % size === 0 && sorted[i - 1]!.scheduledAt === p.scheduledAt);
      expect(splits.length).toBeGreaterThan(0);
    }

    for (const limit of [1, 7, undefined, 100]) {
      const { ids, pages } = await listAll(big.key, {}, limit);
      expect(ids).toEqual(expected);
      expect(pages.length).toBe(Math.ceil(253 / (limit ?? 20)));
    }
  });

  test('list items are full posts, identical to GET /v1/posts/{id}', async () => {
    const r = await call(stack.app, 'GET', '/v1/posts?limit=100', { key: big.key });
    expect(r.status).toBe(200);
    const sample = [r.body.data[0], r.body.data[37], r.body.data[99]];
    for (const item of sample) {
      const one = await call(stack.app, 'GET', `/v1/posts/${item.id}`, { key: big.key });
      expect(one.status).toBe(200);
      expect(item).toEqual(one.body);
      const rec = big.all.find((p) => p.id === item.id)!;
      expect(item.scheduledAt).toBe(rec.scheduledAt);
      expect(item.channels.map((c: { channelId: string }) => c.channelId).sort()).toEqual(rec.channelIds.slice().sort());
    }
  });
});

describe('GET /v1/posts filters', () => {
  const has = (ch: string) => (p: Rec) => p.channelIds.includes(ch);
  const atOrAfter = (iso: string) => (p: Rec) => Date.parse(p.scheduledAt) >= Date.parse(iso);
  const before = (iso: string) => (p: Rec) => Date.parse(p.scheduledAt) < Date.parse(iso);

  test('channelId alone, paged, keeps the filter on every page', async () => {
    for (const ch of [big.ch.a, big.ch.b, big.ch.c]) {
      const expected = ordered(big.all.filter(has(ch)));
      expect(expected.length).toBeGreaterThan(100);
      expect(expected.length).toBeLessThan(250);
      const { ids, posts } = await listAll(big.key, { channelId: ch }, 13);
      expect(ids).toEqual(expected);
      expect(posts.every((p) => p.channels.some((c) => c.channelId === ch))).toBe(true);
    }
    expect((await listAll(big.key, { channelId: big.ch.live })).ids).toEqual(ordered(big.published));
    // Unknown channel → empty page, not an error.
    const none = await call(stack.app, 'GET', '/v1/posts?channelId=ch_nope', { key: big.key });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ data: [], nextCursor: null });
  });

  test('from (inclusive) and to (exclusive), alone and together, at instants shared by several posts', async () => {
    const from = big.groupTimes[4]!; // 5 posts sit exactly on this instant: all included
    const to = big.groupTimes[13]!; // 5 posts sit exactly on this instant: all excluded
    expect(big.all.filter((p) => p.scheduledAt === from)).toHaveLength(5);
    expect(big.all.filter((p) => p.scheduledAt === to)).toHaveLength(5);

    const fromOnly = ordered(big.all.filter(atOrAfter(from)));
    expect((await listAll(big.key, { from }, 17)).ids).toEqual(fromOnly);
    const toOnly = ordered(big.all.filter(before(to)));
    expect((await listAll(big.key, { to }, 17)).ids).toEqual(toOnly);
    const both = ordered(big.all.filter((p) => atOrAfter(from)(p) && before(to)(p)));
    expect(both.length).toBeGreaterThan(20);
    const paged = await listAll(big.key, { from, to }, 6);
    expect(paged.ids).toEqual(both);
    expect(paged.pages.length).toBeGreaterThan(3);
    // The same instants written with another offset select the same posts.
    const plus2 = (iso: string) => {
      const d = new Date(Date.parse(iso) + 2 * 3_600_000).toISOString();
      return `${d.slice(0, 23)}+02:00`;
    };
    expect((await listAll(big.key, { from: plus2(from), to: plus2(to) }, 100)).ids).toEqual(both);
    // One millisecond later, the group on `from` drops out; one later on `to`, its group comes in.
    const ms = (iso: string, d: number) => new Date(Date.parse(iso) + d).toISOString();
    expect((await listAll(big.key, { from: ms(from, 1), to: ms(to, 1) }, 100)).ids).toEqual(
      ordered(big.all.filter((p) => atOrAfter(ms(from, 1))(p) && before(ms(to, 1))(p))),
    );
    // Empty ranges.
    expect((await listAll(big.key, { from: to, to: from })).ids).toEqual([]);
    expect((await listAll(big.key, { from, to: from })).ids).toEqual([]);
    // Everything is after t0 - 1 day and before t0 + 61 days.
    expect((await listAll(big.key, { from: ms(big.t0.toISOString(), -DAY), to: ms(big.t0.toISOString(), 61 * DAY) }, 100)).ids).toEqual(
      ordered(big.all),
    );
  });

  test('status: scheduled = all 250, published = exactly the 2 published, failed = the 1 failed, publishing = none', async () => {
    const scheduled = await listAll(big.key, { status: 'scheduled' }, 100);
    expect(scheduled.ids).toEqual(ordered(big.scheduled));
    expect(scheduled.posts.every((p) => p.status === 'scheduled')).toBe(true);

    const published = await listAll(big.key, { status: 'published' });
    expect(published.ids).toEqual(ordered(big.published));
    expect(published.posts.every((p) => p.status === 'published')).toBe(true);
    expect(fake.statuses.filter((s) => s.token === 'good-token')).toHaveLength(2);

    const failed = await listAll(big.key, { status: 'failed' });
    expect(failed.ids).toEqual(ordered(big.failed));
    expect(failed.posts[0]!.status).toBe('failed');

    expect((await listAll(big.key, { status: 'publishing' })).ids).toEqual([]);
    // published within the scheduled channels: none.
    expect((await listAll(big.key, { status: 'published', channelId: big.ch.a })).ids).toEqual([]);
  });

  test('filters combined, paged with a small limit', async () => {
    const from = big.groupTimes[2]!;
    const to = big.groupTimes[17]!;
    const { b, c } = big.ch;
    const cases: [Record<string, string>, (p: Rec) => boolean][] = [
      [{ channelId: b, from }, (p) => has(b)(p) && atOrAfter(from)(p)],
      [{ channelId: c, to }, (p) => has(c)(p) && before(to)(p)],
      [{ channelId: b, from, to, status: 'scheduled' }, (p) => has(b)(p) && atOrAfter(from)(p) && before(to)(p)],
      [{ status: 'scheduled', channelId: c }, (p) => has(c)(p) && big.scheduled.includes(p)],
      [
        { status: 'published', from: big.published[0]!.scheduledAt },
        (p) => big.published.includes(p) && atOrAfter(big.published[0]!.scheduledAt)(p),
      ],
      [{ status: 'failed', to: big.groupTimes[0]! }, (p) => big.failed.includes(p)],
    ];
    for (const [query, keep] of cases) {
      const expected = ordered(big.all.filter(keep));
      expect((await listAll(big.key, query, 9)).ids).toEqual(expected);
    }
  });
});

describe('GET /v1/posts cursor stability', () => {
  test('posts added after page 1 appear in later pages exactly when they sort after the cursor position', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    const ch = (await mastodonChannel(org.id, 'stable')).id;
    const t0 = await stack.syncClock();
    const base = t0.getTime() + 2 * 60 * MIN;
    // 60 posts 20 hours apart (~41 days), twenty of them sharing instants in pairs.
    const slot = (i: number) => (i < 20 ? i : i < 40 ? 20 + Math.floor((i - 20) / 2) : i - 10);
    const times = Array.from({ length: 60 }, (_, i) => new Date(base + slot(i) * 20 * 3_600_000 + 7));
    const original = await pool(shuffled(times, 7), 10, (at) => createPost(key, [ch], at));
    const sortedOriginal = original.slice().sort(byKeyDesc);

    const first = await call(stack.app, 'GET', '/v1/posts?limit=20', { key });
    expect(first.status).toBe(200);
    const page1 = (first.body.data as ApiPost[]).map((p) => p.id);
    expect(page1).toEqual(sortedOriginal.slice(0, 20).map((p) => p.id));
    const cursor = first.body.nextCursor as string;
    expect(typeof cursor).toBe('string');
    const cursorRec = sortedOriginal[19]!;
    const newest = Date.parse(sortedOriginal[0]!.scheduledAt);
    const oldest = Date.parse(sortedOriginal.at(-1)!.scheduledAt);
    const cursorAt = Date.parse(cursorRec.scheduledAt);

    // 30 new posts: newer than everything; inside page 1's range; on the cursor's own instant
    // (newer ids, so they sort before it); in the middle after the cursor; on the instants of
    // older posts; older than everything.
    const added: Date[] = [];
    for (let i = 0; i < 6; i++) added.push(new Date(newest + (i + 1) * 3_600_000));
    for (let i = 0; i < 5; i++) added.push(new Date(cursorAt + (i + 1) * 1_800_000 + 11));
    for (let i = 0; i < 4; i++) added.push(new Date(cursorAt));
    for (let i = 0; i < 6; i++) added.push(new Date(cursorAt - (i + 1) * 4 * 3_600_000 - 13));
    for (let i = 0; i < 5; i++) added.push(new Date(Date.parse(sortedOriginal[30 + i * 5]!.scheduledAt)));
    for (let i = 0; i < 4; i++) added.push(new Date(oldest - (i + 1) * MIN));
    expect(added).toHaveLength(30);
    expect(added.every((d) => d.getTime() > t0.getTime())).toBe(true);
    const fresh = await pool(added, 10, (at) => createPost(key, [ch], at));

    const union = [...original, ...fresh];
    const expected = union
      .slice()
      .sort(byKeyDesc)
      .filter((p) => after(p, cursorRec))
      .map((p) => p.id);
    // Some new posts land after the cursor and some before it (sanity of the set-up).
    const freshAfter = fresh.filter((p) => after(p, cursorRec));
    expect(freshAfter.length).toBe(6 + 5 + 4);
    expect(fresh.filter((p) => p.scheduledAt === cursorRec.scheduledAt).every((p) => !after(p, cursorRec))).toBe(true);

    const rest = await listAll(key, {}, 20, cursor);
    expect(rest.ids).toEqual(expected);
    expect(rest.ids.filter((id) => page1.includes(id))).toEqual([]);
    expect(rest.ids).toHaveLength(40 + 15);
    // From the start again: the whole union in order.
    expect((await listAll(key, {}, 20)).ids).toEqual(ordered(union));
  });
});

describe('GET /v1/posts visibility', () => {
  test('a channel-limited key lists only posts whose channels are all within its list; others are 404', async () => {
    const { a, b, c } = big.ch;
    const onlyA = await makeKey(big.orgId, { channels: [a] });
    const aAndC = await makeKey(big.orgId, { channels: [a, c] });
    const within = (allowed: string[]) => (p: Rec) => p.channelIds.every((id) => allowed.includes(id));

    const expectedA = ordered(big.all.filter(within([a])));
    expect(expectedA.length).toBeGreaterThan(20);
    expect((await listAll(onlyA.key, {}, 25)).ids).toEqual(expectedA);
    expect((await listAll(onlyA.key, { channelId: a }, 25)).ids).toEqual(expectedA);
    expect((await listAll(onlyA.key, { channelId: b })).ids).toEqual([]);
    expect((await listAll(onlyA.key, { status: 'published' })).ids).toEqual([]);
    const expectedAC = ordered(big.all.filter(within([a, c])));
    expect((await listAll(aAndC.key, {}, 30)).ids).toEqual(expectedAC);
    const from = big.groupTimes[6]!;
    expect((await listAll(aAndC.key, { from, channelId: c }, 4)).ids).toEqual(
      ordered(big.all.filter((p) => within([a, c])(p) && p.channelIds.includes(c) && Date.parse(p.scheduledAt) >= Date.parse(from))),
    );

    const onAB = big.scheduled.filter((p) => p.channelIds.length === 2 && p.channelIds.includes(a) && p.channelIds.includes(b));
    const onAOnly = big.scheduled.find((p) => p.channelIds.length === 1 && p.channelIds[0] === a)!;
    expect(onAB.length).toBeGreaterThan(0);
    for (const p of onAB.slice(0, 5)) {
      const r = await call(stack.app, 'GET', `/v1/posts/${p.id}`, { key: onlyA.key });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
      expect((await call(stack.app, 'GET', `/v1/posts/${p.id}`, { key: big.key })).status).toBe(200);
    }
    const ok = await call(stack.app, 'GET', `/v1/posts/${onAOnly.id}`, { key: onlyA.key });
    expect(ok.status).toBe(200);
    expect(ok.body.id).toBe(onAOnly.id);
  });

  test("another organization's key sees none of the posts and gets 404 for each id", async () => {
    const other = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(other.id);
    const ownChannel = (await mastodonChannel(other.id, 'theirs')).id;
    const t = await stack.syncClock();
    const own = await createPost(key, [ownChannel], new Date(t.getTime() + 3 * DAY));

    expect((await listAll(key, {}, 100)).ids).toEqual([own.id]);
    for (const q of [{ channelId: big.ch.a }, { status: 'scheduled' }, { status: 'published' }, { from: big.t0.toISOString() }]) {
      const ids = (await listAll(key, q, 100)).ids;
      expect(ids.filter((id) => id !== own.id)).toEqual([]);
    }
    const results = await pool(big.all, 10, (p) => call(stack.app, 'GET', `/v1/posts/${p.id}`, { key }));
    expect(results.map((r) => r.status)).toEqual(big.all.map(() => 404));
    expect(results.every((r) => r.body.error.code === 'not_found')).toBe(true);
    // And the big organization does not see the other one's post.
    const back = await call(stack.app, 'GET', `/v1/posts/${own.id}`, { key: big.key });
    expect(back.status).toBe(404);
    expect(back.body.error.code).toBe('not_found');
    expect((await listAll(big.key, { status: 'scheduled' }, 100)).ids).not.toContain(own.id);
  });
});

describe('GET /v1/posts bad query values', () => {
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=', 'limit'],
    ['limit=1e1', 'limit'],
    ['status=done', 'status'],
    ['status=SCHEDULED', 'status'],
    ['from=yesterday', 'from'],
    ['to=2026-13-45T00:00:00Z', 'to'],
    ['from=2026-01-01Tnonsense', 'from'],
    ['cursor=garbage', 'cursor'],
    [`cursor=${b64('\u0000\u00ff junk \u0001')}`, 'cursor'],
    [`cursor=${b64({ at: '2026-01-01T00:00:00Z', id: 'post_x' })}`, 'cursor'],
    [`cursor=${b64(['not a date', 'post_x'])}`, 'cursor'],
    [`cursor=${b64(['2026-01-01T00:00:00Z', 5])}`, 'cursor'],
    [`cursor=${b64(['2026-01-01T00:00:00Z'])}`, 'cursor'],
    [`cursor=${b64('null')}`, 'cursor'],
  ];

  for (const [qs, path] of cases) {
    test(`${qs.length > 60 ? `${qs.slice(0, 60)}…` : qs} → 422 validation_failed (${path})`, async () => {
      const r = await call(stack.app, 'GET', `/v1/posts?${qs}`, { key: big.key });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('validation_failed');
      expect(typeof r.body.error.message).toBe('string');
      const paths = (r.body.error.details.fields as { path: string }[]).map((f) => f.path.replace(/^\//, ''));
      expect(paths).toContain(path);
    });
  }

  test('crafted values never cause a 500', async () => {
    const crafted = [
      `cursor=${b64([-8.64e15, 'post_x'])}`,
      `cursor=${b64([8.64e15, 'post_x'])}`,
      `cursor=${b64(['2026-01-01T00:00:00Z', 'post_\u0000'])}`,
      `cursor=${b64([null, 'post_x'])}`,
      'channelId=%00',
      'from=0000-01-01T00:00:00Z',
      'to=9999-12-31T23:59:59Z',
      `from=${encodeURIComponent('+275760-09-13T00:00:00Z')}`,
      'from=2026-01-01%00',
      `cursor=${'A'.repeat(600)}`,
      `cursor=${b64(['0000-06-01T00:00:00Z', 'post_x'])}`,
      `from=${encodeURIComponent('0001-01-01T00:00:00+14:00')}`,
      `to=${encodeURIComponent('9999-12-31T23:00:00-05:00')}`,
      `channelId=${'c'.repeat(65)}`,
      `limit=${'9'.repeat(400)}`,
    ];
    for (const qs of crafted) {
      const r = await call(stack.app, 'GET', `/v1/posts?${qs}`, { key: big.key });
      if (r.status >= 500) throw new Error(`GET /v1/posts?${qs} → ${r.status} ${JSON.stringify(r.body)}`);
      expect([200, 422]).toContain(r.status);
      if (r.status === 422) expect(r.body.error.code).toBe('validation_failed');
    }
    // Ids that cannot exist: 404 (or 422 for an over-long one), never 500.
    for (const id of ['%00', 'post_%00', 'post_x%00y', 'x'.repeat(65)]) {
      for (const method of ['GET', 'PATCH']) {
        const r = await call(stack.app, method, `/v1/posts/${id}`, {
          key: big.key,
          body: method === 'PATCH' ? { content: 'x' } : undefined,
        });
        if (r.status >= 500) throw new Error(`${method} /v1/posts/${id} → ${r.status} ${JSON.stringify(r.body)}`);
        expect(r.status).toBe(id.length > 64 ? 422 : 404);
      }
    }
  });
});
