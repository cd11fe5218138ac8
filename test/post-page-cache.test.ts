// GET /v1/posts's pages kept in the API process (domain/posts/page-cache.ts) on the change feed
// (db/change-feed.ts): a kept page costs no page statement, and every change committed before a
// request is in its answer, whoever wrote it (another process, psql, the worker's statements).
import { afterAll, describe, expect, test } from 'bun:test';
import pgDriver from 'pg';
import { createChangeFeed, type ChangeFeed, type ChangeHandlers } from '../db/change-feed.ts';
import { createPostPageCache } from '../domain/posts/page-cache.ts';
import { harness } from './harness/index.ts';
import { countQueries } from './harness/query-count.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

const opened: ChangeFeed[] = [];
afterAll(async () => {
  for (const feed of opened) await feed.close();
});

/** A feed of its own, with a session name no other test's feed has (so a test ends only its own). */
async function feedOf() {
  const h = await harness();
  const applicationName = `postpilot change feed ${crypto.randomUUID().slice(0, 8)}`;
  const feed = createChangeFeed({ connectionString: h.databaseUrl, applicationName });
  opened.push(feed);
  return Object.assign(feed, { applicationName });
}

async function endSession(applicationName: string) {
  const h = await harness();
  await h.pool.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [applicationName]);
}

/** A process of its own: its feed and page cache, and an app with them. */
async function processWithPages() {
  const feed = await feedOf();
  const postPages = createPostPageCache(feed);
  await postPages.ready;
  expect(postPages.listening()).toBe(true);
  return { postPages, feed, app: await testApp({ postPages }) };
}

/** Another session, as the worker or an operator writes: not this process's pool. */
async function otherSession() {
  const h = await harness();
  const c = new pgDriver.Client({ connectionString: h.databaseUrl });
  await c.connect();
  return c;
}

async function orgWithPosts(n: number) {
  const org = await makeOrg('ENTERPRISE');
  const channel = await makeChannel(org.id);
  const { key } = await makeKey(org.id);
  const h = await harness();
  const tag = crypto.randomUUID().slice(0, 8);
  await h.pool.query(
    `insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
     select 'post_pc' || g || '_' || $1, $2, 'scheduled', 'text ' || g, 'api', now() + g * interval '1 hour', now(), now()
     from generate_series(1, $3::int) g`,
    [tag, org.id, n],
  );
  await h.pool.query(
    `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
     select 'pc_pc' || g || '_' || $1, 'post_pc' || g || '_' || $1, $2, 'MASTODON', 'draft', 'text ' || g, now(), now()
     from generate_series(1, $3::int) g`,
    [tag, channel.id, n],
  );
  return { org, channel, key, post: (g: number) => `post_pc${g}_${tag}`, pc: (g: number) => `pc_pc${g}_${tag}` };
}

const pageStatements = (queries: string[]) => queries.filter((q) => q.includes('post_page'));

describe('the change feed', () => {
  test('its barrier: once sync() answers, every notification committed before it was called has been handled', async () => {
    const feed = await feedOf();
    const heard: string[] = [];
    const handlers: ChangeHandlers = { change: (p) => heard.push(p), reset: () => {} };
    const sub = feed.listen('postpilot_feed_test', handlers);
    await sub.ready;
    expect(sub.up()).toBe(true);
    const other = await otherSession();
    try {
      for (let i = 0; i < 40; i++) {
        await other.query(`select pg_notify('postpilot_feed_test', $1)`, [`n${i}`]);
        // Many callers at once share the statements; each still sees the notification.
        const answers = await Promise.all([sub.sync(), sub.sync(), sub.sync()]);
        expect(answers).toEqual([true, true, true]);
        expect(heard.at(-1)).toBe(`n${i}`);
      }
    } finally {
      await other.end();
      sub.close();
    }
  });

  test('down: no subscription is up, each is reset, sync answers false; it comes back and listens again', async () => {
    const feed = await feedOf();
    let resets = 0;
    const heard: string[] = [];
    const sub = feed.listen('postpilot_feed_test', { change: (p) => heard.push(p), reset: () => resets++ });
    await sub.ready;
    const before = resets;
    const h = await harness();
    await endSession(feed.applicationName);
    for (let i = 0; i < 100 && sub.up(); i++) await Bun.sleep(10);
    expect(sub.up()).toBe(false);
    expect(resets).toBeGreaterThan(before);
    expect(await sub.sync()).toBe(false);
    for (let i = 0; i < 300 && !sub.up(); i++) await Bun.sleep(10);
    expect(sub.up()).toBe(true);
    await h.pool.query(`select pg_notify('postpilot_feed_test', 'back')`);
    expect(await sub.sync()).toBe(true);
    expect(heard).toContain('back');
    sub.close();
  });
});

