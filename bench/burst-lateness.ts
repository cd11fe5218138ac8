// Burst lateness: 1,000 posts (BENCH_BURST) due at the same second across 10 channels
// (BENCH_BURST_CHANNELS); for each, the moment the fake Mastodon receives its status minus its
// publishAt. The posts are seeded fast (bench/seed-posts.ts: rows, then raw workflow starts) well
// before they are due, and all their workflows are asleep on their timers when the second comes.
// Beside it, in the same run: the lateness of a few posts due alone (the floor: one timer and the
// publish path, no burst). The targets: p99 ≤ 2 s, max ≤ 5 s. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/burst-lateness.ts
//   BENCH_BURST=1000 BENCH_BURST_CHANNELS=10 BENCH_BURST_LEAD_MS=90000 .tools/bin/bun run bench/burst-lateness.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { temporal as proto } from '@temporalio/proto';
import { postWorkflowId } from '../workflows/post-types.ts';
import { benchChannels, runTag, seedScheduledPosts } from './seed-posts.ts';
import { cpuByPart, envInt, isStopping, machineNote, ms, runBench, say, startBenchStack, summary, type BenchStack } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const POSTS = envInt('BENCH_BURST', 1000, 1, 100_000);
const CHANNELS = envInt('BENCH_BURST_CHANNELS', 10, 1, 100);
/** How far ahead of the seeding's start the burst is due (seeding and every workflow asleep before it). */
const LEAD_MS = envInt('BENCH_BURST_LEAD_MS', 90_000, 1000, 3_600_000);
const SINGLES = envInt('BENCH_BURST_SINGLES', 5, 0, 100);
const CONCURRENCY = envInt('BENCH_BURST_CONCURRENCY', 32, 1, 500);
const TIMEOUT_MS = envInt('BENCH_TIMEOUT_MS', 120_000, 1000, 3_600_000);
const CEILING_P99_MS = 2000;
const CEILING_MAX_MS = 5000;

const wall = () => performance.timeOrigin + performance.now();

