// The exact admission statement (services/admission.ts, which an API process without its
// admission cache uses for every request): at most one Postgres round trip per authenticated
// request (key, organization, rate limit, monthly quota, usage count, last-used), and a revoke or
// a plan change made anywhere counts at once. The cache's own proofs: test/admission-cache.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { setOrganizationPlan } from '../domain/organizations.ts';
import { createRateLimiter, createRateLimiterPool } from '../services/rate-limit.ts';
import { harness } from './harness/index.ts';
import { countQueries } from './harness/query-count.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { signedInUser } from './harness/web-browser.ts';

const ROOT = resolve(import.meta.dir, '..');

describe('Postgres round trips per authenticated request', () => {
  test('GET /v1/me: one statement; its rate limit, quota count and last-used are all in it', async () => {
    const h = await harness();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const app = await testApp();
    // The first request of the process prepares the statement (in the same round trip).
    const first = await countQueries(() => call(app, 'GET', '/v1/me', { key: k.key }));
    expect(first.result.status).toBe(200);
    expect(first.queries).toHaveLength(1);
    const again = await countQueries(() => call(app, 'GET', '/v1/me', { key: k.key }));
    expect(again.result.status).toBe(200);
    expect(again.queries).toHaveLength(1);
    expect(again.result.body.quota.usedThisMonth).toBe(2);
    expect(again.result.headers.get('ratelimit-remaining')).toBe('58');
    const [row] = await h.orm.em
      .fork()
      .getConnection()
      .execute<{ last_used_at: Date | null }[]>('select last_used_at from api_keys where id = ?', [k.id]);
    expect(row!.last_used_at).not.toBeNull();
  });

  test('refusals cost no more: an unknown key, a request over the rate limit', async () => {
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const app = await testApp();
    const unknown = await countQueries(() => call(app, 'GET', '/v1/me', { key: `sk_live_${'x'.repeat(40)}` }));
    expect(unknown.result.status).toBe(401);
    expect(unknown.queries.length).toBeLessThanOrEqual(1);
    for (let i = 0; i < 60; i++) expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    const limited = await countQueries(() => call(app, 'GET', '/v1/me', { key: k.key }));
    expect(limited.result.status).toBe(429);
    expect(limited.queries).toHaveLength(1);
  });

  test('20 concurrent requests share round trips: at most one each, counted exactly', async () => {
    const org = await makeOrg('TEAM');
    const keys = await Promise.all(Array.from({ length: 4 }, () => makeKey(org.id)));
    const app = await testApp();
    const { result, queries } = await countQueries(() =>
      Promise.all(Array.from({ length: 20 }, (_, i) => call(app, 'GET', '/v1/me', { key: keys[i % 4]!.key }))),
    );
    expect(result.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(queries.length).toBeLessThanOrEqual(20);
    // Every request got its own place in the month's count.
    expect(result.map((r) => r.body.quota.usedThisMonth).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const after = await call(app, 'GET', '/v1/me', { key: keys[0]!.key });
    expect(after.body.quota.usedThisMonth).toBe(21);
  });
});

describe('a revoke or a plan change counts in every API process', () => {
  const procs: ReturnType<typeof Bun.spawn>[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    const h = await harness();
    for (let i = 0; i < 2; i++) {
      const p = Bun.spawn([process.execPath, 'run', 'test/harness/api-process.ts'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: h.databaseUrl },
        stdout: 'pipe',
        stderr: 'inherit',
      });
      procs.push(p);
      const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
      let out = '';
      while (!/ready (\d+)/.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`API process exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      ports.push(Number(/ready (\d+)/.exec(out)![1]));
      reader.releaseLock();
    }
  });
  afterAll(async () => {
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
  });

  const me = async (port: number, key: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  /** The answers of both other processes, asked until `done` holds for both or 1 s has passed. */
  async function within1s(key: string, done: (r: Awaited<ReturnType<typeof me>>) => boolean) {
    const deadline = Date.now() + 1000;
    for (;;) {
      const answers = await Promise.all(ports.map((p) => me(p, key)));
      if (answers.every(done) || Date.now() > deadline) return answers;
      await Bun.sleep(50);
    }
  }

  test('a key revoked in the web app of one process is refused by the other two within 1 s', async () => {
    const h = await harness();
    const app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
    const { browser } = await signedInUser(app, { plan: 'PRO' });
    const posted = await browser.post('/settings/api-keys', { name: 'revoke me', scopes: ['read'], channels: 'all', expiry: 'never' });
    const created = await browser.get(posted.location!);
    const key = (await created.one('[data-testid="new-api-key"]')).attrs.value!;
    // In use everywhere first (so a process that kept it anywhere would still have it).
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
    for (const port of ports) expect((await me(port, key)).status).toBe(200);
    const id = /\/settings\/api-keys\/([^/"]+)\/revoke/.exec(created.html)![1]!;
    expect((await browser.post(`/settings/api-keys/${id}/revoke`)).status).toBe(303);
    const answers = await within1s(key, (r) => r.status === 401);
    expect(answers.map((r) => r.status)).toEqual([401, 401]);
    expect(answers[0]!.body.error.message).toMatch(/revoked/);
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(401);
  });

  test('a plan change (org set-plan) counts within 1 s in every process: limits, then plan_required', async () => {
    const h = await harness();
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    for (const port of ports) {
      const r = await me(port, key);
      expect(r.body.organization.plan).toBe('PRO');
      expect(r.headers.get('ratelimit-limit')).toBe('60');
    }
    await setOrganizationPlan(h.orm.em.fork(), org.id, 'TEAM');
    const team = await within1s(key, (r) => r.body.organization?.plan === 'TEAM');
    for (const r of team) {
      expect(r.body.organization.plan).toBe('TEAM');
      expect(r.body.quota.requestsPerMonth).toBe(100_000);
      expect(r.headers.get('ratelimit-limit')).toBe('300');
    }
    await setOrganizationPlan(h.orm.em.fork(), org.id, 'FREE');
    const free = await within1s(key, (r) => r.status === 403);
    expect(free.map((r) => [r.status, r.body.error.code])).toEqual([
      [403, 'plan_required'],
      [403, 'plan_required'],
    ]);
  });
});

describe('the admission statement after Postgres ended idle connections', () => {
  test('is sent again on a fresh connection, and counts once', async () => {
    const h = await harness();
    const org = await makeOrg('PRO');
    const k = await makeKey(org.id);
    const pool = createRateLimiterPool(h.databaseUrl, () => {}, 2);
    try {
      const limiter = createRateLimiter(pool);
      const pids = await Promise.all(
        [0, 1].map(async () => (await pool.query<{ pid: number }>('select pg_backend_pid() as pid, pg_sleep(0.05)')).rows[0]!.pid),
      );
      await h.orm.em
        .fork()
        .getConnection()
        .execute('select pg_terminate_backend(pid) from unnest(?::int[]) pid', [`{${pids.join(',')}}`]);
      const app = await testApp({ rateLimiter: limiter });
      const r = await call(app, 'GET', '/v1/me', { key: k.key });
      expect(r.status).toBe(200);
      expect(r.body.quota.usedThisMonth).toBe(1);
      expect(r.headers.get('ratelimit-remaining')).toBe('59');
    } finally {
      await pool.end();
    }
  });
});
