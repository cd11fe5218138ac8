// The start reconciler's contract (domain/workflow-starts.ts). A post (its create or a retry), a
// series and an upload are committed first and their workflow started after; a process that dies
// in between (or a start whose answer was lost) leaves the row with workflow_pending set. A
// Temporal Schedule (worker/schedules.ts) runs this workflow every few seconds; its activity
// starts every such row marked at least `olderThanMs` ago. Plain data only.
// The names here are durable (the schedule and recorded histories carry them) — never rename.

/** The workflow type (workflows/post-reconciler.ts, registered by its export in workflows/index.ts). */
export const POST_RECONCILER_WORKFLOW_TYPE = 'postStartReconcilerWorkflow';
/** The Temporal Schedule that runs it (worker/schedules.ts). */
export const POST_RECONCILER_SCHEDULE_ID = 'postpilot-post-start-reconciler';

export interface PostReconcilerInput {
  /**
   * Only posts committed at least this long ago: the API starts its own within its Temporal
   * deadline (TEMPORAL_REQUEST_TIMEOUT_MS, 5 s by default), so the two rarely meet. Meeting is
   * harmless: each post is started under its row lock, with its workflow id as the idempotency key.
   */
  olderThanMs: number;
  /** Posts handled per run at most; the next run takes the rest. */
  limit: number;
}

export interface PostReconcilerResult {
  /** Workflows this run started. */
  started: number;
  /** Posts whose workflow already existed (the API started it; recording that was lost). */
  alreadyStarted: number;
  /** Posts no longer waiting for a workflow (deleted, or past `scheduled`): only the mark was cleared. */
  cleared: number;
}

export type PostReconcilerWorkflow = (input: PostReconcilerInput) => Promise<PostReconcilerResult>;

/** What the schedule passes: every 15 s, posts older than 10 s (twice the default API deadline). */
export const POST_RECONCILER_EVERY = '15 seconds';
export const POST_RECONCILER_INPUT: PostReconcilerInput = { olderThanMs: 10_000, limit: 200 };
