// Payloads shared by the post workflow, its activities and the API (plain data, no I/O).
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

export const postWorkflowId = (postId: string) => `post-${postId}`;

/** Failure types of publish activities (strings, never class names: DESIGN.md §5). */
export const FAILURE = {
  reauth: 'ReauthRequired',
  permanent: 'PermanentPublishError',
  transient: 'TransientPublishError',
  notVisible: 'PostNotVisible',
  notScheduled: 'PostNotScheduled',
} as const;

/** The task queue a platform's publish activities run on (see worker/index.ts). */
export const platformTaskQueue = (taskQueue: string, platform: string) => `${taskQueue}-publish-${platform.toLowerCase()}`;
