// The bare-Temporal ceiling of a burst (bench/burst-lateness.ts): the same burst run with the bare
// workflow (bench/bare/workflow.ts) on its own worker process with the service worker's settings
// (bench/bare-worker.ts), on the same dev server and its own task queues, right after the
// service's; each figure printed as service, bare workflow and their ratio.
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

/** The bare worker as its own process, on `<stack's queue>-bare`, publishing to the stack's fake Mastodon. */
export async function startBareWorker(stack: BenchStack): Promise<{ worker: WorkerProcess; taskQueue: string }> {
  const taskQueue = `${stack.taskQueue}-bare`;
  say('bare worker process (bench/bare-worker.ts)');
  const worker = await startWorkerProcess(
    {
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BARE_STATUSES_URL: `${stack.fake.url}/api/v1/statuses`,
      BARE_ACCESS_TOKEN: BENCH_ACCESS_TOKEN,
      LOG_LEVEL: 'info',
    },
    join(stack.dir, 'logs', 'bare-worker.log'),
    'bench/bare-worker.ts',
  );
  return { worker, taskQueue };
}

/** Bare workflows started as the service starts a post's: same search attributes, a post id's size. */
export const bareWorkflows = (client: Client, taskQueue: string, organizationId: string): BurstSubject => ({
  async seed(o) {
    const postIds = Array.from({ length: o.count }, () => newId('post'));
    let startErrors = 0;
    let started = 0;
    await pool(o.count, o.concurrency, async (i) => {
      try {
        await client.workflow.start<BareWorkflow>(BARE_WORKFLOW_TYPE, {
          taskQueue,
          workflowId: `bare-${postIds[i]}`,
          args: [{ text: o.text(i), publishAt: o.publishAt(i).toISOString(), publishQueue: platformTaskQueue(taskQueue, 'MASTODON') }],
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

const DEV_SERVER_PARTS = { worker: 'worker', temporal: 'Temporal dev server', postgres: 'Postgres' };

export function printCeiling(s: BurstResult, b: BurstResult, o: BurstOptions): void {
  console.log(`== the same burst, service beside the bare workflow (${o.posts} posts; same dev server, back to back) ==`);
  console.log(
    `  load average (1 min) just before each was due: service ${s.loadAtDue.toFixed(2)}, bare workflow ${b.loadAtDue.toFixed(2)}`,
  );
  console.log(`  ${'figure'.padEnd(56)} ${'service'.padStart(10)} ${'bare'.padStart(10)}  service / bare`);
  for (const c of compared(s, b, o, DEV_SERVER_PARTS)) {
    const v = (x: number) => `${x.toFixed(1)}`.padStart(10);
    console.log(
      `  ${`${c.figure} (${c.unit})`.padEnd(56)} ${v(c.service)} ${v(c.bare)}  ${ratio(c) === undefined ? 'n/a' : ratio(c)!.toFixed(2)}`,
    );
  }
  console.log('');
}

/** Each figure three times for bench/all.ts's table: the service's, the bare workflow's, the ratio. */
export function ceilingMetrics(s: BurstResult, b: BurstResult, o: BurstOptions): { metric: string; value: number; unit: string }[] {
  const r1 = (v: number) => Math.round(v * 10) / 10;
  return [
    ...compared(s, b, o, DEV_SERVER_PARTS).flatMap((c) => [
      { metric: `${c.figure}: service`, value: r1(c.service), unit: c.unit },
      { metric: `${c.figure}: bare workflow`, value: r1(c.bare), unit: c.unit },
      { metric: `${c.figure}: service / bare`, value: Math.round((ratio(c) ?? Number.NaN) * 100) / 100, unit: '×' },
    ]),
    { metric: "load average (1 min) before the service's burst", value: Math.round(s.loadAtDue * 100) / 100, unit: '' },
    { metric: "load average (1 min) before the bare workflow's burst", value: Math.round(b.loadAtDue * 100) / 100, unit: '' },
  ];
}
