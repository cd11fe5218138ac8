// The webhook fan-out's contract: a workflow whose activity dispatched an event's deliveries. No
// code starts it any more (workflows/webhook-delivery-types.ts); it stays registered for the
// executions started before. Plain data only. The names here are durable — never rename.

/** The workflow type (workflows/webhook-fanout.ts, registered by its export in workflows/index.ts). */
export const WEBHOOK_FANOUT_WORKFLOW_TYPE = 'webhookFanoutWorkflow';

/** Named by its first delivery: a dispatch repeated for the same deliveries meets the same workflow. */
export const webhookFanoutWorkflowId = (firstDeliveryId: string) => `whf-${firstDeliveryId}`;

export interface WebhookFanoutInput {
  deliveryIds: string[];
}

export type WebhookFanoutWorkflow = (input: WebhookFanoutInput) => Promise<void>;
