// Authentication overhead: throughput of an authenticated GET /v1/me (a real API key, the
// Postgres rate limiter on, the monthly usage counter, last-used stamp) against a bare Elysia route
// in the same run, both over real sockets on 127.0.0.1, N requests with C clients in flight.
// Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/auth-overhead.ts
//   BENCH_REQUESTS=5000 BENCH_CONCURRENCY=32 BENCH_WARMUP=200 BENCH_ROUNDS=2 .tools/bin/bun run bench/auth-overhead.ts
//
// Only Postgres is needed (no Temporal, no worker): a throwaway embedded one from the test
// harness (temp directory, free port), removed at the end, on Ctrl-C and on a crash.
import { Elysia } from 'elysia';
import { createApp } from '../server/app.ts';
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import { PLAN_LIMITS } from '../lib/plans.ts';
import { createApiKey } from '../services/api-keys.ts';
import { createOrganization } from '../domain/organizations.ts';
import { createRateLimiter, createRateLimiterPool } from '../services/rate-limit.ts';
import { startTestPostgres } from '../test/harness/postgres.ts';
import { cpuNote, cpuPerRequest, readCpu, type CpuReading } from './cpu.ts';
import { envInt, machineNote, ms, onStop, pool, runBench, say, summary } from './stack.ts';

const REQUESTS = envInt('BENCH_REQUESTS', 5000, 1, 200_000);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 32, 1, 256); // the target figures are at 32 in flight
const WARMUP = envInt('BENCH_WARMUP', 200, 0, 20_000);
const ROUNDS = envInt('BENCH_ROUNDS', 2, 1, 10);
const POOL_MAX = loadConfig(process.env).databasePoolMax;

// ENTERPRISE allows 1,200 requests a minute per key. The benchmark measures the limiter's cost,
// not its refusals, so it spreads the requests over enough keys that none gets near its limit
// within a minute (at most KEY_BUDGET each, whatever the speed): every answer must be a 200.
const PLAN = 'ENTERPRISE';
const KEY_BUDGET = Math.floor(PLAN_LIMITS[PLAN].requestsPerMinute * 0.8);
const AUTH_TOTAL = WARMUP + REQUESTS * ROUNDS;
const KEYS = Math.ceil(AUTH_TOTAL / KEY_BUDGET);

interface Result {
  /** CPU ms per request: this process (server and load generator) and Postgres. */
  cpu: CpuReading;
  seconds: number;
  rps: number;
  latency: ReturnType<typeof summary>;
  failures: Map<string, number>;
}

async function load(url: string, count: number, headers: () => Record<string, string>): Promise<Result> {
  const lat: number[] = [];
  const failures = new Map<string, number>();
  const cpu0 = readCpu();
  const t0 = performance.now();
  await pool(count, CONCURRENCY, async () => {
    const t = performance.now();
    try {
      const res = await fetch(url, { headers: headers() });
      await res.arrayBuffer();
      if (res.status !== 200) failures.set(String(res.status), (failures.get(String(res.status)) ?? 0) + 1);
    } catch (e) {
      const why = (e as Error).name || 'error';
      failures.set(why, (failures.get(why) ?? 0) + 1);
    }
    lat.push(performance.now() - t);
  });
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, rps: count / seconds, latency: summary(lat), failures, cpu: cpuPerRequest(cpu0, readCpu(), count) };
}

const line = (name: string, r: Result) =>
  `${name.padEnd(18)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${ms(r.latency.p50)}  p90 ${ms(r.latency.p90)}  p99 ${ms(r.latency.p99)}  max ${ms(r.latency.max)}   ${cpuNote(r.cpu, 'process')}` +
  (r.failures.size ? `   NOT 200: ${[...r.failures].map(([k, v]) => `${k}×${v}`).join(' ')}` : '');

