// Many posts at once: BENCH_BULK_ROWS scheduled posts in one POST /v1/posts/bulk (mode each), the
// time to its answer and to every post's workflow started (workflow_pending cleared), beside the
// same number of single POST /v1/posts with BENCH_CONCURRENCY in flight in the same run (the
// ceiling), and their ratio. Then the same batch all or nothing. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/bulk-create.ts
//   BENCH_QUICK=1 .tools/bin/bun run bench/bulk-create.ts                 # 100 rows
//   BENCH_BULK_ROWS=500 BENCH_CONCURRENCY=32 .tools/bin/bun run bench/bulk-create.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { sql } from '../db/sql.ts';
import { createPost, envInt, machineNote, ms, pool, runBench, say, startBenchStack, type BenchStack } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const QUICK = process.env.BENCH_QUICK === '1';
const ROWS = envInt('BENCH_BULK_ROWS', QUICK ? 100 : 500, 1, 500);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 32, 1, 500);

/** Polls until none of these posts waits for its workflow start; returns when (performance.now()). */
async function allStarted(stack: BenchStack, ids: string[]): Promise<number> {
  for (;;) {
    const [row] = await sql<{ n: string }>(
      stack.orm.em.fork(),
      'select count(*) as n from posts where id in (select jsonb_array_elements_text(?::jsonb)) and workflow_pending',
      [JSON.stringify(ids)],
    );
    if (Number(row?.n ?? 0) === 0) return performance.now();
    await Bun.sleep(20);
  }
}

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);
  const base = Date.now() + 3 * 86_400_000;
  let next = 0;
  /** A row: distinct text and time (duplicate_post), days ahead. */
  const row = () => {
    const i = next++;
    return { content: `bench ${runId} bulk #${i}`, channelIds: [stack.channelId], publishAt: new Date(base + i * 1000).toISOString() };
  };

  // Warm-up: a few single creates and a small batch, not timed.
  for (let i = 0; i < 5; i++) await createPost(stack, row().content, row().publishAt);
  await bulk(stack, 'each', Array.from({ length: 5 }, row));

  // The ceiling: ROWS single creates, CONCURRENCY in flight.
  say(`single creates: ${ROWS} POST /v1/posts, ${CONCURRENCY} in flight`);
  const singleIds: string[] = [];
  let t0 = performance.now();
  await pool(ROWS, CONCURRENCY, async () => {
    const r = row();
    const res = await createPost(stack, r.content, r.publishAt);
    if (res.status === 201 && res.id) singleIds.push(res.id);
  });
  const singleAnswered = performance.now() - t0;
  const singleStarted = (await allStarted(stack, singleIds)) - t0;

  const figures: Record<string, number> = {
    rows: ROWS,
    concurrency: CONCURRENCY,
    singleMs: singleAnswered,
    singleStartedMs: singleStarted,
  };
  for (const mode of ['each', 'all_or_nothing'] as const) {
    say(`one batch: ${ROWS} rows, mode ${mode}`);
    t0 = performance.now();
    const res = await bulk(stack, mode, Array.from({ length: ROWS }, row));
    const answered = performance.now() - t0;
    const started = (await allStarted(stack, res.ids)) - t0;
    if (res.ids.length !== ROWS) say(`  only ${res.ids.length} of ${ROWS} created (status ${res.status})`);
    figures[`${mode}Ms`] = answered;
    figures[`${mode}StartedMs`] = started;
  }

  const line = (label: string, answered: number, started: number) =>
    `${label}: answered in ${ms(answered)} (${((ROWS / answered) * 1000).toFixed(0)} posts/s), every workflow started at ${ms(started)}`;
  console.log('');
  console.log(`bulk create, ${ROWS} scheduled posts — ${machineNote()}`);
  console.log(line(`  ${ROWS} single creates (${CONCURRENCY} in flight), the ceiling`, singleAnswered, singleStarted));
  for (const mode of ['each', 'all_or_nothing'] as const) {
    const answered = figures[`${mode}Ms`]!;
    console.log(
      `${line(`  one batch, ${mode}`, answered, figures[`${mode}StartedMs`]!)}; ratio to the ceiling ${(singleAnswered / answered).toFixed(2)}`,
    );
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(figures)}\n`);
});

async function bulk(stack: BenchStack, mode: 'each' | 'all_or_nothing', posts: unknown[]): Promise<{ status: number; ids: string[] }> {
  const res = await fetch(`${stack.apiUrl}/v1/posts/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ mode, posts }),
  });
  const body = (await res.json().catch(() => null)) as { results?: { post?: { id: string } }[] } | null;
  return { status: res.status, ids: (body?.results ?? []).flatMap((r) => (r.post ? [r.post.id] : [])) };
}
