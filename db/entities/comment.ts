import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Channel } from './channel.ts';
import { Organization } from './organization.ts';
import { Post } from './post.ts';
import { PostChannel } from './post-channel.ts';
import { User } from './user.ts';
import type { Actor, PostApproval } from './post.ts';
import { CHANNEL_ERROR_CODES } from '../../workflows/publish-failure-types.ts';

// What people answered under published posts (domain/inbox/collection.ts states when they are
// read): one row per comment, stored once per (channel, platform comment id) however often it is
// read; and per published channel post, when its comments are read next.

/** unread: new; read, replied, hidden: what the organization did about it. */
export const COMMENT_STATUSES = ['unread', 'read', 'replied', 'hidden'] as const;
export type CommentStatus = (typeof COMMENT_STATUSES)[number];

export const Comment = defineEntity({
  name: 'Comment',
  tableName: 'comments',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    post: () => p.manyToOne(Post).mapToPk().deleteRule('cascade').index(),
    postChannel: () => p.manyToOne(PostChannel).mapToPk().deleteRule('cascade').index(),
    channel: () => p.manyToOne(Channel).mapToPk().deleteRule('cascade'),
    platformCommentId: p.text(),
    /** The platform id of what it answers: the post, one of its thread items, or another comment. */
    parentPlatformId: p.text(),
    authorName: p.text().nullable(),
    authorHandle: p.text().nullable(),
    authorAvatarUrl: p.text().nullable(),
    authorProfileUrl: p.text().nullable(),
    text: p.text(),
    /** When the platform says it was written. */
    writtenAt: p.datetime(),
    url: p.text().nullable(),
    /** Written by the channel's own account. */
    ours: p.boolean(),
    status: p.enum(COMMENT_STATUSES).default('unread'),
    /** The last hide or show-again asked for, and how it went (domain/inbox/moderation.ts); null: none asked. */
    moderation: p.json<CommentModeration>().nullable(),
    assignee: () => p.manyToOne(User).mapToPk().nullable().deleteRule('set null').fieldName('assignee_user_id'),
  },
  uniques: [{ properties: ['channel', 'platformCommentId'] }],
  // The inbox: an organization's comments, newest first.
  indexes: [{ properties: ['organization', 'writtenAt', 'id'] }],
});
export type IComment = InferEntity<typeof Comment>;

/** A published channel post whose comments are followed: when they are read next (null: no longer). */
export const CommentFollow = defineEntity({
  name: 'CommentFollow',
  tableName: 'comment_follows',
  properties: {
    postChannel: () => p.manyToOne(PostChannel).mapToPk().deleteRule('cascade').primary(),
    /** Moved ahead by the sweep that claims it, while it reads. */
    nextAt: p.datetime().nullable(),
    lastReadAt: p.datetime().nullable(),
    /** Why the last read failed; null after one that did not. */
    error: p.text().nullable(),
  },
  indexes: [
    {
      name: 'comment_follows_due_index',
      expression: 'create index "comment_follows_due_index" on "comment_follows" ("next_at") where "next_at" is not null',
    },
  ],
});
export type ICommentFollow = InferEntity<typeof CommentFollow>;

/** A hide (or show again) of a comment, asked for through the API, and its outcome. */
export interface CommentModeration {
  action: 'hide' | 'unhide';
  status: 'pending' | 'done' | 'failed';
  /** When it was asked for (ISO 8601). */
  requestedAt: string;
  error: string | null;
  errorCode: (typeof CHANNEL_ERROR_CODES)[number] | null;
}

/**
 * A reply's life: pending_approval (a contributor's, waiting for a decision), publishing,
 * published or failed (with its reason); rejected (a decision); deleting and deleted (ours,
 * removed from the platform; one never published is deleted here only).
 */
export const REPLY_STATUSES = ['pending_approval', 'publishing', 'published', 'failed', 'rejected', 'deleting', 'deleted'] as const;
export type ReplyStatus = (typeof REPLY_STATUSES)[number];

/** A reply to a comment, sent through the service (domain/inbox/replies.ts): its row owns its workflow (domain/workflow-starts.ts). */
export const CommentReply = defineEntity({
  name: 'CommentReply',
  tableName: 'comment_replies',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    /** The comment answered. */
    comment: () => p.manyToOne(Comment).mapToPk().deleteRule('cascade').index(),
    channel: () => p.manyToOne(Channel).mapToPk().deleteRule('cascade'),
    content: p.text(),
    status: p.enum(REPLY_STATUSES),
    /** A contributor's reply waits for a decision as their posts do (domain/posts/approval.ts); null: it needs none. */
    approval: p.json<PostApproval>().nullable(),
    createdBy: p.json<Actor>(),
    platformReplyId: p.text().nullable(),
    url: p.text().nullable(),
    publishedAt: p.datetime().nullable(),
    /** Why it failed (or why its delete did). */
    error: p.text().nullable(),
    errorCode: p.enum(CHANNEL_ERROR_CODES).nullable(),
    retryable: p.boolean().nullable(),
    attempts: p.integer().default(0),
    workflowPending: p.boolean().default(true),
  },
  indexes: [
    {
      // The start reconciler's look-up (domain/workflow-starts.ts).
      name: 'comment_replies_pending_index',
      expression: 'create index "comment_replies_pending_index" on "comment_replies" ("created_at") where "workflow_pending"',
    },
  ],
});
export type ICommentReply = InferEntity<typeof CommentReply>;
