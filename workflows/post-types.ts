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
}

/** An edit, already validated by the API against the channels' rules. */
export interface PostEdit {
  content?: string;
  contentByPlatform?: Record<string, string>;
  publishAt?: string;
  mediaIds?: string[];
  /** Replaces the target channels (their draft post_channels rows); added later: optional. */
  channelIds?: string[];
  reddit?: { subreddit: string; title: string };
  /** The resulting text per channel id. */
  channelContent: Record<string, string>;
  /** The thread and first comment as asked for (null removes them); optional, as edits of older code carry none. */
  thread?: { content: string; mediaIds: string[] }[] | null;
  threadByPlatform?: Record<string, { content: string; mediaIds: string[] }[]>;
  firstComment?: { content: string } | null;
  /** Per-platform post options (platforms/options.ts), replacing the post's; optional, as edits of older code carry none. */
  options?: Record<string, Record<string, unknown>>;
  /** Each channel's follow-up items after the edit (domain/posts/thread.ts), when they change: they replace the channel's rows. */
  channelItems?: Record<string, { position: number; kind: 'reply' | 'comment'; content: string; mediaIds: string[] }[]>;
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
}

/** How long a failed post's workflow waits for a retry (Update or Signal) before it ends; a later retry starts a new run. */
export const RETRY_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** The workflow type (workflows/post.ts, registered by its export in workflows/index.ts). */
export const POST_WORKFLOW_TYPE = 'postWorkflow';
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
} as const;

/** The task queue a platform's publish activities run on (see worker/index.ts). */
export const platformTaskQueue = (taskQueue: string, platform: string) => `${taskQueue}-publish-${platform.toLowerCase()}`;
