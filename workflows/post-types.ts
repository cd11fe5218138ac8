// The post workflow's contract: its type name and signature, its Update and Query, the payloads
// and the failure types its activities throw. Imported by the workflow, its activities, the
// worker, the API and the tests (as temporalio/samples-typescript early-return/src/shared.ts);
// deterministic and plain (only @temporalio/workflow's definitions), so the bundle may hold it.
// The names here are durable: sleeping executions and recorded histories carry them — never rename.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export interface PostWorkflowInput {
  postId: string;
  organizationId: string;
  /** ISO 8601; null = publish now. */
  publishAt: string | null;
  /**
   * A retry of a failed post whose earlier run has closed (domain/posts/lifecycle.ts starts a new
   * run under the same workflow id): no sleep, straight to publishing the channels not published.
   */
  retry?: boolean;
  /** 'pending': the post waits for an approve decision before it is published (domain/posts/approval.ts); absent: it needs none. */
  approval?: 'pending';
}

/** Who decided, or asked (the shape of db/entities/post.ts's Actor; its types are audit-event.ts's). */
export interface ApprovalActor {
  type: 'member' | 'api_key' | 'reviewer' | 'operator' | 'invitee' | 'system';
  id: string | null;
  name: string;
}

/** A post's approval as written to its row. */
export interface ApprovalRecord {
  status: 'pending' | 'approved' | 'rejected';
  requestedBy: ApprovalActor;
  requestedAt: string;
  decidedBy: ApprovalActor | null;
  decidedAt: string | null;
  comment: string | null;
}

/** The decideApproval Update's input. */
export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  by: ApprovalActor;
  /** ISO 8601: when it was decided (the API's clock). */
  at: string;
  comment: string | null;
}

/**
 * An edit, already validated by the API against the channels' rules: the fields of the post's
 * content it changes, by name (domain/posts/content.ts; absent: unchanged; the workflow hands
 * them to applyPostEdit unread, so a new field needs no change here), and what follows from them.
 */
export interface PostEdit {
  [contentField: string]: unknown;
  content?: string;
  contentByPlatform?: Record<string, string>;
  publishAt?: string;
  mediaIds?: string[];
  /** Replaces the target channels (their draft post_channels rows); added later: optional. */
  channelIds?: string[];
  /** null: removed. */
  reddit?: { subreddit: string; title: string } | null;
  /** The resulting text per channel id. */
  channelContent: Record<string, string>;
  /** The thread and first comment as asked for (null removes them); optional, as edits of older code carry none. */
  thread?: { content: string; mediaIds: string[] }[] | null;
  threadByPlatform?: Record<string, { content: string; mediaIds: string[] }[]>;
  firstComment?: { content: string } | null;
  /** Per-platform post options (platforms/options.ts), replacing the post's; optional, as edits of older code carry none. */
  options?: object;
  /** Each channel's follow-up items after the edit (domain/posts/thread.ts), when they change: they replace the channel's rows. */
  channelItems?: Record<string, { position: number; kind: 'reply' | 'comment'; content: string; mediaIds: string[] }[]>;
  /** The edit asks for approval again (an edit by someone whose posts need it): the post waits for a decision. */
  approval?: ApprovalRecord;
}

/** A channel to publish: its platform's task queue, and how many follow-up items follow the post (absent: none). */
export interface PublishTarget {
  channelId: string;
  platform: string;
  followUps?: number;
}

export interface PostWorkflowState {
  /**
   * 'failed': publishing ended with a failed channel and the workflow waits for a retry
   * (RETRY_WINDOW_MS); 'cancelled': deleted before publishing (the workflow then ends).
   */
  phase: 'scheduled' | 'publishing' | 'failed' | 'cancelled' | 'done';
  publishAt: string | null;
  /** The post's approval as the workflow knows it; absent: it needs none. */
  approval?: 'pending' | 'approved' | 'rejected';
}

/** How long a failed post's workflow waits for a retry (Update or Signal) before it ends; a later retry starts a new run. */
export const RETRY_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A post whose approval has not come by its publishAt is published on approval up to this long
 * after it; past it, its channels fail with not_approved (docs/decisions.md "Approval").
 */
export const APPROVAL_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The workflow type new posts start with (workflows/post.ts, registered by its export in
 * workflows/index.ts): postWorkflow's code with every patch taken, no patch markers.
 */
export const POST_WORKFLOW_TYPE = 'postWorkflowV2';
/** The type of executions started before POST_WORKFLOW_TYPE; still run (and replayed) until none is left. */
export const PATCHED_POST_WORKFLOW_TYPE = 'postWorkflow';
export type PostWorkflow = (input: PostWorkflowInput) => Promise<PostWorkflowState>;

/** Refused by its validator unless the post is still scheduled (FAILURE.notScheduled). */
export const editPostUpdate = defineUpdate<PostWorkflowState, [PostEdit]>('editPost');
export const postStateQuery = defineQuery<PostWorkflowState>('state');
/**
 * Cancels (soft-deletes) the post. Refused by its validator once publishing has begun
 * (FAILURE.notScheduled) or when already cancelled (FAILURE.cancelled); accepted while scheduled
 * or while a failed post waits for a retry. The workflow ends once the post is deleted.
 */
export const cancelPostUpdate = defineUpdate<PostWorkflowState>('cancelPost');
/** Re-publishes the failed channels; refused unless the workflow waits for a retry (FAILURE.notFailed). */
export const retryPostUpdate = defineUpdate<PostWorkflowState>('retryPost');
/**
 * The same retry for operators in the Temporal web UI ("Send a Signal", name `retry`, no input):
 * ignored unless the workflow waits for a retry (its state Query says phase 'failed').
 */
export const retrySignal = defineSignal('retry');
/**
 * Approves or rejects a post waiting for approval. Refused by its validator unless the post is
 * scheduled (FAILURE.notScheduled), needs approval (FAILURE.noApproval) and the decision changes
 * it (FAILURE.alreadyDecided).
 */
export const decideApprovalUpdate = defineUpdate<PostWorkflowState, [ApprovalDecision]>('decideApproval');

export const postWorkflowId = (postId: string) => `post-${postId}`;

/** Failure types (ApplicationFailure.type) of publish activities and of the Updates (strings, never class names: DESIGN.md §5). */
export const FAILURE = {
  reauth: 'ReauthRequired',
  permanent: 'PermanentPublishError',
  transient: 'TransientPublishError',
  notVisible: 'PostNotVisible',
  notScheduled: 'PostNotScheduled',
  /** cancelPost refused: the post is already being cancelled. */
  cancelled: 'PostCancelled',
  /** retryPost refused: the workflow is not waiting for a retry (publishing, scheduled, or ending). */
  notFailed: 'PostNotFailed',
  /** decideApproval refused: the post needs no approval. */
  noApproval: 'PostNeedsNoApproval',
  /** decideApproval refused: the post already has that decision. */
  alreadyDecided: 'ApprovalAlreadyDecided',
} as const;

/** The task queue a platform's publish activities run on (see worker/index.ts). */
export const platformTaskQueue = (taskQueue: string, platform: string) => `${taskQueue}-publish-${platform.toLowerCase()}`;
