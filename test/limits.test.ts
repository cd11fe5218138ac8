// Limits and safety (SPEC.md §7–8, DESIGN.md §3): per-minute rate limits across processes,
// monthly quotas, plan limits, Idempotency-Key, duplicate_post.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { MediaItem, Post } from '../db/entities/index.ts';
import { monthPeriod } from '../lib/plans.ts';
import { sql } from '../db/sql.ts';
import { DUPLICATE_QUERY } from '../domain/posts/create.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const ROOT = resolve(import.meta.dir, '..');

describe('per-minute rate limit', () => {
  test('RateLimit headers on every authenticated response; the 61st request in a minute → 429 rate_limited', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const app = await testApp();
    const first = await call(app, 'GET', '/v1/me', { key });
    expect(first.headers.get('ratelimit-limit')).toBe('60');
    expect(first.headers.get('ratelimit-remaining')).toBe('59');
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    for (let i = 0; i < 59; i++) expect((await call(app, 'GET', '/v1/channels', { key })).status).toBe(200);
    const over = await call(app, 'GET', '/v1/me', { key });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('rate_limited');
    expect(Date.parse(over.body.error.details.resetsAt)).toBeGreaterThan(Date.now());
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    // Errors after authentication carry the headers too (here: a 404 on an unknown id).
    const other = await makeKey(org.id);
    const notFound = await call(app, 'GET', '/v1/posts/post_nope', { key: other.key });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('ratelimit-limit')).toBe('60');
    // The limit is per key: another key of the same organization is not affected.
    expect((await call(app, 'GET', '/v1/me', { key: other.key })).status).toBe(200);
  });

  test('two API processes, 40 concurrent clients, 200 requests: exactly 60 admitted', async () => {
    const h = await harness();
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const procs = [0, 1].map(() =>
      Bun.spawn([process.execPath, 'run', 'test/harness/api-process.ts'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: h.databaseUrl },
        stdout: 'pipe',
        stderr: 'inherit',
      }),
    );
    try {
      const ports: number[] = [];
      for (const p of procs) {
        const reader = p.stdout.getReader();
        let out = '';
        while (!/ready (\d+)/.test(out)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`API process exited: ${out}`);
          out += new TextDecoder().decode(value);
        }
        ports.push(Number(/ready (\d+)/.exec(out)![1]));
        reader.releaseLock();
      }
      let next = 0;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 40 }, async (_, client) => {
          while (next < 200) {
            next++;
            const port = ports[client % 2];
            const res = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
            statuses.push(res.status);
            await res.arrayBuffer();
          }
        }),
      );
      expect(statuses).toHaveLength(200);
      expect(statuses.filter((s) => s === 200)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(140);
    } finally {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
    }
  });
});

