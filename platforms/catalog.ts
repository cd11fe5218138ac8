// What each platform needs (DESIGN.md §4): the rules a channel reports and the credential keys
// `channel add` requires. A channel may override maxChars (a Mastodon instance's max_characters).
import { VIDEO_TITLE_MAX } from './contracts/tiktok.ts';

export const PLATFORMS = [
  'X',
  'BLUESKY',
  'THREADS',
  'LINKEDIN',
  'MASTODON',
  'INSTAGRAM',
  'FACEBOOK',
  'TIKTOK',
  'YOUTUBE',
  'PINTEREST',
  'REDDIT',
  'TELEGRAM',
  'DISCORD',
] as const;
export type Platform = (typeof PLATFORMS)[number];

export function isPlatform(v: string): v is Platform {
  return (PLATFORMS as readonly string[]).includes(v);
}

export interface ChannelRules {
  requiresMedia: boolean;
  /** Counted as the platform counts (platforms/text-length.ts): X weighted, Mastodon URLs as 23, else graphemes. */
  maxChars: number;
  requiredFields: string[];
}

interface PlatformInfo {
  rules: ChannelRules;
  /** Credential keys that must be present (non-empty strings) when a channel is added. */
  credentials: string[];
}

const oauth = (accountKey?: string) => (accountKey ? ['accessToken', accountKey] : ['accessToken']);

export const PLATFORM_INFO: Record<Platform, PlatformInfo> = {
  X: { rules: { requiresMedia: false, maxChars: 280, requiredFields: [] }, credentials: oauth() },
  BLUESKY: {
    rules: { requiresMedia: false, maxChars: 300, requiredFields: [] },
    credentials: ['service', 'identifier', 'appPassword'],
  },
  THREADS: { rules: { requiresMedia: false, maxChars: 500, requiredFields: [] }, credentials: oauth('threadsUserId') },
  LINKEDIN: { rules: { requiresMedia: false, maxChars: 3000, requiredFields: [] }, credentials: oauth('authorUrn') },
  MASTODON: {
    rules: { requiresMedia: false, maxChars: 500, requiredFields: [] },
    credentials: ['instanceUrl', 'accessToken'],
  },
  INSTAGRAM: { rules: { requiresMedia: true, maxChars: 2200, requiredFields: [] }, credentials: oauth('igUserId') },
  FACEBOOK: { rules: { requiresMedia: false, maxChars: 63206, requiredFields: [] }, credentials: oauth('pageId') },
  TIKTOK: { rules: { requiresMedia: true, maxChars: VIDEO_TITLE_MAX, requiredFields: [] }, credentials: oauth() },
  YOUTUBE: { rules: { requiresMedia: true, maxChars: 5000, requiredFields: [] }, credentials: oauth() },
  PINTEREST: { rules: { requiresMedia: true, maxChars: 500, requiredFields: [] }, credentials: oauth('boardId') },
  REDDIT: {
    rules: { requiresMedia: false, maxChars: 40000, requiredFields: ['reddit.subreddit', 'reddit.title'] },
    credentials: oauth(),
  },
  TELEGRAM: { rules: { requiresMedia: false, maxChars: 4096, requiredFields: [] }, credentials: ['botToken', 'chatId'] },
  DISCORD: { rules: { requiresMedia: false, maxChars: 2000, requiredFields: [] }, credentials: ['webhookUrl'] },
};

export function rulesFor(platform: Platform, maxCharsOverride?: number | null): ChannelRules {
  const base = PLATFORM_INFO[platform].rules;
  return {
    requiresMedia: base.requiresMedia,
    maxChars: maxCharsOverride ?? base.maxChars,
    requiredFields: [...base.requiredFields],
  };
}

/** Returns the names of required credential keys that are missing or not non-empty strings. */
export function missingCredentials(platform: Platform, creds: Record<string, unknown>): string[] {
  return PLATFORM_INFO[platform].credentials.filter((k) => typeof creds[k] !== 'string' || creds[k] === '');
}

export const CHANNEL_STATUSES = ['active', 'reauth_required', 'disabled'] as const;
export type ChannelStatus = (typeof CHANNEL_STATUSES)[number];
export function isChannelStatus(v: string): v is ChannelStatus {
  return (CHANNEL_STATUSES as readonly string[]).includes(v);
}

/** What media a post may carry on each platform (DESIGN.md §4 and the platforms' documented limits). */
export interface MediaLimits {
  /** Most attachments in one post. */
  maxItems: number;
  /** Types accepted at all. */
  types: ('image' | 'gif' | 'video' | 'document' | 'audio')[];
  /** A video must be the only attachment (X, Bluesky, LinkedIn, Mastodon, TikTok…). */
  videoAlone: boolean;
  /** requiresMedia platforms that need a particular kind (YouTube: video; Pinterest: image). */
  requires?: 'video' | 'image';
}

