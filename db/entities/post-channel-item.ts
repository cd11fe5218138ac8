import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { PostChannel, POST_CHANNEL_STATUSES } from './post-channel.ts';
import { CHANNEL_ERROR_CODES } from '../../workflows/publish-failure-types.ts';

/** A reply in a thread (each to the item before) or a comment under the post (platforms/catalog.ts FOLLOW_UPS). */
export const FOLLOW_UP_KINDS = ['reply', 'comment'] as const;
export type FollowUpKind = (typeof FOLLOW_UP_KINDS)[number];

/**
 * A follow-up item of a channel's post (domain/posts/thread.ts): position 1, 2, … after the post
 * itself (position 0, the post_channels row). Published one after another, each recorded with its
 * platform id before the next is sent.
 */
export const PostChannelItem = defineEntity({
  name: 'PostChannelItem',
  tableName: 'post_channel_items',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    postChannel: () => p.manyToOne(PostChannel).mapToPk().deleteRule('cascade'),
    position: p.integer(),
    kind: p.enum(FOLLOW_UP_KINDS),
    content: p.text(),
    mediaIds: p.json<string[]>().default('[]'),
    status: p.enum(POST_CHANNEL_STATUSES).default('draft'),
    platformPostId: p.string().nullable(),
    url: p.text().nullable(),
    publishedAt: p.datetime().nullable(),
    error: p.text().nullable(),
    errorCode: p.enum(CHANNEL_ERROR_CODES).nullable(),
    retryable: p.boolean().nullable(),
    attempts: p.integer().default(0),
  },
  uniques: [{ properties: ['postChannel', 'position'] }],
});
export type IPostChannelItem = InferEntity<typeof PostChannelItem>;
