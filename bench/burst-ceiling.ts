// The bare-Temporal ceiling of a burst (bench/burst-lateness.ts, bench/burst-cluster.ts): the same
// burst run with the bare workflow (bench/bare/workflow.ts) on worker processes of its own with the
// service worker's settings (bench/bare-worker.ts), as many as the service's, on the same Temporal
// and task queues of its own, right after the service's; each figure printed as service, bare
// workflow and their ratio.
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { newId } from '../lib/ids.ts';
import { platformTaskQueue } from '../workflows/post-types.ts';
import { postSearchAttributes } from '../workflows/search-attributes.ts';
import { BARE_WORKFLOW_TYPE, type BareWorkflow } from './bare/workflow-types.ts';
import {
  burstRate,
  cpuPerPostMs,
  EVENTS_SAMPLE,
  ownCpuPerPostMs,
  type BurstOptions,
  type BurstResult,
  type BurstSubject,
} from './burst.ts';
import { BENCH_ACCESS_TOKEN, pool, say, startWorkerProcess, type BenchStack, type WorkerProcess } from './stack.ts';

/** Where a bare worker runs: the Temporal it polls, and the fake Mastodon it publishes to. */
export interface BareWorkerTarget {
  temporalAddress: string;
  namespace: string;
  /** The service's task queue; the bare worker takes `<it>-bare` (and its per-platform queues). */
  taskQueue: string;
  fakeUrl: string;
  /** Its log goes to `<logDir>/bare-worker<n>.log`. */
  logDir: string;
}

/** `count` bare worker processes on `<service queue>-bare`, publishing to the fake Mastodon. */
export async function startBareWorkers(at: BareWorkerTarget, count = 1): Promise<{ workers: WorkerProcess[]; taskQueue: string }> {
  const taskQueue = `${at.taskQueue}-bare`;
  say(`bare worker process${count > 1 ? `es (${count})` : ''} (bench/bare-worker.ts)`);
  const workers: WorkerProcess[] = [];
  for (let i = 1; i <= count; i++) {
    workers.push(
      await startWorkerProcess(
        {
          TEMPORAL_ADDRESS: at.temporalAddress,
          TEMPORAL_NAMESPACE: at.namespace,
          TEMPORAL_TASK_QUEUE: taskQueue,
          BARE_STATUSES_URL: `${at.fakeUrl}/api/v1/statuses`,
          BARE_ACCESS_TOKEN: BENCH_ACCESS_TOKEN,
          LOG_LEVEL: 'info',
        },
        join(at.logDir, `bare-worker${count > 1 ? i : ''}.log`),
        'bench/bare-worker.ts',
      ),
    );
  }
  return { workers, taskQueue };
}

/** The bench stack's bare worker (one process, as the stack runs one worker). */
export async function startBareWorker(stack: BenchStack): Promise<{ worker: WorkerProcess; taskQueue: string }> {
  const { workers, taskQueue } = await startBareWorkers({
    temporalAddress: stack.temporalAddress,
    namespace: stack.namespace,
    taskQueue: stack.taskQueue,
    fakeUrl: stack.fake.url,
    logDir: join(stack.dir, 'logs'),
  });
  return { worker: workers[0]!, taskQueue };
}

/**
 * Bare workflows started as the service starts a post's: same search attributes, a post id's size.
 * `eager`: the publish activity on the workflow's own task queue (no platform isolation), which
 * a server with `system.enableActivityEagerExecution` hands to the worker with the workflow task's answer.
 */
export const bareWorkflows = (client: Client, taskQueue: string, organizationId: string, eager = false): BurstSubject => ({
  async seed(o) {
    const postIds = Array.from({ length: o.count }, () => newId('post'));
    let startErrors = 0;
    let started = 0;
    await pool(o.count, o.concurrency, async (i) => {
      try {
        await client.workflow.start<BareWorkflow>(BARE_WORKFLOW_TYPE, {
          taskQueue,
          workflowId: `bare-${postIds[i]}`,
          args: [
            {
              text: o.text(i),
              publishAt: o.publishAt(i).toISOString(),
              publishQueue: eager ? taskQueue : platformTaskQueue(taskQueue, 'MASTODON'),
            },
          ],
          typedSearchAttributes: postSearchAttributes(organizationId, postIds[i]!),
        });
      } catch {
        startErrors++;
      }
      started++;
      if (o.onProgress && started % 1000 === 0) o.onProgress(started);
    });
    return { workflowIds: postIds.map((id) => `bare-${id}`), startErrors };
  },
});

