// Channels (GET /v1/channels) and what a channel's account can do (capabilities).
import { t } from 'elysia';
import { PLATFORMS, CHANNEL_STATUSES } from '../../platforms/catalog.ts';
import { strict, NullableDateTime, oneOf, Named } from './primitives.ts';

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
        comments: t.Object(
          {
            read: t.Boolean({ description: 'The comments under this channel’s posts are collected (GET /v1/inbox) and can be answered.' }),
            hide: t.Optional(t.Boolean({ description: 'A comment can be hidden and shown again (POST /v1/comments/{id}/hide).' })),
            delete: t.Optional(t.Boolean({ description: 'A reply sent through the service can be deleted (DELETE /v1/replies/{id}).' })),
            why: t.Optional(t.String({ description: 'Why not, where they are not.' })),
          },
          { ...strict, description: 'Whether the service reads what people answer under this channel’s posts.' },
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
