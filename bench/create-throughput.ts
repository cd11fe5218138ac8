// Create throughput and worker memory. First the ceilings: raw `client.workflow.start` of post
// workflows (rows written beforehand in SQL) against the same Temporal server, N in flight, and
// the create ceiling (bench/create-ceiling.ts: a start no worker picks up; a bare workflow's start
// with its worker in this process); then
// POST /v1/posts through the real HTTP API for one organization, sequential and with N in flight,
// and their ratio to the ceiling; then the worker process's RSS with many posts sleeping in their
// workflows. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/create-throughput.ts
//   BENCH_QUICK=1 .tools/bin/bun run bench/create-throughput.ts      # small counts
//   BENCH_CREATE=2000 BENCH_RAW_STARTS=2000 BENCH_SEQUENTIAL=200 BENCH_CONCURRENCY=32 BENCH_SLEEPING=10000 BENCH_DAYS=3 \
//     .tools/bin/bun run bench/create-throughput.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflow } from '../workflows/post-types.ts';
import { postSearchAttributes } from '../workflows/search-attributes.ts';
import { newId } from '../lib/ids.ts';
import { loadConfig } from '../lib/config.ts';
import { bareSleepStarts, unrunStarts, type Starts } from './create-ceiling.ts';
import { checkSleeping, settle } from './seed-posts.ts';
import {
  cpuByPart,
  createPost,
  envInt,
  isStopping,
  machineNote,
  ms,
  pool,
  procMemory,
  runBench,
  say,
  startBenchStack,
  summary,
  temporalSqlitePragmas,
  type BenchStack,
} from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
// In JSON mode the human report (and the stack's progress lines) go to stderr.
if (JSON_OUT) console.log = console.error;

const QUICK = process.env.BENCH_QUICK === '1';
const CREATE = envInt('BENCH_CREATE', QUICK ? 200 : 2000);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 32, 1, 500);
/** Raw workflow starts for the ceiling (0: skip it). */
const RAW = envInt('BENCH_RAW_STARTS', CREATE, 0, 1_000_000);
/** Creates one at a time, for the sequential latency (0: skip). */
const SEQUENTIAL = envInt('BENCH_SEQUENTIAL', QUICK ? 30 : 200, 0, 100_000);
const SLEEPING = envInt('BENCH_SLEEPING', QUICK ? 500 : 10_000, 0, 1_000_000);
const WARMUP = envInt('BENCH_WARMUP', QUICK ? 10 : 20, 0, 10_000);
const DAYS = envInt('BENCH_DAYS', 3, 1, 365);
const SETTLE_TIMEOUT_MS = envInt('BENCH_SETTLE_TIMEOUT_MS', 600_000, 1000, 3_600_000);

