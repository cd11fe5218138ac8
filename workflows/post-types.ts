// The post workflow's contract: its type name and signature, its Update and Query, the payloads
// and the failure types its activities throw. Imported by the workflow, its activities, the
// worker, the API and the tests (as temporalio/samples-typescript early-return/src/shared.ts);
// deterministic and plain (only @temporalio/workflow's definitions), so the bundle may hold it.
// The names here are durable: sleeping executions and recorded histories carry them — never rename.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export interface PostWorkflowInput {
  postId: string;
  organizationId: string;
  /** ISO 8601; null = publish now. */
  publishAt: string | null;
}

/** An edit, already validated by the API against the channels' rules. */
export interface PostEdit {
  content?: string;
  contentByPlatform?: Record<string, string>;
  publishAt?: string;
  mediaIds?: string[];
  /** The resulting text per channel id. */
  channelContent: Record<string, string>;
}

export interface PostWorkflowState {
  phase: 'scheduled' | 'publishing' | 'done';
  publishAt: string | null;
}

/** The workflow type (workflows/post.ts, registered by its export in workflows/index.ts). */
export const POST_WORKFLOW_TYPE = 'postWorkflow';
export type PostWorkflow = (input: PostWorkflowInput) => Promise<PostWorkflowState>;

/** Refused by its validator unless the post is still scheduled (FAILURE.notScheduled). */
export const editPostUpdate = defineUpdate<PostWorkflowState, [PostEdit]>('editPost');
export const postStateQuery = defineQuery<PostWorkflowState>('state');

export const postWorkflowId = (postId: string) => `post-${postId}`;

/** Failure types (ApplicationFailure.type) of publish activities and of the edit Update (strings, never class names: DESIGN.md §5). */
export const FAILURE = {
  reauth: 'ReauthRequired',
  permanent: 'PermanentPublishError',
  transient: 'TransientPublishError',
  notVisible: 'PostNotVisible',
  notScheduled: 'PostNotScheduled',
} as const;

/** The task queue a platform's publish activities run on (see worker/index.ts). */
export const platformTaskQueue = (taskQueue: string, platform: string) => `${taskQueue}-publish-${platform.toLowerCase()}`;
