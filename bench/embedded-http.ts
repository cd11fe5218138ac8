// The embedded default's own HTTP figures: the process users start with `npm start` (API and
// worker in one Bun process, bench/embedded.ts), loaded by wrk in its own process (bench/wrk.ts),
// each figure beside its ceiling from the same run:
//   - authenticated GET /v1/me (rate limit, quota, last-used: the whole admission) against a bare
//     Elysia route in a Bun process of its own;
//   - POST /v1/posts for one organization, 32 connections, against raw client.workflow.start of
//     the same post workflows on the same dev server, 32 in flight, from this process;
//   - GET /v1/posts?limit=20 of that organization (its pages kept in memory, as `npm start` runs)
//     against GET /v1/me measured again in the same rounds, and against the bare process
//     answering as many bytes (the transport's share of a page);
// with the CPU each costs the launcher process (API + worker) and Postgres. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/embedded-http.ts
//   BENCH_HTTP_SECONDS=10 BENCH_HTTP_ROUNDS=2 BENCH_CONNECTIONS=32 .tools/bin/bun run bench/embedded-http.ts
//   BENCH_PROFILE=/tmp/prof …      the launcher under Bun's CPU profiler (markdown in that folder)
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { loadConfig } from '../lib/config.ts';
import { ensureCredentialsKey } from '../lib/embedded.ts';
import { PLAN_LIMITS } from '../lib/plans.ts';
import { createOrganization } from '../domain/organizations.ts';
import { createApiKey } from '../services/api-keys.ts';
import { startFakeMastodon } from '../test/fakes/mastodon.ts';
import { postgresCpuMs } from './cpu.ts';
import { startBareServer, startEmbeddedService, type EmbeddedService } from './embedded.ts';
import { runTag, seedScheduledPosts } from './seed-posts.ts';
import { addBenchChannel, envInt, machineNote, ms, onStop, procCpuMs, runBench, say } from './stack.ts';
import { wrk, type WrkResult } from './wrk.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const SECONDS = envInt('BENCH_HTTP_SECONDS', 10, 1, 600);
const ROUNDS = envInt('BENCH_HTTP_ROUNDS', 2, 1, 10);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1, 1000);
const PLAN = 'ENTERPRISE';
/** Keys in turn: none nears its per-minute limit (the limiter runs and never refuses). */
const KEYS = envInt('BENCH_KEYS', 400, 1, 10_000);

