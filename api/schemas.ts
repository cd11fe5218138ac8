// Response shapes of SPEC.md §2, as TypeBox schemas: Elysia checks handlers against them and
// they document the API (api/openapi/document.ts turns them into the OpenAPI document's components).
// `additionalProperties: false` keeps the objects to exactly these fields.
import { t } from 'elysia';
import type { TSchema } from '@sinclair/typebox';
import { DATE_TIME_MESSAGE, DATE_TIME_PATTERN } from '../lib/date-time.ts';
import { ERROR_STATUS, WEB_ONLY_CODES, type ApiErrorCode, type ErrorCode } from '../lib/errors.ts';
import { WEEKDAYS } from '../lib/zoned-time.ts';
import { SLOT_TIME_PATTERN } from '../domain/queues/slots.ts';
import { PLATFORMS, CHANNEL_STATUSES } from '../platforms/catalog.ts';
import { METRICS, type Metric } from '../platforms/types.ts';
import { APPROVAL_STATUSES, POST_STATUSES } from '../db/entities/post.ts';
import { POST_CHANNEL_STATUSES } from '../db/entities/post-channel.ts';
import { MEDIA_STATUSES, MEDIA_TYPES } from '../db/entities/media-item.ts';
import { CHANNEL_ERROR_CODES } from '../workflows/publish-failure-types.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/outbox.ts';
import { AUDIT_ACTOR_TYPES } from '../domain/audit.ts';
import { CONTROL_OR_DISGUISE, MAX_FILE_NAME_CHARS, MEDIA_RULES } from '../media/catalog.ts';

const strict = { additionalProperties: false } as const;
const DateTime = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) });
const NullableDateTime = (description: string) => t.Union([t.String({ format: 'date-time' }), t.Null()], { description });
const NullableString = (description: string) => t.Union([t.String(), t.Null()], { description });
const NullableInteger = (description: string) => t.Union([t.Integer(), t.Null()], { description });
/**
 * A string from a fixed list. The list is a documentation keyword here (TypeBox checks only that
 * it is a string): the values come from Postgres enum columns, and the views type them as string.
 */
const oneOf = (values: readonly string[], description?: string) => t.String({ enum: [...values], ...(description ? { description } : {}) });

export const ERROR_CODES = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
  (c): c is ApiErrorCode => !(WEB_ONLY_CODES as readonly string[]).includes(c),
);

// ---------------------------------------------------------------------------------------------
// Request values. Each rule the server enforces on a value is a keyword here, checked by TypeBox
// when the request is validated and shown by the OpenAPI document (api/openapi), so the two
// cannot differ (docs/decisions.md "The OpenAPI document"). `error` is the message a refusal
// gives (http/errors.ts); the document drops it.

import { Chars, MAX_CHARS } from '../http/chars.ts';

export { Chars, MAX_CHARS };
/** The same as a Chars character, NUL allowed (path ids: an unknown id is a 404 whatever it holds). */
const CHAR_OR_NUL = '(?:[^\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])';

/** A path id: 1–64 characters. Anything else of that length is a 404; `.` and `..` cannot be sent in a URL path. */
export const PathId = (description?: string) =>
  t.String({
    pattern: `^(?!\\.{1,2}$)${CHAR_OR_NUL}{1,64}$`,
    minLength: 1,
    [MAX_CHARS]: 64,
    error: 'must be 1 to 64 characters',
    ...(description ? { description } : {}),
  });

/** An id in a body (channels, media items): the ids the API hands out are letters, digits and `_`. */
export const BodyId = () =>
  t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$', error: 'must be an id: 1 to 64 letters, digits or _' });

/** A file name as media/catalog.ts checks it: no path separator, control or disguising character; not blank, `.` or `..`. */
const NAME_CHAR = String.raw`(?:[^/\\${CONTROL_OR_DISGUISE.source.slice(1, -1)}\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])`;
export const FileName = (description?: string) =>
  t.String({
    pattern: String.raw`^(?!\s*$)(?!\.{1,2}$)${NAME_CHAR}{1,${MAX_FILE_NAME_CHARS}}$`,
    minLength: 1,
    [MAX_CHARS]: MAX_FILE_NAME_CHARS,
    error: `must be 1 to ${MAX_FILE_NAME_CHARS} characters, without path separators (/ or \\) or control characters, and not blank, . or ..`,
    ...(description ? { description } : {}),
  });

/** The accepted media types (media/catalog.ts), lower case; the server also takes them in any letter case. */
export const MimeType = (description?: string) =>
  t.String({ minLength: 1, maxLength: 100, enum: Object.keys(MEDIA_RULES), ...(description ? { description } : {}) });

/** The date-times the API reads (lib/date-time.ts): RFC 3339 with an offset. */
export const DateTimeInput = (description?: string) =>
  t.String({
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
    error: DATE_TIME_MESSAGE,
    ...(description ? { description } : {}),
  });

