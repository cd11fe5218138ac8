// Create throughput and worker memory: posts/s for scheduled posts (publishAt days ahead) created
// through the real HTTP API with N requests in flight, then the worker process's RSS with many
// posts sleeping in their workflows. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/create-throughput.ts
//   BENCH_CREATE=2000 BENCH_CONCURRENCY=20 BENCH_SLEEPING=10000 BENCH_DAYS=3 .tools/bin/bun run bench/create-throughput.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { temporal as proto } from '@temporalio/proto';
import { postWorkflowId } from '../workflows/post-types.ts';
import { loadConfig } from '../lib/config.ts';
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
  type BenchStack,
} from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
// In JSON mode the human report (and the stack's progress lines) go to stderr.
if (JSON_OUT) console.log = console.error;

const CREATE = envInt('BENCH_CREATE', 2000);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 20, 1, 500);
const SLEEPING = envInt('BENCH_SLEEPING', 10_000, 0, 1_000_000);
const WARMUP = envInt('BENCH_WARMUP', 20, 0, 10_000);
const DAYS = envInt('BENCH_DAYS', 3, 1, 365);
const SETTLE_TIMEOUT_MS = envInt('BENCH_SETTLE_TIMEOUT_MS', 600_000, 1000, 3_600_000);

const mb = (v: number) => `${v.toFixed(1)} MiB`;

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);
  const base = Date.now() + DAYS * 86_400_000;
  let created = 0;
  const ids: string[] = [];
  const failures = new Map<string, number>();

  /** Creates posts [from, to) with `concurrency` requests in flight; returns per-request latencies. */
  async function createRange(from: number, to: number, concurrency: number, progress: boolean): Promise<number[]> {
    const lat: number[] = [];
    await pool(to - from, concurrency, async (k) => {
      const i = from + k;
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
      if (progress && (k + 1) % 1000 === 0) say(`  ${k + 1}/${to - from}`);
    });
    return lat;
  }

  // Instrumentation in this process only: how long each request spends in Temporal's
  // StartWorkflowExecution (the API calls it inside its Postgres transaction).
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
    await createRange(0, WARMUP, Math.min(CONCURRENCY, WARMUP), false);
    await settle(stack, 'warm-up');
  }
  const memWarm = stack.worker.memory();

  say(`timed: ${CREATE} scheduled posts (publishAt ${DAYS} days ahead), ${CONCURRENCY} requests in flight`);
  const cpu0 = cpuByPart(stack);
  timing = true;
  const t0 = performance.now();
  const lat = await createRange(WARMUP, WARMUP + CREATE, CONCURRENCY, true);
  timing = false;
  const elapsed = (performance.now() - t0) / 1000;
  const createdTimed = lat.length;
  const settleTimed = await settle(stack, 'timed batch');
  const cpu1 = cpuByPart(stack);
  const busyWall = elapsed + settleTimed;
  const memTimed = stack.worker.memory();

  const rest = Math.max(0, SLEEPING - (WARMUP + CREATE));
  let restElapsed = 0;
  if (rest > 0) {
    say(`filling up to ${SLEEPING} sleeping posts: ${rest} more, ${CONCURRENCY} in flight`);
    const t1 = performance.now();
    await createRange(WARMUP + CREATE, WARMUP + CREATE + rest, CONCURRENCY, true);
    restElapsed = (performance.now() - t1) / 1000;
  }
  const settleAll = await settle(stack, 'all posts');
  const memAll = stack.worker.memory();
  const check = await checkSleeping(stack, ids, 50);
  if (isStopping()) return;

  const s = summary(lat);
  const st = summary(startLat);
  const temporalRss = stack.temporalPid ? safeRss(stack.temporalPid) : undefined;
  const apiRss = process.memoryUsage().rss / 2 ** 20;

  console.log('');
  console.log('== create throughput (POST /v1/posts with publishAt, real socket) ==');
  console.log(`  posts ${createdTimed} timed (+${WARMUP} warm-up), ${CONCURRENCY} in flight, publishAt ${DAYS} days ahead`);
  console.log(
    `  machine: ${machineNote()}; Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'}; API pool ${loadConfig(process.env).databasePoolMax} connections`,
  );
  console.log(`  throughput ${(createdTimed / elapsed).toFixed(1)} posts/s (${elapsed.toFixed(2)} s wall, first send → last response)`);
  console.log(`  request latency p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`);
  console.log(
    `    of which in client.workflow.start p50 ${ms(st.p50)}  p90 ${ms(st.p90)}  p99 ${ms(st.p99)}  max ${ms(st.max)}  (inside the API's DB transaction)`,
  );
  console.log(`  worker caught up (every workflow asleep on its timer) ${settleTimed.toFixed(1)} s after the last response`);
  if (rest > 0)
    console.log(`  fill-up: ${rest} more at ${(rest / restElapsed).toFixed(1)} posts/s; worker caught up ${settleAll.toFixed(1)} s later`);
  console.log(
    `  CPU used from the first send until the worker caught up (${busyWall.toFixed(1)} s wall, ${navigator.hardwareConcurrency} cores):`,
  );
  for (const [part, v] of Object.entries(cpu1)) {
    const used = (v - (cpu0[part] ?? 0)) / 1000;
    console.log(`    ${part.padEnd(32)} ${used.toFixed(1).padStart(6)} s  (${((used / busyWall) * 100).toFixed(0)}% of one core)`);
  }
  console.log(
    `  created ${created} of ${WARMUP + CREATE + rest}; refused: ${failures.size ? [...failures].map(([k, v]) => `${k} ×${v}`).join(', ') : 'none'}`,
  );
  console.log('');
  console.log('== worker memory (RSS of the worker process, /proc/<pid>/status VmRSS, in MiB) ==');
  console.log(`  before: idle after start              ${mb(mem0.rssMb)}`);
  if (WARMUP) console.log(`  after warm-up (${WARMUP} sleeping)`.padEnd(40) + mb(memWarm.rssMb));
  console.log(`  after the timed batch (${WARMUP + CREATE} sleeping)`.padEnd(40) + mb(memTimed.rssMb));
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
    const metrics = [
      { metric: `create throughput, scheduled posts (${CONCURRENCY} in flight)`, value: r1(createdTimed / elapsed), unit: 'posts/s' },
      { metric: 'create request latency p50', value: r1(s.p50), unit: 'ms' },
      { metric: 'create request latency p99', value: r1(s.p99), unit: 'ms' },
      { metric: 'worker RSS idle after start', value: r1(mem0.rssMb), unit: 'MiB' },
      { metric: `worker RSS with ${created} posts sleeping`, value: r1(memAll.rssMb), unit: 'MiB' },
      { metric: 'posts refused while creating', value: WARMUP + CREATE + rest - created, unit: 'posts' },
    ];
    await Bun.write(
      Bun.stdout,
      `${JSON.stringify({ bench: 'create-throughput', create: CREATE, concurrency: CONCURRENCY, sleeping: created, metrics })}\n`,
    );
  }
});

