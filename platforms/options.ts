// Per-platform post options: what each platform lets a post choose beyond its text and media,
// stated once as the schema the API, the MCP tools and the web form check (each field documented
// with its platform's API field and default; bounds are the platforms' own), and as the types a
// connector receives (PublishRequest.options). Every field is optional: a connector without a
// value keeps the platform's own default. Which are required, and the checks against what an
// account can do, belong to the post's validation (domain/posts/options.ts).
import { t } from 'elysia';
import type { Static } from '@sinclair/typebox';
import { Chars } from '../lib/chars.ts';
import { REDDIT_FIELD_LIMITS } from './contracts/reddit.ts';

/** Reddit's own limits on a subreddit name and a post title. */
export const REDDIT_LIMITS = { subredditChars: 100, titleChars: REDDIT_FIELD_LIMITS.title } as const;

const Bool = (description: string) => t.Optional(t.Boolean({ description }));

const Instagram = t.Object(
  {
    type: t.Optional(
      t.Union([t.Literal('feed'), t.Literal('reel'), t.Literal('story'), t.Literal('carousel')], {
        description: '`feed` (default), `reel` (a video), `story`, `carousel` (2–10 media).',
      }),
    ),
    shareToFeed: Bool('Reels: also shown in the feed (`share_to_feed`; default true).'),
    thumbOffsetMs: t.Optional(t.Integer({ minimum: 0, maximum: 3_600_000, description: 'Reels: the cover frame, in ms from the start.' })),
    collaborators: t.Optional(
      t.Array(Chars(30, { min: 1 }), { maxItems: 3, uniqueItems: true, description: 'Usernames invited as collaborators (at most 3).' }),
    ),
    altText: t.Optional(
      t.Record(t.String({ pattern: '^med_[A-Za-z0-9_]{1,60}$' }), Chars(1000), {
        maxProperties: 10,
        additionalProperties: false,
        description:
          'Alt text of the post’s images, by media id (`med_…`; `alt_text` on each image container; feed images and carousel images only, not videos, reels or stories). Default: the media item’s own alt text; an empty text sends none.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Instagram.' },
);

const TikTok = t.Object(
  {
    privacyLevel: t.Optional(
      Chars(64, { min: 1, description: 'One of the account’s privacy levels (GET /channels/{id}/capabilities `privacyLevelOptions`).' }),
    ),
    disableComment: Bool('Comments off.'),
    disableDuet: Bool('Duets off.'),
    disableStitch: Bool('Stitches off.'),
    brandContentToggle: Bool('A paid partnership (branded content).'),
    brandOrganicToggle: Bool('Promotes the creator’s own business.'),
    isAigc: Bool('Made with AI (`is_aigc`; videos only).'),
    autoAddMusic: Bool('Photo posts: TikTok adds recommended music (`auto_add_music`; default false).'),
  },
  {
    additionalProperties: false,
    description: 'TikTok (`post_info`). A post of images (no video) is a photo post; duets, stitches and `isAigc` apply to videos only.',
  },
);

const YouTube = t.Object(
  {
    title: t.Optional(Chars(100, { min: 1, description: 'Default: the text’s first line (at most 100 characters).' })),
    description: t.Optional(Chars(5000, { description: 'Default: the text.' })),
    tags: t.Optional(t.Array(Chars(100, { min: 1 }), { maxItems: 50, description: '`snippet.tags`.' })),
    privacyStatus: t.Optional(
      t.Union([t.Literal('public'), t.Literal('unlisted'), t.Literal('private')], { description: 'Default: public.' }),
    ),
    madeForKids: Bool('`status.selfDeclaredMadeForKids`.'),
    categoryId: t.Optional(t.String({ pattern: '^[0-9]{1,4}$', description: 'An assignable category (capabilities `categories`).' })),
    notifySubscribers: Bool('Notify subscribers (default true).'),
    short: Bool(
      'A Short (default false): the video must be vertical or square and at most 180 s; `#Shorts` is added to the title when it has none (the API has no field for it).',
    ),
  },
  { additionalProperties: false, description: 'YouTube (`videos.insert`).' },
);

const Pinterest = t.Object(
  {
    boardId: t.Optional(t.String({ pattern: '^[0-9]{1,32}$', description: 'Default: the channel’s board (capabilities `boards`).' })),
    title: t.Optional(Chars(100, { description: 'The Pin’s title.' })),
    link: t.Optional(Chars(2048, { min: 1, description: 'The Pin’s destination link.' })),
    altText: t.Optional(Chars(500, { description: 'The image’s description for screen readers.' })),
  },
  { additionalProperties: false, description: 'Pinterest.' },
);

const LinkedIn = t.Object(
  {
    visibility: t.Optional(
      t.Union([t.Literal('PUBLIC'), t.Literal('CONNECTIONS'), t.Literal('LOGGED_IN')], { description: 'Default: PUBLIC.' }),
    ),
  },
  { additionalProperties: false, description: 'LinkedIn.' },
);

const Reddit = t.Object(
  {
    subreddit: t.Optional(
      Chars(REDDIT_LIMITS.subredditChars, { min: 1, description: 'Another spelling of `reddit.subreddit` (the post shows it there).' }),
    ),
    title: t.Optional(
      Chars(REDDIT_LIMITS.titleChars, { min: 1, description: 'Another spelling of `reddit.title` (the post shows it there).' }),
    ),
    flairId: t.Optional(
      Chars(REDDIT_FIELD_LIMITS.flairId, { min: 1, description: 'A link flair of the subreddit (capabilities `flairs`).' }),
    ),
    nsfw: Bool('Marked NSFW.'),
    spoiler: Bool('Marked as a spoiler.'),
  },
  {
    additionalProperties: false,
    description:
      'Reddit: the subreddit and title (another spelling of `reddit`: given both ways they must agree, and without `reddit` each needs the other), flair, NSFW, spoiler.',
  },
);

const X = t.Object(
  {
    replySettings: t.Optional(
      t.Union([t.Literal('following'), t.Literal('mentionedUsers'), t.Literal('subscribers'), t.Literal('verified')], {
        description: 'Who may reply (default: everyone).',
      }),
    ),
    poll: t.Optional(
      t.Object(
        {
          options: t.Array(Chars(25, { min: 1 }), { minItems: 2, maxItems: 4 }),
          durationMinutes: t.Integer({ minimum: 5, maximum: 10080 }),
        },
        { additionalProperties: false, description: 'A poll (a post with a poll carries no media).' },
      ),
    ),
  },
  { additionalProperties: false, description: 'X.' },
);

const Facebook = t.Object(
  { link: t.Optional(Chars(2048, { min: 1, description: 'A link shown with its preview.' })) },
  { additionalProperties: false, description: 'Facebook.' },
);

const Telegram = t.Object(
  { disableNotification: Bool('Sent silently.'), protectContent: Bool('No forwarding or saving.') },
  { additionalProperties: false, description: 'Telegram.' },
);

const Discord = t.Object(
  { username: t.Optional(Chars(80, { min: 1, description: 'The name shown for this message.' })) },
  { additionalProperties: false, description: 'Discord.' },
);

export const PostOptions = t.Object(
  {
    instagram: t.Optional(Instagram),
    tiktok: t.Optional(TikTok),
    youtube: t.Optional(YouTube),
    pinterest: t.Optional(Pinterest),
    linkedin: t.Optional(LinkedIn),
    reddit: t.Optional(Reddit),
    x: t.Optional(X),
    facebook: t.Optional(Facebook),
    telegram: t.Optional(Telegram),
    discord: t.Optional(Discord),
  },
  {
    additionalProperties: false,
    description:
      'Per platform (lower-case name), what a post there may choose beyond its text and media; each key must be the platform of a target channel. Without a value the platform’s default applies.',
  },
);

/** The options as given to the API: Reddit's may carry the subreddit and title (domain/posts/options.ts moves them to `reddit`). */
export type OptionsInput = Static<typeof PostOptions>;
type RedditInput = NonNullable<OptionsInput['reddit']>;
/** The options of each platform as a post stores them and a connector receives them, by the platform's name in `options` (lower case). */
export type PlatformOptions = Omit<OptionsInput, 'reddit'> & { reddit?: Omit<RedditInput, 'subreddit' | 'title'> };
export type InstagramOptions = NonNullable<PlatformOptions['instagram']>;
export type TikTokOptions = NonNullable<PlatformOptions['tiktok']>;
export type YouTubeOptions = NonNullable<PlatformOptions['youtube']>;
export type PinterestOptions = NonNullable<PlatformOptions['pinterest']>;
export type LinkedInOptions = NonNullable<PlatformOptions['linkedin']>;
export type RedditOptions = NonNullable<PlatformOptions['reddit']>;
export type XOptions = NonNullable<PlatformOptions['x']>;
export type FacebookOptions = NonNullable<PlatformOptions['facebook']>;
export type TelegramOptions = NonNullable<PlatformOptions['telegram']>;
export type DiscordOptions = NonNullable<PlatformOptions['discord']>;
