// The bare workflow: the least a scheduled post can cost in Temporal. It sleeps until publishAt,
// runs two trivial local activities (where the post workflow runs its local Postgres steps), then
// one activity on a per-platform task queue that POSTs the status to the fake Mastodon. Its
// search attributes are the post workflow's, set at its start as the service sets them.
// Deterministic workflow code (`bun scripts/check-workflows.ts bench/bare`).
import { proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { BareActivities, BareInput } from './workflow-types.ts';

const steps = proxyLocalActivities<BareActivities>({
  startToCloseTimeout: '30 seconds',
  // Safe to retry: they do nothing.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const publisher = (taskQueue: string) =>
  proxyActivities<BareActivities>({
    taskQueue,
    startToCloseTimeout: '1 minute',
    // Safe to retry: the fake answers a repeated Idempotency-Key with the status it made.
    retry: { initialInterval: '5 seconds', maximumAttempts: 10 },
  });

export async function bareWorkflow(input: BareInput): Promise<void> {
  const wait = Date.parse(input.publishAt) - Date.now();
  if (wait > 0) await sleep(wait);
  await steps.confirm(input.text);
  await steps.begin(input.text);
  await publisher(input.publishQueue).publish(input);
}