function safeRss(pid: number): number | undefined {
  try {
    return procMemory(pid).rssMb;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the worker has processed every started workflow up to its timer: the task
 * queue's backlogs are empty (when the server reports them) and the worker's CPU has been
 * quiet for 2 s. Returns the seconds it took.
 */
async function settle(stack: BenchStack, what: string): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let lastCpu = stack.worker.cpuMs();
  let quietSince: number | undefined;
  while (!isStopping()) {
    await Bun.sleep(500);
    const cpu = stack.worker.cpuMs();
    const busy = (cpu - lastCpu) / 500; // share of one core over the last 0.5 s
    lastCpu = cpu;
    const backlog = await backlogs(stack);
    const idle = busy < 0.05 && (backlog === undefined || backlog === 0);
    if (!idle) quietSince = undefined;
    else quietSince ??= performance.now();
    if (quietSince !== undefined && performance.now() - quietSince >= 2000) break;
    if (Date.now() > deadline) {
      say(`  ${what}: the worker was still busy after ${SETTLE_TIMEOUT_MS} ms (backlog ${backlog ?? 'n/a'}); measuring anyway`);
      break;
    }
  }
  // Minus the quiet period that proved it was done.
  return Math.max(0, (performance.now() - t0 - 2000) / 1000);
}

/** Approximate workflow + activity task backlog of the task queue, if the server reports it. */
async function backlogs(stack: BenchStack): Promise<number | undefined> {
  const T = proto.api.enums.v1.TaskQueueType;
  let total = 0;
  for (const taskQueueType of [T.TASK_QUEUE_TYPE_WORKFLOW, T.TASK_QUEUE_TYPE_ACTIVITY]) {
    try {
      const res = await stack.client.workflowService.describeTaskQueue({
        namespace: stack.namespace,
        taskQueue: { name: stack.taskQueue },
        taskQueueType,
        reportStats: true,
      });
      const n = res.stats?.approximateBacklogCount;
      if (n === undefined || n === null) return undefined;
      total += Number(n);
    } catch {
      return undefined;
    }
  }
  return total;
}

/** Checks a sample of the posts' workflows: their histories end with a started timer. */
async function checkSleeping(stack: BenchStack, ids: string[], n: number) {
  const E = proto.api.enums.v1.EventType;
  const step = Math.max(1, Math.floor(ids.length / n));
  let sampled = 0;
  let asleep = 0;
  const other = new Map<string, number>();
  for (let i = 0; i < ids.length && sampled < n; i += step) {
    sampled++;
    try {
      const h = await stack.client.workflow.getHandle(postWorkflowId(ids[i]!)).fetchHistory();
      const events = h.events ?? [];
      const fired = events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED);
      const timer = events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_STARTED);
      if (timer && !fired) asleep++;
      else {
        const last = E[events.at(-1)?.eventType ?? 0] ?? 'no events';
        other.set(last, (other.get(last) ?? 0) + 1);
      }
    } catch (e) {
      other.set((e as Error).message.slice(0, 60), (other.get((e as Error).message.slice(0, 60)) ?? 0) + 1);
    }
  }
  return { sampled, asleep, other: sampled - asleep, otherWhat: [...other].map(([k, v]) => `${k} ×${v}`).join(', ') };
}