/** The pieces of HTTP_URL_PATTERN (RFC 3986's grammar, narrowed to what the server parses). */
const HEX16 = '[0-9A-Fa-f]{1,4}';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
/** RFC 3986's IPv6address without its embedded-IPv4 forms, some of which Bun's URL parser refuses. */
const IPV6 = [
  `(?:${HEX16}:){7}${HEX16}`,
  `::(?:${HEX16}:){0,6}${HEX16}`,
  ...[1, 2, 3, 4, 5, 6].map((head) => `(?:${HEX16}:){0,${head - 1}}${HEX16}::(?:(?:${HEX16}:){0,${6 - head}}${HEX16})?`),
  `(?:${HEX16}:){0,6}${HEX16}::`,
  '::',
].join('|');
/** A label of letters, digits and inner hyphens; the last one starts with a letter (one ending in digits is read as an IPv4 address). */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const LAST_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const URL_CHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})";

/**
 * An http(s) URL as the server parses it (WHATWG URL, services/webhooks.ts): a lower-case scheme,
 * a host name, IPv4 or [IPv6] address, a port up to 65535, no user name or password, ASCII only
 * (anything else percent-encoded). Every string it matches parses as such a URL, except a host
 * label `xn--…` that is not valid Punycode, which no pattern can tell (stated in words).
 */
export const HTTP_URL_PATTERN =
  `^https?://(?:(?:${LABEL}\\.)*${LAST_LABEL}\\.?|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?` +
  `(?:/${URL_CHAR}*)*(?:\\?(?:${URL_CHAR}|[/?])*)?(?:#(?:${URL_CHAR}|[/?])*)?$`;

/** An http(s) URL of at most `max` characters (ASCII: UTF-16 units and code points agree, so maxLength is exact). */
export const HttpUrl = (max: number, description?: string) =>
  t.String({
    format: 'uri',
    pattern: HTTP_URL_PATTERN,
    minLength: 1,
    maxLength: max,
    error: `must be an http(s) URL of at most ${max} characters: a host name or IP address, an optional port, no user name or password, non-ASCII characters percent-encoded`,
    ...(description ? { description } : {}),
  });

export const ErrorSchema = t.Object(
  {
    error: t.Object(
      {
        code: t.Union(
          ERROR_CODES.map((c) => t.Literal(c)),
          { description: 'Machine-readable error code (SPEC.md §7, docs/decisions.md).' },
        ),
        message: t.String({ description: 'Human-readable, safe to show to a user.' }),
        details: t.Optional(
          t.Record(t.String(), t.Unknown(), {
            description:
              'Depends on the code: `fields: [{path, message}]` for validation_failed, `requiredScope` for forbidden_scope, `resetsAt` for rate_limited and quota_exceeded, `channelIds`, `postId`, `limit`/`used`…',
          }),
        ),
      },
      strict,
    ),
  },
  strict,
);

export const KeyMemberSchema = t.Object(
  {
    member: t.Union(
      [
        t.Object(
          {
            userId: t.String(),
            email: t.String(),
            role: oneOf(['owner', 'admin', 'editor', 'contributor', 'viewer'], 'The member’s role in the organization now.'),
          },
          strict,
        ),
        t.Null(),
      ],
      { description: 'The member who made the key in the web app; null for a key an operator made (the CLI).' },
    ),
  },
  strict,
);

export const MeSchema = t.Object(
  {
    organization: t.Object(
      {
        id: t.String(),
        name: t.String(),
        plan: t.Union([t.Literal('FREE'), t.Literal('PRO'), t.Literal('TEAM'), t.Literal('ENTERPRISE')]),
      },
      strict,
    ),
    key: t.Object(
      {
        name: t.String(),
        prefix: t.String({ description: 'The first 12 characters of the key, to recognise it.' }),
        scopes: t.Array(t.Union([t.Literal('read'), t.Literal('generate'), t.Literal('publish'), t.Literal('approve')])),
        channels: t.Union([t.Literal('all'), t.Array(t.String())], { description: '`all`, or the channel ids the key is limited to.' }),
        expiresAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
      },
      strict,
    ),
    quota: t.Object(
      {
        requestsPerMinute: t.Integer(),
        requestsPerMonth: t.Union([t.Integer(), t.Null()], { description: 'null means unlimited.' }),
        usedThisMonth: t.Integer(),
        resetsAt: DateTime('Start of the next quota period (00:00 UTC on the first of next month).'),
      },
      strict,
    ),
  },
  strict,
);

export const ChannelSchema = t.Object(
  {
    id: t.String({ description: 'Used in `channelIds` when posting.' }),
    platform: oneOf(PLATFORMS, 'Upper-case platform name.'),
    name: t.String(),
    status: oneOf(CHANNEL_STATUSES, 'A healthy channel is `active`; `reauth_required` must be reconnected.'),
    rules: t.Object(
      {
        requiresMedia: t.Boolean({ description: 'A post to this channel needs an image or a video.' }),
        maxChars: t.Integer({
          description:
            'Maximum text length, counted as the platform counts: X weighted (most CJK characters and emoji 2, every URL 23), Mastodon with every URL as 23 and @user@domain as @user, others in grapheme clusters.',
        }),
        requiredFields: t.Array(t.String(), { description: 'Extra body fields a post to this channel needs, e.g. `reddit.subreddit`.' }),
      },
      strict,
    ),
  },
  strict,
);

export const ChannelListSchema = t.Object({ data: t.Array(ChannelSchema) }, strict);

const ThreadItemSchema = t.Object(
  { content: t.String(), mediaIds: t.Array(t.String(), { description: 'Attached media item ids, in order.' }) },
  strict,
);

