// API throughput and latency of GET /v1/me, POST /v1/posts and GET /v1/posts over a real socket,
// against the production entry point (`bun api/main.ts`, its own process, per-key rate limits in
// Postgres as in production) on the bench stack. Bounded: a fixed number of requests per endpoint
// with a fixed number in flight. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/api-throughput.ts
//   BENCH_API_REQUESTS=3000 BENCH_API_POSTS=1000 BENCH_API_CONCURRENCY=32 .tools/bin/bun run bench/api-throughput.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { openSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Connection } from '@temporalio/client';
import { createApiKey } from '../services/api-keys.ts';
import { addChannel } from '../domain/channels.ts';
import { createOrganization } from '../domain/organizations.ts';
import { freePort } from '../test/harness/ports.ts';
import { cpuNote, cpuPerRequest, readCpu, type CpuReading } from './cpu.ts';
import {
  envInt,
  isStopping,
  machineNote,
  ms,
  onStop,
  pool,
  profileFlags,
  procCpuMs,
  procMemory,
  runBench,
  say,
  startBenchStack,
  summary,
  type BenchStack,
} from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
// In JSON mode the human report (and the stack's progress lines) go to stderr.
if (JSON_OUT) console.log = console.error;

const REQUESTS = envInt('BENCH_API_REQUESTS', 3000, 1, 200_000); // per GET endpoint
const POSTS = envInt('BENCH_API_POSTS', 1000, 1, 100_000); // POST /v1/posts
const CONCURRENCY = envInt('BENCH_API_CONCURRENCY', 32, 1, 1000);
const WARMUP = envInt('BENCH_API_WARMUP', 200, 0, 100_000);
/** POST /v1/posts is measured twice: one organization, then spread over this many. */
const ORGS = envInt('BENCH_API_ORGS', 8, 1, 1000);
// ENTERPRISE keys allow 1200 requests a minute each: enough keys that no run is rate limited.
const KEY_BUDGET_PER_MINUTE = 1000;
const ROOT = resolve(import.meta.dir, '..');

interface EndpointResult {
  name: string;
  requests: number;
  seconds: number;
  rps: number;
  lat: ReturnType<typeof summary>;
  statuses: Map<number, number>;
  apiCpuShare: number;
  /** CPU ms per request of the API process and of Postgres (every session: the worker's too). */
  cpu: CpuReading;
}

