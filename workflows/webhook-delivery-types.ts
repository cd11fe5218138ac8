// The webhook delivery workflow's contract (docs/decisions.md "Webhooks"): one workflow per
// delivery (an event to one endpoint), id `whd-<deliveryId>`, shared by the workflow, its
// activity and the code that starts it.
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

export const webhookDeliveryWorkflowId = (deliveryId: string) => `whd-${deliveryId}`;

export interface WebhookDeliveryInput {
  deliveryId: string;
}

/**
 * When each attempt is made, after the one before (Standard Webhooks' schedule): at once, 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h — ten attempts over about three days.
 */
export const WEBHOOK_RETRY_SCHEDULE_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

/** Each wait is moved by up to ±10 % so that many failed deliveries do not return at once. */
export const WEBHOOK_JITTER = 0.1;

/** A receiver's Retry-After is honoured up to this long. */
export const WEBHOOK_MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export interface WebhookAttemptInput {
  deliveryId: string;
  /** The wait before the next attempt if this one must be retried; null: this is the last attempt. */
  plannedDelayMs: number | null;
}

/**
 * `retry`: wait nextDelayMs (the planned wait, or the receiver's Retry-After if longer) and try
 * again. `skipped`: the endpoint is gone or disabled, or the delivery is no longer pending.
 */
export type WebhookAttemptResult = { outcome: 'delivered' | 'failed' | 'gone' | 'skipped' } | { outcome: 'retry'; nextDelayMs: number };

export type WebhookDeliveryOutcome = 'delivered' | 'failed' | 'gone' | 'skipped';

export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<WebhookDeliveryOutcome>;
