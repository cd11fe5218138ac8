// Per-platform post options as a connector receives them (PublishRequest.options): what the
// platform lets a post choose beyond its text and media. Every field is optional here; a
// connector without a value keeps the platform's own default. Which are required, and the
// checks against what an account can do, belong to the post's validation.

export interface InstagramOptions {
  /** feed (default: one image or video), reel, story, carousel (2–10 items). */
  type?: 'feed' | 'reel' | 'story' | 'carousel';
  /** Reels: also shown in the feed (Graph `share_to_feed`, default true). */
  shareToFeed?: boolean;
  /** Reels: the frame used as cover, in milliseconds from the start (Graph `thumb_offset`). */
  thumbOffsetMs?: number;
  /** Usernames invited as collaborators (Graph `collaborators`, at most 3). */
  collaborators?: string[];
  /**
   * Alt text of the post's images, by media id (Graph `alt_text` on each image container, at most
   * 1000 characters; images of feed posts and carousels only). Default: the media item's own alt
   * text; an empty text sends none.
   */
  altText?: Record<string, string>;
}

export interface TikTokOptions {
  /** One of the creator's `privacy_level_options`; TikTok's guidelines give it no default. */
  privacyLevel?: string;
  disableComment?: boolean;
  disableDuet?: boolean;
  disableStitch?: boolean;
  /** Paid partnership (branded content) and the creator's own brand (promotional content). */
  brandContentToggle?: boolean;
  brandOrganicToggle?: boolean;
  /** Made with AI (TikTok's `is_aigc`; videos: a photo post's post_info has no such field). */
  isAigc?: boolean;
  /** Photo posts: TikTok adds recommended music (`auto_add_music`, default false). */
  autoAddMusic?: boolean;
}

export interface YouTubeOptions {
  /** Default: the text's first line, at most 100 characters. */
  title?: string;
  /** Default: the text. */
  description?: string;
  tags?: string[];
  privacyStatus?: 'public' | 'unlisted' | 'private';
  /** `status.selfDeclaredMadeForKids`. */
  madeForKids?: boolean;
  categoryId?: string;
  /** `notifySubscribers` on videos.insert (default true). */
  notifySubscribers?: boolean;
  /**
   * A Short (default false). The API has no field for it: YouTube makes a Short of a vertical or
   * square video of at most 180 s, and `#Shorts` is added to the title when it has none.
   */
  short?: boolean;
}

export interface PinterestOptions {
  /** Default: the channel's board (credentials.boardId). */
  boardId?: string;
  title?: string;
  /** The Pin's destination link. */
  link?: string;
  altText?: string;
}

export interface LinkedInOptions {
  visibility?: 'PUBLIC' | 'CONNECTIONS' | 'LOGGED_IN';
}

export interface RedditOptions {
  flairId?: string;
  nsfw?: boolean;
  spoiler?: boolean;
}

export interface XOptions {
  replySettings?: 'following' | 'mentionedUsers' | 'subscribers' | 'verified';
  poll?: { options: string[]; durationMinutes: number };
}

export interface FacebookOptions {
  /** A link shown with its preview (`link` on the feed post). */
  link?: string;
}

export interface TelegramOptions {
  disableNotification?: boolean;
  protectContent?: boolean;
}

export interface DiscordOptions {
  /** The webhook's display name for this message. */
  username?: string;
}

/** The options of each platform, by the platform's name in `options` (lower case). */
export interface PlatformOptions {
  instagram?: InstagramOptions;
  tiktok?: TikTokOptions;
  youtube?: YouTubeOptions;
  pinterest?: PinterestOptions;
  linkedin?: LinkedInOptions;
  reddit?: RedditOptions;
  x?: XOptions;
  facebook?: FacebookOptions;
  telegram?: TelegramOptions;
  discord?: DiscordOptions;
}
