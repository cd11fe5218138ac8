// The API process's admission from memory (services/admission-cache.ts): the same answers as the
// exact statement (rate limit exact per key, quota, last-used), far fewer statements, and a
// change made anywhere counted within a second (at once when made by this process).
import { afterAll, describe, expect, test } from 'bun:test';
import type pgDriver from 'pg';
import { revokeApiKey } from '../services/api-keys.ts';
import { QUOTA_MARGIN } from '../services/admission-cache.ts';
import { createRateLimiterPool } from '../services/rate-limit.ts';
import { createProcessCaches, type ProcessCaches } from '../server/caches.ts';
import { harness } from './harness/index.ts';
import { countQueries } from './harness/query-count.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

const opened: { caches: ProcessCaches; pool: pgDriver.Pool }[] = [];

/** One "API process": its own pool, change feed and admission cache, as server/run.ts builds them. */
async function cachedProcess() {
  const h = await harness();
  const pool = createRateLimiterPool(h.databaseUrl, () => {}, 3);
  const applicationName = `postpilot change feed ${crypto.randomUUID().slice(0, 8)}`;
  const caches = createProcessCaches({ connectionString: h.databaseUrl, pool, admission: true, pages: false, applicationName });
  opened.push({ caches, pool });
  const limiter = caches.rateLimiter;
  await limiter.cache!.ready;
  expect(limiter.cache!.listening()).toBe(true);
  return { limiter, caches, applicationName, app: await testApp({ rateLimiter: limiter }) };
}

afterAll(async () => {
  for (const { caches, pool } of opened) {
    await caches.close();
    await pool.end();
  }
});

const db = async <T>(text: string, values: unknown[] = []) => {
  const h = await harness();
  return (await h.pool.query(text, values)).rows as T[];
};

/** Polls until `check` holds (at most `ms`), and returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await Bun.sleep(10);
  }
}

describe('admission from memory', () => {
  test('the per-minute limit is exact per key, each answer counts once, and statements are shared', async () => {
    const { limiter, app } = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const { result, queries } = await countQueries(async () => {
      const answers = [];
      for (let i = 0; i < 61; i++) answers.push(await call(app, 'GET', '/v1/me', { key: k.key }));
      return answers;
    });
    expect(result.slice(0, 60).map((r) => r.status)).toEqual(Array(60).fill(200));
    expect(result.slice(0, 60).map((r) => r.headers.get('ratelimit-remaining'))).toEqual(
      Array.from({ length: 60 }, (_, i) => String(59 - i)),
    );
    expect(result.slice(0, 60).map((r) => r.body.quota.usedThisMonth)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(result[60]!.status).toBe(429);
    expect(result[60]!.body.error.code).toBe('rate_limited');
    // 61 requests, a handful of leases and writes (the exact statement would be 61).
    expect(queries.length).toBeLessThan(20);
    await limiter.cache!.flush();
    const [usage] = await db<{ requests: number }>('select requests from usage_counters where organization_id = $1', [org.id]);
    expect(usage!.requests).toBe(60);
    const [key] = await db<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [k.id]);
    expect(key!.last_used_at).not.toBeNull();
  });

  test('counts not written yet are written when the process stops', async () => {
    const h = await harness();
    const pool = createRateLimiterPool(h.databaseUrl, () => {}, 2);
    const caches = createProcessCaches({ connectionString: h.databaseUrl, pool, admission: true, pages: false });
    const limiter = caches.rateLimiter;
    await limiter.cache!.ready;
    const app = await testApp({ rateLimiter: limiter });
    const org = await makeOrg('TEAM');
    const k = await makeKey(org.id);
    for (let i = 0; i < 7; i++) expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    await caches.close();
    await pool.end();
    const [usage] = await db<{ requests: number }>('select requests from usage_counters where organization_id = $1', [org.id]);
    expect(usage!.requests).toBe(7);
  });

  test('a revoke in this process counts from the very next request', async () => {
    const h = await harness();
    const { app } = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    await revokeApiKey(h.orm.em.fork(), k.id);
    const r = await call(app, 'GET', '/v1/me', { key: k.key });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toContain('revoked');
  });

  test('a revoke, a plan change or a count set back by another process counts within a second', async () => {
    const { limiter, app } = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const k2 = await makeKey(org.id);
    expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/me', { key: k2.key })).status).toBe(200);

    await db('update api_keys set revoked_at = now() where id = $1', [k.id]);
    const revoked = await within(1000, async () => (await call(app, 'GET', '/v1/me', { key: k.key })).status === 401);
    expect(revoked).toBeLessThan(1000);

    await db(`update organizations set plan = 'FREE' where id = $1`, [org.id]);
    await within(1000, async () => {
      const r = await call(app, 'GET', '/v1/me', { key: k2.key });
      return r.status === 403 && r.body.error.code === 'plan_required';
    });

    await db(`update organizations set plan = 'TEAM' where id = $1`, [org.id]);
    await within(1000, async () => (await call(app, 'GET', '/v1/me', { key: k2.key })).headers.get('ratelimit-limit') === '300');
    const before = (await call(app, 'GET', '/v1/me', { key: k2.key })).body.quota.usedThisMonth;
    expect(before).toBeGreaterThan(3);
    await limiter.cache!.flush();
    await db('delete from usage_counters where organization_id = $1', [org.id]);
    // The requests that ask count too: a handful, far below the count before.
    await within(1000, async () => (await call(app, 'GET', '/v1/me', { key: k2.key })).body.quota.usedThisMonth < 3);
  });

  test('two processes on one key never admit more than the limit between them', async () => {
    const a = await cachedProcess();
    const b = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const [x, y] = await Promise.all([call(a.app, 'GET', '/v1/me', { key: k.key }), call(b.app, 'GET', '/v1/me', { key: k.key })]);
      statuses.push(x.status, y.status);
    }
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeLessThanOrEqual(60);
    // A lease takes at most a quarter of what remains: what the other process holds unused is little.
    expect(admitted).toBeGreaterThanOrEqual(50);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  });

  test('near the monthly quota every request takes the exact statement: the quota is exact', async () => {
    const { app } = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const period = new Date().toISOString().slice(0, 7);
    await db('insert into usage_counters (organization_id, period, requests) values ($1, $2, $3)', [org.id, period, 10_000 - 2]);
    expect(QUOTA_MARGIN).toBeGreaterThan(2);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call(app, 'GET', '/v1/me', { key: k.key }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(answers[1]!.body.quota.usedThisMonth).toBe(10_000);
    expect(answers[2]!.body.error.code).toBe('quota_exceeded');
  });

  test('while its change feed is down nothing is kept: a change counts at once, and it comes back', async () => {
    const { limiter, app, applicationName } = await cachedProcess();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    await db('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [applicationName]);
    await within(1000, async () => !limiter.cache!.listening());
    await db('update api_keys set revoked_at = now() where id = $1', [k.id]);
    // No NOTIFY reaches a process without its connection: the exact statement answers.
    expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(401);
    await within(3000, async () => limiter.cache!.listening());
  });
});
