// Comments collected under published posts (docs/api.md "Comments").
import { t } from 'elysia';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { COMMENT_STATUSES } from '../../db/entities/comment.ts';
import { strict, DateTime, NullableString, oneOf } from './primitives.ts';

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
