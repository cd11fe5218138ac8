import { t } from 'elysia';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import { POST_STATUSES, type PostStatus } from '../../db/entities/index.ts';
import { validatePost } from '../../domain/posts/create.ts';
import { createPostOnce, createPostRequest, createPostsInBulkOnce, editPostForKey } from '../../services/post-requests.ts';
import { BULK_MAX_BODY_BYTES, BULK_MAX_ROWS } from '../../domain/posts/bulk.ts';
import { exportPostsCsv, importPostsCsv } from '../../services/post-csv.ts';
import { cancelPost, retryPost } from '../../domain/posts/lifecycle.ts';
import { getPostForKey, listPostsForKey } from '../../domain/posts/view.ts';
import { authPlugin, type Auth } from '../auth.ts';
import { APPROVAL_COMMENT_CHARS, decideApproval } from '../../domain/posts/approval.ts';
import { answerStored } from '../../http/stored-response.ts';
import type { AppDeps } from '../../http/deps.ts';
import {
  Chars,
  DateTimeInput,
  PathId,
  PostAnalyticsSchema,
  PostListSchema,
  PostSchema,
  PostValidationSchema,
  BulkResultSchema,
  ImportResultSchema,
} from '../schemas.ts';
import { postAnalyticsForKey } from '../../domain/analytics/post-analytics.ts';
import { refreshPostAnalytics } from '../../domain/analytics/refresh.ts';
import { ChannelIds, CREATE_FIELDS, EDIT_FIELDS } from '../../domain/posts/content.ts';
import { doc } from '../openapi/operation.ts';
import { DATE_TIME, PLACEMENT_FIELDS, PUBLISH_AT_BOUNDS, TAG_FILTER } from '../openapi/fields.ts';
import { bulkCreatedAny, bulkDetails } from '../audit.ts';
import { parseTimePage, TagIdParam } from '../../http/page-query.ts';
import { TIME_ZONE_CHARS } from '../../lib/zoned-time.ts';

const Queue = t.Boolean({ description: 'true: at the earliest free queue slot common to every target channel (instead of publishAt).' });

/** The body of POST /v1/posts, and of POST /v1/posts/validate (the same checks: one schema): a post's content (domain/posts/content.ts), where and when. */
const { content, ...OTHER_CONTENT } = CREATE_FIELDS;
const CreateBody = t.Object(
  { content, channelIds: ChannelIds, publishAt: t.Optional(DateTimeInput()), ...OTHER_CONTENT, queue: t.Optional(Queue) },
  { additionalProperties: false },
);

/** The body of PATCH /v1/posts/{id}: any field of a post's content, where and when. */
const PatchBody = t.Object(
  { ...EDIT_FIELDS, publishAt: t.Optional(DateTimeInput()), channelIds: t.Optional(ChannelIds) },
  { additionalProperties: false, minProperties: 1 },
);

const IdParams = t.Object({ id: PathId() });

/** A yes-or-no query parameter. */
const Flag = (description: string) =>
  t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { error: 'must be true or false', description }));

const ImportQuery = t.Object({
  drafts: Flag(
    '`true`: a row whose `status` is `draft`, or that has neither `publishAt` nor `queue`, becomes a draft (GET /drafts), its `publishAt` its intended time, its channels optional; otherwise such a row is published now.',
  ),
  mode: t.Optional(
    t.Union([t.Literal('all_or_nothing'), t.Literal('each')], { description: 'As for /posts/bulk; all_or_nothing by default.' }),
  ),
  timeZone: t.Optional(
    Chars(TIME_ZONE_CHARS, {
      min: 1,
      description: 'An IANA time zone: the zone of `publishAt` wall times in rows without a `timeZone` (the organization’s by default).',
    }),
  ),
});

