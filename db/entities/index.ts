export * from './organization.ts';
export * from './api-key.ts';
export * from './channel.ts';
export * from './post.ts';
export * from './post-channel.ts';
export * from './media-item.ts';
export * from './usage-counter.ts';
export * from './idempotency-key.ts';

import { Organization } from './organization.ts';
import { ApiKey } from './api-key.ts';
import { Channel } from './channel.ts';
import { Post } from './post.ts';
import { PostChannel } from './post-channel.ts';
import { MediaItem } from './media-item.ts';
import { UsageCounter } from './usage-counter.ts';
import { IdempotencyKey } from './idempotency-key.ts';

export const ALL_ENTITIES = [Organization, ApiKey, Channel, Post, PostChannel, MediaItem, UsageCounter, IdempotencyKey];