export const PostItemSchema = t.Object(
  {
    position: t.Integer({ minimum: 0, description: '0: the post itself; 1, 2, …: its follow-ups in publishing order.' }),
    kind: t.Union([t.Literal('post'), t.Literal('reply'), t.Literal('comment')], {
      description: '`reply`: a reply to the item before (a thread); `comment`: a comment under the post (the first comment).',
    }),
    content: t.String(),
    mediaIds: t.Array(t.String()),
    status: oneOf(POST_CHANNEL_STATUSES, 'draft (not sent yet) → publishing → published | failed.'),
    platformPostId: NullableString('The platform’s id of this item, once published.'),
    url: NullableString('Live URL of this item (http or https); null until published, or when the platform answered no http(s) URL.'),
    publishedAt: NullableDateTime('When the platform accepted this item.'),
    error: NullableString('Why this item failed.'),
    errorCode: t.Union([oneOf(CHANNEL_ERROR_CODES), t.Null()], { description: 'As the channel’s `errorCode`, on the item that failed.' }),
    retryable: t.Union([t.Boolean(), t.Null()], { description: 'As the channel’s `retryable`, on the item that failed.' }),
  },
  strict,
);

export const PostChannelSchema = t.Object(
  {
    channelId: t.String(),
    platform: t.String(),
    status: oneOf(POST_CHANNEL_STATUSES, 'Per-channel status: draft (waiting) → publishing → published | failed.'),
    content: t.String({ description: 'The text used on this channel.' }),
    platformPostId: NullableString('The platform’s id of the post, once published.'),
    url: NullableString(
      'Live URL of the published post (http or https); null until published, or when the platform answered no http(s) URL.',
    ),
    publishedAt: NullableDateTime('When the platform accepted the post.'),
    error: NullableString('Why the channel failed (the platform’s reason).'),
    errorCode: t.Union([oneOf(CHANNEL_ERROR_CODES), t.Null()], {
      description:
        'What kind of failure, for programs; null unless `status` is failed. `reauth_required`: reconnect the channel. `rate_limited`: the platform’s limit, retry later. `platform_unavailable`: the platform failed or did not answer through every automatic retry. `rejected_content`: the platform (or this service’s outbound guard) refused the post as it is: change it. `media_rejected`: the platform refused an attachment. `may_have_posted`: the answer was lost after sending and the platform cannot be asked: check it before retrying. `unknown`: anything else, and channels that failed before this field existed. `not_approved`: the post waited for approval that did not come within 24 hours of its time; nothing was sent.',
    }),
    retryable: t.Union([t.Boolean(), t.Null()], {
      description:
        'Whether POST /v1/posts/{id}/retry may succeed for this channel: true for reauth_required (once reconnected), rate_limited, platform_unavailable, may_have_posted and unknown; false for rejected_content, media_rejected and not_approved. Null unless `status` is failed.',
    }),
    items: t.Array(PostItemSchema, {
      description:
        'The post on this channel (position 0) and its follow-ups (a thread’s replies, or the first comment), each with its own outcome. The channel is published once every item is; a failed item carries the reason, the items before it stay published, those after it stay draft until a retry resumes at it.',
    }),
  },
  strict,
);

export const PostMediaSchema = t.Object(
  { id: t.String(), type: t.String(), url: t.String({ description: 'Signed link, valid for one hour.' }) },
  strict,
);

/** Who did something: an approval's requester and decider, an audit event's actor. */
export const ActorSchema = t.Object(
  {
    type: oneOf(
      AUDIT_ACTOR_TYPES,
      '`member` (the web app), `api_key` (the API, the MCP server), `reviewer` (a preview link), `operator` (the admin CLI), `invitee` (an invitation answered through its link without an account session).',
    ),
    id: NullableString('The member’s user id, the key’s id; null for a reviewer, an operator or an invitee.'),
    name: t.String({ description: 'The member’s e-mail, the key’s name, the name a reviewer gave: as the actor was known then.' }),
  },
  strict,
);

export const ApprovalSchema = t.Object(
  {
    status: oneOf(APPROVAL_STATUSES, 'pending until approved or rejected; a post is published only once approved.'),
    requestedBy: ActorSchema,
    requestedAt: DateTime('When approval was asked for (its creation, or the edit that asked again).'),
    decidedBy: t.Union([ActorSchema, t.Null()], { description: 'Who approved or rejected it; null while pending.' }),
    decidedAt: NullableDateTime('When it was approved or rejected; null while pending.'),
    comment: NullableString('The decision’s comment, if any.'),
  },
  strict,
);

