// The webhook outbox sweep (workflows/webhook-outbox-sweep-types.ts): one activity, run by a
// Temporal Schedule every 30 s; overlap SKIP, so two runs never work at once.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { WebhookOutboxSweepInput, WebhookOutboxSweepResult } from './webhook-outbox-sweep-types.ts';

const { sweepWebhookOutbox } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  // Safe to retry: starting a delivery workflow twice is harmless (its id is the key). The next
  // scheduled run retries anyway.
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export async function webhookOutboxSweepWorkflow(input: WebhookOutboxSweepInput): Promise<WebhookOutboxSweepResult> {
  return sweepWebhookOutbox(input);
}