describe('monthly quota', () => {
  test('over requestsPerMonth → 429 quota_exceeded until the next UTC month; /me reports the same figures', async () => {
    const h = await harness();
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    let now = new Date('2027-03-31T23:58:00Z');
    const app = await testApp({ now: () => now });
    // 9,998 requests already this month.
    await h.orm.em
      .fork()
      .getConnection()
      .execute('insert into usage_counters (organization_id, period, requests) values (?, ?, ?)', [org.id, monthPeriod(now).period, 9998]);
    const me = await call(app, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.quota).toMatchObject({ requestsPerMonth: 10000, usedThisMonth: 9999, resetsAt: '2027-04-01T00:00:00.000Z' });
    expect((await call(app, 'GET', '/v1/channels', { key })).status).toBe(200); // the 10,000th
    const over = await call(app, 'GET', '/v1/me', { key });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({
      code: 'quota_exceeded',
      details: { resetsAt: '2027-04-01T00:00:00.000Z', limit: 10000, used: 10000 },
    });
    expect(Number(over.headers.get('retry-after'))).toBe(120);
    // Refused requests are not counted.
    await call(app, 'GET', '/v1/me', { key });
    const [row] = await h.orm.em
      .fork()
      .getConnection()
      .execute<{ requests: number }[]>('select requests from usage_counters where organization_id = ? and period = ?', [org.id, '2027-03']);
    expect(Number(row!.requests)).toBe(10000);
    // The month rolls over at 00:00 UTC.
    now = new Date('2027-04-01T00:00:00Z');
    const april = await call(app, 'GET', '/v1/me', { key });
    expect(april.status).toBe(200);
    expect(april.body.quota).toMatchObject({ usedThisMonth: 1, resetsAt: '2027-05-01T00:00:00.000Z' });
  });

  test('ENTERPRISE has no monthly quota (null) and is never refused for it', async () => {
    const h = await harness();
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    const now = new Date('2027-05-10T00:00:00Z');
    await h.orm.em
      .fork()
      .getConnection()
      .execute('insert into usage_counters (organization_id, period, requests) values (?, ?, ?)', [org.id, '2027-05', 5_000_000]);
    const r = await call(await testApp({ now: () => now }), 'GET', '/v1/me', { key });
    expect(r.status).toBe(200);
    expect(r.body.quota).toMatchObject({ requestsPerMonth: null, usedThisMonth: 5_000_001 });
  });
});

