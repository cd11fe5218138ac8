// Worker memory with many posts asleep: the worker process's RSS idle after start, then with
// 10,000 and 100,000 (BENCH_MEMORY_COUNTS) scheduled posts whose workflows sleep on their timers.
// The posts are seeded fast (bench/seed-posts.ts: rows in batches, then raw workflow starts); the
// API's create path is bench/api-throughput.ts's. Each figure is set against its ceiling, idle +
// 50 MiB at 10,000 and idle + 100 MiB at 100,000. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/worker-memory.ts
//   BENCH_MEMORY_COUNTS=10000,30000 BENCH_MEMORY_MAX_MIN=15 .tools/bin/bun run bench/worker-memory.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { benchChannels, checkSleeping, runTag, seedScheduledPosts, settle } from './seed-posts.ts';
import { envInt, isStopping, machineNote, procMemory, runBench, say, startBenchStack } from './stack.ts';

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
/** The ceilings: RSS growth allowed over idle with this many posts asleep. */
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
  const ids: string[] = [];
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
      ids.push(...r.ids);
      if (r.startErrors) say(`  ${r.startErrors} workflow start(s) failed`);
      from += n;
      say(`  ${from}/${target} started (${((from - seeded) / ((performance.now() - t0) / 1000)).toFixed(0)} starts/s)`);
    }
    const startedIn = (performance.now() - t0) / 1000;
    const startsPerSecond = (from - seeded) / startedIn;
    seeded = from;
    const caughtUp = await settle(stack, `${seeded} asleep`, SETTLE_TIMEOUT_MS);
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
  const check = await checkSleeping(stack, ids, 30);
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
