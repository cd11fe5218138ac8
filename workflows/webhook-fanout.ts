// The webhook fan-out (workflows/webhook-fanout-types.ts): one activity that starts the delivery
// workflows of an event's deliveries, so the request that committed the event pays one start.
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
