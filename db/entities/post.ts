import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

export const POST_STATUSES = ['scheduled', 'publishing', 'published', 'failed'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

export const Post = defineEntity({
  name: 'Post',
  tableName: 'posts',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    status: p.enum(POST_STATUSES),
    content: p.text(),
    contentByPlatform: p.json<Record<string, string>>().default('{}'),
    reddit: p.json<{ subreddit: string; title: string }>().nullable(),
    mediaIds: p.json<string[]>().default('[]'),
    /** `api` or `app` (web application). */
    source: p.string().length(8),
    /** The key that created it (null for the web application). */
    apiKeyId: p.string().nullable(),
    scheduledAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    workflowId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [
    { properties: ['organization', 'scheduledAt', 'id'] },
    { properties: ['organization', 'status', 'scheduledAt', 'id'] },
  ],
});
export type IPost = InferEntity<typeof Post>;