await runBench(async () => {
  say(`Postgres: throwaway embedded instance (test/harness/postgres.ts)`);
  const pg = await startTestPostgres();
  onStop('Postgres', pg.stop);
  await pg.createDatabase('postpilot_bench');
  const databaseUrl = pg.url('postpilot_bench');
  const orm = await createOrm(databaseUrl, POOL_MAX);
  onStop('ORM', () => orm.close());
  await migrate(orm);
  // The limiter's own pool, as api/main.ts builds it.
  const limiterPool = createRateLimiterPool(databaseUrl, () => {});
  onStop('rate limiter pool', () => limiterPool.end());

  const em = orm.em.fork();
  const org = await createOrganization(em, { name: 'Auth bench', plan: PLAN });
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++)
    keys.push((await createApiKey(em, { organizationId: org.id, name: `bench ${i}`, scopes: ['read'], channels: 'all' })).key);
  let turn = 0;
  const nextAuth = () => ({ authorization: `Bearer ${keys[turn++ % keys.length]}` });

  const api = createApp({ orm, rateLimiter: createRateLimiter(limiterPool), log: () => {} }).listen({ port: 0, hostname: '127.0.0.1' });
  onStop('API server', async () => {
    await api.stop(true);
  });
  const bare = new Elysia().get('/bare', () => ({ ok: true })).listen({ port: 0, hostname: '127.0.0.1' });
  onStop('bare server', async () => {
    await bare.stop(true);
  });
  const meUrl = `http://127.0.0.1:${api.server!.port}/v1/me`;
  const bareUrl = `http://127.0.0.1:${bare.server!.port}/bare`;

  // A sanity check that the measured path is the real one.
  const probe = await fetch(meUrl, { headers: nextAuth() });
  const probeBody = (await probe.json()) as { organization?: { plan?: string } };
  if (probe.status !== 200 || probeBody.organization?.plan !== PLAN)
    throw new Error(`GET /v1/me answered ${probe.status} ${JSON.stringify(probeBody)}`);
  if (probe.headers.get('ratelimit-limit') !== String(PLAN_LIMITS[PLAN].requestsPerMinute)) throw new Error('the rate limiter is not on');

  say(
    `${REQUESTS} requests × ${ROUNDS} round(s), ${CONCURRENCY} in flight, ${WARMUP} warm-up each; ${KEYS} ${PLAN} key(s) in turn (≤ ${KEY_BUDGET} requests per key a minute: the limiter runs, never refuses)`,
  );
  say(`DB pool ${POOL_MAX} (ORM) + 5 (rate limiter); one Bun process runs both servers and the clients`);
  say(machineNote());
  await load(bareUrl, WARMUP, () => ({}));
  await load(meUrl, WARMUP, nextAuth);

  const results: { bare: Result[]; auth: Result[] } = { bare: [], auth: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternating, so drift in the machine's load hits both alike.
    const b = await load(bareUrl, REQUESTS, () => ({}));
    const a = await load(meUrl, REQUESTS, nextAuth);
    results.bare.push(b);
    results.auth.push(a);
    console.log(line(`round ${round} bare`, b));
    console.log(line(`round ${round} GET /v1/me`, a));
  }
  const rate = (rs: Result[]) => (rs.length * REQUESTS) / rs.reduce((s, r) => s + r.seconds, 0);
  const bareRps = rate(results.bare);
  const authRps = rate(results.auth);
  console.log('');
  console.log(`bare Elysia route      ${bareRps.toFixed(0).padStart(7)} req/s`);
  console.log(`authenticated /v1/me   ${authRps.toFixed(0).padStart(7)} req/s`);
  console.log(
    `ratio auth / bare      ${(authRps / bareRps).toFixed(3)}   (the bare route is ${(bareRps / authRps).toFixed(1)}× faster; authentication costs ≈ ${((1 / authRps - 1 / bareRps) * 1e6).toFixed(0)} µs of throughput per request)`,
  );
  // CPU per request over all rounds; this process runs the load generator too, so the bare
  // route's figure (load generator + a trivial route) is the part that is not the API's.
  const meanCpu = (rs: Result[]): CpuReading => ({
    api: rs.reduce((s, r) => s + r.cpu.api, 0) / rs.length,
    postgres: rs.reduce((s, r) => s + r.cpu.postgres, 0) / rs.length,
  });
  const bareCpu = meanCpu(results.bare);
  const authCpu = meanCpu(results.auth);
  console.log(`CPU per request        bare: ${cpuNote(bareCpu, 'process')}`);
  console.log(`                       /v1/me: ${cpuNote(authCpu, 'process')}`);
  console.log(
    `                       /v1/me minus bare (the API's own): ${(authCpu.api - bareCpu.api).toFixed(3)} ms + Postgres ${authCpu.postgres.toFixed(3)} ms`,
  );
  const notOk = [...results.auth, ...results.bare].reduce((n, r) => n + [...r.failures.values()].reduce((a, b) => a + b, 0), 0);
  if (notOk) console.log(`WARNING: ${notOk} answer(s) were not 200; the figures include them`);
  say(machineNote());
});
