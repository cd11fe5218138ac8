// Burst lateness on the production topology: the same burst as bench/burst-lateness.ts (1,000
// posts, BENCH_BURST, due at the same instant across 10 channels; measured by bench/burst.ts), on
// the cluster of scripts/cluster/stack.ts — Postgres, the real Temporal server (built by
// `sh scripts/setup.sh --cluster`) with BENCH_HISTORY_SHARDS history shards, and BENCH_WORKERS
// worker processes (`bun worker/main.ts`) — in a temp directory on free ports. The fake Mastodon
// runs in this process; the posts are seeded straight into the cluster's database and Temporal.
// Then, on the same cluster, the same burst of the bare workflow on as many bare worker processes
// (bench/burst-ceiling.ts: the Temporal ceiling), each figure beside it as a ratio
// (BENCH_BURST_CEILING=0 leaves it out).
// Targets: p99 ≤ 2 s and max ≤ 5 s at 1,000; p99 ≤ 10 s at 10,000. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/burst-cluster.ts
//   BENCH_WORKERS=1 BENCH_BURST=10000 BENCH_BURST_LEAD_MS=240000 BENCH_TIMEOUT_MS=300000 .tools/bin/bun run bench/burst-cluster.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOrm } from '../db/orm.ts';
import { addChannel } from '../domain/channels.ts';
import { createOrganization } from '../domain/organizations.ts';
import { loadConfig } from '../lib/config.ts';
import { freeClusterPorts, startCluster } from '../scripts/cluster/stack.ts';
import { startFakeMastodon } from '../test/fakes/mastodon.ts';
import { PUBLISH_CONCURRENCY_PER_PLATFORM, WORKFLOW_TUNING } from '../worker/index.ts';
import { connectClient, ensureSearchAttributes } from '../worker/temporal.ts';
import { bareWorkflows, ceilingMetrics, printCeiling, startBareWorkers } from './burst-ceiling.ts';
import { burstMetrics, burstOptions, printBurst, procName, runBurst, treeCpuMs } from './burst.ts';
import { benchChannels } from './seed-posts.ts';
import { envInt, machineNote, onStop, procCpuMs, runBench, say } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const o = burstOptions();
const WORKERS = envInt('BENCH_WORKERS', 2, 1, 8);
/** Temporal's history shards: timers fire and workflow tasks are dispatched per shard. */
const SHARDS = envInt('BENCH_HISTORY_SHARDS', 4, 1, 1024);
const CEILING = envInt('BENCH_BURST_CEILING', 1, 0, 1) === 1;
/** The CPU parts compared with the bare workflow's: all worker processes of a side, the server, its Postgres. */
const CLUSTER_PARTS = { worker: 'worker processes', temporal: 'temporal-server', postgres: 'Postgres' };