export const PostSchema = t.Object(
  {
    id: t.String(),
    status: oneOf(
      POST_STATUSES,
      'scheduled until its time, publishing while any channel is in flight, then published (every channel) or failed (one or more failed).',
    ),
    content: t.String({ description: 'Default text.' }),
    scheduledAt: DateTime('When the post is (or was) published.'),
    publishedAt: NullableDateTime('When the last channel was published.'),
    createdAt: DateTime(),
    source: t.String({ description: '`api` for posts created through this interface, `app` for posts created in the web application.' }),
    channels: t.Array(PostChannelSchema, { description: 'One per target channel.' }),
    media: t.Array(PostMediaSchema, { description: 'Attached media items, in order.' }),
    reddit: t.Union([t.Object({ subreddit: t.String(), title: t.String() }, strict), t.Null()], {
      description: 'Reddit subreddit and title; null when not given.',
    }),
    seriesId: NullableString('The series (`ser_…`, /v1/series) this post is an occurrence of; null for a post of its own.'),
    thread: t.Union([t.Array(ThreadItemSchema), t.Null()], {
      description: 'The replies asked for after the post (null: none); each channel’s own are its `items`.',
    }),
    threadByPlatform: t.Record(t.String(), t.Array(ThreadItemSchema), { description: 'Threads per platform, instead of `thread` there.' }),
    firstComment: t.Union([t.Object({ content: t.String() }, strict), t.Null()], {
      description: 'The first comment asked for; null: none.',
    }),
    options: t.Record(t.String(), t.Record(t.String(), t.Unknown()), {
      description: 'Per-platform post options as asked for (`options` of Schedule a post documents each field); `{}`: none.',
    }),
    approval: t.Union([ApprovalSchema, t.Null()], {
      description:
        'The post’s approval when it waits for one (its maker’s posts need approval: docs/api.md “Approval”); null: published without. A post is never published unapproved: past `scheduledAt` plus 24 hours without approval its channels fail with `errorCode: not_approved`.',
    }),
  },
  strict,
);

/** POST /v1/posts/bulk: one row's outcome. */
export const BulkRowSchema = t.Union(
  [
    t.Object(
      { index: t.Integer({ description: 'The row’s place in `posts`, from 0.' }), status: t.Literal(201), post: PostSchema },
      strict,
    ),
    t.Object(
      {
        index: t.Integer({ description: 'The row’s place in `posts`, from 0.' }),
        status: t.Integer({ description: 'The status POST /v1/posts would have answered for this row alone.' }),
        error: ErrorSchema.properties.error,
      },
      strict,
    ),
  ],
  {
    description:
      'The post created (201), or the error body a single create would have answered, its field paths prefixed with `posts.<index>.`.',
  },
);

export const BulkResultSchema = t.Object(
  {
    mode: t.Union([t.Literal('all_or_nothing'), t.Literal('each')]),
    created: t.Integer({ description: 'How many posts were created.' }),
    failed: t.Integer({ description: 'How many rows were not created.' }),
    results: t.Array(BulkRowSchema, { description: 'One per row, in the order of `posts`.' }),
  },
  strict,
);

