// The bare workflow's contract (bench/bare/workflow.ts): the Temporal ceiling the benchmarks set
// the service's figures beside. Plain data, deterministic, so the bundle may hold it.

/** A bare workflow's input: what it publishes, when, and to which per-platform task queue. */
export interface BareInput {
  /** The status text sent to the fake (and its Idempotency-Key). */
  text: string;
  /** ISO 8601: the workflow sleeps until then. */
  publishAt: string;
  /** The post workflow's per-platform task queue for this platform (platformTaskQueue). */
  publishQueue: string;
}

/** The bare worker's activities (bench/bare-worker.ts). */
export interface BareActivities {
  /** Trivial local steps, where the post workflow runs its Postgres steps. */
  confirm(text: string): Promise<void>;
  begin(text: string): Promise<void>;
  /** POSTs the status to the fake Mastodon, on the per-platform task queue. */
  publish(input: BareInput): Promise<void>;
}

export const BARE_WORKFLOW_TYPE = 'bareWorkflow';
export type BareWorkflow = (input: BareInput) => Promise<void>;
/** A workflow type no worker registers: its starts measure the Temporal server's start alone. */
export const UNRUN_WORKFLOW_TYPE = 'unrunWorkflow';