const rate = (r: WrkResult) => r.rps;
const wrkLine = (name: string, r: WrkResult, cpu?: string) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}  max ${ms(r.latency.max)}` +
  (r.non2xx || r.socketErrors ? `  NOT 2xx ${r.non2xx}, socket errors ${r.socketErrors}` : '') +
  (cpu ? `  ${cpu}` : '');

/** Waits until the launcher's CPU has been quiet for 2 s (its worker caught up with the starts). */
async function quiet(svc: EmbeddedService): Promise<void> {
  let last = svc.cpuMs();
  let calm = 0;
  for (let i = 0; i < 600 && calm < 4; i++) {
    await Bun.sleep(500);
    const now = svc.cpuMs();
    calm = now - last < 50 ? calm + 1 : 0;
    last = now;
  }
}

await runBench(async () => {
  const bare = await startBareServer();
  const svc = await startEmbeddedService();
  const fake = await startFakeMastodon();
  onStop('fake Mastodon', () => fake.stop());
  const em = svc.orm.em.fork();
  const org = await createOrganization(em, { name: 'HTTP bench', plan: PLAN });
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++)
    keys.push((await createApiKey(em, { organizationId: org.id, name: `bench ${i}`, scopes: ['read', 'publish'], channels: 'all' })).key);
  const credentialsKey = Buffer.from(ensureCredentialsKey(loadConfig({ DATA_DIR: `${svc.dir}/data` })), 'hex');
  const channel = await addBenchChannel(em, credentialsKey, org.id, fake.url);
  const me = `${svc.apiUrl}/v1/me`;
  const probe = await fetch(me, { headers: { authorization: `Bearer ${keys[0]}` } });
  if (probe.status !== 200 || probe.headers.get('ratelimit-limit') !== String(PLAN_LIMITS[PLAN].requestsPerMinute))
    throw new Error(`GET /v1/me answered ${probe.status} without the rate limiter's headers`);
  await probe.arrayBuffer();
  say(`wrk: ${CONNECTIONS} connections, 2 threads, ${SECONDS} s per measure, ${ROUNDS} round(s); ${KEYS} ${PLAN} keys in turn`);
  say(machineNote());
  const load0 = machineNote();

  // Warm-up (JIT, pools, prepared statements), not reported.
  await wrk({ url: bare.url, seconds: 2, connections: CONNECTIONS });
  await wrk({ url: me, seconds: 2, connections: CONNECTIONS, keys });

  const bareRuns: WrkResult[] = [];
  const meRuns: WrkResult[] = [];
  let meCpu = { api: 0, pg: 0, n: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    const b = await wrk({ url: bare.url, seconds: SECONDS, connections: CONNECTIONS });
    bareRuns.push(b);
    console.log(wrkLine(`round ${round} bare route (own process)`, b));
    const c0 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    const m = await wrk({ url: me, seconds: SECONDS, connections: CONNECTIONS, keys });
    const c1 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    meRuns.push(m);
    meCpu = { api: meCpu.api + c1.api - c0.api, pg: meCpu.pg + c1.pg - c0.pg, n: meCpu.n + m.requests };
    console.log(
      wrkLine(
        `round ${round} GET /v1/me (npm start)`,
        m,
        `CPU/request ${((c1.api - c0.api) / m.requests).toFixed(3)} ms + Postgres ${((c1.pg - c0.pg) / m.requests).toFixed(3)} ms`,
      ),
    );
  }
  const mean = (rs: WrkResult[]) => rs.reduce((s, r) => s + rate(r), 0) / rs.length;
  const bareRps = mean(bareRuns);
  const meRps = mean(meRuns);

  // Creates: distinct text per request (duplicate_post), one organization, days ahead.
  const tag = runTag();
  const publishAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
  const body = JSON.stringify({ content: `bench ${tag} #{n}`, channelIds: [channel.id], publishAt });
  const createRuns: { r: WrkResult; created: number; cpuApi: number; cpuPg: number }[] = [];
  const rawRuns: { perSecond: number; errors: number }[] = [];
  const countCreated = async (like: string) =>
    Number(
      (
        await svc.orm.em
          .fork()
          .getConnection()
          .execute<{ n: string }[]>(`select count(*)::text as n from posts where organization_id = ? and content like ?`, [org.id, like])
      )[0]!.n,
    );
  await wrk({
    url: `${svc.apiUrl}/v1/posts`,
    seconds: 2,
    connections: CONNECTIONS,
    keys,
    method: 'POST',
    body: body.replace(tag, `${tag}w`),
  });
  await quiet(svc);
  for (let round = 1; round <= ROUNDS; round++) {
    const like = `bench ${tag}-${round} #%`;
    const c0 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    const r = await wrk({
      url: `${svc.apiUrl}/v1/posts`,
      seconds: SECONDS,
      connections: CONNECTIONS,
      keys,
      method: 'POST',
      body: body.replace(tag, `${tag}-${round}`),
    });
    const c1 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    const created = await countCreated(like);
    createRuns.push({ r, created, cpuApi: (c1.api - c0.api) / Math.max(1, r.requests), cpuPg: (c1.pg - c0.pg) / Math.max(1, r.requests) });
    console.log(
      wrkLine(
        `round ${round} POST /v1/posts (npm start)`,
        r,
        `201s ${created} (${(created / r.seconds).toFixed(0)}/s); CPU/request ${createRuns.at(-1)!.cpuApi.toFixed(2)} ms API+worker + Postgres ${createRuns.at(-1)!.cpuPg.toFixed(2)} ms`,
      ),
    );
    await quiet(svc);
    // The ceiling, right after: as many raw starts of the same workflows (rows written first, untimed).
    const n = Math.max(200, created);
    const seeded = await seedScheduledPosts(
      { orm: svc.orm, client: svc.client, taskQueue: svc.taskQueue, organizationId: org.id },
      {
        count: n,
        channelIds: [channel.id],
        publishAt: () => new Date(publishAt),
        text: (i) => `bench ${tag} raw ${round} #${i}`,
        concurrency: CONNECTIONS,
      },
    );
    rawRuns.push({ perSecond: n / seeded.startSeconds, errors: seeded.startErrors });
    console.log(
      `round ${round} raw client.workflow.start           ${(n / seeded.startSeconds).toFixed(0).padStart(7)} starts/s (${n}, ${CONNECTIONS} in flight)`,
    );
    await quiet(svc);
  }
  // The list, once the creates have given the organization pages to read: GET /v1/posts?limit=20
  // beside GET /v1/me measured again right before it, round by round.
  const list = `${svc.apiUrl}/v1/posts?limit=20`;
  await wrk({ url: list, seconds: 2, connections: CONNECTIONS, keys });
  // The transport's ceiling for an answer of the page's size: the bare process sending as many bytes.
  const pageBytes = (await (await fetch(list, { headers: { authorization: `Bearer ${keys[0]}` } })).arrayBuffer()).byteLength;
  const barePage = bare.url.replace(/\/bare$/, `/bare-bytes/${pageBytes}`);
  const listRuns: { me: WrkResult; list: WrkResult; bare: WrkResult; cpuApi: number; cpuPg: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const bp = await wrk({ url: barePage, seconds: SECONDS, connections: CONNECTIONS });
    console.log(wrkLine(`round ${round} bare route, ${pageBytes} bytes`, bp));
    const m = await wrk({ url: me, seconds: SECONDS, connections: CONNECTIONS, keys });
    console.log(wrkLine(`round ${round} GET /v1/me (again)`, m));
    const c0 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    const l = await wrk({ url: list, seconds: SECONDS, connections: CONNECTIONS, keys });
    const c1 = { api: svc.cpuMs(), pg: postgresCpuMs() };
    listRuns.push({
      me: m,
      list: l,
      bare: bp,
      cpuApi: (c1.api - c0.api) / Math.max(1, l.requests),
      cpuPg: (c1.pg - c0.pg) / Math.max(1, l.requests),
    });
    console.log(
      wrkLine(
        `round ${round} GET /v1/posts?limit=20`,
        l,
        `CPU/request ${listRuns.at(-1)!.cpuApi.toFixed(3)} ms + Postgres ${listRuns.at(-1)!.cpuPg.toFixed(3)} ms`,
      ),
    );
  }
  const listRps = mean(listRuns.map((r) => r.list));
  const meAgainRps = mean(listRuns.map((r) => r.me));
  const barePageRps = mean(listRuns.map((r) => r.bare));
  const listCpu = listRuns.reduce((s, r) => s + r.cpuApi, 0) / listRuns.length;
  const listPgCpu = listRuns.reduce((s, r) => s + r.cpuPg, 0) / listRuns.length;

  const createdPerSecond = createRuns.reduce((s, c) => s + c.created / c.r.seconds, 0) / createRuns.length;
  const rawPerSecond = rawRuns.reduce((s, r) => s + r.perSecond, 0) / rawRuns.length;
  const createP99 = Math.max(...createRuns.map((c) => c.r.latency.p99));
  const createCpu = createRuns.reduce((s, c) => s + c.cpuApi, 0) / createRuns.length;
  const createPgCpu = createRuns.reduce((s, c) => s + c.cpuPg, 0) / createRuns.length;
  const load1 = machineNote();

  console.log('');
  console.log('== the embedded default (`npm start`: API + worker in one process), wrk in its own process ==');
  console.log(`  machine at start: ${load0}`);
  console.log(`  machine at end:   ${load1}`);
  console.log(`  bare Elysia route (own process)       ${bareRps.toFixed(0).padStart(7)} req/s`);
  console.log(
    `  GET /v1/me                            ${meRps.toFixed(0).padStart(7)} req/s   ratio to bare ${(meRps / bareRps).toFixed(3)} (target 0.25)`,
  );
  console.log(`    CPU per request: launcher ${(meCpu.api / meCpu.n).toFixed(3)} ms + Postgres ${(meCpu.pg / meCpu.n).toFixed(3)} ms`);
  console.log(`  raw client.workflow.start             ${rawPerSecond.toFixed(0).padStart(7)} starts/s`);
  console.log(
    `  POST /v1/posts                        ${createdPerSecond.toFixed(0).padStart(7)} creates/s  ratio to raw ${(createdPerSecond / rawPerSecond).toFixed(2)} (target 0.7); p99 ${ms(createP99)} (target 500 ms)`,
  );
  console.log(`    CPU per create: launcher (API + its worker) ${createCpu.toFixed(2)} ms + Postgres ${createPgCpu.toFixed(2)} ms`);
  console.log(
    `  GET /v1/posts?limit=20                ${listRps.toFixed(0).padStart(7)} req/s   ratio to GET /v1/me (${meAgainRps.toFixed(0)} req/s, the same rounds) ${(listRps / meAgainRps).toFixed(2)} (target 0.4)`,
  );
  console.log(
    `    ratio to the bare route answering as many bytes (${pageBytes}; ${barePageRps.toFixed(0)} req/s, the same rounds) ${(listRps / barePageRps).toFixed(2)}`,
  );
  console.log(`    CPU per page: launcher ${listCpu.toFixed(3)} ms + Postgres ${listPgCpu.toFixed(3)} ms`);
  console.log(
    `  bare route CPU (its own process): ${((procCpuMs(bare.pid) / bareRuns.reduce((s, r) => s + r.requests, 0)) * 1000).toFixed(1)} µs/request`,
  );
  console.log('');

  if (JSON_OUT) {
    const r = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
    const metrics = [
      { metric: 'bare Elysia route, own process (wrk)', value: r(bareRps, 0), unit: 'req/s' },
      { metric: 'GET /v1/me, npm start (wrk)', value: r(meRps, 0), unit: 'req/s' },
      { metric: 'GET /v1/me / bare route', value: r(meRps / bareRps, 3), unit: '×' },
      { metric: 'raw client.workflow.start, npm start’s dev server', value: r(rawPerSecond, 0), unit: 'starts/s' },
      { metric: 'POST /v1/posts, npm start (wrk)', value: r(createdPerSecond, 0), unit: 'creates/s' },
      { metric: 'POST /v1/posts / raw starts', value: r(createdPerSecond / rawPerSecond, 2), unit: '×' },
      { metric: 'POST /v1/posts p99', value: r(createP99), unit: 'ms' },
      { metric: 'CPU per create, launcher (API + worker)', value: r(createCpu, 2), unit: 'ms' },
      { metric: 'CPU per GET /v1/me, launcher', value: r(meCpu.api / meCpu.n, 3), unit: 'ms' },
      { metric: 'GET /v1/posts?limit=20, npm start (wrk)', value: r(listRps, 0), unit: 'req/s' },
      { metric: 'GET /v1/posts?limit=20 / GET /v1/me', value: r(listRps / meAgainRps, 2), unit: '×' },
      { metric: 'CPU per GET /v1/posts?limit=20, launcher', value: r(listCpu, 3), unit: 'ms' },
      { metric: 'GET /v1/posts?limit=20 / bare route of the same size', value: r(listRps / barePageRps, 2), unit: '×' },
    ];
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'embedded-http', metrics })}\n`);
  }
});
