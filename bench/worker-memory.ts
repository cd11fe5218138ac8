// Worker memory with many posts asleep: the worker process's RSS idle after start, then with
// 10,000 and 100,000 (BENCH_MEMORY_COUNTS) scheduled posts whose workflows sleep on their timers.
// The posts are seeded fast (bench/seed-posts.ts: rows in batches, then raw workflow starts); the
// API's create path is bench/api-throughput.ts's. Each figure is set against its ceiling, idle +
// 50 MiB at 10,000 and idle + 100 MiB at 100,000 (issue 15). Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/worker-memory.ts
//   BENCH_MEMORY_COUNTS=10000,30000 BENCH_MEMORY_MAX_MIN=15 .tools/bin/bun run bench/worker-memory.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { temporal as proto } from '@temporalio/proto';
import { postWorkflowId } from '../workflows/post-types.ts';
import { benchChannels, runTag, seedScheduledPosts } from './seed-posts.ts';
import { envInt, isStopping, machineNote, procMemory, runBench, say, startBenchStack, type BenchStack } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const COUNTS = (process.env.BENCH_MEMORY_COUNTS ?? '10000,100000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const CONCURRENCY = envInt('BENCH_MEMORY_CONCURRENCY', 32, 1, 500);
/** Stop seeding past this many minutes and report what was reached (the 2-core machine). */
const MAX_MIN = envInt('BENCH_MEMORY_MAX_MIN', 20, 1, 600);
const SETTLE_TIMEOUT_MS = envInt('BENCH_SETTLE_TIMEOUT_MS', 600_000, 1000, 3_600_000);
const DAYS = 3;

const mb = (v: number) => `${v.toFixed(1)} MiB`;
/** Issue 15's ceilings: RSS growth allowed over idle with this many posts asleep. */
const ceilingMb = (count: number) => (count <= 10_000 ? 50 : 100);

interface Point {
  count: number;
  rssMb: number;
  seconds: number;
  startsPerSecond: number;
}

await runBench(async () => {
  if (!COUNTS.length) throw new Error('BENCH_MEMORY_COUNTS: give counts such as 10000,100000');
  const stack = await startBenchStack();
  const tag = runTag();
  const deadline = Date.now() + MAX_MIN * 60_000;
  const channels = await benchChannels(stack, 10);
  const base = Date.now() + DAYS * 86_400_000;

  // Idle: the worker polling, nothing run yet.
  await Bun.sleep(2000);
  const idle = stack.worker.memory();
  say(`worker idle after start: RSS ${mb(idle.rssMb)}`);

  const points: Point[] = [];
  let seeded = 0;
  let truncated = false;
  for (const target of COUNTS) {
    if (isStopping()) return;
    if (Date.now() > deadline) {
      truncated = true;
      break;
    }
    const t0 = performance.now();
    let from = seeded;
    // In chunks, so the time box is checked as it goes.
    while (from < target && Date.now() < deadline && !isStopping()) {
      const n = Math.min(5000, target - from);
      const offset = from;
      const r = await seedScheduledPosts(stack, {
        count: n,
        channelIds: channels,
        publishAt: (i) => new Date(base + (offset + i) * 1000),
        text: (i) => `bench ${tag} asleep #${offset + i}`,
        concurrency: CONCURRENCY,
      });
      if (r.startErrors) say(`  ${r.startErrors} workflow start(s) failed`);
      from += n;
      say(`  ${from}/${target} started (${((from - seeded) / ((performance.now() - t0) / 1000)).toFixed(0)} starts/s)`);
    }
    const startedIn = (performance.now() - t0) / 1000;
    const startsPerSecond = (from - seeded) / startedIn;
    seeded = from;
    const caughtUp = await settle(stack);
    const rss = stack.worker.memory().rssMb;
    points.push({ count: seeded, rssMb: rss, seconds: startedIn + caughtUp, startsPerSecond });
    say(
      `${seeded} asleep: worker RSS ${mb(rss)} (Δ ${mb(rss - idle.rssMb)} vs idle), seeded and caught up in ${(startedIn + caughtUp).toFixed(0)} s`,
    );
    if (seeded < target) {
      truncated = true;
      break;
    }
  }
  const check = await checkSleeping(stack, seeded, 30);
  const hwm = stack.worker.memory().hwmMb;
  const temporalRss = stack.temporalPid ? procMemory(stack.temporalPid).rssMb : Number.NaN;

  console.log('');
  console.log('== worker memory with posts asleep (RSS of worker/main.ts, /proc/<pid>/status VmRSS) ==');
  console.log(
    `  machine: ${machineNote()}; Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'}`,
  );
  console.log(`  posts seeded as rows + raw client.workflow.start (${CONCURRENCY} in flight), publishAt ${DAYS} days ahead, 10 channels`);
  console.log(`  idle after start                 ${mb(idle.rssMb)}`);
  for (const p of points) {
    const delta = p.rssMb - idle.rssMb;
    console.log(
      `  ${`${p.count} asleep`.padEnd(32)} ${mb(p.rssMb)}  Δ ${mb(delta)} / ceiling ${ceilingMb(p.count)} MiB = ${(delta / ceilingMb(p.count)).toFixed(2)}  (${p.startsPerSecond.toFixed(0)} starts/s)`,
    );
  }
  console.log(`  peak RSS (VmHWM) ${mb(hwm)}; Temporal dev server RSS ${mb(temporalRss)}`);
  console.log(`  sampled ${check.sampled} workflows: ${check.asleep} asleep on their timer (${check.otherWhat || 'none otherwise'})`);
  if (truncated) console.log(`  stopped at ${seeded} posts: the ${MAX_MIN}-minute time box (BENCH_MEMORY_MAX_MIN) ran out`);
  console.log('');

  if (JSON_OUT) {
    const r1 = (v: number) => Math.round(v * 10) / 10;
    const metrics = [{ metric: 'worker RSS idle after start', value: r1(idle.rssMb), unit: 'MiB' }];
    for (const p of points) {
      metrics.push({ metric: `worker RSS with ${p.count} posts asleep`, value: r1(p.rssMb), unit: 'MiB' });
      metrics.push({
        metric: `worker RSS growth with ${p.count} asleep / ceiling ${ceilingMb(p.count)} MiB`,
        value: Math.round(((p.rssMb - idle.rssMb) / ceilingMb(p.count)) * 100) / 100,
        unit: '×',
      });
    }
    metrics.push({ metric: 'sampled workflows not asleep on their timer', value: check.sampled - check.asleep, unit: 'workflows' });
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'worker-memory', counts: COUNTS, reached: seeded, metrics })}\n`);
  }
});

/**
 * Waits until the worker has run every started workflow up to its timer: the task queue's
 * backlog is empty and the worker's CPU has been quiet for 2 s. Returns the seconds it took.
 */
async function settle(stack: BenchStack): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let lastCpu = stack.worker.cpuMs();
  let quietSince: number | undefined;
  while (!isStopping() && Date.now() < deadline) {
    await Bun.sleep(500);
    const cpu = stack.worker.cpuMs();
    const busy = (cpu - lastCpu) / 500;
    lastCpu = cpu;
    const backlog = await workflowBacklog(stack);
    if (busy < 0.05 && (backlog ?? 0) === 0) quietSince ??= performance.now();
    else quietSince = undefined;
    if (quietSince !== undefined && performance.now() - quietSince >= 2000) break;
  }
  return Math.max(0, (performance.now() - t0 - 2000) / 1000);
}

async function workflowBacklog(stack: BenchStack): Promise<number | undefined> {
  try {
    const res = await stack.client.workflowService.describeTaskQueue({
      namespace: stack.namespace,
      taskQueue: { name: stack.taskQueue },
      taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      reportStats: true,
    });
    const n = res.stats?.approximateBacklogCount;
    return n === undefined || n === null ? undefined : Number(n);
  } catch {
    return undefined;
  }
}

/** A sample of the seeded posts' workflows: their histories end asleep on a timer that has not fired. */
async function checkSleeping(stack: BenchStack, count: number, n: number) {
  const E = proto.api.enums.v1.EventType;
  const rows = await stack.orm.em
    .fork()
    .getConnection()
    .execute<{ id: string }[]>(`select id from posts where status = 'scheduled' order by random() limit ?`, [Math.min(n, count)]);
  let asleep = 0;
  const other = new Map<string, number>();
  for (const { id } of rows) {
    const events = (await stack.client.workflow.getHandle(postWorkflowId(id)).fetchHistory()).events ?? [];
    if (events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_STARTED) && !events.some((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED))
      asleep++;
    else {
      const last = E[events.at(-1)?.eventType ?? 0] ?? 'no events';
      other.set(last, (other.get(last) ?? 0) + 1);
    }
  }
  return { sampled: rows.length, asleep, otherWhat: [...other].map(([k, v]) => `${k} ×${v}`).join(', ') };
}
