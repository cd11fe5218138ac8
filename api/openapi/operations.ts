// The words of the reference for each /v1 operation: summary, scope, error codes, parameter and
// field notes. Each route attaches its entry with `detail: OPERATIONS.x`; the schemas themselves
// come from the route (params, query, body, response), never from here.
import { doc } from './operation.ts';
import { bulkCreatedAny, bulkDetails } from '../audit.ts';
import { formatLimit, MEDIA_RULES } from '../../media/catalog.ts';
import { BULK_MAX_BODY_BYTES } from '../../domain/posts/bulk.ts';
import { feedPlatformProblem } from '../../domain/feeds/feeds.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';

const POST_ID = 'Post id (`post_…`).';
const MEDIA_ID = 'Media item id (`med_…`), from Create upload.';
const DATE_TIME = (text: string) => ({ description: text, format: 'date-time' });
const WEBHOOK_ID = 'Webhook endpoint id (`wh_…`).';
const WEBHOOK_URL =
  'Where events are POSTed: an http(s) URL (https advised), at most 2048 characters, without user name or password (the pattern). A host label beginning `xn--` must be valid Punycode. Its host must resolve, and not to a private, loopback or link-local address (unless the operator allows private addresses); redirects are not followed.';
const FEED_URL =
  'The feed’s http(s) URL, at most 2048 characters, without user name or password (the pattern). A host label beginning `xn--` must be valid Punycode. Its host must resolve, and not to a private, loopback or link-local address (unless the operator allows private addresses); redirects are not followed. It must answer, within 20 s and 5 MB, an RSS or Atom feed.';
const FEED_TEMPLATE =
  'The text of each item’s post; default `{title} {link}`. Placeholders: `{title}`, `{link}`, `{summary}` (plain text, at most 300 characters), `{author}`, `{categories}` (comma-separated), `{feed}` (its name). Any other `{word}` is `422`, and so is a template of only spaces.';
const FEED_TEMPLATE_BY_PLATFORM =
  'A template per platform (upper-case platform name → template, the same placeholders), instead of `template` on that platform’s channels. Each key must be the platform of a target channel.';
const PUBLISH_AT_BOUNDS = 'at most 5 minutes in the past and before 9999-12-31T00:00:00Z (by the server’s clock; `422` otherwise)';

/** media/catalog.ts's size limit per type, as a rule of the upload body: one branch per limit. */
const SIZE_BY_TYPE = (() => {
  const byLimit = new Map<number, string[]>();
  for (const [mime, rule] of Object.entries(MEDIA_RULES)) byLimit.set(rule.maxBytes, [...(byLimit.get(rule.maxBytes) ?? []), mime]);
  return [...byLimit].map(([max, types]) => ({
    description: `${types.join(', ')}: at most ${max} bytes (${formatLimit(max)})`,
    properties: { mimeType: { enum: types }, fileSize: { maximum: max } },
  }));
})();

/** The fields of a new post: the body of createPost and of validatePost (one schema). */
const CREATE_FIELDS = {
  content:
    'Default text, used on every channel without its own text in `contentByPlatform`. On each channel the text must fit the channel’s `rules.maxChars`, counted as its platform counts (GET /channels); an empty text needs media.',
  channelIds:
    'Target channels: ids of channels of the organization (from GET /channels), 1 to 50, no repeats. An unknown or disabled channel is `422`, one outside a channel-limited key’s list `403`, one to reconnect `409 reauth_required`.',
  publishAt: DATE_TIME(`When to publish, with an offset: ${PUBLISH_AT_BOUNDS}. Omit to publish now.`),
  queue:
    '`true` instead of `publishAt`: at the earliest instant that is a free slot of every target channel’s posting queue (GET /channels/{id}/queue): a slot time at which no other post (not deleted, scheduled or publishing) sits on that channel. Within 90 days, else `422`. `scheduledAt` is the chosen time; the post is otherwise an ordinary scheduled post. Two queued creates never get the same slot on a channel.',
  mediaIds:
    '`ready` media items of the organization to attach, in order (ids from the media library). Each target platform’s media limits apply: how many, which types, a video alone; a channel with `rules.requiresMedia` needs an image or a video.',
  contentByPlatform:
    'Text per platform (upper-case platform name → text), instead of `content` on that platform’s channels. Each key must be the platform of a target channel.',
  reddit: 'Subreddit and title; required when a REDDIT channel is targeted.',
};

