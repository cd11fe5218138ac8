// The connector interface every platform implements (DESIGN.md §4).
import type { Platform } from './catalog.ts';
import type { PlatformOptions } from './options.ts';

export interface MediaRef {
  id: string;
  type: 'image' | 'gif' | 'video' | 'document' | 'audio';
  mimeType: string;
  fileName: string;
  altText?: string | null;
  /** Reads the bytes from object storage when the connector uploads them (never carried in workflow payloads). */
  read: () => Promise<Uint8Array>;
  /** A signed link to the bytes, for platforms that fetch media by URL (Instagram, Threads). */
  url?: () => Promise<string>;
}

export interface PublishRequest {
  /** The text for this channel (contentByPlatform[platform] or content). */
  text: string;
  media: MediaRef[];
  /** Stable per (post, channel): the same key on every retry, so a retried send is not a second post. */
  idempotencyKey: string;
  /** Decrypted channel credentials (DESIGN.md §4 lists the keys per platform). */
  credentials: Record<string, unknown>;
  reddit?: { subreddit: string; title: string } | null;
  /** This platform's post options (platforms/options.ts); absent: the platform's defaults. */
  options?: PlatformOptions[keyof PlatformOptions];
  /**
   * A follow-up item (platforms/catalog.ts FOLLOW_UPS): on a thread platform a reply to `parent`
   * (the item before) in the conversation started by `root` (the post); on a comment platform a
   * comment under the post (`parent` and `root` are both the post). Absent for the post itself.
   */
  replyTo?: { root: PostRef; parent: PostRef };
  /** 1 on the first try; higher when an earlier attempt may already have reached the platform. */
  attempt?: number;
  /**
   * No attempt that may have reached the platform is older than this (undefined: unknown). A
   * connector whose idempotency key the platform keeps for a while relies on the key within it.
   */
  firstAttemptAt?: Date;
  signal?: AbortSignal;
}

/** A published item, as recorded: what a follow-up item answers. */
export interface PostRef {
  platformPostId: string;
  url: string;
}

export interface PublishResult {
  platformPostId: string;
  url: string;
  publishedAt?: string;
}

export type PlatformErrorKind = 'reauth' | 'transient' | 'permanent';

/** A classified platform failure: reauth (token rejected), transient (retry), permanent (give up). */
export class PlatformError extends Error {
  override name = 'PlatformError';
  constructor(
    readonly kind: PlatformErrorKind,
    message: string,
    readonly opts: { status?: number; retryAfterMs?: number; platformCode?: string } = {},
  ) {
    super(message);
  }
}

