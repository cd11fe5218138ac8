// The comments sweep's contract (domain/inbox/collection.ts): a Temporal Schedule
// (worker/schedules.ts) runs this workflow every minute; its activity follows what was published
// and reads the comments that fell due (activities/comments.ts). The state is in Postgres
// (comment_follows), not in a workflow per post. Plain data only; the names are durable (the
// schedule and recorded histories carry them) — never rename.

/** The workflow type (workflows/comments-sweep.ts, registered by its export in workflows/index.ts). */
export const COMMENTS_SWEEP_WORKFLOW_TYPE = 'commentsSweepWorkflow';
/** The Temporal Schedule that runs it (worker/schedules.ts). */
export const COMMENTS_SWEEP_SCHEDULE_ID = 'postpilot-comments-sweep';

export interface CommentsSweepInput {
  /** Channel posts read per activity at most (and followed per activity at most). */
  limit: number;
  /** Activities per run at most; a run that read a full batch takes the next, the next run the rest. */
  rounds: number;
  /** Only this post, every published channel of it, now: a read asked for (POST /v1/posts/{id}/comments/refresh). */
  postId?: string;
}

/** The workflow id of a post's asked-for read: one at a time per post. */
export const commentsRefreshWorkflowId = (postId: string) => `comments-refresh-${postId}`;

export interface CommentsSweepResult {
  /** Reads made, reads that failed (tried again later), posts no longer followed, comments stored for the first time. */
  read: number;
  failed: number;
  stopped: number;
  stored: number;
}

export type CommentsSweepWorkflow = (input: CommentsSweepInput) => Promise<CommentsSweepResult>;

export const COMMENTS_SWEEP_EVERY = '1 minute';
export const COMMENTS_SWEEP_INPUT: CommentsSweepInput = { limit: 200, rounds: 10 };