describe('GET /v1/posts from memory', () => {
  test('a kept page takes no page statement; a change by another session is in the very next page', async () => {
    const { app } = await processWithPages();
    const { key, post } = await orgWithPosts(5);
    const first = await countQueries(() => call(app, 'GET', '/v1/posts?limit=3', { key }));
    expect(first.result.status).toBe(200);
    expect(pageStatements(first.queries)).toHaveLength(1);
    const again = await countQueries(() => call(app, 'GET', '/v1/posts?limit=3', { key }));
    expect(again.result.body).toEqual(first.result.body);
    // As Elysia answers a page it serialises itself.
    const plain = await call(await testApp({ postPages: undefined }), 'GET', '/v1/posts?limit=3', { key });
    expect(plain.body).toEqual(first.result.body);
    for (const page of [first.result, again.result]) expect(page.headers.get('content-type')).toBe(plain.headers.get('content-type'));
    expect(pageStatements(again.queries)).toHaveLength(0);

    const other = await otherSession();
    try {
      for (let i = 0; i < 20; i++) {
        await other.query('update posts set content = $1 where id = $2', [`edited ${i}`, post(5)]);
        const page = await call(app, 'GET', '/v1/posts?limit=3', { key });
        expect(page.body.data[0].content).toBe(`edited ${i}`);
      }
      // A channel's outcome, as the worker records it.
      await other.query(
        `update post_channels set status = 'published', platform_post_id = 'p1', url = 'https://x.example/1' where post_id = $1`,
        [post(4)],
      );
      const page = await call(app, 'GET', '/v1/posts?limit=3', { key });
      expect(page.body.data[1].channels[0]).toMatchObject({ status: 'published', platformPostId: 'p1' });
      // Deleted (soft): gone from the next page.
      await other.query('update posts set deleted_at = now() where id = $1', [post(5)]);
      const after = await call(app, 'GET', '/v1/posts?limit=3', { key });
      expect(after.body.data.map((p: { id: string }) => p.id)).toEqual([post(4), post(3), post(2)]);
    } finally {
      await other.end();
    }
  });

  test('a change made through another process is in this one’s next page; a new post at once', async () => {
    const a = await processWithPages();
    const b = await processWithPages();
    const { org, key, channel } = await orgWithPosts(2);
    const before = await call(b.app, 'GET', '/v1/posts', { key });
    expect(before.body.data).toHaveLength(2);
    const h = await harness();
    // Inserted as the create does, by the other "process" (a post and its channel, one transaction).
    const em = h.orm.em.fork();
    await em.getConnection().execute(
      `with p as (insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
        values ('post_pcnew_' || ?, ?, 'scheduled', 'new', 'api', now() + interval '9 days', now(), now()) returning id)
       insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
       select 'pc_pcnew_' || ?, id, ?, 'MASTODON', 'draft', 'new', now(), now() from p`,
      [org.id, org.id, org.id, channel.id],
    );
    const after = await call(b.app, 'GET', '/v1/posts', { key });
    expect(after.body.data).toHaveLength(3);
    expect(after.body.data[0].content).toBe('new');
    expect((await call(a.app, 'GET', '/v1/posts', { key })).body.data).toHaveLength(3);
  });

  test('what no page shows is not announced: bookkeeping updates keep the page', async () => {
    const { app } = await processWithPages();
    const { key, post, pc } = await orgWithPosts(2);
    await call(app, 'GET', '/v1/posts', { key });
    const h = await harness();
    await h.pool.query('update posts set workflow_pending = true, updated_at = now(), metrics_refreshed_at = now() where id = $1', [
      post(1),
    ]);
    await h.pool.query('update post_channels set metrics_step = 3, metrics_next_at = now(), attempts = 2 where id = $1', [pc(1)]);
    const kept = await countQueries(() => call(app, 'GET', '/v1/posts', { key }));
    expect(pageStatements(kept.queries)).toHaveLength(0);
    await h.pool.query(`update post_channels set error = 'changed' where id = $1`, [pc(1)]);
    const read = await countQueries(() => call(app, 'GET', '/v1/posts', { key }));
    expect(pageStatements(read.queries)).toHaveLength(1);
  });

  test('pages are per key’s channels and per query; another organization’s change keeps them', async () => {
    const { app } = await processWithPages();
    const one = await orgWithPosts(3);
    const two = await orgWithPosts(1);
    const limited = await makeKey(one.org.id, { channels: [one.channel.id] });
    const other = await makeChannel(one.org.id, 'BLUESKY');
    const none = await makeKey(one.org.id, { channels: [other.id] });
    expect((await call(app, 'GET', '/v1/posts', { key: one.key })).body.data).toHaveLength(3);
    expect((await call(app, 'GET', '/v1/posts', { key: limited.key })).body.data).toHaveLength(3);
    expect((await call(app, 'GET', '/v1/posts', { key: none.key })).body.data).toHaveLength(0);
    expect((await call(app, 'GET', '/v1/posts?limit=1', { key: one.key })).body.data).toHaveLength(1);
    expect((await call(app, 'GET', `/v1/posts?channelId=${other.id}`, { key: one.key })).body.data).toHaveLength(0);
    const h = await harness();
    await h.pool.query('update posts set content = $1 where id = $2', ['theirs', two.post(1)]);
    const kept = await countQueries(() => call(app, 'GET', '/v1/posts', { key: one.key }));
    expect(pageStatements(kept.queries)).toHaveLength(0);
    expect((await call(app, 'GET', '/v1/posts', { key: two.key })).body.data[0].content).toBe('theirs');
  });

  test('while the feed is down every page is read, and fresh', async () => {
    const { app, postPages, feed } = await processWithPages();
    const { key, post } = await orgWithPosts(1);
    await call(app, 'GET', '/v1/posts', { key });
    const h = await harness();
    await endSession(feed.applicationName);
    for (let i = 0; i < 100 && postPages.listening(); i++) await Bun.sleep(10);
    expect(postPages.listening()).toBe(false);
    // No notification reaches a process without its feed: the page is read.
    await h.pool.query('update posts set content = $1 where id = $2', ['while down', post(1)]);
    const read = await countQueries(() => call(app, 'GET', '/v1/posts', { key }));
    expect(read.result.body.data[0].content).toBe('while down');
    expect(pageStatements(read.queries)).toHaveLength(1);
    for (let i = 0; i < 300 && !postPages.listening(); i++) await Bun.sleep(10);
    expect(postPages.listening()).toBe(true);
  });
});