/** A feed's channels: those of a post, but none a text-only post cannot go to (domain/feeds/feeds.ts). */
const FEED_CHANNEL_IDS = `${CREATE_FIELDS.channelIds} A feed’s posts are text only (no media, options or Reddit target), so a channel on a platform whose \`rules\` require media or fields (${PLATFORMS.filter((p) => feedPlatformProblem(p)).join(', ')}) is \`422\` at \`channelIds.N\`, saying why.`;

/** The fields of a series (createSeries; updateSeries takes the same, each optional). */
const SERIES_FIELDS = {
  content: CREATE_FIELDS.content,
  channelIds: CREATE_FIELDS.channelIds,
  mediaIds: CREATE_FIELDS.mediaIds,
  contentByPlatform: CREATE_FIELDS.contentByPlatform,
  reddit: CREATE_FIELDS.reddit,
  publishAt: DATE_TIME(`The first occurrence, with an offset: ${PUBLISH_AT_BOUNDS}.`),
  repeat:
    '`every`: `day`, `week` or `month`; `interval` (default 1, at most 365); `until` (not before `publishAt`, before 9999-12-31T00:00:00Z; no occurrence after it) and `count` (at most this many, 1–1000); neither: no end.',
  timeZone: 'IANA time zone whose local time of day the rule keeps, e.g. `Europe/Berlin`; default: the organization’s (UTC unless set).',
};