export interface Connector {
  platform: Platform;
  /** Publishes the post, or with `replyTo` a follow-up item (a reply or a comment). */
  publish(req: PublishRequest): Promise<PublishResult>;
  /**
   * For platforms without an idempotency key: called before a retry (attempt > 1) to find a
   * post (or, with `replyTo`, a reply or comment) that an earlier attempt created although its
   * answer was lost. null = not there, send.
   */
  findPublished?(req: PublishRequest): Promise<PublishResult | null>;
  /**
   * OAuth platforms that issue refresh tokens: returns fresh credentials (at least accessToken
   * and expiresAt). The caller merges them over the old ones, so a refresh token that is not
   * rotated is kept. A rejected refresh token must throw PlatformError('reauth').
   */
  refreshCredentials?(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Reads per-account limits when a channel is added (e.g. a Mastodon instance's max_characters). */
  accountLimits?(credentials: Record<string, unknown>): Promise<AccountLimits>;
  /**
   * Platforms that report how posts perform: the figures of these published posts (at most
   * `metricsBatch` ids per call), by platform post id, in the vocabulary below; a figure the
   * platform does not report is left out. A post the platform no longer has is left out of the
   * answer. Errors are PlatformErrors, classified as for publish.
   */
  readMetrics?(
    credentials: Record<string, unknown>,
    platformPostIds: string[],
    signal?: AbortSignal,
  ): Promise<Record<string, PlatformMetrics>>;
  metricsBatch?: number;
  /**
   * Platforms whose API lists what people answered under a post: the comments and replies under
   * this published post (or thread item), as the platform shows them, each with the platform id
   * of what it answers. `gone`: the platform no longer has the post. Texts and URLs are as the
   * platform gave them (the code that stores them keeps only http(s) links). Errors are
   * PlatformErrors, classified as for publish.
   */
  readComments?(credentials: Record<string, unknown>, post: PostRef, signal?: AbortSignal): Promise<CommentsRead>;
  /**
   * Platforms that let a post's owner hide what others answered (platforms/catalog.ts COMMENTS
   * `hide`): hides the comment, or with `hidden` false shows it again. Idempotent: a comment
   * already so is success. `post` is the published post (or thread item) it is under. Errors are
   * PlatformErrors, classified as for publish; a comment the platform no longer has is permanent.
   */
  hideComment?(credentials: Record<string, unknown>, target: CommentTarget, hidden: boolean, signal?: AbortSignal): Promise<void>;
  /**
   * Deletes an item the account published (a reply sent through publish with `replyTo`; COMMENTS
   * `delete`). Idempotent: an item the platform no longer has is success. Errors are
   * PlatformErrors, classified as for publish.
   */
  deletePublished?(credentials: Record<string, unknown>, target: CommentTarget, signal?: AbortSignal): Promise<void>;
  /**
   * What this account can do now, read from the platform where the platform says it (TikTok's
   * creator_info, Pinterest's boards, a subreddit's flairs and rules, YouTube's categories).
   * `subreddit`: the community asked about (Reddit only). Errors are PlatformErrors, classified
   * as for publish.
   */
  readCapabilities?(credentials: Record<string, unknown>, query: { subreddit?: string }, signal?: AbortSignal): Promise<LiveCapabilities>;
}

/** A comment or reply under a published post, as its platform shows it (Connector.readComments). */
export interface PlatformComment {
  platformCommentId: string;
  /** The platform id of what it answers: the post, a thread item, or another comment. */
  parentPlatformId: string;
  author: {
    /** The display name; null when the account has none. */
    name: string | null;
    /** The account's handle on the platform (Mastodon's `acct`, Bluesky's handle); null where it has none (Facebook). */
    handle: string | null;
    avatarUrl: string | null;
    profileUrl: string | null;
  };
  /** Plain text (a platform that answers HTML has its tags dropped and entities decoded). */
  text: string;
  /** When the platform says it was written (ISO 8601). */
  createdAt: string;
  url: string | null;
  /** Written by the channel's own account (one of our replies). */
  ours: boolean;
}

/** A comment (or our reply) under a published post: what hideComment and deletePublished act on. */
export interface CommentTarget {
  platformCommentId: string;
  /** The comment's URL where known (Bluesky needs none: the id is its at:// URI). */
  url: string | null;
  /** The published post the conversation is under (its root). */
  post: PostRef;
}

export interface CommentsRead {
  comments: PlatformComment[];
  /** The platform no longer has the post. */
  gone?: true;
}

/** What a platform says an account can do now (Connector.readCapabilities), by platform. */
export type LiveCapabilities =
  | {
      platform: 'TIKTOK';
      creatorUsername: string | null;
      /** The privacy levels this creator may choose (creator_info `privacy_level_options`). */
      privacyLevelOptions: string[];
      maxVideoDurationSec: number | null;
      commentDisabled: boolean;
      duetDisabled: boolean;
      stitchDisabled: boolean;
    }
  | {
      platform: 'PINTEREST';
      boards: { id: string; name: string; privacy: string | null }[];
      /** False when the account has more boards than were read (readCapabilities reads a few pages). */
      boardsComplete: boolean;
      /** The channel's own board (credentials.boardId): where a post goes without the `boardId` option. */
      defaultBoardId: string | null;
    }
  | {
      platform: 'REDDIT';
      subreddit: string;
      /** The subreddit's link flairs (id, text) and whether a post must carry one. */
      flairs: { id: string; text: string }[];
      flairRequired: boolean;
      /** What the subreddit allows: self (text) posts, links, images, videos, galleries; NSFW only. */
      allows: { text: boolean; link: boolean; image: boolean; video: boolean; gallery: boolean };
      over18: boolean;
      /** Title length bounds from the subreddit's post requirements, where it sets any. */
      titleMinChars: number | null;
      titleMaxChars: number | null;
    }
  | { platform: 'YOUTUBE'; categories: { id: string; title: string }[] };

/** The metrics vocabulary (domain/analytics/metrics.ts states its rules). */
export const METRICS = ['impressions', 'views', 'likes', 'replies', 'reposts', 'quotes', 'saves', 'clicks'] as const;
export type Metric = (typeof METRICS)[number];
export type PlatformMetrics = Partial<Record<Metric, number>>;

export type Connectors = Partial<Record<Platform, Connector>>;

/** Per-account limits read when a channel is added; kept on the channel (platforms/text-length.ts counts with them). */
export interface AccountLimits {
  maxChars?: number;
  /** Mastodon: what the instance counts every URL as (`characters_reserved_per_url`). */
  charactersReservedPerUrl?: number;
}

/** Parses a Retry-After header (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Milliseconds until credentials.expiresAt (ISO 8601 or epoch seconds); undefined when not set. */
export function msUntilExpiry(credentials: Record<string, unknown>, now = Date.now()): number | undefined {
  const v = credentials.expiresAt;
  if (typeof v === 'number') return v * 1000 - now;
  if (typeof v === 'string' && v) {
    const t = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    return Number.isNaN(t) ? undefined : t - now;
  }
  return undefined;
}