await runBench(async () => {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-bench-cluster-'));
  onStop('temp directory', async () => {
    if (process.env.BENCH_KEEP === '1') say(`kept ${dir} (BENCH_KEEP=1)`);
    else rmSync(dir, { recursive: true, force: true });
  });
  say(`cluster in ${dir}: ${SHARDS} history shards, ${WORKERS} worker process(es)`);
  // One API process: it applies the migrations (and idles through the burst).
  const starting = startCluster({
    dir,
    ports: await freeClusterPorts(1),
    workers: WORKERS,
    ui: false,
    historyShards: SHARDS,
    say: (m) => say(`  ${m}`),
  });
  // Its children run in sessions of their own: a Ctrl-C reaches only this process, which stops
  // them — after the start has finished, if it comes during the start (a failed start cleans up itself).
  onStop('cluster', async () => (await starting.catch(() => undefined))?.stop());
  const c = await starting;

  const orm = await createOrm(c.appEnv.DATABASE_URL!, 4);
  onStop('ORM', () => orm.close());
  const config = loadConfig(c.appEnv, ['CREDENTIALS_KEY']);
  const client = await connectClient(config.temporal);
  onStop('Temporal client', () => client.connection.close());
  await ensureSearchAttributes(client.connection, config.temporal.namespace);
  const fake = await startFakeMastodon();
  onStop('fake Mastodon', () => fake.stop());

  const org = await createOrganization(orm.em.fork(), { name: 'Bench organization', plan: 'ENTERPRISE' });
  const channel = await addChannel(orm.em.fork(), config.credentialsKey!, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'Bench Mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    maxChars: 500,
  });
  const channelIds = await benchChannels({ orm, channelId: channel.id }, o.channels);
  say(`cluster ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // As many bare workers as the service's, started (their workflows bundled) before either burst,
  // so they idle through the service's.
  const bare = CEILING
    ? await startBareWorkers(
        {
          temporalAddress: config.temporal.address,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          fakeUrl: fake.url,
          logDir: join(dir, 'logs'),
        },
        WORKERS,
      )
    : undefined;
  const treeOf = (pids: (number | undefined)[]) => pids.reduce<number>((sum, pid) => sum + (pid && procName(pid) ? treeCpuMs(pid) : 0), 0);
  /** CPU by part, the measured workers' processes summed as one part; the idle rest (the API process, SeaweedFS, the other side's workers) as "other". */
  const cpu = (measured: 'service' | 'bare') => () => {
    const serviceWorkers = treeOf(c.workers.map((w) => w.pid));
    const bareWorkers = treeOf(bare?.workers.map((w) => w.pid) ?? []);
    return {
      'bench+fake (this process)': procCpuMs(process.pid),
      [CLUSTER_PARTS.worker]: measured === 'service' ? serviceWorkers : bareWorkers,
      [CLUSTER_PARTS.temporal]: c.temporal.pid ? treeCpuMs(c.temporal.pid) : 0,
      [CLUSTER_PARTS.postgres]: treeCpuMs(c.postgres.pid()),
      other: treeOf([...c.apis, c.seaweed].map((x) => x.pid)) + (measured === 'service' ? bareWorkers : serviceWorkers),
    };
  };
  const target = { orm, client, taskQueue: config.temporal.taskQueue, organizationId: org.id, fake, channelIds };
  const r = await runBurst(target, o, cpu('service'));
  if (!r) return;
  const t = WORKFLOW_TUNING;
  const about = `real Temporal server on Postgres, ${SHARDS} history shards; ${WORKERS} worker process(es), each: ${t.maxConcurrentWorkflowTaskPolls} workflow-task polls, ${t.maxConcurrentWorkflowTaskExecutions} workflow tasks at once, cache ${t.maxCachedWorkflows}, sticky timeout ${t.stickyQueueScheduleToStartTimeout}, ${PUBLISH_CONCURRENCY_PER_PLATFORM} publishes per platform at once`;
  printBurst(r, o, 'burst lateness, cluster', [`machine: ${machineNote()}`, about]);
  const b = bare ? await runBurst(target, o, cpu('bare'), bareWorkflows(client, bare.taskQueue, org.id)) : undefined;
  if (bare && !b) return;
  if (b) {
    printBurst(b, o, 'the same burst on the cluster, bare workflow (bench/bare/workflow.ts)', [
      `machine: ${machineNote()}`,
      `${about}; the bare worker processes (the service worker's settings), the service's idle beside them (in "other")`,
    ]);
    printCeiling(r, b, o, CLUSTER_PARTS, 'same cluster');
  }
  if (JSON_OUT) {
    const figures = b ? [...ceilingMetrics(r, b, o, CLUSTER_PARTS), ...burstMetrics(r, o, false)] : burstMetrics(r, o);
    const metrics = figures.map((m) => ({ ...m, metric: `cluster (${WORKERS} workers, ${SHARDS} shards): ${m.metric}` }));
    const out = { bench: 'burst-cluster', posts: o.posts, channels: o.channels, workers: WORKERS, shards: SHARDS, metrics };
    await Bun.write(Bun.stdout, `${JSON.stringify(out)}\n`);
  }
});
