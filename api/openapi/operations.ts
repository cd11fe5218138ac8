// Every /v1 operation's document entry, gathered from the route files that declare them: each
// api/routes/*.ts holds its own table (POST_OPERATIONS, …) beside the routes that attach its
// entries with `operation:`, so a route and its words change together. The routes never import
// this aggregate (it imports them); the tests read it (test/openapi.test.ts holds every entry to
// exactly one route, of its own file).
import { ANALYTICS_OPERATIONS } from '../routes/analytics.ts';
import { AUDIT_OPERATIONS } from '../routes/audit.ts';
import { CHANNEL_OPERATIONS } from '../routes/channels.ts';
import { COMMENT_OPERATIONS } from '../routes/comments.ts';
import { DRAFT_OPERATIONS } from '../routes/drafts.ts';
import { FEED_OPERATIONS } from '../routes/feeds.ts';
import { GENERATE_OPERATIONS } from '../routes/generate.ts';
import { ME_OPERATIONS } from '../routes/me.ts';
import { MEDIA_OPERATIONS } from '../routes/media.ts';
import { POST_OPERATIONS } from '../routes/posts.ts';
import { QUEUE_OPERATIONS } from '../routes/queues.ts';
import { SERIES_OPERATIONS } from '../routes/series.ts';
import { TAG_OPERATIONS } from '../routes/tags.ts';
import { WEBHOOK_OPERATIONS } from '../routes/webhooks.ts';

export const OPERATIONS = {
  ...ME_OPERATIONS,
  ...CHANNEL_OPERATIONS,
  ...POST_OPERATIONS,
  ...DRAFT_OPERATIONS,
  ...MEDIA_OPERATIONS,
  ...WEBHOOK_OPERATIONS,
  ...QUEUE_OPERATIONS,
  ...SERIES_OPERATIONS,
  ...TAG_OPERATIONS,
  ...FEED_OPERATIONS,
  ...COMMENT_OPERATIONS,
  ...GENERATE_OPERATIONS,
  ...ANALYTICS_OPERATIONS,
  ...AUDIT_OPERATIONS,
};
