// The webhook fan-out's contract (docs/decisions.md "Webhooks"). The code that commits an event
// starts one fan-out workflow for its deliveries, whatever their number, and answers; the
// fan-out's activity starts each delivery's own workflow (`whd-<deliveryId>`: its retries, its
// log, redeliver) on the worker. Plain data only. The names here are durable — never rename.

/** The workflow type (workflows/webhook-fanout.ts, registered by its export in workflows/index.ts). */
export const WEBHOOK_FANOUT_WORKFLOW_TYPE = 'webhookFanoutWorkflow';

/** Named by its first delivery: a dispatch repeated for the same deliveries meets the same workflow. */
export const webhookFanoutWorkflowId = (firstDeliveryId: string) => `whf-${firstDeliveryId}`;

export interface WebhookFanoutInput {
  deliveryIds: string[];
}

export type WebhookFanoutWorkflow = (input: WebhookFanoutInput) => Promise<void>;