await runBench(async () => {
  const stack = await startBenchStack();
  const tag = runTag();
  const channels = await benchChannels(stack, CHANNELS);

  // Arrival taken in the fake's handler (same process): no polling interval.
  const arrivals = new Map<string, number>();
  const statuses = stack.fake.statuses;
  statuses.push = (...items) => {
    const t = wall();
    for (const s of items) if (!arrivals.has(s.text)) arrivals.set(s.text, t);
    return Array.prototype.push.apply(statuses, items);
  };
  const waitFor = async (texts: string[], until: number) => {
    while (!isStopping() && Date.now() < until && texts.some((t) => !arrivals.has(t))) await Bun.sleep(50);
  };

  // The floor: a few posts due alone, one after the other (the warm-up too).
  const singles: number[] = [];
  for (let i = 0; i < SINGLES + 1 && !isStopping(); i++) {
    const due = new Date(Date.now() + 3000);
    const text = `bench ${tag} single #${i}`;
    await seedScheduledPosts(stack, { count: 1, channelIds: channels, publishAt: () => due, text: () => text, concurrency: 1 });
    await waitFor([text], due.getTime() + 30_000);
    const t = arrivals.get(text);
    if (i > 0 && t !== undefined) singles.push(t - due.getTime());
  }

  const due = Date.now() + LEAD_MS;
  const text = (i: number) => `bench ${tag} burst #${i}`;
  say(`seeding ${POSTS} posts across ${CHANNELS} channels, all due in ${(LEAD_MS / 1000).toFixed(0)} s`);
  const t0 = performance.now();
  const seed = await seedScheduledPosts(stack, {
    count: POSTS,
    channelIds: channels,
    publishAt: () => new Date(due),
    text,
    concurrency: CONCURRENCY,
  });
  const seededIn = (performance.now() - t0) / 1000;
  say(`seeded in ${seededIn.toFixed(1)} s (${(POSTS / seededIn).toFixed(0)} starts/s); ${seed.startErrors} start(s) failed`);
  const spare = due - Date.now();
  if (spare < 5000) say(`warning: only ${spare} ms left before the burst (raise BENCH_BURST_LEAD_MS)`);
  await Bun.sleep(Math.max(0, due - Date.now() - 1000));
  const cpu0 = cpuByPart(stack);
  const texts = Array.from({ length: POSTS }, (_, i) => text(i));
  await waitFor(texts, due + TIMEOUT_MS);
  if (isStopping()) return;
  const cpu1 = cpuByPart(stack);

  const where = await breakdown(stack, seed.ids, due, (i) => arrivals.get(text(i)));
  const lateness = texts
    .map((t) => arrivals.get(t))
    .filter((t): t is number => t !== undefined)
    .map((t) => t - due);
  const s = summary(lateness);
  const floor = summary(singles);
  const missing = POSTS - lateness.length;
  const span = (Math.max(...lateness) + 1000) / 1000; // from 1 s before the due time to the last arrival

  console.log('');
  console.log(`== burst lateness (${POSTS} posts due at the same second, ${CHANNELS} channels; status at the fake − publishAt) ==`);
  console.log(
    `  machine: ${machineNote()}; Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'}`,
  );
  console.log(
    `  seeded (rows + raw workflow starts, ${CONCURRENCY} in flight) in ${seededIn.toFixed(1)} s; ${(spare / 1000).toFixed(1)} s to spare before the burst`,
  );
  console.log(`  arrived ${lateness.length}, not within ${TIMEOUT_MS} ms ${missing}`);
  console.log(`  burst lateness p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}  (n=${s.n})`);
  console.log(
    `    p99 / ceiling ${CEILING_P99_MS} ms = ${(s.p99 / CEILING_P99_MS).toFixed(2)}; max / ceiling ${CEILING_MAX_MS} ms = ${(s.max / CEILING_MAX_MS).toFixed(2)}`,
  );
  console.log(`  floor, a post due alone (same run): p50 ${ms(floor.p50)}  max ${ms(floor.max)}  (n=${floor.n})`);
  console.log(`  where it goes, from ${where.n} sampled histories (Temporal event times; server clock = this machine):`);
  for (const [name, v] of where.segments) {
    const x = summary(v);
    console.log(`    ${name.padEnd(46)} p50 ${ms(x.p50).padStart(10)}  p99 ${ms(x.p99).padStart(10)}  max ${ms(x.max).padStart(10)}`);
  }
  console.log(`  burst published at ${(lateness.length / span).toFixed(0)} posts/s; CPU over those ${span.toFixed(1)} s:`);
  for (const [part, v] of Object.entries(cpu1)) {
    const used = (v - (cpu0[part] ?? 0)) / 1000;
    console.log(`    ${part.padEnd(32)} ${used.toFixed(1).padStart(6)} s  (${((used / span) * 100).toFixed(0)}% of one core)`);
  }
  console.log('');

  if (JSON_OUT) {
    const r1 = (v: number) => Math.round(v * 10) / 10;
    const r2 = (v: number) => Math.round(v * 100) / 100;
    const metrics = [
      { metric: `burst lateness p50 (${POSTS} due at once, ${CHANNELS} channels)`, value: r1(s.p50), unit: 'ms' },
      { metric: 'burst lateness p99', value: r1(s.p99), unit: 'ms' },
      { metric: 'burst lateness max', value: r1(s.max), unit: 'ms' },
      { metric: `burst lateness p99 / ceiling ${CEILING_P99_MS} ms`, value: r2(s.p99 / CEILING_P99_MS), unit: '×' },
      { metric: `burst lateness max / ceiling ${CEILING_MAX_MS} ms`, value: r2(s.max / CEILING_MAX_MS), unit: '×' },
      { metric: 'lateness of a post due alone (floor), p50', value: r1(floor.p50), unit: 'ms' },
      { metric: 'burst posts not published', value: missing, unit: 'posts' },
    ];
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'burst-lateness', posts: POSTS, channels: CHANNELS, metrics })}\n`);
  }
});

/** Splits a sample of the burst's lateness by the workflow histories: where the posts waited. */
async function breakdown(stack: BenchStack, ids: string[], due: number, arrivedAt: (i: number) => number | undefined) {
  const E = proto.api.enums.v1.EventType;
  const names = [
    'publishAt → timer fired (server)',
    'timer fired → workflow task started (worker)',
    'workflow task started → completed',
    'completed → publish activity started',
    'publish activity started → status at the fake',
  ];
  const seg = new Map<string, number[]>(names.map((n) => [n, []]));
  const t = (x: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    x ? Number(x.seconds ?? 0) * 1000 + (x.nanos ?? 0) / 1e6 : Number.NaN;
  const step = Math.max(1, Math.floor(ids.length / 200));
  let n = 0;
  for (let i = 0; i < ids.length; i += step) {
    const arrived = arrivedAt(i);
    if (arrived === undefined) continue;
    const events = (await stack.client.workflow.getHandle(postWorkflowId(ids[i]!)).fetchHistory()).events ?? [];
    const at = events.findIndex((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED);
    if (at < 0) continue;
    const after = events.slice(at);
    const first = (type: number) => after.find((e) => e.eventType === type);
    const fired = t(events[at]!.eventTime);
    const started = t(first(E.EVENT_TYPE_WORKFLOW_TASK_STARTED)?.eventTime);
    const completed = t(first(E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)?.eventTime);
    const publishStarted = t(first(E.EVENT_TYPE_ACTIVITY_TASK_STARTED)?.eventTime);
    const values = [fired - due, started - fired, completed - started, publishStarted - completed, arrived - publishStarted];
    names.forEach((name, k) => Number.isFinite(values[k]) && seg.get(name)!.push(values[k]!));
    n++;
  }
  return { n, segments: [...seg.entries()] };
}