interface Compared {
  figure: string;
  unit: string;
  service: number;
  bare: number;
}

/** The figures set side by side; `parts` names cpuByPart's worker, Temporal and Postgres parts. */
function compared(
  s: BurstResult,
  b: BurstResult,
  o: BurstOptions,
  parts: { worker: string; temporal: string; postgres: string },
): Compared[] {
  const both = (figure: string, unit: string, f: (r: BurstResult) => number) => ({ figure, unit, service: f(s), bare: f(b) });
  return [
    both(`burst lateness p50 (${o.posts} due at once, ${o.channels} channels)`, 'ms', (r) => r.lateness.p50),
    both('burst lateness p99', 'ms', (r) => r.lateness.p99),
    both('burst lateness max', 'ms', (r) => r.lateness.max),
    both('burst published', 'posts/s', burstRate),
    both('burst CPU per post, worker', 'ms', (r) => cpuPerPostMs(r, parts.worker)),
    both('burst CPU per post, Temporal', 'ms', (r) => cpuPerPostMs(r, parts.temporal)),
    both('burst CPU per post, Postgres', 'ms', (r) => cpuPerPostMs(r, parts.postgres)),
    both('burst CPU per post, whole run', 'ms', ownCpuPerPostMs),
    both(`history events per published workflow (mean of ${EVENTS_SAMPLE} sampled)`, 'events', (r) => r.events.mean),
  ];
}

/** Undefined when the bare workflow's figure is 0 (it uses no Postgres): no ratio to give. */
const ratio = (c: Compared) => (c.bare > 0 ? c.service / c.bare : undefined);

/** The names a CPU reading gives the worker, Temporal and Postgres parts. */
export interface CeilingParts {
  worker: string;
  temporal: string;
  postgres: string;
}

/** cpuByPart's names (bench/stack.ts): the embedded default's dev server. */
export const DEV_SERVER_PARTS: CeilingParts = { worker: 'worker', temporal: 'Temporal dev server', postgres: 'Postgres' };

/**
 * `where`: the Temporal both ran on ("same dev server", "same cluster"); `names`: the two runs'
 * names in the table (the service and the bare workflow, or two bare runs).
 */
export function printCeiling(
  s: BurstResult,
  b: BurstResult,
  o: BurstOptions,
  parts = DEV_SERVER_PARTS,
  where = 'same dev server',
  names: [string, string] = ['service', 'bare'],
): void {
  const [sn, bn] = names;
  console.log(`== the same burst, ${sn} beside ${bn} (${o.posts} posts; ${where}, back to back) ==`);
  console.log(`  load average (1 min) just before each was due: ${sn} ${s.loadAtDue.toFixed(2)}, ${bn} ${b.loadAtDue.toFixed(2)}`);
  console.log(`  ${'figure'.padEnd(56)} ${sn.slice(0, 10).padStart(10)} ${bn.slice(0, 10).padStart(10)}  ${sn} / ${bn}`);
  for (const c of compared(s, b, o, parts)) {
    const v = (x: number) => `${x.toFixed(1)}`.padStart(10);
    console.log(
      `  ${`${c.figure} (${c.unit})`.padEnd(56)} ${v(c.service)} ${v(c.bare)}  ${ratio(c) === undefined ? 'n/a' : ratio(c)!.toFixed(2)}`,
    );
  }
  console.log('');
}

/** Each figure three times for bench/all.ts's table: the service's, the bare workflow's, the ratio. */
export function ceilingMetrics(
  s: BurstResult,
  b: BurstResult,
  o: BurstOptions,
  parts = DEV_SERVER_PARTS,
): { metric: string; value: number; unit: string }[] {
  const r1 = (v: number) => Math.round(v * 10) / 10;
  return [
    ...compared(s, b, o, parts).flatMap((c) => [
      { metric: `${c.figure}: service`, value: r1(c.service), unit: c.unit },
      { metric: `${c.figure}: bare workflow`, value: r1(c.bare), unit: c.unit },
      { metric: `${c.figure}: service / bare`, value: Math.round((ratio(c) ?? Number.NaN) * 100) / 100, unit: '×' },
    ]),
    { metric: "load average (1 min) before the service's burst", value: Math.round(s.loadAtDue * 100) / 100, unit: '' },
    { metric: "load average (1 min) before the bare workflow's burst", value: Math.round(b.loadAtDue * 100) / 100, unit: '' },
  ];
}
