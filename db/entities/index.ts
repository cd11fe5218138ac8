export * from './organization.ts';
export * from './api-key.ts';
export * from './channel.ts';
export * from './post.ts';
export * from './post-channel.ts';
export * from './media-item.ts';
export * from './usage-counter.ts';
export * from './idempotency-key.ts';
export * from './user.ts';
export * from './session.ts';
export * from './oauth-grant.ts';
export * from './webhook.ts';
export * from './queue-slot.ts';
export * from './series.ts';
export * from './post-metric.ts';
export * from './post-channel-item.ts';
export * from './membership.ts';
export * from './invitation.ts';
export * from './audit-event.ts';
export * from './feed.ts';
export * from './preview-link.ts';
export * from './comment.ts';
export * from './tag.ts';
export * from './draft.ts';
export * from './tracked-link.ts';

import { Organization } from './organization.ts';
import { ApiKey } from './api-key.ts';
import { Channel } from './channel.ts';
import { Post } from './post.ts';
import { PostChannel } from './post-channel.ts';
import { MediaItem } from './media-item.ts';
import { UsageCounter } from './usage-counter.ts';
import { IdempotencyKey } from './idempotency-key.ts';
import { User } from './user.ts';
import { Session } from './session.ts';
import { OAuthGrant } from './oauth-grant.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from './webhook.ts';
import { QueueClaim, QueueSlot } from './queue-slot.ts';
import { Series } from './series.ts';
import { PostMetric } from './post-metric.ts';
import { PostChannelItem } from './post-channel-item.ts';
import { Membership } from './membership.ts';
import { Invitation } from './invitation.ts';
import { AuditEvent } from './audit-event.ts';
import { Feed, FeedItem } from './feed.ts';
import { PreviewLink } from './preview-link.ts';
import { Comment, CommentFollow, CommentReply } from './comment.ts';
import { PostTag, Tag } from './tag.ts';
import { Draft } from './draft.ts';
import { LinkClick, TrackedLink } from './tracked-link.ts';

export const ALL_ENTITIES = [
  Organization,
  ApiKey,
  Channel,
  Post,
  PostChannel,
  MediaItem,
  UsageCounter,
  IdempotencyKey,
  User,
  Session,
  OAuthGrant,
  WebhookEndpoint,
  WebhookEvent,
  WebhookDelivery,
  QueueSlot,
  QueueClaim,
  Series,
  PostMetric,
  PostChannelItem,
  Membership,
  Invitation,
  AuditEvent,
  Feed,
  FeedItem,
  PreviewLink,
  Comment,
  CommentFollow,
  CommentReply,
  Tag,
  PostTag,
  Draft,
  TrackedLink,
  LinkClick,
];
