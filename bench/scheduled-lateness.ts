// Scheduled-publish lateness: posts scheduled a few seconds ahead through POST /v1/posts; for
// each, the moment the fake Mastodon receives the status minus its publishAt. The workflow sleeps
// on a durable timer until publishAt, so this is the timer's lateness plus the publish path.
// Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/scheduled-lateness.ts
//   BENCH_SCHEDULED=50 BENCH_LEAD_MS=5000 BENCH_SPREAD_MS=200 .tools/bin/bun run bench/scheduled-lateness.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { createPost, envInt, isStopping, machineNote, ms, pool, runBench, say, startBenchStack, summary } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const POSTS = envInt('BENCH_SCHEDULED', 50, 1, 10_000);
/** How far ahead of the first creation the first post is due (all are created before it). */
const LEAD_MS = envInt('BENCH_LEAD_MS', 5000, 500, 600_000);
/** Gap between consecutive publishAt times; 0 = all due at the same instant (a burst). */
const SPREAD_MS = envInt('BENCH_SPREAD_MS', 200, 0, 60_000);
const CREATE_CONCURRENCY = envInt('BENCH_CONCURRENCY', 4, 1, 100);
const TIMEOUT_MS = envInt('BENCH_TIMEOUT_MS', 60_000, 1000, 600_000);
const TARGET_P99_MS = 1000;

const wall = () => performance.timeOrigin + performance.now();

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);

  // Arrival is taken inside the fake's handler (same process): no polling interval.
  const arrivals = new Map<string, number>();
  const statuses = stack.fake.statuses;
  statuses.push = (...items) => {
    const t = wall();
    for (const s of items) if (!arrivals.has(s.text)) arrivals.set(s.text, t);
    return Array.prototype.push.apply(statuses, items);
  };

  // Warm-up: one publish-now post, so the first measured post does not pay for cold paths.
  const warm = await createPost(stack, `bench ${runId} warm-up`);
  if (warm.status !== 201) throw new Error(`warm-up POST answered ${warm.status}: ${JSON.stringify(warm.body).slice(0, 300)}`);
  for (let i = 0; i < 100 && !arrivals.has(`bench ${runId} warm-up`); i++) await Bun.sleep(100);

  const first = Date.now() + LEAD_MS + POSTS * 5; // room for the creations themselves
  const due = Array.from({ length: POSTS }, (_, i) => first + i * SPREAD_MS);
  const text = (i: number) => `bench ${runId} scheduled #${i}`;
  say(
    `scheduling ${POSTS} posts, the first due in ${((first - Date.now()) / 1000).toFixed(1)} s, ${SPREAD_MS ? `${SPREAD_MS} ms apart` : 'all at the same instant'}`,
  );
  const refused: string[] = [];
  let createdLate = 0;
  await pool(POSTS, CREATE_CONCURRENCY, async (i) => {
    const res = await createPost(stack, text(i), new Date(due[i]!).toISOString());
    if (res.status !== 201) refused.push(`#${i}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    if (Date.now() > due[i]!) createdLate++;
  });
  if (refused.length) say(`refused: ${refused.slice(0, 5).join('; ')}${refused.length > 5 ? ` (+${refused.length - 5})` : ''}`);
  if (createdLate) say(`warning: ${createdLate} post(s) were created after their publishAt (raise BENCH_LEAD_MS)`);

  // Wait for every accepted post, bounded: the last due time plus the timeout.
  const expected = POSTS - refused.length;
  const lastDue = due.at(-1)!;
  while (!isStopping() && Date.now() < lastDue + TIMEOUT_MS) {
    let arrived = 0;
    for (let i = 0; i < POSTS; i++) if (arrivals.has(text(i))) arrived++;
    if (arrived >= expected) break;
    await Bun.sleep(100);
  }
  if (isStopping()) return;

  const lateness: number[] = [];
  for (let i = 0; i < POSTS; i++) {
    const t = arrivals.get(text(i));
    if (t !== undefined) lateness.push(t - due[i]!);
  }
  const s = summary(lateness);
  const min = Math.min(...lateness);
  const missing = expected - lateness.length;

  console.log('');
  console.log('== scheduled-publish lateness (status received by the fake Mastodon − publishAt) ==');
  console.log(
    `  posts ${POSTS}, first due ${LEAD_MS} ms after scheduling, ${SPREAD_MS ? `${SPREAD_MS} ms apart` : 'all due at once'}; created ${CREATE_CONCURRENCY} at a time`,
  );
  console.log(
    `  machine: ${machineNote()}; Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'}`,
  );
  console.log(
    `  arrived ${lateness.length}, refused by the API ${refused.length}, not arrived within ${TIMEOUT_MS} ms of the last due time ${missing}`,
  );
  console.log(`  lateness p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}  min ${ms(min)}  (n=${s.n})`);
  const pass = missing === 0 && refused.length === 0 && s.p99 < TARGET_P99_MS;
  console.log(`  reference: p99 < ${TARGET_P99_MS} ms → ${pass ? 'PASS' : 'MISS'}`);
  console.log('');

  if (JSON_OUT) {
    const r1 = (v: number) => Math.round(v * 10) / 10;
    const metrics = [
      { metric: 'scheduled-publish lateness p50', value: r1(s.p50), unit: 'ms' },
      { metric: 'scheduled-publish lateness p99', value: r1(s.p99), unit: 'ms' },
      { metric: 'scheduled-publish lateness max', value: r1(s.max), unit: 'ms' },
      { metric: 'scheduled posts not published', value: missing + refused.length, unit: 'posts' },
    ];
    await Bun.write(
      Bun.stdout,
      `${JSON.stringify({ bench: 'scheduled-lateness', posts: POSTS, leadMs: LEAD_MS, spreadMs: SPREAD_MS, metrics })}\n`,
    );
  }
});
