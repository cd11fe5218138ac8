// The webhook deliveries' contract (docs/decisions.md "Webhooks"), shared by the workflows, their
// activity and the code that starts them. Plain data only; the names are durable — never rename.
//
// One `webhookDeliveriesWorkflow` per event, `whe-<eventId>`, attempts all of the event's
// deliveries together and keeps each one's place in the retry schedule; a redelivery runs the
// same workflow for its one delivery, `whd-<deliveryId>`. `webhookDeliveryWorkflow` (one
// delivery, `whd-<deliveryId>`) is no longer started: it stays registered for the executions
// started before, which sleep for up to three days.

/** The workflow of an event's deliveries, or of one redelivery (workflows/webhook-delivery.ts). */
export const WEBHOOK_DELIVERIES_WORKFLOW_TYPE = 'webhookDeliveriesWorkflow';
/** The workflow of one delivery, for executions already started. */
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

/** An event's deliveries: the request that committed the event and the outbox sweep name the same workflow. */
export const webhookEventWorkflowId = (eventId: string) => `whe-${eventId}`;
/** One delivery sent again (and the single-delivery workflows started before). */
export const webhookDeliveryWorkflowId = (deliveryId: string) => `whd-${deliveryId}`;

export interface WebhookDeliveriesInput {
  /** Every delivery of the event (or the one delivery sent again), in id order. */
  deliveryIds: string[];
}

/** Each delivery's outcome, by its id. */
export type WebhookDeliveriesResult = Record<string, WebhookDeliveryOutcome>;

export type WebhookDeliveriesWorkflow = (input: WebhookDeliveriesInput) => Promise<WebhookDeliveriesResult>;

/** At most this many deliveries per attempt activity; more are attempted by several at once. */
export const WEBHOOK_ATTEMPTS_PER_ACTIVITY = 20;

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
 * again. `skipped`: the delivery or its endpoint is gone, or the endpoint is disabled. A delivery
 * no longer pending is not sent again, and answers what its row records (`delivered` or `failed`).
 */
export type WebhookAttemptResult = { outcome: 'delivered' | 'failed' | 'gone' | 'skipped' } | { outcome: 'retry'; nextDelayMs: number };

export type WebhookDeliveryOutcome = 'delivered' | 'failed' | 'gone' | 'skipped';

export interface WebhookAttemptsInput {
  attempts: WebhookAttemptInput[];
}

/** One result per attempt, in the order of the input. */
export type WebhookAttemptsResult = WebhookAttemptResult[];

export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<WebhookDeliveryOutcome>;
