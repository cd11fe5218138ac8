// The contract of what the team does about a comment on its platform (domain/inbox/replies.ts,
// domain/inbox/moderation.ts): a reply published durably, waiting first for a decision when it
// needs one; a hide, a show-again, a delete of our reply. Plain data and Temporal definitions
// only; the names are durable (sleeping executions and recorded histories carry them) — never
// rename.
import { defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecision } from './post-types.ts';

/** The reply workflow's type (workflows/comment-actions.ts, registered by its export in workflows/index.ts). */
export const COMMENT_REPLY_WORKFLOW_TYPE = 'commentReplyWorkflow';
/** The type of a hide, show-again or delete. */
export const COMMENT_MODERATION_WORKFLOW_TYPE = 'commentModerationWorkflow';

export interface CommentReplyInput {
  replyId: string;
  /** The channel's platform: its publish activities run on the platform's task queue. */
  platform: string;
  /** 'pending': the reply waits for an approve decision before it is published; absent: it needs none. */
  approval?: 'pending';
}

export interface CommentReplyResult {
  status: 'published' | 'failed' | 'rejected' | 'deleted';
}

/** Approves or rejects a reply waiting for a decision; refused by its validator unless it waits (FAILURE.noApproval). */
export const decideReplyUpdate = defineUpdate<CommentReplyResult | null, [ApprovalDecision]>('decideReply');

export type CommentModerationAction = 'hide' | 'unhide' | 'delete';

export interface CommentModerationInput {
  action: CommentModerationAction;
  /** hide, unhide: the comment (`cmt_…`); delete: our reply (`rpl_…`). */
  id: string;
  platform: string;
}

export interface CommentModerationResult {
  status: 'done' | 'failed';
}

export type CommentReplyWorkflow = (input: CommentReplyInput) => Promise<CommentReplyResult>;
export type CommentModerationWorkflow = (input: CommentModerationInput) => Promise<CommentModerationResult>;

export const commentReplyWorkflowId = (replyId: string) => `comment-reply-${replyId}`;
/** One hide or show-again of a comment at a time; a delete of a reply is one per reply. */
export const commentModerationWorkflowId = (input: Pick<CommentModerationInput, 'action' | 'id'>) =>
  input.action === 'delete' ? `comment-reply-delete-${input.id}` : `comment-moderation-${input.id}`;
