// The API's schemas, by resource (api/schemas/): request values and shape helpers in
// primitives.ts, the error body in errors.ts, each resource's answers in its own module. Elysia
// checks handlers against them and they document the API: COMPONENT_SCHEMAS are the OpenAPI
// document's named components (api/openapi/document.ts), each a `$ref` wherever it appears.
import type { TSchema } from '@sinclair/typebox';
import { KeyMemberSchema, MeSchema } from './schemas/account.ts';
import { AnalyticsSummarySchema, BestTimesSchema, PostAnalyticsSchema } from './schemas/analytics.ts';
import { AuditEventListSchema, AuditEventSchema } from './schemas/audit.ts';
import { ChannelCapabilitiesSchema, ChannelListSchema, ChannelSchema } from './schemas/channels.ts';
import { ErrorSchema } from './schemas/errors.ts';
import { CommentListSchema, CommentSchema, ConversationSchema, ReplyListSchema, ReplySchema } from './schemas/comments.ts';
import { DraftListSchema, DraftSchema, ImportResultSchema, ImportRowSchema } from './schemas/drafts.ts';
import { FeedFilterSchema, FeedItemListSchema, FeedItemSchema, FeedListSchema, FeedSchema } from './schemas/feeds.ts';
import { GeneratedAltTextSchema, GeneratedDraftsSchema } from './schemas/generate.ts';
import { MediaItemSchema, UploadInstructionsSchema, UploadResponseSchema } from './schemas/media.ts';
import {
  ActorSchema,
  ApprovalSchema,
  BulkResultSchema,
  BulkRowSchema,
  PostChannelSchema,
  PostItemSchema,
  PostListSchema,
  PostMediaSchema,
  PostSchema,
  PostValidationSchema,
} from './schemas/posts.ts';
import { QueueSchema, QueueSlotSchema } from './schemas/queues.ts';
import { SeriesListSchema, SeriesRepeatSchema, SeriesSchema } from './schemas/series.ts';
import { TagListSchema, TagSchema } from './schemas/tags.ts';
import {
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookSecretResponseSchema,
  WebhookTestSchema,
} from './schemas/webhooks.ts';
export * from './schemas/primitives.ts';
export * from './schemas/errors.ts';
export * from './schemas/account.ts';
export * from './schemas/channels.ts';
export * from './schemas/posts.ts';
export * from './schemas/media.ts';
export * from './schemas/webhooks.ts';
export * from './schemas/generate.ts';
export * from './schemas/queues.ts';
export * from './schemas/series.ts';
export * from './schemas/analytics.ts';
export * from './schemas/audit.ts';
export * from './schemas/feeds.ts';
export * from './schemas/comments.ts';
export * from './schemas/tags.ts';
export * from './schemas/drafts.ts';

export const COMPONENT_SCHEMAS: Record<string, TSchema> = {
  Error: ErrorSchema,
  Me: MeSchema,
  Channel: ChannelSchema,
  ChannelList: ChannelListSchema,
  PostItem: PostItemSchema,
  PostChannel: PostChannelSchema,
  PostMedia: PostMediaSchema,
  Post: PostSchema,
  PostList: PostListSchema,
  PostValidation: PostValidationSchema,
  MediaItem: MediaItemSchema,
  UploadInstructions: UploadInstructionsSchema,
  UploadResponse: UploadResponseSchema,
  WebhookEndpoint: WebhookEndpointSchema,
  WebhookEndpointList: WebhookEndpointListSchema,
  WebhookSecretResponse: WebhookSecretResponseSchema,
  WebhookDelivery: WebhookDeliverySchema,
  WebhookDeliveryList: WebhookDeliveryListSchema,
  WebhookTest: WebhookTestSchema,
  QueueSlot: QueueSlotSchema,
  Queue: QueueSchema,
  SeriesRepeat: SeriesRepeatSchema,
  Series: SeriesSchema,
  SeriesList: SeriesListSchema,
  GeneratedDrafts: GeneratedDraftsSchema,
  GeneratedAltText: GeneratedAltTextSchema,
  PostAnalytics: PostAnalyticsSchema,
  AnalyticsSummary: AnalyticsSummarySchema,
  BestTimes: BestTimesSchema,
  ChannelCapabilities: ChannelCapabilitiesSchema,
  KeyMember: KeyMemberSchema,
  AuditEvent: AuditEventSchema,
  AuditEventList: AuditEventListSchema,
  Actor: ActorSchema,
  BulkRow: BulkRowSchema,
  BulkResult: BulkResultSchema,
  ImportRow: ImportRowSchema,
  ImportResult: ImportResultSchema,
  Approval: ApprovalSchema,
  FeedFilter: FeedFilterSchema,
  Feed: FeedSchema,
  Comment: CommentSchema,
  CommentList: CommentListSchema,
  Conversation: ConversationSchema,
  Reply: ReplySchema,
  Draft: DraftSchema,
  DraftList: DraftListSchema,
  ReplyList: ReplyListSchema,
  FeedList: FeedListSchema,
  FeedItem: FeedItemSchema,
  FeedItemList: FeedItemListSchema,
  Tag: TagSchema,
  TagList: TagListSchema,
};
