// Per-platform post options (platforms/options.ts): the checks a post's options get with its
// channels, its media and what each account can do now (domain/capabilities.ts).
//
// Rules:
// - Each key of `options` is the lower-case name of a target channel's platform: options for a
//   platform the post does not go to are refused at `options.<platform>`, as a stray
//   contentByPlatform key is.
// - Required, because the platform gives no default a service may choose for the creator:
//   `options.tiktok.privacyLevel` (TikTok's content-sharing guidelines), `options.youtube.madeForKids`
//   (YouTube asks it of every upload made through the API). A series occurrence is not asked
//   again: its series was checked when it was created or edited.
// - `options.reddit.subreddit` and `options.reddit.title` are another spelling of `reddit`; they
//   are moved there (the post shows them in `reddit`). Given both ways, they must agree.
// - Against the post's media: an Instagram carousel has 2–10 items, a reel one video, a story one
//   image or video; `shareToFeed` and `thumbOffsetMs` belong to reels; alt text is keyed by the
//   post's images (not on a story). A YouTube Short is a vertical or square video of at most
//   180 s. An X poll carries no media.
// - Against what the account can do now, when the platform can be asked (a read that fails
//   leaves these to the publish, which meets the platform's own refusal):
//   TikTok: the privacy level is one the creator is offered, the video no longer than the
//   creator's longest. Pinterest: a board named is one of the account's boards (when the list is
//   complete). Reddit: the flair exists, a required flair is given, the subreddit takes this
//   kind of post, the title fits its bounds. YouTube: the category is assignable.
// - Each problem is reported at the option's path (`options.tiktok.privacyLevel`), naming the
//   channel when several channels share a platform.
import type { IChannel, IMediaItem } from '../../db/entities/index.ts';
import type { FieldError } from '../../lib/errors.ts';
import type { OptionsInput, PlatformOptions } from '../../platforms/options.ts';
import type { LiveCapabilities } from '../../platforms/types.ts';

type Channel = Pick<IChannel, 'id' | 'platform'>;
type Media = Pick<IMediaItem, 'id' | 'type'> & Partial<Pick<IMediaItem, 'width' | 'height' | 'durationSeconds'>>;
type RedditTarget = { subreddit: string; title: string } | null;

export type { OptionsInput };

export function optionProblems(
  channels: Channel[],
  options: PlatformOptions,
  media: Media[] = [],
  opts: { requireChoices?: boolean } = {},
): FieldError[] {
  const targeted = new Set(channels.map((c) => c.platform.toLowerCase()));
  const out: FieldError[] = Object.keys(options)
    .filter((platform) => !targeted.has(platform))
    .map((platform) => ({ path: `options.${platform}`, message: 'no target channel is on this platform' }));
  if (opts.requireChoices !== false) {
    if (targeted.has('tiktok') && options.tiktok?.privacyLevel === undefined) {
      out.push({
        path: 'options.tiktok.privacyLevel',
        message:
          'is required: TikTok lets the creator choose who sees a post, with no default (GET /v1/channels/{id}/capabilities lists the choices)',
      });
    }
    if (targeted.has('youtube') && options.youtube?.madeForKids === undefined) {
      out.push({
        path: 'options.youtube.madeForKids',
        message: 'is required: YouTube asks every upload whether it is made for kids (true or false)',
      });
    }
  }
  if (targeted.has('instagram'))
    out.push(...instagramProblems(options.instagram ?? {}, media), ...instagramAltTextProblems(options, media));
  if (targeted.has('youtube')) out.push(...youtubeShortProblems(options, media));
  if (targeted.has('x') && options.x?.poll && media.length) {
    out.push({ path: 'options.x.poll', message: 'a post with a poll carries no media on X' });
  }
  return out;
}

