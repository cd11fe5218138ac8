import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import type { PlatformOptions } from '../../platforms/options.ts';
import type { AuditActorType } from './audit-event.ts';
import type { LinkChoice } from './tracked-link.ts';

export const POST_STATUSES = ['scheduled', 'publishing', 'published', 'failed'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];
/** Where a post was created: `api` through the interface, `app` in the web application. */
export const POST_SOURCES = ['api', 'app'] as const;
export type PostSource = (typeof POST_SOURCES)[number];

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Who did something (audit-event.ts names the types): an approval's requester and decider, an audit event's actor. */
export interface Actor {
  type: AuditActorType;
  /** The user id, the key id; null where the actor has none (a reviewer, an operator). */
  id: string | null;
  /** The member's e-mail, the key's name, the name a reviewer gave. */
  name: string;
}

/** A post's approval (domain/posts/approval.ts); a post that needs none has null. */
export interface PostApproval {
  status: ApprovalStatus;
  requestedBy: Actor;
  requestedAt: string;
  decidedBy: Actor | null;
  decidedAt: string | null;
  comment: string | null;
}

/** An item of a thread as asked for: its text and attachments. */
export interface ThreadItem {
  content: string;
  mediaIds: string[];
}

export const Post = defineEntity({
  name: 'Post',
  tableName: 'posts',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    status: p.enum(POST_STATUSES),
    content: p.text(),
    contentByPlatform: p.json<Record<string, string>>().default('{}'),
    reddit: p.json<{ subreddit: string; title: string }>().nullable(),
    mediaIds: p.json<string[]>().default('[]'),
    /** Follow-up items as asked for (domain/posts/thread.ts); each channel's own are post_channel_items rows. */
    thread: p.json<ThreadItem[]>().nullable(),
    threadByPlatform: p.json<Record<string, ThreadItem[]>>().default('{}'),
    firstComment: p.json<{ content: string }>().nullable(),
    /** Per-platform post options (platforms/options.ts), by lower-case platform name. */
    options: p.json<PlatformOptions>().default('{}'),
    /** Short links and UTM parameters at publish (domain/links/choice.ts), as decided when the post was created or edited. */
    links: p.json<LinkChoice>().defaultRaw(`'{"shorten":false}'`),
    source: p.enum(POST_SOURCES),
    /** The key that created it (null for the web application). */
    apiKeyId: p.string().nullable(),
    scheduledAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    workflowId: p.string().nullable(),
    /** Set by DELETE /v1/posts/{id}: the row stays (audit) but the API, the web app and the counts skip it. */
    deletedAt: p.datetime().nullable(),
    /** The series this post is an occurrence of; null for a post of its own. */
    seriesId: p.string().nullable().index(),
    /**
     * Committed, its workflow not known to be started yet (domain/posts/create.ts commits the
     * row first, then starts the workflow, then clears this). The create reconciler
     * (workflows/post-reconciler.ts) starts any post left with it set.
     */
    workflowPending: p.boolean().default(false),
    /** The last reading asked for through POST /v1/posts/{id}/analytics/refresh (domain/analytics/refresh.ts). */
    metricsRefreshedAt: p.datetime().nullable(),
    /** Null: published without approval. */
    approval: p.json<PostApproval>().nullable(),
  },
  indexes: [
    { properties: ['organization', 'scheduledAt', 'id'] },
    { properties: ['organization', 'status', 'scheduledAt', 'id'] },
    // Partial: the reconciler's look-up stays small however many posts there are (Migration20261124120000).
    // Partial: the Approvals page reads the scheduled posts that need approval (Migration20261127170000).
    {
      name: 'posts_approval_pending_index',
      expression:
        'create index "posts_approval_pending_index" on "posts" ("organization_id", "scheduled_at") where "approval" is not null and "status" = \'scheduled\'',
    },
    {
      name: 'posts_workflow_pending_index',
      expression: 'create index "posts_workflow_pending_index" on "posts" ("updated_at") where "workflow_pending"',
    },
  ],
});
export type IPost = InferEntity<typeof Post>;
