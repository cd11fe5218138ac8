// Burst lateness on the embedded default's Temporal: 1,000 posts (BENCH_BURST) due at the same
// instant across 10 channels (BENCH_BURST_CHANNELS), on the bench stack (bench/stack.ts: the
// Temporal dev server with its SQLite file, one worker process). The measurement is shared with
// bench/burst-cluster.ts (the real Temporal server) in bench/burst.ts. Then, on the same dev
// server, the same burst of the bare workflow (bench/burst-ceiling.ts: the Temporal ceiling), and
// each figure beside it as a ratio (BENCH_BURST_CEILING=0 leaves it out). Targets: p99 ≤ 2 s and
// max ≤ 5 s at 1,000; p99 ≤ 10 s at 10,000. BENCH_BURST_EAGER=1 adds a third burst: the bare
// workflow with its publish on its own task queue and the dev server's eager activity dispatch on,
// beside the bare workflow's per-platform queue. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/burst-lateness.ts
//   BENCH_BURST=1000 BENCH_BURST_CHANNELS=10 BENCH_BURST_LEAD_MS=90000 .tools/bin/bun run bench/burst-lateness.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { bareWorkflows, ceilingMetrics, printCeiling, startBareWorker } from './burst-ceiling.ts';
import { burstMetrics, burstOptions, printBurst, runBurst } from './burst.ts';
import { benchChannels } from './seed-posts.ts';
import { cpuByPart, envInt, machineNote, runBench, startBenchStack } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const o = burstOptions();
const CEILING = envInt('BENCH_BURST_CEILING', 1, 0, 1) === 1;
/** A third burst: the bare workflow publishing on its own task queue, handed over eagerly (the dev server started with eager dispatch on). */
const EAGER = CEILING && process.env.BENCH_BURST_EAGER === '1';

await runBench(async () => {
  const stack = await startBenchStack();
  const channelIds = await benchChannels(stack, o.channels);
  // Started (and its workflow bundled) before either burst, so it idles through the service's.
  const bare = CEILING ? await startBareWorker(stack) : undefined;
  const temporalNote = `Temporal dev server ${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'with a SQLite file'} (one history shard)`;

  const r = await runBurst({ ...stack, channelIds }, o, () => cpuByPart(stack));
  if (!r) return;
  printBurst(r, o, 'burst lateness, embedded default', [`machine: ${machineNote()}`, `${temporalNote}; one worker process`]);

  const b = bare
    ? await runBurst(
        { ...stack, channelIds },
        o,
        () => cpuByPart({ worker: bare.worker }),
        bareWorkflows(stack.client, bare.taskQueue, stack.organizationId),
      )
    : undefined;
  if (bare && !b) return;
  if (b) {
    printBurst(b, o, 'the same burst, bare workflow (bench/bare/workflow.ts)', [
      `machine: ${machineNote()}`,
      `${temporalNote}; the bare worker process (the service worker's settings), the service's idle beside it (in "other")`,
    ]);
    printCeiling(r, b, o);
  }
  const e =
    bare && EAGER
      ? await runBurst(
          { ...stack, channelIds },
          o,
          () => cpuByPart({ worker: bare.worker }),
          bareWorkflows(stack.client, bare.taskQueue, stack.organizationId, true),
        )
      : undefined;
  if (EAGER && !e) return;
  if (b && e) {
    printBurst(e, o, 'the same burst, bare workflow publishing on its own task queue, eager dispatch', [
      `machine: ${machineNote()}`,
      `${temporalNote}, system.enableActivityEagerExecution=true; the bare worker process`,
    ]);
    printCeiling(b, e, o, undefined, 'same dev server', ['per-platform queue', 'own queue, eager']);
  }
  if (JSON_OUT) {
    const metrics = b ? [...ceilingMetrics(r, b, o), ...burstMetrics(r, o, false)] : burstMetrics(r, o);
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'burst-lateness', posts: o.posts, channels: o.channels, metrics })}\n`);
  }
});