export const PostListSchema = t.Object(
  {
    data: t.Array(PostSchema, { description: 'Newest first (by scheduledAt, then id).' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

export const PostValidationSchema = t.Object(
  {
    valid: t.Literal(true, { description: 'Always true: a body that breaks a rule gets the error create would give instead.' }),
    publishAt: NullableDateTime('When the post would be published (UTC); null: now.'),
    channels: t.Array(
      t.Object(
        {
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          content: t.String({ description: 'The text this channel would get: its platform’s `contentByPlatform` entry, else `content`.' }),
          characters: t.Integer({ description: 'Its length as the platform counts it (see the channel’s `rules.maxChars`).' }),
          maxChars: t.Integer({ description: 'The channel’s `rules.maxChars`.' }),
          items: t.Array(
            t.Object(
              {
                position: t.Integer({ minimum: 1 }),
                kind: t.Union([t.Literal('reply'), t.Literal('comment')]),
                content: t.String(),
                mediaIds: t.Array(t.String()),
                characters: t.Integer({ description: 'Its length as the platform counts it (a comment: in characters).' }),
                maxChars: t.Integer({
                  description: 'The limit for this item: the channel’s for a reply, the platform’s comment limit for a comment.',
                }),
              },
              strict,
            ),
            { description: 'The follow-up items this channel would get, in publishing order.' },
          ),
        },
        strict,
      ),
      { description: 'One per target channel, in the order of `channelIds`: what create would store for it.' },
    ),
  },
  strict,
);

export const MediaItemSchema = t.Object(
  {
    id: t.String({ description: 'Used in `mediaIds` when creating a post.' }),
    type: oneOf(MEDIA_TYPES),
    status: oneOf(MEDIA_STATUSES, 'pending until completed, then ready, or failed (see `error`).'),
    fileName: t.String(),
    mimeType: t.String(),
    sizeBytes: t.Integer(),
    url: NullableString('Signed link valid for one hour; null until ready.'),
    thumbnailUrl: NullableString('Signed link to a WebP thumbnail (images, GIFs, videos); null until ready.'),
    width: NullableInteger('Pixels; null where it does not apply.'),
    height: NullableInteger('Pixels; null where it does not apply.'),
    durationSeconds: NullableInteger('Null where it does not apply.'),
    altText: NullableString('Alternative text given at upload.'),
    description: NullableString('What the file shows, from the automatic vision pass; null until that pass has run.'),
    error: NullableString('Why the item failed; null unless status is failed (an addition to SPEC.md §2.4).'),
    createdAt: DateTime(),
  },
  strict,
);

export const UploadInstructionsSchema = t.Object(
  {
    method: t.Literal('PUT'),
    url: t.String({ description: 'Address to PUT the file bytes to.' }),
    headers: t.Record(t.String(), t.String(), { description: 'Exactly the headers the PUT must carry (at least Content-Type).' }),
    expiresAt: DateTime('The PUT and the completion must happen before this (15 minutes).'),
  },
  strict,
);

export const UploadResponseSchema = t.Object(
  {
    media: MediaItemSchema,
    upload: UploadInstructionsSchema,
    next: t.String({ description: 'The follow-up step, in words.' }),
  },
  strict,
);

/** Named schemas of the OpenAPI document's `components.schemas`: wherever one appears it becomes a `$ref`. */
// Webhooks (docs/api.md "Webhooks").
const WebhookEvents = t.Union([t.Literal('all'), t.Array(t.String({ enum: [...WEBHOOK_EVENT_TYPES] }), { description: 'Event types.' })], {
  description: 'The event types the endpoint receives, or `"all"`.',
});

export const WebhookEndpointSchema = t.Object(
  {
    id: t.String(),
    url: t.String(),
    description: NullableString('Free text for the owner.'),
    events: WebhookEvents,
    enabled: t.Boolean({
      description:
        'False: nothing is sent (disabled by the owner, or by the service after a `410 Gone` or 5 days of only failed deliveries).',
    }),
    disabledReason: NullableString(
      'Why the service disabled the endpoint (a `410 Gone` answer, or no delivery succeeded for 5 days); null when enabled or disabled by the owner. Enabling it again clears it.',
    ),
    disabledAt: NullableDateTime('When the endpoint was disabled (by the service or the owner); null while enabled.'),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const WebhookEndpointListSchema = t.Object({ data: t.Array(WebhookEndpointSchema, { description: 'Oldest first.' }) }, strict);

export const WebhookSecretResponseSchema = t.Object(
  {
    endpoint: WebhookEndpointSchema,
    secret: t.String({ description: 'The signing secret (`whsec_…`), shown only in this answer.' }),
    previousSecretExpiresAt: t.Optional(DateTime('After a rotation: until when the previous secret signs too.')),
  },
  strict,
);

export const WebhookDeliverySchema = t.Object(
  {
    id: t.String(),
    eventId: t.String({ description: 'The `webhook-id` header of every attempt.' }),
    eventType: t.String(),
    status: oneOf(['pending', 'delivered', 'failed'], '`pending` while attempts remain.'),
    attempts: t.Integer({ description: 'Attempts made so far.' }),
    statusCode: NullableInteger('The last attempt’s HTTP status; null when it got no answer.'),
    durationMs: NullableInteger('How long the last attempt took.'),
    error: NullableString('Why the last attempt failed; null if it succeeded.'),
    lastAttemptAt: NullableDateTime('When the last attempt was made.'),
    nextRetryAt: NullableDateTime('When the next attempt is due; null unless pending after a failed attempt.'),
    createdAt: DateTime(),
  },
  strict,
);

export const WebhookDeliveryListSchema = t.Object(
  {
    data: t.Array(WebhookDeliverySchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

export const WebhookTestSchema = t.Object(
  { eventId: t.String(), deliveryId: t.String({ description: 'Follow it in the delivery log.' }) },
  strict,
);

/** POST /v1/generate/post (services/generate.ts): a draft per channel; nothing is created. */
export const GeneratedDraftsSchema = t.Object(
  {
    data: t.Array(
      t.Object(
        {
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          content: t.String({
            description: 'The draft text for this channel: use it as `content` (or `contentByPlatform[platform]`) when creating the post.',
          }),
          characters: t.Integer({ description: 'Its length as the platform counts it, as create counts it; never over `maxChars`.' }),
          maxChars: t.Integer({ description: 'The channel’s `rules.maxChars`.' }),
          reddit: t.Union(
            [
              t.Object(
                {
                  title: t.String({ description: 'A title for the post; the subreddit is yours to choose.' }),
                  characters: t.Integer(),
                  maxChars: t.Integer(),
                },
                strict,
              ),
              t.Null(),
            ],
            { description: 'REDDIT channels: the generated title (Reddit requires one); null elsewhere.' },
          ),
          truncated: t.Boolean({
            description:
              'True when the model’s text was still over a limit after one correction round and was cut at a character (grapheme) boundary to fit.',
          }),
          missingFields: t.Array(t.String(), {
            description:
              'Fields create needs for this channel that a draft cannot choose: `reddit.subreddit`, `mediaIds` (the channel requires media and none was given).',
          }),
        },
        strict,
      ),
      { description: 'One per channel, in the order of `channelIds`.' },
    ),
  },
  strict,
);

/** POST /v1/generate/alt-text: a suggestion from the vision pass; the media item is not changed. */
export const GeneratedAltTextSchema = t.Object(
  {
    mediaId: t.String(),
    altText: t.String({ description: 'Suggested alt text (at most 1500 characters, what an upload’s `altText` takes).' }),
    characters: t.Integer(),
    truncated: t.Boolean({ description: 'True when the description was longer and was cut at a character boundary.' }),
  },
  strict,
);

// Queues and recurring posts (docs/api.md "Queues" and "Recurring posts (series)").
export const QueueSlotSchema = t.Object(
  {
    weekday: oneOf(WEEKDAYS),
    time: t.String({
      pattern: SLOT_TIME_PATTERN,
      description: 'Local time of day in the queue’s `timeZone`, `HH:MM` (24-hour).',
    }),
  },
  strict,
);

export const QueueSchema = t.Object(
  {
    channelId: t.String(),
    timeZone: t.String({ description: 'IANA time zone the slots are in: the channel’s own, else the organization’s (UTC unless set).' }),
    timeZoneSource: oneOf(['channel', 'organization'], 'Whether `timeZone` is the channel’s own setting or the organization’s.'),
    slots: t.Array(QueueSlotSchema, { description: 'Weekly slots, Monday first, then by time.' }),
    nextFreeSlots: t.Array(DateTime(), {
      description:
        'The next free slot times (UTC), ascending, within 90 days: slot times at which no other post (not deleted, scheduled or publishing) sits on this channel.',
    }),
  },
  strict,
);

export const SeriesRepeatSchema = t.Object(
  {
    every: oneOf(['day', 'week', 'month']),
    interval: t.Integer({ description: 'Every `interval` days, weeks or months.' }),
    until: NullableDateTime('No occurrence after this instant; null: no end date.'),
    count: NullableInteger('At most this many occurrences, the first included; null: no limit.'),
  },
  strict,
);

export const SeriesSchema = t.Object(
  {
    id: t.String(),
    status: oneOf(
      ['active', 'paused', 'ended'],
      '`active` while occurrences are to come; `paused` when its maker may no longer make its posts (`pausedReason`; PATCH `status: active` resumes it, the resuming key its maker from then on); `ended` once the rule has none left.',
    ),
    content: t.String(),
    contentByPlatform: t.Record(t.String(), t.String()),
    channelIds: t.Array(t.String()),
    mediaIds: t.Array(t.String()),
    reddit: t.Union([t.Object({ subreddit: t.String(), title: t.String() }, strict), t.Null()]),
    options: t.Record(t.String(), t.Record(t.String(), t.Unknown()), {
      description: 'Per-platform post options each occurrence gets (as `options` of Schedule a post); `{}`: none.',
    }),
    publishAt: DateTime('The first occurrence; the rule repeats its local time of day in `timeZone`.'),
    timeZone: t.String({ description: 'IANA time zone of the rule (daylight-saving changes keep the local time of day).' }),
    repeat: SeriesRepeatSchema,
    occurrencesCreated: t.Integer({ description: 'Occurrences created (or skipped, see `lastError`) so far.' }),
    nextOccurrenceAt: NullableDateTime(
      'When the next occurrence is due (it is created as a post 5 minutes before); null when none is left.',
    ),
    lastError: t.Union([t.Object({ at: t.String({ format: 'date-time' }), code: t.String(), message: t.String() }, strict), t.Null()], {
      description:
        'Why the last occurrence that could not be created was skipped (the create checks refused it: `code` and `message` as POST /v1/posts would answer); null when none was.',
    }),
    pausedReason: t.Union([t.String(), t.Null()], {
      description:
        'Why it is paused: the key that made it was revoked or expired, or its member left or lost the role to post; null when it is not paused.',
    }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const SeriesListSchema = t.Object({ data: t.Array(SeriesSchema, { description: 'Oldest first.' }) }, strict);

const METRIC_NOTES: Record<Metric, string> = {
  impressions: 'Times the post was shown.',
  views: 'Plays of its video.',
  likes: 'Likes, favourites, reactions.',
  replies: 'Replies or comments.',
  reposts: 'Reposts, boosts, retweets, shares.',
  quotes: 'Quote posts.',
  saves: 'Saves and bookmarks.',
  clicks: 'Link clicks.',
};

/** Every metric of the vocabulary; null where the platform reports none (never 0 in its place). */
const metricsSchema = (description?: string) =>
  t.Object(
    Object.fromEntries(METRICS.map((m) => [m, NullableInteger(METRIC_NOTES[m])])) as Record<Metric, ReturnType<typeof NullableInteger>>,
    { ...strict, ...(description ? { description } : {}) },
  );

export const PostAnalyticsSchema = t.Object(
  {
    postId: t.String(),
    channels: t.Array(
      t.Object(
        {
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          status: oneOf(POST_CHANNEL_STATUSES),
          platformPostId: NullableString('The platform’s id of the post, once published.'),
          url: NullableString('Live URL of the published post.'),
          metrics: metricsSchema(
            'The latest figure of each metric: from the newest reading that had one (a reading that got nothing keeps the last).',
          ),
          measuredAt: t.Object(
            Object.fromEntries(METRICS.map((m) => [m, NullableDateTime(`When \`metrics.${m}\` was read.`)])) as Record<
              Metric,
              ReturnType<typeof NullableDateTime>
            >,
            { ...strict, description: 'When each figure of `metrics` was read; null where there is none.' },
          ),
          lastReadingAt: NullableDateTime('The newest reading.'),
          nextReadingAt: NullableDateTime('The next scheduled reading; null once the post is no longer followed.'),
          error: NullableString('Why the last reading got nothing (the platform’s reason, a channel to reconnect, a deleted post).'),
          history: t.Array(t.Object({ measuredAt: DateTime(), metrics: metricsSchema() }, strict), {
            description: 'Every reading, oldest first.',
          }),
        },
        strict,
      ),
      { description: 'One per channel of the post.' },
    ),
  },
  strict,
);

export const AnalyticsSummarySchema = t.Object(
  {
    from: DateTime('Start of the range (inclusive).'),
    to: DateTime('End of the range (exclusive).'),
    groupBy: oneOf(['day', 'week']),
    timeZone: t.String({ description: 'The organization’s time zone, in which the periods are days or weeks.' }),
    posts: t.Integer({ description: 'Channel posts published in the range.' }),
    totals: metricsSchema('Each figure summed over the posts that report it; null when none does.'),
    series: t.Array(
      t.Object(
        {
          period: t.String({ description: 'The period’s first day (YYYY-MM-DD, a Monday for weeks).' }),
          start: DateTime('When the period starts.'),
          posts: t.Integer(),
          totals: metricsSchema(),
        },
        strict,
      ),
      { description: 'Every period of the range in order, empty ones too, by each channel post’s publishing time.' },
    ),
    topPosts: t.Array(
      t.Object(
        {
          postId: t.String(),
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          url: NullableString('Live URL.'),
          publishedAt: DateTime(),
          engagement: t.Integer({ description: 'likes + replies + reposts + quotes + saves (those reported).' }),
          metrics: metricsSchema(),
        },
        strict,
      ),
      { description: 'The 10 channel posts of most engagement, ties by newest.' },
    ),
  },
  strict,
);

const BestTimeCellSchema = t.Object(
  {
    weekday: oneOf(WEEKDAYS),
    hour: t.Integer({ minimum: 0, maximum: 23, description: 'Hour of publishing in `timeZone`.' }),
    posts: t.Integer(),
    averageEngagement: t.Number({ description: 'Mean of likes + replies + reposts + quotes + saves of those posts.' }),
  },
  strict,
);

const Named = (fields: Record<string, TSchema>) => t.Object(fields, strict);

export const ChannelCapabilitiesSchema = t.Object(
  {
    channelId: t.String(),
    platform: oneOf(PLATFORMS),
    fixed: t.Object(
      {
        maxChars: t.Integer({ description: 'The longest text, counted as the platform counts.' }),
        requiresMedia: t.Boolean(),
        media: t.Object(
          {
            maxItems: t.Integer(),
            types: t.Array(t.String(), { description: 'Media types accepted: image, gif, video, document, audio.' }),
            videoAlone: t.Boolean({ description: 'A video must be the only attachment.' }),
            requires: t.Optional(t.Union([t.Literal('video'), t.Literal('image')], { description: 'The kind of media a post needs.' })),
          },
          strict,
        ),
        followUps: t.Object(
          {
            kind: t.Union([t.Literal('thread'), t.Literal('comment'), t.Null()], {
              description: '`thread`: replies after the post; `comment`: a first comment under it; null: neither.',
            }),
            maxItems: t.Optional(t.Integer({ description: 'Most replies after the post (thread).' })),
            maxChars: t.Optional(t.Integer({ description: 'Longest comment (comment).' })),
          },
          strict,
        ),
      },
      { ...strict, description: 'The platform’s facts for this channel (the same as create checks).' },
    ),
    live: t.Union(
      [
        Named({
          platform: t.Literal('TIKTOK'),
          creatorUsername: t.Union([t.String(), t.Null()]),
          privacyLevelOptions: t.Array(t.String(), { description: 'The privacy levels this creator may choose now.' }),
          maxVideoDurationSec: t.Union([t.Integer(), t.Null()]),
          commentDisabled: t.Boolean(),
          duetDisabled: t.Boolean(),
          stitchDisabled: t.Boolean(),
        }),
        Named({
          platform: t.Literal('PINTEREST'),
          boards: t.Array(Named({ id: t.String(), name: t.String(), privacy: t.Union([t.String(), t.Null()]) })),
          boardsComplete: t.Boolean({ description: 'False when the account has more boards than were read.' }),
          defaultBoardId: t.Union([t.String(), t.Null()], {
            description: 'The channel’s own board: where a post goes without `options.pinterest.boardId`.',
          }),
        }),
        Named({
          platform: t.Literal('REDDIT'),
          subreddit: t.String(),
          flairs: t.Array(Named({ id: t.String(), text: t.String() })),
          flairRequired: t.Boolean(),
          allows: Named({ text: t.Boolean(), link: t.Boolean(), image: t.Boolean(), video: t.Boolean(), gallery: t.Boolean() }),
          over18: t.Boolean(),
          titleMinChars: t.Union([t.Integer(), t.Null()]),
          titleMaxChars: t.Union([t.Integer(), t.Null()]),
        }),
        Named({ platform: t.Literal('YOUTUBE'), categories: t.Array(Named({ id: t.String(), title: t.String() })) }),
        t.Null(),
      ],
      { description: 'What the platform says of this account now; null where it says nothing of the kind, or the read failed.' },
    ),
    readAt: NullableDateTime('When the live part was read (kept 5 minutes).'),
    liveError: t.Union(
      [Named({ kind: t.Union([t.Literal('reauth'), t.Literal('transient'), t.Literal('permanent')]), message: t.String() }), t.Null()],
      { description: 'Why there is no live part: the platform refused or failed the read (the channel is not changed by it).' },
    ),
  },
  strict,
);

export const BestTimesSchema = t.Object(
  {
    channelId: t.String(),
    timeZone: t.String({ description: 'The channel’s queue time zone, in which weekdays and hours are counted.' }),
    since: DateTime('Posts published from this instant (90 days back) count.'),
    posts: t.Integer({ description: 'Posts with at least one reading behind the cells.' }),
    cells: t.Array(BestTimeCellSchema, { description: 'Every weekday and hour with posts, Monday 00 first.' }),
    best: t.Array(BestTimeCellSchema, { description: 'Cells with at least 2 posts, best mean engagement first.' }),
    suggestedSlots: t.Array(QueueSlotSchema, {
      description: 'The 5 best cells as queue slots: PUT them to /v1/channels/{id}/queue (with this timeZone) to post at those times.',
    }),
  },
  strict,
);

/** GET /v1/audit-events (domain/audit.ts): one change made to the organization. */
export const AuditEventSchema = t.Object(
  {
    id: t.String({ description: 'Event id (`aud_…`), time-ordered.' }),
    occurredAt: DateTime('When it happened, by the service’s database clock.'),
    actor: ActorSchema,
    action: t.String({
      description: 'What was done, `resource.verb`: e.g. `post.create`, `member.role_change` (docs/decisions.md “Audit log”).',
    }),
    resource: t.Object(
      {
        type: t.String({ description: 'e.g. `post`, `webhook`, `member`, `api_key`.' }),
        id: NullableString('The resource’s id; null where the change has none.'),
      },
      strict,
    ),
    ip: NullableString('The client’s address, where the interface knows it.'),
    userAgent: NullableString('The client’s User-Agent header.'),
    details: t.Record(t.String(), t.Unknown(), {
      description: 'More about the change: e.g. the key’s member (`memberUserId`), the member’s role, the request id.',
    }),
  },
  strict,
);

export const AuditEventListSchema = t.Object(
  {
    data: t.Array(AuditEventSchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

export const FeedFilterSchema = t.Object(
  {
    include: t.Optional(
      t.Array(t.String(), { description: 'Posted only if the title, summary or categories contain one of these (any letter case).' }),
    ),
    exclude: t.Optional(t.Array(t.String(), { description: 'Never posted if the title, summary or categories contain one of these.' })),
  },
  strict,
);

export const FeedSchema = t.Object(
  {
    id: t.String(),
    name: t.String({ description: 'The feed’s own title unless given.' }),
    url: t.String(),
    channelIds: t.Array(t.String()),
    template: t.String({
      description: 'The text of each item’s post: `{title}`, `{link}`, `{summary}`, `{author}`, `{categories}`, `{feed}`.',
    }),
    templateByPlatform: t.Record(t.String(), t.String(), {
      description: 'A template per platform (upper-case platform name), instead of `template` there.',
    }),
    mode: oneOf(
      ['now', 'queue'],
      '`now`: each new item is published at once; `queue`: at the next free slot of the channels’ posting queues.',
    ),
    filter: t.Union([FeedFilterSchema, t.Null()], { description: 'Which items are posted; null: all.' }),
    pollMinutes: t.Integer({ description: 'Minutes between two reads.' }),
    status: oneOf(['active', 'paused'], '`paused` by its owner, or by the service after 5 failed reads in a row (`pausedReason`).'),
    pausedReason: NullableString('Why the service paused it; null when it is active or its owner paused it.'),
    consecutiveFailures: t.Integer({ description: 'Failed reads since the last that succeeded.' }),
    lastPolledAt: NullableDateTime('The last read; null before the first.'),
    lastSuccessAt: NullableDateTime('The last read that succeeded (a 304 included).'),
    lastError: t.Union([t.Object({ at: t.String({ format: 'date-time' }), message: t.String() }, strict), t.Null()], {
      description: 'The last failed read since the last success; null when none.',
    }),
    nextPollAt: NullableDateTime('When it is read next; null while paused.'),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const FeedListSchema = t.Object({ data: t.Array(FeedSchema, { description: 'Oldest first.' }) }, strict);

export const FeedItemSchema = t.Object(
  {
    itemKey: t.String({ description: 'The item’s identity: its RSS guid or Atom id, else its link, else its title and summary.' }),
    title: NullableString('Its title when it was seen.'),
    link: NullableString('Its link when it was seen.'),
    outcome: oneOf(
      ['posted', 'backlog', 'filtered', 'refused'],
      '`posted`: its post was created (`postId`); `backlog`: in the feed when it was added, not posted; `filtered`: left out by the filter; `refused`: the post could not be created (`error`).',
    ),
    postId: NullableString('The post made of it.'),
    error: t.Union([t.Object({ code: t.String(), message: t.String() }, strict), t.Null()], {
      description: 'Why its post was refused, as Schedule a post would answer.',
    }),
    seenAt: DateTime('When the feed first showed it.'),
  },
  strict,
);

export const FeedItemListSchema = t.Object(
  {
    data: t.Array(FeedItemSchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

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
  Approval: ApprovalSchema,
  FeedFilter: FeedFilterSchema,
  Feed: FeedSchema,
  FeedList: FeedListSchema,
  FeedItem: FeedItemSchema,
  FeedItemList: FeedItemListSchema,
};