describe('posts: plan limits, Idempotency-Key, duplicate_post', () => {
  let stack: Awaited<ReturnType<typeof startPostStack>>;
  let fake: FakeMastodon;
  beforeAll(async () => {
    stack = await startPostStack({ storage: 'disk' });
    fake = await startFakeMastodon();
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.stop();
  });
  const later = async (days = 10) => new Date((await stack.env.currentTimeMs()) + days * 86_400_000).toISOString();

  test('pending scheduled posts over the plan limit → 403 limit_reached with limit and used', async () => {
    const h = stack.h;
    const org = await makeOrg('PRO');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    // 999 pending posts already (written directly; creating them through the API is not the point).
    const at = new Date(await later(5));
    const conn = h.orm.em.fork().getConnection();
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, created_at, updated_at)
       select 'post_fill_' || g || '_' || ?, ?, 'scheduled', 'filler ' || g, '{}', '[]', 'api', ?, now(), now() from generate_series(1, 999) g`,
      [org.id, org.id, at],
    );
    const ok = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'the 1000th', channelIds: [ch.id], publishAt: await later() },
    });
    expect(ok.status).toBe(201);
    const over = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'the 1001st', channelIds: [ch.id], publishAt: await later() },
    });
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'limit_reached', details: { limit: 1000, used: 1000 } });
    expect(await h.orm.em.fork().count(Post, { organization: org.id })).toBe(1000);
  });

  test('Idempotency-Key: same body → the first response (same id, 201) without creating; other body → 409; 20 concurrent → one post', async () => {
    const org = await makeOrg('TEAM');
    const ch = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const body = { content: `idem ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later() };
    const first = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': 'k-1' } });
    expect(first.status).toBe(201);
    // Same body, keys in another order.
    const reordered = { publishAt: body.publishAt, channelIds: body.channelIds, content: body.content };
    const again = await call(stack.app, 'POST', '/v1/posts', { key, body: reordered, headers: { 'idempotency-key': 'k-1' } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { ...body, content: 'different' },
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(1);

    // 20 concurrent identical requests with one new key: one post, twenty identical answers.
    const body2 = { content: `concurrent ${crypto.randomUUID()}`, channelIds: [ch.id], publishAt: await later() };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(stack.app, 'POST', '/v1/posts', { key, body: body2, headers: { 'idempotency-key': 'k-2' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(2);

    // A refused request is replayed as refused (same status and body); the key is per organization.
    const bad = { content: '', channelIds: [ch.id] };
    const r1 = await call(stack.app, 'POST', '/v1/posts', { key, body: bad, headers: { 'idempotency-key': 'k-3' } });
    const r2 = await call(stack.app, 'POST', '/v1/posts', { key, body: bad, headers: { 'idempotency-key': 'k-3' } });
    expect(r1.status).toBe(422);
    expect(r2.status).toBe(422);
    expect(r2.body).toEqual(r1.body);
    const org2 = await makeOrg('TEAM');
    const ch2 = await makeChannel(org2.id, 'MASTODON');
    const k2 = await makeKey(org2.id);
    const elsewhere = await call(stack.app, 'POST', '/v1/posts', {
      key: k2.key,
      body: { ...body, channelIds: [ch2.id] },
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.id).not.toBe(first.body.id);
    // A key of the wrong shape is refused.
    const weird = await call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': 'x'.repeat(300) } });
    expect(weird.status).toBe(422);
  });

  test('Idempotency-Key on POST /v1/media/uploads', async () => {
    const org = await makeOrg('TEAM');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const body = { fileName: 'a.png', mimeType: 'image/png', fileSize: 1234 };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call(stack.app, 'POST', '/v1/media/uploads', { key, body, headers: { 'idempotency-key': 'up-1' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((a) => a.body.media.id)).size).toBe(1);
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(1);
    const changed = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { ...body, fileSize: 99 },
      headers: { 'idempotency-key': 'up-1' },
    });
    expect(changed.status).toBe(409);
  });

  test('duplicate_post: same normalized text to the same channel within 24 h → 409 naming the post and channel', async () => {
    const org = await makeOrg('TEAM');
    const a = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const t = await later(3);
    const first = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'Hello   world\n', channelIds: [a.id], publishAt: t },
    });
    expect(first.status).toBe(201);
    const dupe = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: '  Hello world', channelIds: [b.id, a.id], publishAt: t },
    });
    expect(dupe.status).toBe(409);
    expect(dupe.body.error).toMatchObject({ code: 'duplicate_post', details: { postId: first.body.id, channelId: a.id } });
    // Case is kept: different text. Another channel: fine. More than 24 h apart: fine.
    expect(
      (await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'hello world', channelIds: [a.id], publishAt: t } })).status,
    ).toBe(201);
    expect(
      (await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'Hello world', channelIds: [b.id], publishAt: t } })).status,
    ).toBe(201);
    expect(
      (await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'Hello world', channelIds: [a.id], publishAt: await later(5) } }))
        .status,
    ).toBe(201);
    // An edit into a duplicate is refused too.
    const third = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'Something else', channelIds: [a.id], publishAt: t },
    });
    const edit = await call(stack.app, 'PATCH', `/v1/posts/${third.body.id}`, { key, body: { content: 'Hello  world' } });
    expect(edit.status).toBe(409);
    expect(edit.body.error.code).toBe('duplicate_post');
  });

  test("duplicate_post looks the text up by its key through the channel's index, not by normalizing every post of the window", async () => {
    const org = await makeOrg('TEAM');
    const a = await makeChannel(org.id, 'MASTODON');
    const em = (await harness()).orm.em.fork();
    const at = new Date(Date.now() + 3 * 86_400_000);
    const rows = await em.transactional(async (tx) => {
      // As the planner would see a busy channel, whatever the table holds here.
      await sql(tx, 'set local enable_seqscan = off');
      await sql(tx, 'set local enable_bitmapscan = off');
      const params = [a.id, new Date(at.getTime() - 86_400_000), at, '', null, 'Hello world', 'Hello world', ''];
      return sql<{ 'QUERY PLAN': unknown }>(tx, `explain (format json) ${DUPLICATE_QUERY}`, params);
    });
    // The index's condition holds the key (the function inlined: md5 of the normalized text).
    const conditions = [
      ...JSON.stringify(rows).matchAll(/"Index Name":"post_channels_channel_id_text_key_index"[^}]*?"Index Cond":"([^"]*)"/g),
    ];
    expect(conditions.map((m) => m[1]).join(' ')).toContain('md5(btrim(regexp_replace(content');
  });
});