export const OPERATIONS = {
  getMe: doc({
    operationId: 'getMe',
    tag: 'Account',
    action: 'read',
    summary: 'The calling key, its organization and quota',
    description: 'Every authenticated request of the organization counts towards `quota.usedThisMonth`, this one included.',
  }),

  getKeyMember: doc({
    operationId: 'getKeyMember',
    tag: 'Account',
    action: 'read',
    summary: 'The member the calling key belongs to',
    description:
      'A key made in the web app belongs to the member who made it: its scopes stay within what their role may hold, a new role revokes the keys it no longer allows, and removing the member revokes their keys. `member` is null for a key an operator made with the CLI.',
  }),

  listChannels: doc({
    operationId: 'listChannels',
    tag: 'Channels',
    action: 'read',
    summary: 'List the connected channels',
    description: 'Oldest first. A key limited to some channels sees only those. Takes no query parameters.',
  }),

  getChannelCapabilities: doc({
    operationId: 'getChannelCapabilities',
    tag: 'Channels',
    action: 'read',
    summary: 'What this channel’s account can do now',
    description:
      'The platform’s fixed facts for this channel (`fixed`: its text limit, media limits, follow-ups) and what the platform says of this account now (`live`): TikTok’s creator_info (privacy levels the creator may choose, longest video, comments, duets and stitches disabled), Pinterest’s boards, a subreddit’s flairs and rules (REDDIT, with `?subreddit=`), YouTube’s assignable categories. The live part is kept 5 minutes per channel and question (`readAt` says when it was read). A read the platform refuses answers 200 with `live: null` and `liveError` (`kind` reauth, transient or permanent, and the platform’s words); it does not change the channel. Other platforms, a channel that must be reconnected, and REDDIT without `subreddit` have no live part.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      not_found: 'no such channel in the organization',
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed: '`subreddit` is not a subreddit name, or is given for a channel that is not REDDIT',
    },
    success: { description: 'Fixed facts, the live part or why it is missing.' },
  }),

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
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels, text over a channel’s `maxChars`, media or required fields a channel needs, an invalid Idempotency-Key',
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
    },
    success: { status: 201, description: 'The post, `scheduled`, with a `draft` entry per channel.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreatePostRequest',
      fields: CREATE_FIELDS,
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
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels, text over a channel’s `maxChars`, media or required fields a channel needs',
    },
    success: { description: 'The body would be accepted: each channel’s text and its length as its platform counts it.' },
    body: {
      name: 'ValidatePostRequest',
      fields: CREATE_FIELDS,
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

  getAnalytics: doc({
    operationId: 'getAnalytics',
    tag: 'Analytics',
    action: 'read',
    summary: 'How the organization’s posts performed over a range',
    description:
      'Totals over the channel posts published in [from, to) (each with its latest figures), a series per day or week in the organization’s time zone, and the top 10 posts by engagement (likes + replies + reposts + quotes + saves). A key limited to channels counts only those.',
    errors: ['validation_failed'],
    errorNotes: { validation_failed: '`from` not before `to`, a range over 366 days, a malformed date-time or groupBy' },
    success: { description: 'Totals, series and top posts.' },
    query: {
      from: DATE_TIME('Start (inclusive), with an offset; default 30 days before `to`.'),
      to: DATE_TIME('End (exclusive), with an offset; default now.'),
      channelId: 'Only this channel’s posts.',
      groupBy: '`day` (default) or `week` (Monday first).',
    },
  }),

  getBestTimes: doc({
    operationId: 'getBestTimes',
    tag: 'Analytics',
    action: 'read',
    summary: 'When this channel’s posts did best',
    description:
      'From the channel’s own posts of the last 90 days that have been read: engagement by weekday and hour of publishing in the channel’s queue time zone, with the number of posts behind each cell; the cells with at least 2 posts ranked; and the best 5 as queue slots ready for PUT /channels/{id}/queue.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      not_found: 'no such channel in the organization',
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
    },
    success: { description: 'Cells, ranking and suggested slots.' },
    params: { id: 'Channel id (`ch_…`).' },
  }),

  updatePost: doc({
    operationId: 'updatePost',
    audit: { action: 'post.update', resource: 'post' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Edit a scheduled post',
    description:
      'Changes the text, the per-platform text, the publish time, the media, the target channels or the Reddit fields of a post that is still `scheduled`; give at least one field. Once it is publishing or done: `409 conflict`. The resulting post is checked against its channels’ rules as on create (with the new channel set, when `channelIds` is given). `thread`, `threadByPlatform` and `firstComment` replace the follow-ups (null removes them). Threads and first comments: `thread` items (and each `threadByPlatform` list, whose keys must each be the platform of a target channel) are replies checked one by one as posts of their channel: its `rules.maxChars` as the platform counts it, its media limits (ids of `ready` media items of the organization), an item without text needs media; at most 25 replies on a channel, the first comment included. A platform without threads refuses a thread (`threadByPlatform.<PLATFORM>: []` posts there alone); a comment platform takes `firstComment` as a comment of at most its comment limit (Facebook 8,000 characters, Instagram 2,200, LinkedIn 1,250, YouTube and Reddit 10,000), a thread platform as its first reply, and a platform with neither refuses `firstComment`.',
    errors: ['not_found', 'forbidden_scope', 'reauth_required', 'conflict', 'duplicate_post', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and `channelIds` names another (`details.channelIds`)',
      reauth_required: 'a channel added by `channelIds` must be reconnected first (`details.channelIds`)',
      conflict: 'the post is no longer `scheduled` (`details.status`)',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, `publishAt` out of its bounds, unknown or disabled channels added, text over a channel’s `maxChars`, media or required fields a channel needs',
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
      'The body is a CSV file (`Content-Type: text/csv`, UTF-8, a BOM allowed, `,` or `;` between cells). Its first line names the columns, in any order: `content` and `channels` (ids or names, several separated by `|`) are required; `publishAt` (ISO 8601 with an offset, or a wall time `YYYY-MM-DD HH:MM` read in the row’s `timeZone`, else the `timeZone` parameter, else the organization’s zone), `timeZone`, `content.<PLATFORM>` (e.g. `content.MASTODON`), `media` (media ids or http(s) URLs, `|` between them: a URL is fetched and stored first) and `queue` (`true`) are optional; `id` and `status` (written by the export) are ignored; any other column refuses the file (`422` at `header`). One leading apostrophe is removed from every cell (the export adds one before a cell a spreadsheet would run as a formula). Each row (at most 500) is then a row of Schedule many posts, with the same `mode` and the same answer, its problems at `posts.<row>.<column>`, row 0 being the first line after the header.',
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
      'The posts the key sees (as List posts, with the same `status`, `from` and `to`), oldest first, at most 10,000: a header line `id,status,publishAt,channels,content,content.<PLATFORM>…,media`, then one line per post: channel and media ids separated by `|`, a platform’s column filled where its channel’s text differs from `content`. A cell that begins with `=`, `+`, `-`, `@`, a tab, a carriage return or an apostrophe gets a leading apostrophe, so a spreadsheet shows it as text and never runs it; Schedule posts from a CSV file removes it again, so an export imports back to the same posts.',
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

  createUpload: doc({
    operationId: 'createUpload',
    audit: { action: 'media.create', resource: 'media', from: 'media' },
    tag: 'Media',
    action: 'media.write',
    summary: 'Start an upload of a local file',
    description:
      'Step 1 of 3: declare the file. Then PUT the bytes to `upload.url` with exactly `upload.headers` within 15 minutes, then call Complete upload. Accepted: JPEG, PNG, WebP, GIF (≤ 20 MB), MP4, QuickTime (≤ 1 GB), PDF (≤ 100 MB), MP3, M4A, WAV (≤ 200 MB).',
    errors: ['conflict', 'validation_failed'],
    errorNotes: {
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
      validation_failed:
        'invalid body (`details.fields`): a file name with path separators, a type that is not accepted, a size over the type’s limit, an invalid Idempotency-Key',
    },
    success: { status: 201, description: 'The pending media item and the PUT instructions.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreateUploadRequest',
      // The size limit of each type (a body that breaks it is `422`).
      schema: { anyOf: SIZE_BY_TYPE },
      fields: {
        fileName: 'File name: 1–255 characters, without path separators (`/`, `\\`) or control characters; not blank, `.` or `..`.',
        mimeType:
          'The file’s type, one of those listed (the server also takes them in any letter case; `audio/x-wav` and `audio/wave` are WAV).',
        fileSize: `Size in bytes; the PUT must send exactly this many. At most: ${SIZE_BY_TYPE.map((b) => b.description).join('; ')}.`,
        altText: 'Alternative text for the item.',
      },
    },
  }),

  completeUpload: doc({
    operationId: 'completeUpload',
    audit: { action: 'media.complete', resource: 'media' },
    tag: 'Media',
    action: 'media.write',
    summary: 'Complete an upload',
    description:
      'Step 3 of 3: verifies the uploaded file (size, real type from its bytes), measures it and makes a thumbnail, then the item is `ready`, or `failed` with the reason in `error`. Before the PUT: `409 conflict` and the item stays `pending`. Safe to call again: a completed item is returned as it is.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the file has not been PUT yet (the item stays `pending`), or the 15-minute window has closed' },
    success: { description: 'The media item, `ready` or `failed`.' },
    temporal: true,
    params: { id: MEDIA_ID },
  }),

  getMedia: doc({
    operationId: 'getMedia',
    tag: 'Media',
    action: 'read',
    summary: 'A media item',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The media item.' },
    params: { id: MEDIA_ID },
  }),
  getQueue: doc({
    operationId: 'getQueue',
    tag: 'Channels',
    action: 'read',
    summary: 'A channel’s posting queue',
    description:
      'The channel’s weekly posting slots (weekday and local time), the IANA time zone they are in (the channel’s own, else the organization’s, UTC unless set) and the next free slot times. A slot time is free when no other post that is not deleted and still scheduled (or publishing) sits on the channel at that instant. Daylight-saving changes: a 09:00 slot stays 09:00 local; a slot in the skipped hour moves forward by the gap (02:30 → 03:30); a slot in the repeated hour is used once, at its first instant. Only free times within 90 days are listed.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed: '`count` is not an integer from 1 to 100',
    },
    success: { description: 'The queue.' },
    params: { id: 'Channel id (`ch_…`).' },
    query: {
      count: {
        description: 'How many free slot times to list.',
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: 10,
        maxLength: undefined,
      },
    },
  }),

  setQueue: doc({
    operationId: 'setQueue',
    audit: { action: 'queue.update', resource: 'queue' },
    tag: 'Channels',
    action: 'queues.write',
    summary: 'Replace a channel’s posting queue',
    description:
      'Replaces every weekly slot of the channel (an empty list removes the queue). `timeZone` sets the channel’s own zone (null: use the organization’s; omitted: unchanged). Posts already queued keep their times.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed:
        'a weekday that is not monday … sunday, a time that is not HH:MM (00:00–23:59), more than 100 slots, or a time zone that is not an IANA zone (`details.fields`)',
    },
    success: { description: 'The queue as stored, with its next free slot times.' },
    params: { id: 'Channel id (`ch_…`).' },
    body: {
      name: 'SetQueueRequest',
      fields: {
        slots:
          'Weekly slots: `{weekday, time}` with weekday `monday` … `sunday` and time `HH:MM` (24-hour, local to the zone). Repeats are dropped. At most 100.',
        timeZone: 'IANA time zone of the channel’s queue, e.g. `America/New_York`; null: the organization’s. Omit to keep it.',
      },
    },
  }),

  createSeries: doc({
    operationId: 'createSeries',
    audit: { action: 'series.create', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Create a recurring post (a series)',
    description:
      'A post template and a rule: the first occurrence at `publishAt`, then every `repeat.interval` days, weeks or months at the same local time of day in `timeZone` (daylight-saving changes keep it), until `repeat.until` and/or `repeat.count` occurrences. Each occurrence is created as a post of its own (with `seriesId`) 5 minutes before its time, through the same path as Schedule a post: the same checks, the `post.scheduled` webhook, and PATCH, DELETE and retry on it. Monthly on the 29th–31st falls on the month’s last day when it is shorter (Jan 31 → Feb 28 → Mar 31). Occurrences of one series are not duplicates of each other (`duplicate_post`). The template is checked now as a post would be.',
    errors: ['forbidden_scope', 'reauth_required', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields`): `publishAt` out of its bounds, `repeat.until` before it, an unknown time zone, unknown or disabled channels, text over a channel’s `maxChars`, media or required fields a channel needs',
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
    },
    success: { status: 201, description: 'The series, `active`.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreateSeriesRequest',
      fields: SERIES_FIELDS,
    },
  }),
  listSeries: doc({
    operationId: 'listSeries',
    tag: 'Posts',
    action: 'read',
    summary: 'List the series',
    description:
      'Every series of the organization that is not deleted, oldest first. A channel-limited key sees those all of whose channels are in its list.',
    success: { description: 'The series.' },
  }),

  getSeries: doc({
    operationId: 'getSeries',
    tag: 'Posts',
    action: 'read',
    summary: 'A series',
    description:
      'Its template, rule, how many occurrences were created and when the next is due. Its occurrences: GET /posts, each with this `seriesId`.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The series.' },
    params: { id: 'Series id (`ser_…`).' },
  }),

  updateSeries: doc({
    operationId: 'updateSeries',
    audit: { action: 'series.update', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Edit a series',
    description:
      'Changes apply to occurrences not yet created; those already created are posts of their own (edit them with PATCH /posts/{id}). A new rule continues after the last occurrence created (occurrences created count towards `repeat.count`). `publishAt` (the first occurrence) can change only before it is created. A rule with no occurrence left ends the series.',
    errors: ['not_found', 'conflict', 'reauth_required', 'validation_failed'],
    errorNotes: { conflict: 'the series has ended' },
    success: { description: 'The updated series.' },
    temporal: true,
    params: { id: 'Series id (`ser_…`).' },
    body: { name: 'UpdateSeriesRequest', fields: SERIES_FIELDS },
  }),

  deleteSeries: doc({
    operationId: 'deleteSeries',
    audit: { action: 'series.delete', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Stop a series',
    description:
      'No further occurrence is created, and occurrences already created but still scheduled are cancelled (as DELETE /posts/{id}); published ones stay. The series is then gone (`404`).',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Stopped; no body.' },
    temporal: true,
    params: { id: 'Series id (`ser_…`).' },
  }),

  createFeed: doc({
    operationId: 'createFeed',
    audit: { action: 'feed.create', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Add an RSS or Atom feed that posts by itself',
    description:
      'The feed is read now: a URL that is not a readable RSS or Atom feed is `422` at `url`, with the reason. The items it has now are its backlog and are never posted, but for the newest `backfill`, which are posted within a minute. From then on it is read every `pollMinutes` (with `If-None-Match` / `If-Modified-Since`), and each new item becomes a post on `channelIds` made from the template, as Schedule a post would make it (the same checks, webhooks and approval as the key’s own posts). An item is posted at most once: items are known by their RSS guid or Atom id (else their link), and an item whose link was already seen is not new either, so reordered, re-dated or edited items are not posted again. At most 10 items are posted per read; more wait for the next. After 5 failed reads in a row the feed is paused with `pausedReason` and the `feed.failed` webhook; each posted item sends `feed.item.posted`. An organization has at most 100 feeds.',
    errors: ['forbidden_scope', 'reauth_required', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), its member’s role may not manage feeds, or it is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields`): a URL that cannot be read as a feed (refused address, HTTP error, timeout after 20 s, more than 5 MB, not RSS or Atom), an unknown `{placeholder}` in a template, unknown or disabled channels, a channel a text-only post cannot go to (`channelIds.N`)',
      conflict: 'the organization has 100 feeds already, or an Idempotency-Key reused with another body or its first request still running',
    },
    success: { status: 201, description: 'The feed, `active`.', location: true },
    idempotent: true,
    body: {
      name: 'CreateFeedRequest',
      fields: {
        url: FEED_URL,
        channelIds: FEED_CHANNEL_IDS,
        name: 'A name for it; default: the feed’s own title.',
        template: FEED_TEMPLATE,
        templateByPlatform: FEED_TEMPLATE_BY_PLATFORM,
        mode: '`now` (default): each new item is published at once. `queue`: at the next free slot of the channels’ posting queues.',
        filter:
          '`include`: an item is posted only if its title, summary or categories contain one of these words (any letter case); `exclude`: never if they contain one of these. Null or absent: every item.',
        pollMinutes: 'Minutes between two reads, 1–1440; default 15.',
        backfill: 'How many of the newest items present now to post, 0–20; default 0 (none: only items that appear later are posted).',
      },
    },
  }),
  listFeeds: doc({
    operationId: 'listFeeds',
    tag: 'Feeds',
    action: 'read',
    summary: 'List the feeds',
    description:
      'Every feed of the organization that is not deleted, oldest first. A channel-limited key sees those all of whose channels are in its list.',
    success: { description: 'The feeds.' },
  }),
  getFeed: doc({
    operationId: 'getFeed',
    tag: 'Feeds',
    action: 'read',
    summary: 'A feed',
    description: 'Its settings, its state (`status`, `pausedReason`, the last read and failure) and when it is read next.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The feed.' },
    params: { id: 'Feed id (`feed_…`).' },
  }),
  listFeedItems: doc({
    operationId: 'listFeedItems',
    tag: 'Feeds',
    action: 'read',
    summary: 'The items a feed has seen',
    description:
      'Every item the feed has shown, newest first, with what became of it: posted (its post), backlog, filtered out, or refused (why, as Schedule a post would answer). Keyset pagination: pass `nextCursor` as `cursor` for the next page.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: { validation_failed: 'a limit outside 1–100, or a cursor this API did not return' },
    success: { description: 'A page of items.' },
    params: { id: 'Feed id (`feed_…`).' },
    query: {
      limit: { description: 'Page size.', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: opaque, only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),
  updateFeed: doc({
    operationId: 'updateFeed',
    audit: { action: 'feed.update', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Edit, pause or resume a feed',
    description:
      'Changes apply to the items that appear from now on. A new `url` is read now as on creation, and its present items become backlog. `status: paused` stops the reads; `status: active` resumes them at once and clears the failures and `pausedReason`.',
    errors: ['forbidden_scope', 'not_found', 'reauth_required', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope, its member’s role may not manage feeds, or it is limited to other channels',
      validation_failed:
        'invalid body (`details.fields`): a new URL that cannot be read as a feed, an unknown placeholder, unknown or disabled channels, a channel a text-only post cannot go to (`channelIds.N`)',
    },
    success: { description: 'The updated feed.' },
    params: { id: 'Feed id (`feed_…`).' },
    body: {
      name: 'UpdateFeedRequest',
      fields: {
        url: `${FEED_URL} Read now; its present items are not posted.`,
        channelIds: FEED_CHANNEL_IDS,
        name: 'Its name.',
        template: FEED_TEMPLATE,
        templateByPlatform: `${FEED_TEMPLATE_BY_PLATFORM} Replaces the whole map.`,
        mode: '`now` or `queue`.',
        filter: 'As on creation; null: every item.',
        pollMinutes: 'Minutes between two reads, 1–1440.',
        status: '`paused` or `active` (resumes it, forgetting its failures).',
      },
    },
  }),
  deleteFeed: doc({
    operationId: 'deleteFeed',
    audit: { action: 'feed.delete', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Delete a feed',
    description: 'It is read no more; the posts it made stay. The feed is then gone (`404`).',
    errors: ['forbidden_scope', 'not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted; no body.' },
    params: { id: 'Feed id (`feed_…`).' },
  }),
  pollFeed: doc({
    operationId: 'pollFeed',
    audit: { action: 'feed.poll', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Read a feed now',
    description:
      'Reads the feed now, as the scheduled reads do (one read at a time per feed: asking during a read changes nothing). Answers at once; the outcome shows on the feed (`lastPolledAt`, `lastError`) and its items within moments.',
    errors: ['forbidden_scope', 'not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the feed is paused (`details.pausedReason`): resume it with `status: active` first' },
    success: { status: 202, description: 'The feed as it is now; the read follows.' },
    temporal: true,
    params: { id: 'Feed id (`feed_…`).' },
  }),

  createWebhook: doc({
    operationId: 'createWebhook',
    audit: { action: 'webhook.create', resource: 'webhook', from: 'endpoint' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Add a webhook endpoint',
    description:
      'Events are POSTed to `url` signed as the Standard Webhooks specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature`); the signing `secret` is in this answer only. Retried for about three days; at-least-once, in no guaranteed order.',
    errors: ['limit_reached', 'validation_failed'],
    errorNotes: {
      limit_reached: 'the plan’s number of webhook endpoints is reached (PRO 5, TEAM 20)',
      validation_failed:
        'invalid body (`details.fields`), or a `url` that is not http(s) or whose host is a refused (private, loopback, link-local) address',
    },
    success: { status: 201, description: 'The endpoint and its signing secret.', location: true },
    body: {
      name: 'CreateWebhookRequest',
      fields: {
        url: WEBHOOK_URL,
        events: 'The event types to receive, or `"all"`.',
        description: 'Free text for you.',
      },
    },
  }),

  listWebhooks: doc({
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'List the webhook endpoints',
    description: 'Oldest first. Secrets are never shown.',
    success: { description: 'The organization’s endpoints.' },
  }),

  getWebhook: doc({
    operationId: 'getWebhook',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'A webhook endpoint',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint, with why the service disabled it if it did.' },
    params: { id: WEBHOOK_ID },
  }),

  updateWebhook: doc({
    operationId: 'updateWebhook',
    audit: { action: 'webhook.update', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Change a webhook endpoint',
    description: 'Give at least one field. Enabling an endpoint the service disabled clears `disabledReason` and `disabledAt`.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint.' },
    params: { id: WEBHOOK_ID },
    body: {
      name: 'UpdateWebhookRequest',
      fields: {
        url: WEBHOOK_URL,
        events: 'The event types to receive, or `"all"`.',
        enabled: 'False: nothing more is sent (pending deliveries end `failed`).',
        description: 'Free text for you; null clears it.',
      },
    },
  }),

  deleteWebhook: doc({
    operationId: 'deleteWebhook',
    audit: { action: 'webhook.delete', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Delete a webhook endpoint',
    description: 'With its delivery log. Deliveries still waiting for a retry are not sent.',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted; no body.' },
    params: { id: WEBHOOK_ID },
  }),

  rotateWebhookSecret: doc({
    operationId: 'rotateWebhookSecret',
    audit: { action: 'webhook.rotate_secret', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Rotate the signing secret',
    description:
      'A new secret, shown only in this answer. For 24 hours every delivery carries two signatures (space-separated in `webhook-signature`), one per secret, so receivers can switch without missing an event.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint, the new secret and when the previous one stops signing.' },
    params: { id: WEBHOOK_ID },
  }),

  testWebhook: doc({
    operationId: 'testWebhook',
    audit: { action: 'webhook.test', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Send a test event',
    description: 'Sends `webhook.test` to this endpoint (whatever its event list), with the usual retries. Follow it in the delivery log.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the endpoint is disabled' },
    success: { status: 202, description: 'The event and its delivery, on their way.' },
    temporal: true,
    params: { id: WEBHOOK_ID },
  }),

  listWebhookDeliveries: doc({
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'The delivery log of an endpoint',
    description:
      'Newest first: each delivery’s event, status, attempts, and its last attempt’s status code, duration and error, and the next retry. Keyset pagination: pass `nextCursor` as `cursor`.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: { validation_failed: 'invalid query (`details.fields`): a limit outside 1–100, or a cursor this API did not return' },
    success: { description: 'A page of deliveries.' },
    params: { id: WEBHOOK_ID },
    query: {
      limit: { description: 'Page size (default 20).', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),

  redeliverWebhook: doc({
    operationId: 'redeliverWebhook',
    audit: { action: 'webhook.redeliver', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Send a delivery again',
    description: 'For a `delivered` or `failed` delivery: the same event (same `webhook-id`) with a fresh retry schedule.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the delivery is still `pending`, or the endpoint is disabled' },
    success: { status: 202, description: 'The delivery, `pending` again.' },
    temporal: true,
    params: { id: WEBHOOK_ID, deliveryId: 'Delivery id (`whd_…`), from the delivery log.' },
  }),

  listAuditEvents: doc({
    operationId: 'listAuditEvents',
    tag: 'Audit',
    action: 'audit.read',
    summary: 'The audit log: who changed what, newest first',
    description:
      'Every change made to the organization through the API, the web app, the MCP server or the admin CLI: who (a member, an API key with the member it belongs to, an operator), what (`action`), which resource, when and from where. Reads and refused requests are not recorded. Events cannot be changed or deleted through the service and are kept at least 90 days. Keyset pagination: pass `nextCursor` as `cursor` for the next page, with the same filters.',
    errors: ['validation_failed'],
    errorNotes: {
      validation_failed:
        'invalid query (`details.fields: [{path, message}]`): a value outside its schema, a limit outside 1–100, or a cursor this API did not return',
    },
    success: { description: 'A page of events.' },
    query: {
      action: 'Only events of this action, e.g. `post.create`.',
      actorType: 'Only events of this kind of actor.',
      actorId: 'Only events of this actor: a user id (`usr_…`) or a key id (`key_…`).',
      resourceType: 'Only events on this kind of resource, e.g. `post`.',
      resourceId: 'Only events on this resource (its id).',
      from: DATE_TIME('Only events at or after this instant.'),
      to: DATE_TIME('Only events before this instant.'),
      limit: { description: 'Page size.', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: opaque, only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),

  generatePost: doc({
    operationId: 'generatePost',
    // Not an event: drafts: nothing is created or changed.
    audit: null,
    tag: 'Generate',
    action: 'posts.generate',
    summary: 'Draft a post for each channel',
    description:
      'From a brief, a draft per channel that fits the channel’s rules: its text at most `rules.maxChars` counted as create counts (as its platform counts), and a title where the platform requires one (REDDIT). A draft the model makes too long gets one correction round; one still too long is cut at a character (grapheme) boundary and marked `truncated`. Channels that count alike share one draft. Nothing is created: pass a draft to Schedule a post. The drafts come from the operator’s OpenAI-compatible model endpoint.',
    errors: ['forbidden_scope', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `generate` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, unknown channels, media that is not ready',
    },
    success: { description: 'A draft per channel, with its length as the platform counts it.' },
    generator: { settings: ['GENERATE_API_URL', 'GENERATE_MODEL', 'GENERATE_API_KEY'] },
    body: {
      name: 'GeneratePostRequest',
      fields: {
        prompt: 'What the post is about: the brief the drafts are written from.',
        tone: 'How it should sound (e.g. “friendly”, “formal”, “playful”).',
        channelIds:
          'Channels to draft for: ids of channels of the organization (from GET /channels), 1 to 50, no repeats. An unknown channel is `422`, one outside a channel-limited key’s list `403`.',
        mediaIds:
          '`ready` media items of the organization the post will carry: their descriptions (from the vision pass) and alt texts inform the drafts.',
      },
    },
  }),

  generateAltText: doc({
    operationId: 'generateAltText',
    // Not an event: alt text: nothing is created or changed.
    audit: null,
    tag: 'Generate',
    action: 'posts.generate',
    summary: 'Suggest alt text for a media item',
    description:
      'Runs the media library’s vision pass on a `ready` image (a video: its thumbnail) and returns its description as alt text, at most 1500 characters. A suggestion: the media item is not changed. The operator’s vision endpoint (an OpenAI-compatible model that reads images) answers it.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no media item of the organization (that this key may see) has this id',
      conflict: 'the media item is not `ready` (pending or failed)',
      validation_failed: 'invalid body, or the item is not an image or a video with a thumbnail (`details.fields`)',
    },
    success: { description: 'The suggested alt text.' },
    generator: { settings: ['VISION_API_URL', 'VISION_MODEL', 'VISION_API_KEY'] },
    body: {
      name: 'GenerateAltTextRequest',
      fields: { mediaId: 'Media item id (`med_…`) of a ready image or video.' },
    },
  }),
};