await runBench(async () => {
  const stack = await startBenchStack();
  const api = await startApiProcess(stack);
  const runId = Math.random().toString(36).slice(2, 8);

  // Enough keys for every request of the run within one minute, used round-robin.
  const totalRequests = WARMUP * 3 + REQUESTS * 2 + POSTS;
  const keyCount = Math.max(1, Math.ceil(totalRequests / KEY_BUDGET_PER_MINUTE));
  const em = stack.orm.em.fork();
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) {
    keys.push(
      (
        await createApiKey(em, {
          organizationId: stack.organizationId,
          name: `bench api ${i}`,
          scopes: ['read', 'publish'],
          channels: 'all',
        })
      ).key,
    );
  }
  say(`${keyCount} ENTERPRISE key(s) (1200 requests a minute each) in one organization, ${CONCURRENCY} requests in flight`);
  let nextKey = 0;
  const key = () => keys[nextKey++ % keys.length]!;

  // The API takes one lock per organization while it creates a post (plan limit and duplicate
  // checks, domain/posts/create.ts), so POSTs of one organization queue behind each other:
  // the same POSTs spread over ORGS organizations show what that lock costs. Each has its own key
  // and a MASTODON channel on the fake; its credentials are sealed with a throwaway key, which is
  // fine because these posts are due days after the run.
  const orgs: { key: string; channelId: string }[] = [];
  const throwaway = randomBytes(32);
  for (let i = 0; i < ORGS; i++) {
    const org = await createOrganization(em, { name: `Bench organization ${i}`, plan: 'ENTERPRISE' });
    const k = await createApiKey(em, { organizationId: org.id, name: 'bench api', scopes: ['read', 'publish'], channels: 'all' });
    const ch = await addChannel(em, throwaway, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: `Bench Mastodon ${i}`,
      credentials: { instanceUrl: stack.fake.url, accessToken: 'good-token' },
      maxChars: 500,
    });
    orgs.push({ key: k.key, channelId: ch.id });
  }
  let nextOrg = 0;

  // POST bodies: distinct texts (duplicate_post) scheduled days ahead, so the worker only puts
  // each workflow to sleep and nothing publishes during the run.
  const base = Date.now() + 3 * 86_400_000;
  let postNo = 0;
  const postBody = (channelId = stack.channelId) => {
    const i = postNo++;
    return JSON.stringify({
      content: `bench ${runId} api-throughput #${i}`,
      channelIds: [channelId],
      publishAt: new Date(base + i * 1000).toISOString(),
    });
  };

  const endpoints: { name: string; expect: number; request: () => Request }[] = [
    { name: 'GET /v1/me', expect: 200, request: () => new Request(`${api.url}/v1/me`, { headers: { authorization: `Bearer ${key()}` } }) },
    {
      name: 'POST /v1/posts, 1 org',
      expect: 201,
      request: () =>
        new Request(`${api.url}/v1/posts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' },
          body: postBody(),
        }),
    },
    {
      name: `POST /v1/posts, ${ORGS} orgs`,
      expect: 201,
      request: () => {
        const o = orgs[nextOrg++ % orgs.length]!;
        return new Request(`${api.url}/v1/posts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' },
          body: postBody(o.channelId),
        });
      },
    },
    // After the POSTs: the organization has WARMUP + POSTS posts to page through.
    {
      name: 'GET /v1/posts',
      expect: 200,
      request: () => new Request(`${api.url}/v1/posts?limit=20`, { headers: { authorization: `Bearer ${key()}` } }),
    },
  ];

  const results: EndpointResult[] = [];
  for (const ep of endpoints) {
    const count = ep.name.startsWith('POST') ? POSTS : REQUESTS;
    if (WARMUP) await run(ep, Math.min(WARMUP, count), false);
    if (isStopping()) return;
    say(`${ep.name}: ${count} requests, ${CONCURRENCY} in flight`);
    results.push(await run(ep, count, true));
  }

  async function run(ep: (typeof endpoints)[number], count: number, timed: boolean): Promise<EndpointResult> {
    const lat: number[] = [];
    const statuses = new Map<number, number>();
    const cpu0 = procCpuMs(api.pid);
    const both0 = readCpu(api.pid);
    const t0 = performance.now();
    await pool(count, CONCURRENCY, async () => {
      const t = performance.now();
      let status = 0;
      try {
        const res = await fetch(ep.request());
        await res.arrayBuffer();
        status = res.status;
      } catch {
        status = -1; // connection error
      }
      lat.push(performance.now() - t);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    const seconds = (performance.now() - t0) / 1000;
    const apiCpuShare = (procCpuMs(api.pid) - cpu0) / 1000 / seconds;
    const cpu = cpuPerRequest(both0, readCpu(api.pid), count);
    const bad = [...statuses].filter(([s]) => s !== ep.expect);
    if (timed && bad.length) say(`  ${ep.name}: unexpected statuses ${bad.map(([s, n]) => `${s} ×${n}`).join(', ')}`);
    return { name: ep.name, requests: count, seconds, rps: count / seconds, lat: summary(lat), statuses, apiCpuShare, cpu };
  }

  const rss = procMemory(api.pid).rssMb;
  console.log('');
  console.log('== API throughput (real socket to `bun api/main.ts`, its own process; load generator in this process) ==');
  console.log(`  machine: ${machineNote()}; ${CONCURRENCY} requests in flight; ${keyCount} ENTERPRISE key(s), rate limits on (Postgres)`);
  for (const r of results) {
    const ok = r.statuses.get(endpoints.find((e) => e.name === r.name)!.expect) ?? 0;
    console.log(
      `  ${r.name.padEnd(25)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${ms(r.lat.p50).padStart(9)}  p90 ${ms(r.lat.p90).padStart(9)}  p99 ${ms(r.lat.p99).padStart(9)}  max ${ms(r.lat.max).padStart(9)}   ${ok}/${r.requests} ok   API process CPU ${(r.apiCpuShare * 100).toFixed(0)}% of one core   ${cpuNote(r.cpu)}`,
    );
  }
  // The target for the list: at least 40% of GET /v1/me in the same run.
  const me = results.find((r) => r.name === 'GET /v1/me');
  const list = results.find((r) => r.name === 'GET /v1/posts');
  if (me && list) console.log(`  GET /v1/posts?limit=20 / GET /v1/me: ${(list.rps / me.rps).toFixed(2)}`);
  console.log(`  API process RSS at the end ${rss.toFixed(1)} MiB`);
  console.log('');

  if (JSON_OUT) {
    const metrics = results.flatMap((r) => [
      { metric: `${r.name} throughput (${CONCURRENCY} in flight)`, value: round(r.rps, 0), unit: 'req/s' },
      { metric: `${r.name} latency p50`, value: round(r.lat.p50, 1), unit: 'ms' },
      { metric: `${r.name} latency p99`, value: round(r.lat.p99, 1), unit: 'ms' },
      { metric: `${r.name} CPU per request, API process`, value: round(r.cpu.api, 3), unit: 'ms' },
      { metric: `${r.name} CPU per request, Postgres`, value: round(r.cpu.postgres, 3), unit: 'ms' },
    ]);
    if (me && list) metrics.push({ metric: 'GET /v1/posts / GET /v1/me throughput', value: round(list.rps / me.rps, 2), unit: '×' });
    const errors = results.reduce(
      (n, r) => n + [...r.statuses].filter(([s]) => s !== endpoints.find((e) => e.name === r.name)!.expect).reduce((a, [, v]) => a + v, 0),
      0,
    );
    metrics.push({ metric: 'API requests not answered as expected', value: errors, unit: 'requests' });
    await Bun.write(
      Bun.stdout,
      `${JSON.stringify({ bench: 'api-throughput', concurrency: CONCURRENCY, requests: REQUESTS, posts: POSTS, metrics })}\n`,
    );
  }
});

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** The production API entry point as its own process, on the bench stack's Postgres and Temporal. */
async function startApiProcess(stack: BenchStack): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const logFile = join(stack.dir, 'logs', 'api.log');
  const out = openSync(logFile, 'a');
  const databaseUrl = String(stack.orm.config.get('clientUrl'));
  const proc = Bun.spawn([process.execPath, ...profileFlags(), 'run', join(ROOT, 'api/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      // The API only encrypts channel credentials when one is added (not here); any key will do.
      CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      TEMPORAL_ADDRESS: (stack.client.connection as Connection).options.address,
      TEMPORAL_NAMESPACE: stack.namespace,
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      DATA_DIR: join(stack.dir, 'api-data'),
      LOG_LEVEL: 'warn',
    },
    stdin: 'ignore',
    stdout: out,
    stderr: out,
  });
  onStop('API process', async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
    if (!exited) proc.kill('SIGKILL');
    await proc.exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `the API process exited (${proc.exitCode ?? proc.signalCode}); see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`,
      );
    }
    // Any HTTP answer means it is serving (401 without a key).
    const up = await fetch(`${url}/v1/me`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`the API process did not answer within 60 s; see ${logFile}`);
    await Bun.sleep(100);
  }
  say(`API process (api/main.ts, pid ${proc.pid}) on ${url}/v1`);
  return { url, pid: proc.pid };
}