/** A feed whose announcements the test makes (rules 1 and 4 need no Postgres). */
function handFeed() {
  let handlers: ChangeHandlers | undefined;
  const feed: ChangeFeed = {
    listen(_channel, h) {
      handlers = h;
      return { up: () => true, ready: Promise.resolve(), sync: async () => true, close: () => {} };
    },
    close: async () => {},
  };
  return { feed, announce: (org: string) => handlers!.change(org) };
}

describe('the page cache’s rules', () => {
  test('a page read while its organization changed is not kept; another organization’s change does not matter', async () => {
    const { feed, announce } = handFeed();
    const cache = createPostPageCache(feed);
    const text = async (p: Promise<Blob>) => (await p).text();
    let reads = 0;
    const read = (during?: string) => async () => {
      reads++;
      if (during) announce(during);
      return { n: reads };
    };
    expect(await text(cache.page('org_a', 'k', read('org_a')))).toBe('{"n":1}');
    expect(await text(cache.page('org_a', 'k', read()))).toBe('{"n":2}');
    expect(await text(cache.page('org_a', 'k', read('org_b')))).toBe('{"n":2}');
    announce('org_a');
    expect(await text(cache.page('org_a', 'k', read('org_b')))).toBe('{"n":3}');
    expect(await text(cache.page('org_a', 'k', read()))).toBe('{"n":3}');
  });

  test('the organizations whose changes are counted are bounded: past the bound, the reads under way are not kept', async () => {
    const { feed, announce } = handFeed();
    const cache = createPostPageCache(feed, { maxTracked: 2 });
    let reads = 0;
    const read = (during: string[]) => async () => {
      reads++;
      for (const org of during) announce(org);
      return { n: reads };
    };
    const n = async (p: Promise<Blob>) => JSON.parse(await (await p).text()).n;
    // Two other organizations' changes while org_a is read: counted, and org_a's page is kept.
    expect(await n(cache.page('org_a', 'k', read(['org_b', 'org_c'])))).toBe(1);
    expect(await n(cache.page('org_a', 'k', read([])))).toBe(1);
    // A third while org_b is read: the counts start again, and that read is not kept.
    expect(await n(cache.page('org_b', 'k', read(['org_d'])))).toBe(2);
    expect(await n(cache.page('org_b', 'k', read([])))).toBe(3);
    expect(await n(cache.page('org_b', 'k', read([])))).toBe(3);
  });

  test('a page lives its time; the least recently used goes first over the budget', async () => {
    const { feed } = handFeed();
    const cache = createPostPageCache(feed, { maxBytes: 30, ttlMs: 50 });
    const page = async (k: string) => JSON.parse(await (await cache.page('o', k, read)).text());
    let reads = 0;
    const read = async () => ({ read: ++reads, pad: 'xx' }); // 19 bytes of JSON
    expect((await page('a')).read).toBe(1);
    expect((await page('a')).read).toBe(1);
    expect((await page('b')).read).toBe(2); // over 30 bytes: a goes
    expect((await page('a')).read).toBe(3);
    expect((await page('b')).read).toBe(4);
    await Bun.sleep(60);
    expect((await page('b')).read).toBe(5);
  });
});
