// Comments collected under published posts (docs/api.md "Comments").
import { t } from 'elysia';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { COMMENT_STATUSES, REPLY_STATUSES } from '../../db/entities/comment.ts';
import { CHANNEL_ERROR_CODES } from '../../workflows/publish-failure-types.ts';
import { strict, DateTime, NullableDateTime, NullableString, oneOf } from './primitives.ts';
import { ActorSchema, ApprovalSchema } from './posts.ts';

const ErrorCode = (description: string) => t.Union([oneOf(CHANNEL_ERROR_CODES), t.Null()], { description });

const ModerationSchema = t.Object(
  {
    action: oneOf(['hide', 'unhide'] as const, 'What was asked for: `hide`, or `unhide` (show it again).'),
    status: oneOf(['pending', 'done', 'failed'] as const, '`pending` while the platform is asked; `done`; `failed` with `error`.'),
    requestedAt: DateTime('When it was asked for.'),
    error: NullableString('Why the platform refused, when it failed.'),
    errorCode: ErrorCode('As a channel’s `errorCode`, when it failed.'),
  },
  strict,
);

const commentFields = {
  id: t.String(),
  postId: t.String(),
  channelId: t.String(),
  platform: oneOf(PLATFORMS, 'Upper-case platform name.'),
  parentId: NullableString(
    'The comment it answers; null when it answers the post or one of its thread items (or a comment no longer shown).',
  ),
  platformCommentId: t.String({ description: 'The platform’s own id of the comment.' }),
  author: t.Object(
    {
      name: NullableString('Display name; null where the platform shows none (Instagram) or the account has none.'),
      handle: NullableString('The handle on the platform (Mastodon `user@domain`, Bluesky, Instagram); null on Facebook.'),
      avatarUrl: NullableString('An http(s) URL of the picture, where the platform gives one.'),
      profileUrl: NullableString('An http(s) URL of the profile, where the platform gives one.'),
    },
    strict,
  ),
  text: t.String({ description: 'Plain text.' }),
  createdAt: DateTime('When the platform says it was written.'),
  url: NullableString('The comment on the platform (http(s)), where the platform gives one.'),
  ours: t.Boolean({ description: 'Written by the channel’s own account (one of your replies).' }),
  status: oneOf(COMMENT_STATUSES, '`unread` until marked `read`; `replied` once answered; `hidden` once hidden on the platform.'),
  assigneeUserId: NullableString('The member who answers it; null: no one yet.'),
  moderation: t.Union([ModerationSchema, t.Null()], {
    description: 'The last hide or show-again asked for (POST /v1/comments/{id}/hide, /unhide) and how it went; null: none.',
  }),
  collectedAt: DateTime('When the service first read it.'),
};

export const CommentSchema = t.Object(commentFields, strict);

export const CommentListSchema = t.Object(
  {
    data: t.Array(CommentSchema, { description: 'Newest first (by `createdAt`).' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

export const ConversationSchema = t.Object(
  {
    data: t.Array(
      t.Object(
        {
          ...commentFields,
          depth: t.Integer({
            minimum: 0,
            description: '0: it answers the post or one of its thread items; 1: it answers a comment of depth 0; …',
          }),
        },
        strict,
      ),
      {
        description:
          'The post’s conversation on all of its channels as a tree, depth first: each comment is followed by the comments answering it (`parentId`), each level in the order written.',
      },
    ),
  },
  strict,
);

export const ReplySchema = t.Object(
  {
    id: t.String({ description: 'Reply id (`rpl_…`).' }),
    commentId: t.String({ description: 'The comment it answers.' }),
    postId: t.String(),
    channelId: t.String(),
    platform: oneOf(PLATFORMS, 'Upper-case platform name.'),
    content: t.String(),
    status: oneOf(
      REPLY_STATUSES,
      '`pending_approval` (a contributor’s, until approved), `publishing`, then `published` or `failed`; `rejected`; `deleting` and `deleted` (removed from the platform, or never sent).',
    ),
    platformReplyId: NullableString('The platform’s id of the reply, once published.'),
    url: NullableString('The reply on the platform (http(s)), once published.'),
    publishedAt: NullableDateTime('When the platform accepted it.'),
    error: NullableString('Why it failed (or why its delete did).'),
    errorCode: ErrorCode('As a channel’s `errorCode`: what a client can do about the failure.'),
    retryable: t.Union([t.Boolean(), t.Null()], { description: 'As a channel’s `retryable`.' }),
    approval: t.Union([ApprovalSchema, t.Null()], {
      description:
        'The reply’s approval when it waits for one (a contributor’s replies need it, as their posts do); null: sent without. Not approved within 24 hours: `failed` with `errorCode: not_approved`.',
    }),
    createdBy: ActorSchema,
    createdAt: DateTime('When it was asked for.'),
  },
  strict,
);

export const ReplyListSchema = t.Object({ data: t.Array(ReplySchema, { description: 'Oldest first.' }) }, strict);