function instagramProblems(o: NonNullable<PlatformOptions['instagram']>, media: Media[]): FieldError[] {
  const out: FieldError[] = [];
  const videos = media.filter((m) => m.type === 'video').length;
  if (o.type === 'carousel' && (media.length < 2 || media.length > 10)) {
    out.push({ path: 'options.instagram.type', message: `a carousel has 2 to 10 media items; this post has ${media.length}` });
  }
  if (o.type === 'reel' && (media.length !== 1 || videos !== 1)) {
    out.push({ path: 'options.instagram.type', message: 'a reel is one video' });
  }
  if (o.type === 'story' && media.length !== 1) {
    out.push({ path: 'options.instagram.type', message: 'a story is one image or one video' });
  }
  if (o.type !== 'reel') {
    for (const field of ['shareToFeed', 'thumbOffsetMs'] as const) {
      if (o[field] !== undefined) out.push({ path: `options.instagram.${field}`, message: 'applies to reels only (type: reel)' });
    }
  }
  return out;
}

/**
 * Moves `options.reddit.subreddit` and `.title` into `reddit` (the rules above). Problems go to
 * `fields`; the answer is what the post stores.
 */
export function redditFromOptions(
  reddit: RedditTarget,
  options: OptionsInput,
  fields: FieldError[],
): { reddit: RedditTarget; options: PlatformOptions } {
  const given = options.reddit;
  if (!given || (given.subreddit === undefined && given.title === undefined)) return { reddit, options: options as PlatformOptions };
  const { subreddit, title, ...rest } = given;
  const { reddit: _, ...others } = options;
  const kept: PlatformOptions = Object.keys(rest).length ? { ...others, reddit: rest } : others;
  if (reddit) {
    if (subreddit !== undefined && subreddit !== reddit.subreddit)
      fields.push({ path: 'options.reddit.subreddit', message: `differs from reddit.subreddit (${reddit.subreddit}); give it once` });
    if (title !== undefined && title !== reddit.title)
      fields.push({ path: 'options.reddit.title', message: 'differs from reddit.title; give it once' });
    return { reddit, options: kept };
  }
  if (subreddit === undefined) fields.push({ path: 'options.reddit.subreddit', message: 'is required with options.reddit.title' });
  if (title === undefined) fields.push({ path: 'options.reddit.title', message: 'is required with options.reddit.subreddit' });
  return { reddit: subreddit !== undefined && title !== undefined ? { subreddit, title } : null, options: kept };
}

/** The checks against each channel's live capabilities (null: not read; the rules above). */
export function liveOptionProblems(
  channels: Channel[],
  live: Map<string, LiveCapabilities | null>,
  post: { options: PlatformOptions; media: Media[]; reddit: RedditTarget },
): FieldError[] {
  const out: FieldError[] = [];
  const many = (platform: string) => channels.filter((c) => c.platform === platform).length > 1;
  for (const c of channels) {
    const caps = live.get(c.id);
    if (!caps) continue;
    const who = many(c.platform) ? ` (channel ${c.id})` : '';
    const push = (path: string, message: string) => out.push({ path, message: message + who });
    switch (caps.platform) {
      case 'TIKTOK': {
        const level = post.options.tiktok?.privacyLevel;
        if (level !== undefined && !caps.privacyLevelOptions.includes(level)) {
          push(
            'options.tiktok.privacyLevel',
            `is not offered to this TikTok account; it offers ${caps.privacyLevelOptions.join(', ') || 'none'}`,
          );
        }
        const max = caps.maxVideoDurationSec;
        const long = post.media.find((m) => m.type === 'video' && max !== null && (m.durationSeconds ?? 0) > max);
        if (long) push('mediaIds', `video ${long.id} lasts ${long.durationSeconds} s; this TikTok account posts videos up to ${max} s`);
        break;
      }
      case 'PINTEREST': {
        // Without one the channel's own board is used (every Pinterest channel has one).
        const board = post.options.pinterest?.boardId;
        if (board !== undefined && caps.boardsComplete && !caps.boards.some((b) => b.id === board)) {
          push('options.pinterest.boardId', `is not one of this Pinterest account's boards`);
        }
        break;
      }
      case 'REDDIT': {
        if (!post.reddit || caps.subreddit.toLowerCase() !== post.reddit.subreddit.toLowerCase()) break;
        const flair = post.options.reddit?.flairId;
        if (flair === undefined && caps.flairRequired) push('options.reddit.flairId', `is required: r/${caps.subreddit} requires a flair`);
        if (flair !== undefined && !caps.flairs.some((f) => f.id === flair))
          push('options.reddit.flairId', `is not a flair of r/${caps.subreddit}`);
        const kind = redditKind(post.media);
        if (!caps.allows[kind]) push(kind === 'text' ? 'reddit.subreddit' : 'mediaIds', `r/${caps.subreddit} does not take ${kind} posts`);
        const title = [...post.reddit.title].length;
        if (caps.titleMinChars !== null && title < caps.titleMinChars)
          push('reddit.title', `is ${title} characters; r/${caps.subreddit} asks for at least ${caps.titleMinChars}`);
        if (caps.titleMaxChars !== null && title > caps.titleMaxChars)
          push('reddit.title', `is ${title} characters; r/${caps.subreddit} takes at most ${caps.titleMaxChars}`);
        break;
      }
      case 'YOUTUBE': {
        const category = post.options.youtube?.categoryId;
        if (category !== undefined && caps.categories.length && !caps.categories.some((k) => k.id === category)) {
          push('options.youtube.categoryId', `is not an assignable YouTube category (${caps.categories.map((k) => k.id).join(', ')})`);
        }
        break;
      }
    }
  }
  return out;
}

