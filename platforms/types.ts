// The connector interface every platform implements (DESIGN.md §4).
import type { Platform } from './catalog.ts';

export interface MediaRef {
  id: string;
  type: 'image' | 'gif' | 'video' | 'document' | 'audio';
  mimeType: string;
  fileName: string;
  altText?: string | null;
  /** Reads the bytes from object storage when the connector uploads them (never carried in workflow payloads). */
  read: () => Promise<Uint8Array>;
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
  signal?: AbortSignal;
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
  publish(req: PublishRequest): Promise<PublishResult>;
  /** Reads per-account limits when a channel is added (e.g. a Mastodon instance's max_characters). */
  accountLimits?(credentials: Record<string, unknown>): Promise<{ maxChars?: number }>;
}

export type Connectors = Partial<Record<Platform, Connector>>;

/** Parses a Retry-After header (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
