// The webhook fan-out (workflows/webhook-fanout-types.ts): one activity that dispatches an event's
// deliveries. No longer started (an event's deliveries run in one webhookDeliveriesWorkflow); it
// stays registered for the executions started before.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { WebhookFanoutInput } from './webhook-fanout-types.ts';

const { startWebhookDeliveries } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  // Safe to retry: a delivery workflow already started is left as it is (its id is the key). A
  // delivery still not started when the retries run out stays marked, and the outbox sweep starts it.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export async function webhookFanoutWorkflow(input: WebhookFanoutInput): Promise<void> {
  await startWebhookDeliveries(input);
}