const visual = ['image', 'gif', 'video'] as MediaLimits['types'];

export const MEDIA_LIMITS: Record<Platform, MediaLimits> = {
  X: { maxItems: 4, types: visual, videoAlone: true },
  BLUESKY: { maxItems: 4, types: ['image', 'video'], videoAlone: true },
  THREADS: { maxItems: 20, types: ['image', 'video'], videoAlone: false },
  LINKEDIN: { maxItems: 20, types: ['image', 'gif', 'video', 'document'], videoAlone: true },
  MASTODON: { maxItems: 4, types: ['image', 'gif', 'video', 'audio'], videoAlone: true },
  INSTAGRAM: { maxItems: 10, types: ['image', 'video'], videoAlone: false },
  FACEBOOK: { maxItems: 10, types: visual, videoAlone: true },
  // One video, or a photo post of 1 to 35 images (TIKTOK_PHOTO_MIME_TYPES), never both.
  TIKTOK: { maxItems: 35, types: ['image', 'video'], videoAlone: true },
  YOUTUBE: { maxItems: 1, types: ['video'], videoAlone: true, requires: 'video' },
  PINTEREST: { maxItems: 1, types: ['image', 'gif', 'video'], videoAlone: true, requires: 'image' },
  REDDIT: { maxItems: 20, types: visual, videoAlone: true },
  TELEGRAM: { maxItems: 10, types: ['image', 'gif', 'video', 'document', 'audio'], videoAlone: false },
  DISCORD: { maxItems: 10, types: ['image', 'gif', 'video', 'document', 'audio'], videoAlone: false },
};

/** The image formats of a TikTok photo post (Content Posting API, photos): no PNG, no GIF. */
export const TIKTOK_PHOTO_MIME_TYPES = ['image/jpeg', 'image/webp'];

/**
 * What follows a post on each platform: a thread of replies, each to the one before (X, Bluesky,
 * Mastodon, Threads), or one comment under the post (Facebook, Instagram, LinkedIn, YouTube,
 * Reddit). Telegram, Discord, Pinterest and TikTok take neither: a post there is one item.
 * A thread item is checked as a post of its platform (length, media); a comment is text only,
 * within `maxChars` as the platform documents for comments.
 */
export type FollowUps = { kind: 'thread'; maxItems: number } | { kind: 'comment'; maxChars: number } | { kind: null };

/** Most replies after the post in one thread: the length X's composer allows, used for every thread platform. */
export const MAX_THREAD_ITEMS = 25;

/**
 * Whether the service reads the comments under a post published there, and why not where it does
 * not (docs/platforms.md "Comments"). Where it reads them it also answers them (a reply is a
 * follow-up item: FOLLOW_UPS); `hide`: the post's owner may hide a comment (and show it again);
 * `delete`: a reply sent through the service can be deleted there.
 */
export type CommentsFact = { read: true; hide: boolean; delete: boolean } | { read: false; why: string };

/** Each platform's connector reads, hides and deletes exactly where this says (test/comments-catalog.test.ts). */
export const COMMENTS: Record<Platform, CommentsFact> = {
  X: { read: true, hide: true, delete: true },
  BLUESKY: { read: true, hide: false, delete: true },
  MASTODON: { read: true, hide: false, delete: true },
  THREADS: { read: true, hide: true, delete: true },
  FACEBOOK: { read: true, hide: true, delete: true },
  INSTAGRAM: { read: true, hide: true, delete: true },
  LINKEDIN: { read: true, hide: false, delete: true },
  YOUTUBE: { read: true, hide: true, delete: true },
  REDDIT: { read: true, hide: false, delete: true },
  TELEGRAM: { read: false, why: 'a channel’s posts have no replies a bot can list' },
  DISCORD: { read: false, why: 'a webhook posts and reads nothing' },
  PINTEREST: { read: false, why: 'Pinterest’s API lists no comments of a Pin' },
  TIKTOK: { read: false, why: 'the posting scopes read no comments' },
};

export const FOLLOW_UPS: Record<Platform, FollowUps> = {
  X: { kind: 'thread', maxItems: MAX_THREAD_ITEMS },
  BLUESKY: { kind: 'thread', maxItems: MAX_THREAD_ITEMS },
  MASTODON: { kind: 'thread', maxItems: MAX_THREAD_ITEMS },
  THREADS: { kind: 'thread', maxItems: MAX_THREAD_ITEMS },
  FACEBOOK: { kind: 'comment', maxChars: 8000 },
  INSTAGRAM: { kind: 'comment', maxChars: 2200 },
  LINKEDIN: { kind: 'comment', maxChars: 1250 },
  YOUTUBE: { kind: 'comment', maxChars: 10000 },
  REDDIT: { kind: 'comment', maxChars: 10000 },
  TELEGRAM: { kind: null },
  DISCORD: { kind: null },
  PINTEREST: { kind: null },
  TIKTOK: { kind: null },
};