const mb = (v: number) => `${v.toFixed(1)} MiB`;

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);
  const base = Date.now() + DAYS * 86_400_000;
  let created = 0;
  let nextIndex = 0;
  const ids: string[] = [];
  const failures = new Map<string, number>();

  /** Creates `count` posts with `concurrency` requests in flight; returns per-request latencies. */
  async function createMany(count: number, concurrency: number, progress: boolean): Promise<number[]> {
    const lat: number[] = [];
    await pool(count, concurrency, async (k) => {
      const i = nextIndex++;
      // Distinct text (duplicate_post), distinct times one second apart, days ahead.
      const publishAt = new Date(base + i * 1000).toISOString();
      const t = performance.now();
      const res = await createPost(stack, `bench ${runId} scheduled #${i}`, publishAt);
      lat.push(performance.now() - t);
      if (res.status === 201 && res.id) {
        created++;
        ids.push(res.id);
      } else {
        const code = `${res.status} ${(res.body as { error?: { code?: string } } | null)?.error?.code ?? ''}`.trim();
        failures.set(code, (failures.get(code) ?? 0) + 1);
      }
      if (progress && (k + 1) % 1000 === 0) say(`  ${k + 1}/${count}`);
    });
    return lat;
  }

  // Instrumentation in this process only: how long each API request spends in Temporal's
  // StartWorkflowExecution (the raw phase below calls the real one, untimed).
  const startLat: number[] = [];
  const wf = stack.client.workflow;
  const realStart = wf.start.bind(wf);
  let timing = false;
  wf.start = (async (...args: Parameters<typeof realStart>) => {
    const t = performance.now();
    try {
      return await realStart(...args);
    } finally {
      if (timing) startLat.push(performance.now() - t);
    }
  }) as typeof wf.start;

  const mem0 = stack.worker.memory();
  say(`worker idle after start: RSS ${mb(mem0.rssMb)}`);

  if (WARMUP) {
    say(`warm-up: ${WARMUP} scheduled post(s), not timed`);
    await createMany(WARMUP, Math.min(CONCURRENCY, WARMUP), false);
    await settle(stack, 'warm-up', SETTLE_TIMEOUT_MS);
  }
  const memWarm = stack.worker.memory();

  // The ceiling: the same workflow (type, input, search attributes) started straight from the
  // client, for rows written beforehand, so the worker does the same work per post as for an API create.
  let raw: { perSecond: number; lat: ReturnType<typeof summary> } | undefined;
  if (RAW) {
    const rows = await insertPostRows(stack, RAW, (i) => ({
      content: `bench ${runId} raw #${i}`,
      at: new Date(base + (2_000_000 + i) * 1000),
    }));
    say(`raw client.workflow.start: ${RAW} post workflows, ${CONCURRENCY} in flight`);
    const lat: number[] = [];
    const t0 = performance.now();
    await pool(rows.length, CONCURRENCY, async (i) => {
      const { id, at } = rows[i]!;
      const t = performance.now();
      await realStart<PostWorkflow>(POST_WORKFLOW_TYPE, {
        taskQueue: stack.taskQueue,
        workflowId: postWorkflowId(id),
        args: [{ postId: id, organizationId: stack.organizationId, publishAt: at.toISOString() }],
        typedSearchAttributes: postSearchAttributes(stack.organizationId, id),
      });
      lat.push(performance.now() - t);
    });
    raw = { perSecond: RAW / ((performance.now() - t0) / 1000), lat: summary(lat) };
    ids.push(...rows.map((r) => r.id));
    created += rows.length;
    await settle(stack, 'raw starts', SETTLE_TIMEOUT_MS);
  }

  // The create ceiling, same stack, same counts: (a) the server's start alone, (b) with a bare worker.
  let unrun: Starts | undefined;
  let bare: Starts | undefined;
  if (RAW) {
    unrun = await unrunStarts(stack, RAW, CONCURRENCY, new Date(base));
    bare = await bareSleepStarts(stack, RAW, CONCURRENCY, new Date(base));
  }

  let seq: ReturnType<typeof summary> | undefined;
  if (SEQUENTIAL) {
    say(`sequential: ${SEQUENTIAL} POST /v1/posts, one at a time`);
    seq = summary(await createMany(SEQUENTIAL, 1, false));
    await settle(stack, 'sequential', SETTLE_TIMEOUT_MS);
  }

  say(`timed: ${CREATE} POST /v1/posts (publishAt ${DAYS} days ahead), one organization, ${CONCURRENCY} requests in flight`);
  const cpu0 = cpuByPart(stack);
  timing = true;
  const t0 = performance.now();
  const lat = await createMany(CREATE, CONCURRENCY, true);
  timing = false;
  const elapsed = (performance.now() - t0) / 1000;
  const createdTimed = lat.length;
  const settleTimed = await settle(stack, 'timed batch', SETTLE_TIMEOUT_MS);
  const cpu1 = cpuByPart(stack);
  const busyWall = elapsed + settleTimed;
  const memTimed = stack.worker.memory();
  const sleepingTimed = created;

  const rest = Math.max(0, SLEEPING - created);
  let restElapsed = 0;
  if (rest > 0) {
    say(`filling up to ${SLEEPING} sleeping posts: ${rest} more, ${CONCURRENCY} in flight`);
    const t1 = performance.now();
    await createMany(rest, CONCURRENCY, true);
    restElapsed = (performance.now() - t1) / 1000;
  }
  const settleAll = await settle(stack, 'all posts', SETTLE_TIMEOUT_MS);
  const memAll = stack.worker.memory();
  const check = await checkSleeping(stack, ids, 50);
  if (isStopping()) return;

  const s = summary(lat);
  const st = summary(startLat);
  const throughput = createdTimed / elapsed;
  const ratio = raw ? throughput / raw.perSecond : Number.NaN;
  const temporalRss = stack.temporalPid ? safeRss(stack.temporalPid) : undefined;
  const apiRss = process.memoryUsage().rss / 2 ** 20;
  const attempted = WARMUP + SEQUENTIAL + CREATE + rest;

  console.log('');
  console.log('== create throughput (POST /v1/posts with publishAt, one organization, real socket) ==');
  console.log(
    `  machine: ${machineNote()}; Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'} (pragmas: ${temporalSqlitePragmas().join(', ') || 'the CLI defaults'}); API pool ${loadConfig(process.env).databasePoolMax} connections`,
  );
  if (raw) {
    console.log(
      `  ceiling: raw client.workflow.start, ${RAW} post workflows, ${CONCURRENCY} in flight: ${raw.perSecond.toFixed(1)} starts/s (latency p50 ${ms(raw.lat.p50)}  p99 ${ms(raw.lat.p99)})`,
    );
  }
  if (seq)
    console.log(
      `  sequential: ${SEQUENTIAL} creates, latency p50 ${ms(seq.p50)}  p90 ${ms(seq.p90)}  p99 ${ms(seq.p99)}  max ${ms(seq.max)}`,
    );
  console.log(
    `  ${CONCURRENCY} in flight: ${createdTimed} creates (+${WARMUP} warm-up), throughput ${throughput.toFixed(1)} posts/s (${elapsed.toFixed(2)} s wall, first send → last response)`,
  );
  console.log(`    request latency p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`);
  console.log(`    of which in client.workflow.start p50 ${ms(st.p50)}  p90 ${ms(st.p90)}  p99 ${ms(st.p99)}  max ${ms(st.max)}`);
  if (raw) console.log(`  ratio POST /v1/posts / raw starts: ${ratio.toFixed(2)}`);
  if (unrun && bare) {
    console.log(`  the create ceiling (bench/README.md), ${RAW} starts each, ${CONCURRENCY} in flight:`);
    console.log(
      `    (a) raw start, a workflow type no worker runs: ${unrun.perSecond.toFixed(1)} starts/s (p50 ${ms(unrun.lat.p50)}  p99 ${ms(unrun.lat.p99)}); POST /v1/posts / (a) = ${(throughput / unrun.perSecond).toFixed(2)}`,
    );
    console.log(
      `    (b) start of the bare workflow asleep, its worker in this process: ${bare.perSecond.toFixed(1)} starts/s (p50 ${ms(bare.lat.p50)}  p99 ${ms(bare.lat.p99)}); POST /v1/posts / (b) = ${(throughput / bare.perSecond).toFixed(2)}`,
    );
  }
  console.log(`  worker caught up (every workflow asleep on its timer) ${settleTimed.toFixed(1)} s after the last response`);
  if (rest > 0)
    console.log(`  fill-up: ${rest} more at ${(rest / restElapsed).toFixed(1)} posts/s; worker caught up ${settleAll.toFixed(1)} s later`);
  console.log(
    `  CPU used from the first timed send until the worker caught up (${busyWall.toFixed(1)} s wall, ${navigator.hardwareConcurrency} cores):`,
  );
  for (const [part, v] of Object.entries(cpu1)) {
    const used = (v - (cpu0[part] ?? 0)) / 1000;
    console.log(`    ${part.padEnd(32)} ${used.toFixed(1).padStart(6)} s  (${((used / busyWall) * 100).toFixed(0)}% of one core)`);
  }
  console.log(
    `  created through the API ${created - RAW} of ${attempted}; refused: ${failures.size ? [...failures].map(([k, v]) => `${k} ×${v}`).join(', ') : 'none'}`,
  );
  console.log('');
  console.log('== worker memory (RSS of the worker process, /proc/<pid>/status VmRSS, in MiB) ==');
  console.log(`  before: idle after start              ${mb(mem0.rssMb)}`);
  if (WARMUP) console.log(`  after warm-up (${WARMUP} sleeping)`.padEnd(40) + mb(memWarm.rssMb));
  console.log(`  after the timed batch (${sleepingTimed} sleeping)`.padEnd(40) + mb(memTimed.rssMb));
  console.log(
    `${`  after: ${created} posts sleeping`.padEnd(40)}${mb(memAll.rssMb)}  (Δ ${mb(memAll.rssMb - mem0.rssMb)} vs idle; peak VmHWM ${mb(memAll.hwmMb)})`,
  );
  console.log(`  sampled ${check.sampled} workflows: ${check.asleep} asleep on a timer, ${check.other} not (${check.otherWhat || '—'})`);
  console.log(
    `  for reference: Temporal dev server RSS ${temporalRss === undefined ? 'n/a' : mb(temporalRss)}; bench+API process RSS ${mb(apiRss)}`,
  );
  console.log('');

  if (JSON_OUT) {
    const r1 = (v: number) => Math.round(v * 10) / 10;
    const r2 = (v: number) => Math.round(v * 100) / 100;
    const metrics = [
      ...(raw
        ? [{ metric: `raw client.workflow.start throughput (${CONCURRENCY} in flight)`, value: r1(raw.perSecond), unit: 'starts/s' }]
        : []),
      { metric: `create throughput, POST /v1/posts, 1 org (${CONCURRENCY} in flight)`, value: r1(throughput), unit: 'posts/s' },
      ...(raw ? [{ metric: 'create throughput / raw starts', value: r2(ratio), unit: '×' }] : []),
      ...(unrun && bare
        ? [
            { metric: 'create ceiling (a): raw start, no worker runs the type', value: r1(unrun.perSecond), unit: 'starts/s' },
            { metric: 'create ceiling (b): bare workflow asleep, worker in process', value: r1(bare.perSecond), unit: 'starts/s' },
            { metric: 'create throughput / ceiling (a)', value: r2(throughput / unrun.perSecond), unit: '×' },
            { metric: 'create throughput / ceiling (b)', value: r2(throughput / bare.perSecond), unit: '×' },
          ]
        : []),
      { metric: 'create request latency p50', value: r1(s.p50), unit: 'ms' },
      { metric: 'create request latency p99', value: r1(s.p99), unit: 'ms' },
      ...(seq ? [{ metric: 'sequential create latency p50', value: r1(seq.p50), unit: 'ms' }] : []),
      { metric: 'worker RSS idle after start', value: r1(mem0.rssMb), unit: 'MiB' },
      { metric: `worker RSS with ${created} posts sleeping`, value: r1(memAll.rssMb), unit: 'MiB' },
      { metric: 'posts refused while creating', value: attempted - (created - RAW), unit: 'posts' },
    ];
    await Bun.write(
      Bun.stdout,
      `${JSON.stringify({ bench: 'create-throughput', create: CREATE, concurrency: CONCURRENCY, sleeping: created, metrics })}\n`,
    );
  }
});

