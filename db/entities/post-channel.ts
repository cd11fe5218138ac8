import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { Channel } from './channel.ts';
import { Post } from './post.ts';
import { CHANNEL_ERROR_CODES } from '../../workflows/publish-failure-types.ts';

export const POST_CHANNEL_STATUSES = ['draft', 'publishing', 'published', 'failed'] as const;
export type PostChannelStatus = (typeof POST_CHANNEL_STATUSES)[number];

export const PostChannel = defineEntity({
  name: 'PostChannel',
  tableName: 'post_channels',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    post: () => p.manyToOne(Post).mapToPk().deleteRule('cascade'),
    channel: () => p.manyToOne(Channel).mapToPk().deleteRule('cascade').index(),
    platform: p.enum(PLATFORMS),
    status: p.enum(POST_CHANNEL_STATUSES).default('draft'),
    content: p.text(),
    platformPostId: p.string().nullable(),
    url: p.text().nullable(),
    publishedAt: p.datetime().nullable(),
    error: p.text().nullable(),
    /** The failure's class (workflows/publish-failure-types.ts); null unless failed, and on rows failed before it existed. */
    errorCode: p.enum(CHANNEL_ERROR_CODES).nullable(),
    /** Whether a retry may succeed; null with errorCode. */
    retryable: p.boolean().nullable(),
    attempts: p.integer().default(0),
    /** The next scheduled metrics reading (domain/analytics/metrics.ts): its step and when it is due; null: not followed. */
    metricsStep: p.integer().default(0),
    metricsNextAt: p.datetime().nullable(),
    /** Why the last reading got no figures (kept until one does). */
    metricsError: p.text().nullable(),
  },
  uniques: [{ properties: ['post', 'channel'] }],
  /** Added by Migration20261121060000_limits (a channel's posts by creation time). */
  indexes: [
    { properties: ['channel', 'createdAt'] },
    { properties: ['metricsNextAt'] },
    // The comments sweep finds the published channel posts it does not follow yet (Migration20261129050000_comments).
    {
      name: 'post_channels_published_index',
      expression: 'create index "post_channels_published_index" on "post_channels" ("published_at") where "status" = \'published\'',
    },
    // duplicate_post finds a channel's texts by their key (Migration20261128230000_post_text_key).
    {
      name: 'post_channels_channel_id_text_key_index',
      expression:
        'create index "post_channels_channel_id_text_key_index" on "post_channels" ("channel_id", md5(post_text_normalized("content")))',
    },
  ],
});
export type IPostChannel = InferEntity<typeof PostChannel>;
