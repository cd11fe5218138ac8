// The metrics sweep (workflows/metrics-sweep-types.ts): batches of due readings, one activity each,
// until a batch is not full or the rounds are spent; overlap SKIP, so two runs never work at once.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { MetricsSweepInput, MetricsSweepSummary } from './metrics-sweep-types.ts';

const { collectDueMetrics } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  // Safe to retry: a reading is written once per (channel post, step), and the step moves only
  // from the step it read. The next scheduled run retries anyway.
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

export async function metricsSweepWorkflow(input: MetricsSweepInput): Promise<MetricsSweepSummary> {
  const total: MetricsSweepSummary = { read: 0, failed: 0, stopped: 0 };
  for (let round = 0; round < input.rounds; round++) {
    const r = await collectDueMetrics(input.postId === undefined ? { limit: input.limit } : { limit: input.limit, postId: input.postId });
    total.read += r.read;
    total.failed += r.failed;
    total.stopped += r.stopped;
    if (input.postId !== undefined || r.read + r.failed + r.stopped < input.limit) break;
  }
  return total;
}