/**
 * Writes `n` scheduled posts of the bench organization (one channel each) in SQL, as the API
 * would, for the raw-start ceiling. Returns their ids and times.
 */
async function insertPostRows(
  stack: BenchStack,
  n: number,
  row: (i: number) => { content: string; at: Date },
): Promise<{ id: string; at: Date }[]> {
  const rows = Array.from({ length: n }, (_, i) => ({ id: newId('post'), ...row(i) }));
  const conn = stack.orm.em.fork().getConnection();
  for (let from = 0; from < rows.length; from += 500) {
    const batch = rows.slice(from, from + 500);
    // One JSON parameter (the driver would expand an array parameter into a list).
    const json = JSON.stringify(batch.map((r) => ({ id: r.id, content: r.content, at: r.at.toISOString() })));
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, workflow_id, created_at, updated_at)
       select u.id, ?, 'scheduled', u.content, '{}', '[]', 'api', u.at, 'post-' || u.id, now(), now()
       from jsonb_to_recordset(?::jsonb) as u(id text, content text, at timestamptz)`,
      [stack.organizationId, json],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
       select 'pc_' || u.id, u.id, ?, 'MASTODON', 'draft', u.content, now(), now()
       from jsonb_to_recordset(?::jsonb) as u(id text, content text)`,
      [stack.channelId, json],
    );
  }
  return rows.map(({ id, at }) => ({ id, at }));
}

function safeRss(pid: number): number | undefined {
  try {
    return procMemory(pid).rssMb;
  } catch {
    return undefined;
  }
}