const ExportQuery = t.Object({
  format: t.Optional(t.Literal('csv', { description: 'The only format: CSV.' })),
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  drafts: Flag(
    '`true`: the drafts not yet scheduled follow the posts (status `draft`, the intended time as `publishAt`; with `from` or `to`, those meant for a time in the range), so the file imports back with `drafts=true`.',
  ),
});

/** The body of POST /v1/posts/bulk: rows exactly as POST /v1/posts takes them. */
const BulkBody = t.Object(
  {
    mode: t.Optional(
      t.Union([t.Literal('all_or_nothing'), t.Literal('each')], {
        description:
          '`all_or_nothing` (the default): nothing is created unless every row can be. `each`: the rows that can be are created, the others answered with their errors.',
      }),
    ),
    posts: t.Array(CreateBody, { minItems: 1, maxItems: BULK_MAX_ROWS, description: 'Each row exactly what POST /v1/posts takes.' }),
  },
  { additionalProperties: false },
);

/** The body of approve and reject: optional, as is its comment. */
const DecisionBody = t.Optional(
  t.Object(
    { comment: t.Optional(Chars(APPROVAL_COMMENT_CHARS, { description: 'Why, for the author (shown with the approval).' })) },
    { additionalProperties: false },
  ),
);

const ListQuery = t.Object({
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  channelId: t.Optional(Chars(64, { min: 1 })),
  tagId: TagIdParam(),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  // Parsed by parseLimit: t.Numeric reports range errors with an empty field path.
  limit: t.Optional(t.String({ maxLength: 16 })),
  // Opaque (domain/posts/view.ts encodes it): base64url.
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]{0,512}$', error: 'is not a cursor returned by this API' })),
});

/** The list's schema compiled: pages answered as text (the page cache) are checked with it. */
const POST_LIST_CHECK = TypeCompiler.Compile(PostListSchema);

