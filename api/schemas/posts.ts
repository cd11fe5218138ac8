// Posts (SPEC.md §2): a post, its channels and follow-up items, approval, lists, bulk results, checks.
import { t } from 'elysia';
import { ErrorSchema } from './errors.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { APPROVAL_STATUSES, POST_STATUSES } from '../../db/entities/post.ts';
import { POST_CHANNEL_STATUSES } from '../../db/entities/post-channel.ts';
import { CHANNEL_ERROR_CODES } from '../../workflows/publish-failure-types.ts';
import { AUDIT_ACTOR_TYPES } from '../../domain/audit.ts';
import { VIEW_FIELDS } from '../../domain/posts/content.ts';
import { strict, DateTime, NullableDateTime, NullableString, oneOf } from './primitives.ts';

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
        'What kind of failure, for programs; null unless `status` is failed. `reauth_required`: reconnect the channel. `rate_limited`: the platform’s limit, retry later. `platform_unavailable`: the platform failed or did not answer through every automatic retry. `rejected_content`: the platform (or this service’s outbound guard) refused the post as it is: change it. `media_rejected`: the platform refused an attachment. `may_have_posted`: the answer was lost after sending and the platform cannot be asked: check it before retrying. `unknown`: anything else, and channels that failed before this field existed. `not_approved`: the post waited for approval that did not come within 24 hours of its time; nothing was sent. `api_version_retired`: the platform no longer serves the API version the service sends; the operator sets a current one (the error names the setting).',
    }),
    retryable: t.Union([t.Boolean(), t.Null()], {
      description:
        'Whether POST /v1/posts/{id}/retry may succeed for this channel: true for reauth_required (once reconnected), rate_limited, platform_unavailable, may_have_posted, unknown and api_version_retired (once the setting is changed); false for rejected_content, media_rejected and not_approved. Null unless `status` is failed.',
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
    ...VIEW_FIELDS,
    scheduledAt: DateTime('When the post is (or was) published.'),
    publishedAt: NullableDateTime('When the last channel was published.'),
    createdAt: DateTime(),
    source: t.String({ description: '`api` for posts created through this interface, `app` for posts created in the web application.' }),
    channels: t.Array(PostChannelSchema, { description: 'One per target channel.' }),
    media: t.Array(PostMediaSchema, { description: 'Attached media items, in order.' }),
    tagIds: t.Array(t.String(), { description: 'The organization’s tags on the post (GET /tags), in id order; `[]`: none.' }),
    seriesId: NullableString('The series (`ser_…`, /v1/series) this post is an occurrence of; null for a post of its own.'),
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
          characters: t.Integer({
            description:
              'Its length as the platform counts it (see the channel’s `rules.maxChars`), its links as the short links they become when `links.shorten`.',
          }),
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
