// One durable workflow per webhook delivery: attempt, and while the attempt asks for a retry,
// sleep per the schedule (workflows/webhook-delivery-types.ts) and attempt again. The schedule
// lives here, in timers, so a worker or Temporal restart resumes it where it was.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  WEBHOOK_JITTER,
  WEBHOOK_RETRY_SCHEDULE_MS,
  type WebhookDeliveryInput,
  type WebhookDeliveryOutcome,
} from './webhook-delivery-types.ts';

type Activities = ReturnType<typeof createActivities>;

const deliver = proxyActivities<Activities>({
  // Above the 15 s request timeout plus the database writes around it.
  startToCloseTimeout: '1 minute',
  // Retried only when the database write fails: an HTTP failure is an answer (outcome retry), not an error.
  // A retry may send the same event again: delivery is at-least-once (docs/decisions.md).
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function webhookDeliveryWorkflow({ deliveryId }: WebhookDeliveryInput): Promise<WebhookDeliveryOutcome> {
  for (let i = 0; i < WEBHOOK_RETRY_SCHEDULE_MS.length; i++) {
    const next = WEBHOOK_RETRY_SCHEDULE_MS[i + 1];
    // Math.random is deterministic in workflow code (seeded per execution), so replay agrees.
    const plannedDelayMs = next === undefined ? null : Math.round(next * (1 - WEBHOOK_JITTER + 2 * WEBHOOK_JITTER * Math.random()));
    const result = await deliver.attemptWebhookDelivery({ deliveryId, plannedDelayMs });
    if (result.outcome !== 'retry') return result.outcome;
    await sleep(result.nextDelayMs);
  }
  return 'failed';
}