const POST_ID = 'Post id (`post_…`).';

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const POST_OPERATIONS = {
  createPost: doc({
    operationId: 'createPost',
    audit: { action: 'post.create', resource: 'post' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Schedule a post, or publish it now',
    description:
      'Every channel’s text is checked against its `rules` before anything is created; all rule failures are reported together in `details.fields`. Without `publishAt` the post goes out within about a minute. On each channel the post is published first, then its follow-ups one by one (`channels[].items`); a channel is `published` once every item is. Threads and first comments: `thread` items (and each `threadByPlatform` list, whose keys must each be the platform of a target channel) are replies checked one by one as posts of their channel: its `rules.maxChars` as the platform counts it, its media limits (ids of `ready` media items of the organization), an item without text needs media; at most 25 replies on a channel, the first comment included. A platform without threads refuses a thread (`threadByPlatform.<PLATFORM>: []` posts there alone); a comment platform takes `firstComment` as a comment of at most its comment limit (Facebook 8,000 characters, Instagram 2,200, LinkedIn 1,250, YouTube and Reddit 10,000), a thread platform as its first reply, and a platform with neither refuses `firstComment`.',
    errors: ['forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels, unknown tags, text over a channel’s `maxChars`, media or required fields a channel needs, an invalid Idempotency-Key',
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
    },
    success: { status: 201, description: 'The post, `scheduled`, with a `draft` entry per channel.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreatePostRequest',
      fields: PLACEMENT_FIELDS,
    },
  }),

  validatePost: doc({
    operationId: 'validatePost',
    // Not an event: checks a body: nothing is created.
    audit: null,
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Check a post without creating it',
    description:
      'Takes the body of Schedule a post and runs every check that create runs, in the same order: the channels (the organization’s, within a channel-limited key’s list, connected), each channel’s text against its `rules.maxChars` as its platform counts it, the media rules, required fields, `publishAt`’s bounds, duplicates and the plan’s limit of pending posts. Nothing is created and no workflow starts. A body create would accept answers `200` with each channel’s text and its length; any other body gets exactly the error create would give. The duplicate and plan-limit answers are advisory: create checks them again under the organization’s lock, so a post created in between can still change them. The Idempotency-Key header is ignored (nothing is created, so there is nothing to repeat). Each channel also lists the follow-up items it would get, measured. Threads and first comments: `thread` items (and each `threadByPlatform` list, whose keys must each be the platform of a target channel) are replies checked one by one as posts of their channel: its `rules.maxChars` as the platform counts it, its media limits (ids of `ready` media items of the organization), an item without text needs media; at most 25 replies on a channel, the first comment included. A platform without threads refuses a thread (`threadByPlatform.<PLATFORM>: []` posts there alone); a comment platform takes `firstComment` as a comment of at most its comment limit (Facebook 8,000 characters, Instagram 2,200, LinkedIn 1,250, YouTube and Reddit 10,000), a thread platform as its first reply, and a platform with neither refuses `firstComment`.',
    errors: ['forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels, unknown tags, text over a channel’s `maxChars`, media or required fields a channel needs',
    },
    success: { description: 'The body would be accepted: each channel’s text and its length as its platform counts it.' },
    body: {
      name: 'ValidatePostRequest',
      fields: PLACEMENT_FIELDS,
    },
  }),

  listPosts: doc({
    operationId: 'listPosts',
    tag: 'Posts',
    action: 'read',
    summary: 'List posts, newest first',
    description:
      'Newest first by `scheduledAt`, then id, with per-channel status, live URLs and errors. Keyset pagination: pass `nextCursor` as `cursor` for the next page. A channel-limited key sees only posts all of whose channels are in its list.',
    errors: ['validation_failed'],
    errorNotes: {
      validation_failed:
        'invalid query (`details.fields: [{path, message}]`): a value outside its schema, or a cursor this API did not return',
    },
    success: { description: 'A page of posts.' },
    query: {
      status: 'Only posts with this status.',
      channelId: 'Only posts that include this channel.',
      tagId: TAG_FILTER('posts'),
      from: DATE_TIME('Only posts scheduled at or after this instant.'),
      to: DATE_TIME('Only posts scheduled before this instant.'),
      limit: { description: 'Page size.', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: opaque, only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),

  getPost: doc({
    operationId: 'getPost',
    tag: 'Posts',
    action: 'read',
    summary: 'A post with its status on every channel',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The post.' },
    params: { id: POST_ID },
  }),

  getPostAnalytics: doc({
    operationId: 'getPostAnalytics',
    tag: 'Posts',
    action: 'read',
    summary: 'How a post performed on each channel',
    description:
      'Per channel the latest figures (impressions, views, likes, replies, reposts, quotes, saves, clicks), each with when it was read, and every reading. Readings are taken 1 h, 6 h, 24 h, 3 d, 7 d and 30 d after a channel published; a figure the platform does not report is `null`, never 0, and a reading that could not get a figure keeps the last one. Telegram and Discord report none.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The post’s figures per channel.' },
    params: { id: POST_ID },
  }),

  refreshPostAnalytics: doc({
    operationId: 'refreshPostAnalytics',
    // Not an event: reads the platforms’ figures anew: the post is not changed.
    audit: null,
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Read a post’s figures now',
    description:
      'Reads every published channel of the post now, besides the scheduled readings (which it does not move); the reading lands within moments in GET /posts/{id}/analytics, as a reading of its own. At most once every 5 minutes per post, so that nobody hammers a platform through it.',
    errors: ['not_found', 'conflict', 'rate_limited', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see, or a deleted one',
      conflict: 'no channel of the post has been published yet',
      rate_limited: 'the post’s figures were asked for less than 5 minutes ago (`Retry-After`, `details.resetsAt`)',
    },
    success: { status: 202, description: 'The post’s figures as they are now; the new reading follows.' },
    params: { id: POST_ID },
  }),

  updatePost: doc({
    operationId: 'updatePost',
    audit: { action: 'post.update', resource: 'post' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Edit a scheduled post',
    description:
      'Changes the text, the per-platform text, the publish time, the media, the target channels, the Reddit fields or the tags of a post that is still `scheduled`; give at least one field. Once it is publishing or done: `409 conflict`, but for an edit of `tagIds` alone, which any post takes (tags are not published). The resulting post is checked against its channels’ rules as on create (with the new channel set, when `channelIds` is given). `thread`, `threadByPlatform` and `firstComment` replace the follow-ups (null removes them). Threads and first comments: `thread` items (and each `threadByPlatform` list, whose keys must each be the platform of a target channel) are replies checked one by one as posts of their channel: its `rules.maxChars` as the platform counts it, its media limits (ids of `ready` media items of the organization), an item without text needs media; at most 25 replies on a channel, the first comment included. A platform without threads refuses a thread (`threadByPlatform.<PLATFORM>: []` posts there alone); a comment platform takes `firstComment` as a comment of at most its comment limit (Facebook 8,000 characters, Instagram 2,200, LinkedIn 1,250, YouTube and Reddit 10,000), a thread platform as its first reply, and a platform with neither refuses `firstComment`.',
    errors: ['not_found', 'forbidden_scope', 'reauth_required', 'conflict', 'duplicate_post', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and `channelIds` names another (`details.channelIds`)',
      reauth_required: 'a channel added by `channelIds` must be reconnected first (`details.channelIds`)',
      conflict: 'the post is no longer `scheduled` (`details.status`), and the edit gives more than `tagIds`',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels added, unknown tags, text over a channel’s `maxChars`, media or required fields a channel needs',
    },
    success: { description: 'The updated post.' },
    temporal: true,
    params: { id: POST_ID },
    body: {
      name: 'UpdatePostRequest',
      fields: {
        content: 'New default text. On each of the post’s channels it must fit the channel’s `rules.maxChars`; an empty text needs media.',
        publishAt: DATE_TIME(`New publish time, with an offset: ${PUBLISH_AT_BOUNDS}.`),
        contentByPlatform:
          'Replaces the per-platform texts (upper-case platform name → text). Each key must be the platform of a target channel of the post.',
        mediaIds:
          'Replaces the attached media: `ready` media items of the organization, in order. Each platform’s media limits apply, as on create.',
        channelIds:
          'Replaces the target channels: ids of channels of the organization, 1 to 50, no repeats. A channel the post keeps stays as it is; an added one must be usable as on create (unknown or disabled `422`, outside a channel-limited key’s list `403`, to reconnect `409 reauth_required`); a removed one gets nothing. Per-platform texts of platforms no longer targeted are dropped unless `contentByPlatform` is given too.',
        reddit: 'Subreddit and title; required when the post targets a REDDIT channel and has none yet.',
        tagIds:
          'Replaces the post’s tags (`[]`: none): tags of the organization (ids from GET /tags), no repeats, at most 20; one that is not the organization’s is `422` at `tagIds`. Given alone, it takes a post of any status.',
      },
    },
  }),

  deletePost: doc({
    operationId: 'deletePost',
    audit: { action: 'post.delete', resource: 'post' },
    tag: 'Posts',
    action: 'posts.publish',
    summary: 'Cancel a scheduled post, or remove a post from the service',
    description:
      'A `scheduled` post is cancelled through its workflow: it is never published, even if its time is now (once publishing has begun: `409 conflict`). A `published` or `failed` post is only removed from this service (lists, the calendar, the counts); the posts already live on the platforms stay there — delete those on the platform. The record is kept for audit but is gone from the API: afterwards GET, PATCH, retry and a second DELETE answer `404`.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see (a channel outside its list), or one already deleted',
      conflict: 'the post is being published (`details.status`: `publishing`)',
    },
    success: { status: 204, description: 'Cancelled or removed; no body.' },
    temporal: true,
    params: { id: POST_ID },
  }),

  createPostsInBulk: doc({
    operationId: 'createPostsInBulk',
    audit: { action: 'post.bulk_create', resource: 'post', detailsOf: bulkDetails, changed: bulkCreatedAny },
    maxBodyBytes: BULK_MAX_BODY_BYTES,
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Schedule many posts in one request',
    description:
      'Up to 500 rows, each exactly the body of Schedule a post, decided in their order as if created one after another: the plan’s pending-post limit, duplicates (earlier rows of the batch included) and queue slots count the rows before. `mode: all_or_nothing` (the default) creates nothing unless every row can be created: `200` with every post, or the error a single create would give for the first refused row (validation failures first, with every invalid row’s fields in `details.fields`, paths prefixed `posts.<index>.`), every refused row in `details.rows`. `mode: each` creates the rows that can be and answers `200` with each row’s outcome: `{index, status: 201, post}` or `{index, status, error}`, the error a single create would have given. A row that breaks the body’s schema refuses the whole request (`422`, its path `posts.<index>.…`). Workflows start after the commit, as for a single create. An `Idempotency-Key` covers the whole batch. The body may be up to 8 MB.',
    errors: ['forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope; or (all_or_nothing) a row names a channel outside a channel-limited key’s list',
      validation_failed:
        'the body breaks the schema (`posts.<index>.…`); or (all_or_nothing) a row is invalid as a single create would find it: `details.fields` with paths `posts.<index>.…`, every refused row in `details.rows`; an invalid Idempotency-Key',
      limit_reached: '(all_or_nothing) a row would pass the plan’s pending-post limit, counting the rows before it',
      reauth_required: '(all_or_nothing) a row targets a channel to reconnect',
      duplicate_post: '(all_or_nothing) a row repeats a post (or an earlier row of the batch)',
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
    },
    success: {
      status: 200,
      description:
        'Every row’s outcome, in order: `{index, status: 201, post}` for a post created, `{index, status, error}` for a row refused (`each` only; all or nothing answers the 422 above instead).',
    },
    idempotent: true,
    temporal: true,
  }),

  importPosts: doc({
    operationId: 'importPosts',
    audit: { action: 'post.bulk_create', resource: 'post', detailsOf: bulkDetails, changed: bulkCreatedAny },
    maxBodyBytes: BULK_MAX_BODY_BYTES,
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Schedule posts from a CSV file',
    description:
      'The body is a CSV file (`Content-Type: text/csv`, UTF-8, a BOM allowed, `,` or `;` between cells). Its first line names the columns, in any order: `content` and `channels` (ids or names, several separated by `|`) are required; `publishAt` (ISO 8601 with an offset, or a wall time `YYYY-MM-DD HH:MM` read in the row’s `timeZone`, else the `timeZone` parameter, else the organization’s zone), `timeZone`, `content.<PLATFORM>` (e.g. `content.MASTODON`), `media` (media ids or http(s) URLs, `|` between them: a URL is fetched and stored first), `tags` (names or ids of the organization’s tags, `|` between them; a name is matched in any letter case, and one the organization has not is the row’s refusal at `tags`: an import makes no tag) and `queue` (`true`) are optional; `id` and `status` (written by the export) are ignored; any other column refuses the file (`422` at `header`). One leading apostrophe is removed from every cell (the export adds one before a cell a spreadsheet would run as a formula). Each row (at most 500) is then a row of Schedule many posts, with the same `mode` and the same answer, its problems at `posts.<row>.<column>`, row 0 being the first line after the header. With `drafts=true` a row whose `status` is `draft`, or that has neither `publishAt` nor `queue`, becomes a draft instead (its `publishAt` the intended time, its channels and content optional), answered with `draft` in its result and counted in `drafts`; in mode `all_or_nothing` the drafts are written with the posts or not at all.',
    errors: ['forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'conflict', 'validation_failed'],
    errorNotes: {
      validation_failed:
        'the file is not CSV (`body`), its header is wrong (`header`), it has no row or more than 500 (`body`); or (all_or_nothing) a row is invalid: `details.fields` at `posts.<row>.…`, every refused row in `details.rows`',
      conflict: 'an Idempotency-Key reused with another file, or its first request still running',
    },
    success: { status: 200, description: 'Every row’s outcome, as Schedule many posts answers.' },
    idempotent: true,
    temporal: true,
    bodyMediaType: 'text/csv',
    body: { name: 'PostsCsv' },
  }),

  exportPosts: doc({
    operationId: 'exportPosts',
    tag: 'Posts',
    action: 'read',
    summary: 'The posts as a CSV file',
    description:
      'The posts the key sees (as List posts, with the same `status`, `from` and `to`), oldest first, at most 10,000: a header line `id,status,publishAt,channels,content,content.<PLATFORM>…,media,tags`, then one line per post: channel and media ids and tag names separated by `|`, a platform’s column filled where its channel’s text differs from `content`. A cell that begins with `=`, `+`, `-`, `@`, a tab, a carriage return or an apostrophe gets a leading apostrophe, so a spreadsheet shows it as text and never runs it; Schedule posts from a CSV file removes it again, so an export imports back to the same posts. With `drafts=true` the drafts not yet scheduled follow (status `draft`, the intended time as `publishAt`), and import back as drafts with `drafts=true`.',
    errors: ['validation_failed'],
    errorNotes: { validation_failed: '`from`/`to` out of their bounds, or more than 10,000 posts in the range (`from`)' },
    success: { status: 200, description: 'The CSV file (`text/csv`, with `Content-Disposition: attachment`).' },
    successMediaType: 'text/csv',
  }),

  approvePost: doc({
    operationId: 'approvePost',
    audit: { action: 'post.approve', resource: 'post' },
    tag: 'Posts',
    action: 'posts.approve',
    summary: 'Approve a post waiting for approval',
    description:
      'For a `scheduled` post whose `approval` is pending or rejected: approves it, so it is published at `scheduledAt` (at once when that time has passed, up to 24 hours after it). A rejection can be changed to an approval and back until the post is published. Emits `post.approval.approved`.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see, or a deleted one',
      conflict: 'the post needs no approval, is no longer `scheduled` (`details.status`), or is already approved (`details.approval`)',
      validation_failed: '`comment` longer than 2000 characters',
    },
  }),

  rejectPost: doc({
    operationId: 'rejectPost',
    audit: { action: 'post.reject', resource: 'post' },
    tag: 'Posts',
    action: 'posts.approve',
    summary: 'Reject a post waiting for approval',
    description:
      'For a `scheduled` post whose `approval` is pending or approved: rejects it, so it is not published. An edit by its author asks for approval again; an approval before `scheduledAt` plus 24 hours still publishes it; otherwise its channels fail with `not_approved`. Emits `post.approval.rejected`.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see, or a deleted one',
      conflict: 'the post needs no approval, is no longer `scheduled` (`details.status`), or is already rejected (`details.approval`)',
      validation_failed: '`comment` longer than 2000 characters',
    },
  }),

  retryPost: doc({
    operationId: 'retryPost',
    audit: { action: 'post.retry', resource: 'post' },
    tag: 'Posts',
    action: 'posts.publish',
    summary: 'Publish the failed channels of a post again',
    description:
      'For a `failed` post: publishes again on each channel whose status is `failed`, never on one already `published`. Each channel keeps its idempotency key, and where a platform has no such key the retry first looks for the post an earlier attempt may have created, so a platform never gets a second copy. Answers at once; follow the outcome with GET (or the lists), as after create. Reconnect a channel that needs it first.',
    errors: ['not_found', 'conflict', 'reauth_required', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see, or a deleted one',
      conflict: 'the post is not `failed` (`details.status`), or one of its channels is still being published (`details.channelIds`)',
      reauth_required: 'a failed channel must be reconnected first (`details.channelIds`)',
      validation_failed: 'a failed channel is disabled (`details.fields`)',
    },
    success: { status: 202, description: 'The post, `publishing`, with its retried channels back in `publishing`.' },
    temporal: true,
    params: { id: POST_ID },
  }),
};

export function postRoutes(deps: AppDeps) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('Temporal is not configured for this API');
    return deps.temporal;
  };
  // What the post checks read of each channel's account (domain/capabilities.ts).
  const capabilities = { orm: deps.orm, ...deps.platforms };
  async function decide(auth: Auth, postId: string, decision: 'approve' | 'reject', comment: string | undefined) {
    const d = { decision, by: await auth.principal(), comment: comment ?? null, now: auth.now };
    // decideApproval's own read of the post as decided, its media URLs signed: the answer.
    return decideApproval(deps.orm.em.fork(), deps.temporal, auth.organization.id, postId, auth.channels, d, deps.storage);
  }
  return (
    router()
      .use(authPlugin(deps))
      .post(
        '/posts',
        async ({ auth, body, set, headers }) => {
          const em = deps.orm.em.fork();
          const result = await createPostOnce(
            { em, temporal: deps.temporal, storage: deps.storage, capabilities },
            auth,
            body,
            headers['idempotency-key'],
          );
          return answerStored(set, result);
        },
        {
          body: CreateBody,
          transform: refuseUnstorableBody,
          response: { 201: PostSchema },
          operation: POST_OPERATIONS.createPost,
        },
      )
      .post(
        '/posts/bulk',
        async ({ auth, body, set, headers }) => {
          const result = await createPostsInBulkOnce(
            { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities },
            auth,
            body,
            headers['idempotency-key'],
          );
          // A replayed answer may be a stored 4xx body: answerStored sets its status.
          return answerStored(set, result) as never;
        },
        {
          body: BulkBody,
          transform: refuseUnstorableBody,
          response: { 200: BulkResultSchema },
          operation: POST_OPERATIONS.createPostsInBulk,
        },
      )
      .post(
        '/posts/import',
        async ({ auth, body, query, set, headers }) => {
          const result = await importPostsCsv(
            { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities, outbound: deps.outbound },
            auth,
            body,
            { mode: query.mode, timeZone: query.timeZone, idempotencyKey: headers['idempotency-key'], drafts: query.drafts === 'true' },
          );
          // A replayed answer may be a stored 4xx body: answerStored sets its status.
          return answerStored(set, result) as never;
        },
        {
          query: ImportQuery,
          body: t.String({ maxLength: BULK_MAX_BODY_BYTES, description: 'The CSV file (text/csv, UTF-8).' }),
          response: { 200: ImportResultSchema },
          operation: POST_OPERATIONS.importPosts,
        },
      )
      .get(
        '/posts/export',
        async ({ auth, query }) => {
          const { from, to } = parseTimePage(query);
          const csv = await exportPostsCsv(
            deps.orm.em.fork(),
            auth,
            { from, to, status: query.status as PostStatus | undefined, drafts: query.drafts === 'true' },
            deps.storage,
          );
          return new Response(csv, {
            headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="posts.csv"' },
          });
        },
        {
          query: ExportQuery,
          response: { 200: t.String({ description: 'The posts as CSV: a header line, then one line per post, oldest first.' }) },
          operation: POST_OPERATIONS.exportPosts,
        },
      )
      // Chosen over `?dryRun=true` on create (docs/decisions.md): its own answer (200, not 201 with
      // a post), no Location, no Idempotency-Key (nothing to repeat), and a create that cannot be
      // half a validation by a forgotten query parameter.
      .post('/posts/validate', ({ auth, body }) => validatePost(deps.orm.em.fork(), createPostRequest(auth, body, capabilities)), {
        body: CreateBody,
        transform: refuseUnstorableBody,
        response: { 200: PostValidationSchema },
        operation: POST_OPERATIONS.validatePost,
      })
      .get(
        '/posts',
        async ({ auth, query }) => {
          const { from, to, limit } = parseTimePage(query);
          const filters = {
            status: query.status as PostStatus | undefined,
            channelId: query.channelId,
            tagId: query.tagId,
            from,
            to,
            limit,
            cursor: query.cursor,
          };
          const read = () => listPostsForKey(deps.orm.em.fork(), auth.organization.id, auth.channels, filters, deps.storage);
          if (!deps.postPages) return read();
          const checked = async () => {
            const list = await read();
            // Elysia checks what a handler returns against its schema, but not a Response: this one is checked here.
            if (!POST_LIST_CHECK.Check(list)) throw new Error('GET /v1/posts: the page does not match PostListSchema');
            return list;
          };
          // A page kept in memory, as fresh as a read (domain/posts/page-cache.ts); its text as it was answered.
          const key = JSON.stringify([auth.channels, filters.status, filters.channelId, filters.tagId, from, to, limit, filters.cursor]);
          const body = await deps.postPages.page(auth.organization.id, key, checked);
          // The page as Elysia would send it, checked when it was read.
          return new Response(body, { headers: { 'content-type': 'application/json;charset=utf-8' } }) as unknown as Awaited<
            ReturnType<typeof read>
          >;
        },
        { query: ListQuery, response: { 200: PostListSchema }, operation: POST_OPERATIONS.listPosts },
      )
      .get(
        '/posts/:id',
        ({ auth, params }) => getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage),
        {
          params: IdParams,
          response: { 200: PostSchema },
          operation: POST_OPERATIONS.getPost,
        },
      )
      .get(
        '/posts/:id/analytics',
        ({ auth, params }) => postAnalyticsForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage),
        { params: IdParams, response: { 200: PostAnalyticsSchema }, operation: POST_OPERATIONS.getPostAnalytics },
      )
      .post(
        '/posts/:id/analytics/refresh',
        async ({ auth, params, set }) => {
          const view = await refreshPostAnalytics(
            deps.orm.em.fork(),
            deps.temporal,
            auth.organization.id,
            params.id,
            auth.channels,
            auth.now,
            deps.storage,
          );
          set.status = 202;
          return view;
        },
        { params: IdParams, response: { 202: PostAnalyticsSchema }, operation: POST_OPERATIONS.refreshPostAnalytics },
      )
      .patch(
        '/posts/:id',
        async ({ auth, params, body }) =>
          editPostForKey({ em: deps.orm.em.fork(), temporal: temporal(), storage: deps.storage, capabilities }, auth, params.id, body),
        {
          body: PatchBody,
          params: IdParams,
          transform: refuseUnstorableBody,
          response: { 200: PostSchema },
          operation: POST_OPERATIONS.updatePost,
        },
      )
      .delete(
        '/posts/:id',
        async ({ auth, params, set }) => {
          await cancelPost(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
          set.status = 204;
        },
        { params: IdParams, operation: POST_OPERATIONS.deletePost },
      )
      .post('/posts/:id/approve', async ({ auth, params, body }) => decide(auth, params.id, 'approve', body?.comment), {
        params: IdParams,
        body: DecisionBody,
        response: { 200: PostSchema },
        operation: POST_OPERATIONS.approvePost,
      })
      .post('/posts/:id/reject', async ({ auth, params, body }) => decide(auth, params.id, 'reject', body?.comment), {
        params: IdParams,
        body: DecisionBody,
        response: { 200: PostSchema },
        operation: POST_OPERATIONS.rejectPost,
      })
      .post(
        '/posts/:id/retry',
        async ({ auth, params, set }) => {
          const view = await retryPost(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
          set.status = 202;
          return view;
        },
        {
          params: IdParams,
          response: { 202: PostSchema },
          operation: POST_OPERATIONS.retryPost,
        },
      )
  );
}
