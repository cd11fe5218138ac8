// The webhook outbox sweep's contract (docs/decisions.md "Webhooks", "A row and its workflow").
// An event and its delivery rows are committed with the change they announce; the delivery
// workflows are started right after the commit. A process that dies in between leaves rows
// marked workflow_pending: a Temporal Schedule (worker/schedules.ts) runs this workflow every 30 s, and its activity starts
// the workflow of each such row older than `olderThanMs`. Plain data only. The names here are
// durable (the schedule and recorded histories carry them) — never rename.

/** The workflow type (workflows/webhook-outbox-sweep.ts, registered by its export in workflows/index.ts). */
export const WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE = 'webhookOutboxSweepWorkflow';
/** The Temporal Schedule that runs it (worker/schedules.ts). */
export const WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID = 'postpilot-webhook-outbox-sweep';

export interface WebhookOutboxSweepInput {
  /**
   * Only rows committed at least this long ago: the code that committed them starts their
   * workflows within moments. Meeting it is harmless: the workflow id `whe-<eventId>` is the
   * key, and a second run of a finished delivery finds it no longer pending and sends nothing.
   */
  olderThanMs: number;
  /** Rows handled per run at most; the next run takes the rest. */
  limit: number;
}

export interface WebhookOutboxSweepResult {
  /** Delivery workflows this run started. */
  started: number;
  /** Rows whose workflow was already running (the start was made; only its record was lost). */
  alreadyStarted: number;
}

export type WebhookOutboxSweepWorkflow = (input: WebhookOutboxSweepInput) => Promise<WebhookOutboxSweepResult>;

/** What the schedule passes: every 30 s, rows older than 10 s. */
export const WEBHOOK_OUTBOX_SWEEP_EVERY = '30 seconds';
export const WEBHOOK_OUTBOX_SWEEP_INPUT: WebhookOutboxSweepInput = { olderThanMs: 10_000, limit: 500 };