/** The kind of submission a Reddit post is, as the subreddit's `allows` names it. */
function redditKind(media: Media[]): 'text' | 'image' | 'video' | 'gallery' {
  if (!media.length) return 'text';
  if (media.length > 1) return 'gallery';
  return media[0]!.type === 'video' ? 'video' : 'image';
}

/** The most a YouTube Short lasts (YouTube's limit since October 2024). */
export const YOUTUBE_SHORT_MAX_SECONDS = 180;

/**
 * `options.youtube.short` against the post's video: YouTube makes a Short only of a vertical or
 * square video (height at least the width) of at most 180 s, so a post marked short that is
 * neither would go out as an ordinary video. Unknown size or length is refused too: nothing
 * says the video is a Short. Problems are reported at `options.youtube.short`.
 */
export function youtubeShortProblems(
  options: PlatformOptions,
  media: (Pick<IMediaItem, 'id' | 'type'> & Partial<Pick<IMediaItem, 'width' | 'height' | 'durationSeconds'>>)[],
): FieldError[] {
  if (options.youtube?.short !== true) return [];
  const out: FieldError[] = [];
  const push = (message: string) => out.push({ path: 'options.youtube.short', message });
  for (const v of media.filter((m) => m.type === 'video')) {
    const { width, height, durationSeconds: seconds } = v;
    if (width == null || height == null) push(`video ${v.id} has no known size: a Short is vertical or square`);
    else if (height < width) push(`video ${v.id} is ${width}×${height}: a Short is vertical or square (height at least the width)`);
    if (seconds == null) push(`video ${v.id} has no known length: a Short lasts at most ${YOUTUBE_SHORT_MAX_SECONDS} s`);
    else if (seconds > YOUTUBE_SHORT_MAX_SECONDS)
      push(`video ${v.id} lasts ${seconds} s: a Short lasts at most ${YOUTUBE_SHORT_MAX_SECONDS} s`);
  }
  return out;
}

/**
 * `options.instagram.altText` (alt text by media id) against the post's media: Graph takes
 * `alt_text` on image containers only (a feed image, a carousel's images), not on videos, reels
 * or stories. A key that is not one of the post's images is refused at
 * `options.instagram.altText.<mediaId>`.
 */
export function instagramAltTextProblems(options: PlatformOptions, media: Pick<IMediaItem, 'id' | 'type'>[]): FieldError[] {
  const given = options.instagram?.altText;
  if (!given) return [];
  const story = options.instagram?.type === 'story';
  return Object.keys(given).flatMap((id) => {
    const path = `options.instagram.altText.${id}`;
    const item = media.find((m) => m.id === id);
    if (!item) return [{ path, message: 'is not a media item of this post' }];
    if (item.type !== 'image') return [{ path, message: `is a ${item.type}: Instagram takes alt text on images only` }];
    if (story) return [{ path, message: 'Instagram takes no alt text on a story' }];
    return [];
  });
}
