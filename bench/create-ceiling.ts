// The create ceiling (bench/README.md "The create ceiling"), measured by bench/create-throughput.ts
// on its stack: (a) raw client.workflow.start of a workflow type no worker runs, (b) the start of
// the bare workflow asleep for days, its first task run by a worker in this process with the
// service worker's settings. Both with a post's input and search attributes, N in flight; the
// rate is N over the time from the first start sent to the last one answered.
import { NativeConnection } from '@temporalio/worker';
import { newId } from '../lib/ids.ts';
import { installRuntime } from '../worker/index.ts';
import { platformTaskQueue, type PostWorkflowInput } from '../workflows/post-types.ts';
import { postSearchAttributes } from '../workflows/search-attributes.ts';
import { BARE_WORKFLOW_TYPE, UNRUN_WORKFLOW_TYPE, type BareWorkflow } from './bare/workflow-types.ts';
import { bareActivities, createBareWorker } from './bare-worker.ts';
import { backlogs } from './seed-posts.ts';
import { BENCH_ACCESS_TOKEN, isStopping, onStop, pool, say, summary, type BenchStack } from './stack.ts';

export interface Starts {
  perSecond: number;
  lat: ReturnType<typeof summary>;
}

/** `n` starts, `concurrency` in flight: starts per second and the latency of each. */
async function timedStarts(n: number, concurrency: number, start: (i: number) => Promise<unknown>): Promise<Starts> {
  const lat: number[] = [];
  const t0 = performance.now();
  await pool(n, concurrency, async (i) => {
    const t = performance.now();
    await start(i);
    lat.push(performance.now() - t);
  });
  return { perSecond: n / ((performance.now() - t0) / 1000), lat: summary(lat) };
}

/** (a): what the Temporal server alone takes to start a workflow; its task is never picked up. */
export function unrunStarts(stack: BenchStack, n: number, concurrency: number, publishAt: Date): Promise<Starts> {
  say(`create ceiling (a): ${n} raw starts of a workflow type no worker runs, ${concurrency} in flight`);
  const taskQueue = `${stack.taskQueue}-unrun`;
  return timedStarts(n, concurrency, () => {
    const postId = newId('post');
    const input: PostWorkflowInput = { postId, organizationId: stack.organizationId, publishAt: publishAt.toISOString() };
    return stack.client.workflow.start(UNRUN_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `unrun-${postId}`,
      args: [input],
      typedSearchAttributes: postSearchAttributes(stack.organizationId, postId),
    });
  });
}

/**
 * (b): starts of the bare workflow, asleep until `publishAt`, while a worker in this process runs
 * each one's first task. The worker is stopped once it has caught up (the server's approximate
 * backlog empty, no task in its hands, for a second), so none of its work spills into what follows.
 */
export async function bareSleepStarts(stack: BenchStack, n: number, concurrency: number, publishAt: Date): Promise<Starts> {
  // The service's runtime settings (the SDK's logs as JSON lines, here on stderr: stdout may carry figures).
  installRuntime('warn', (line) => console.error(line));
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const taskQueue = `${stack.taskQueue}-bare-create`;
  const group = await createBareWorker({
    connection,
    namespace: stack.namespace,
    taskQueue,
    activities: bareActivities(`${stack.fake.url}/api/v1/statuses`, BENCH_ACCESS_TOKEN),
  });
  const running = group.run();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      group.shutdown();
      await running.catch(() => {});
      await connection.close();
    })());
  onStop('bare worker (this process)', stop);

  say(`create ceiling (b): ${n} starts of the bare workflow asleep, its worker in this process, ${concurrency} in flight`);
  const starts = await timedStarts(n, concurrency, () => {
    const postId = newId('post');
    return stack.client.workflow.start<BareWorkflow>(BARE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `bare-${postId}`,
      args: [{ text: `bare ${postId}`, publishAt: publishAt.toISOString(), publishQueue: platformTaskQueue(taskQueue, 'MASTODON') }],
      typedSearchAttributes: postSearchAttributes(stack.organizationId, postId),
    });
  });
  const t0 = performance.now();
  let quietSince: number | undefined;
  while (!isStopping() && performance.now() - t0 < 120_000) {
    const backlog = await backlogs(stack, taskQueue);
    const idle = (backlog === undefined || backlog === 0) && group.workers[0]!.getStatus().numInFlightWorkflowActivations === 0;
    if (!idle) quietSince = undefined;
    else quietSince ??= performance.now();
    if (quietSince !== undefined && performance.now() - quietSince >= 1000) break;
    await Bun.sleep(100);
  }
  await stop();
  return starts;
}
