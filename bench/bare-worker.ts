// The bare workflow's worker (bench/bare/workflow.ts): the service worker's settings, imported from
// worker/index.ts (workflow-task slots and polls, cache, sticky timeout; one publish worker per
// platform with its slots), around a workflow and activities that do next to nothing, so what it
// costs is Temporal's share of a post. Run as its own process by bench/burst-lateness.ts (like
// worker/main.ts: its CPU and RSS are its own), and inside bench/create-throughput.ts's process.
// Left out: the heartbeat throttle (the bare activities send no heartbeats) and the shutdown grace.
//
//   TEMPORAL_ADDRESS=… TEMPORAL_TASK_QUEUE=… BARE_STATUSES_URL=http://127.0.0.1:…/api/v1/statuses \
//     BARE_ACCESS_TOKEN=… .tools/bin/bun bench/bare-worker.ts
import { fileURLToPath } from 'node:url';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { PLATFORMS } from '../platforms/catalog.ts';
import { installRuntime, PUBLISH_CONCURRENCY_PER_PLATFORM, WORKFLOW_TUNING, WorkerGroup } from '../worker/index.ts';
import { connectWorker } from '../worker/temporal.ts';
import { platformTaskQueue } from '../workflows/post-types.ts';
import type { BareActivities } from './bare/workflow-types.ts';

export const BARE_WORKFLOWS_PATH = fileURLToPath(new URL('./bare/workflow.ts', import.meta.url));

/** The local steps do nothing; publish sends one status to `statusesUrl`, as the Mastodon connector would. */
export function bareActivities(statusesUrl: string, accessToken: string): BareActivities {
  const nothing = async () => {};
  return {
    confirm: nothing,
    begin: nothing,
    async publish({ text }) {
      const res = await fetch(statusesUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'idempotency-key': text },
        body: JSON.stringify({ status: text }),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`the fake answered ${res.status}`);
    },
  };
}

/** The bare workflow's workers, built as worker/index.ts's createWorker builds the service's. */
export async function createBareWorker(o: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: BareActivities;
}): Promise<WorkerGroup> {
  const { publish } = o.activities;
  // Publish is registered here too, with the publish workers' slots: a bare workflow told to
  // publish on its own task queue (BareInput.publishQueue) runs it here, where the server can hand
  // it over eagerly (bench/burst-lateness.ts BENCH_BURST_EAGER).
  const main = await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    workflowsPath: BARE_WORKFLOWS_PATH,
    activities: o.activities,
    maxConcurrentActivityTaskExecutions: PUBLISH_CONCURRENCY_PER_PLATFORM,
    ...WORKFLOW_TUNING,
  });
  const publishers = await Promise.all(
    PLATFORMS.map((platform) =>
      Worker.create({
        connection: o.connection,
        namespace: o.namespace,
        taskQueue: platformTaskQueue(o.taskQueue, platform),
        activities: { publish },
        maxConcurrentActivityTaskExecutions: PUBLISH_CONCURRENCY_PER_PLATFORM,
      }),
    ),
  );
  return new WorkerGroup([main, ...publishers]);
}

if (import.meta.main) {
  const config = loadConfig(process.env);
  installRuntime(config.logLevel);
  const logger = createLogger({ level: config.logLevel, base: { service: 'bare-worker' } });
  const connection = await connectWorker(config.temporal);
  const group = await createBareWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: bareActivities(process.env.BARE_STATUSES_URL ?? '', process.env.BARE_ACCESS_TOKEN ?? ''),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => group.shutdown());
  // bench/stack.ts's startWorkerProcess waits for this line.
  logger.info('polling', { taskQueue: config.temporal.taskQueue, pid: process.pid });
  await group.run();
  await connection.close();
  process.exit(0);
}
