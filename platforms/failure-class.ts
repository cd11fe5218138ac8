// A connector's refusal (PlatformError: kind, HTTP status, the platform's own code) as the class
// a client can act on (workflows/publish-failure-types.ts). The connectors decide retry or not
// (kind); this adds what a program needs to know afterwards: reconnect, wait, change the text,
// change the media, or check whether it went out. Media refusals are recognised only where a
// connector passes a code that says so (the tables below, from each platform's documented codes)
// or the status does (413, 415); other refusals are rejected_content.
import { type ChannelErrorCode, failureClass, type ChannelFailureClass } from '../workflows/publish-failure-types.ts';
import { API_VERSION_RETIRED } from './api-versions.ts';
import type { Platform } from './catalog.ts';
import type { PlatformError } from './types.ts';

const META_RATE_CODES = ['4', '17', '32', '613'];

/** Codes (platformCode) of a transient refusal that mean "too many requests / posts for now". */
const RATE_LIMIT_CODES: Partial<Record<Platform, string[]>> = {
  // Graph: application, user, page and custom rate limits (`code` or `code/subcode`).
  FACEBOOK: META_RATE_CODES,
  INSTAGRAM: META_RATE_CODES,
  THREADS: META_RATE_CODES,
  TELEGRAM: ['429'],
  REDDIT: ['RATELIMIT'],
  TIKTOK: ['rate_limit_exceeded', 'spam_risk_too_many_posts', 'spam_risk_too_many_pending_share', 'reached_active_user_cap'],
  YOUTUBE: ['quotaExceeded', 'dailyLimitExceeded', 'rateLimitExceeded', 'userRateLimitExceeded'],
};

/** Codes of a permanent refusal that name the attachment, not the text. */
const MEDIA_CODES: Partial<Record<Platform, (code: string) => boolean>> = {
  // A media container that ended in ERROR; subcodes: image too large (2207004), unsupported image
  // format (2207005), aspect ratio (2207009), unknown media type (2207023), unsupported video (2207026).
  INSTAGRAM: (c) => c === 'ERROR' || /\/22070(04|05|09|23|26)$/.test(c),
  // A media container's error_message: FAILED_PROCESSING_VIDEO, INVALID_ASPEC_RATIO, INVALID_DURATION…
  THREADS: (c) => /^(FAILED_|INVALID_)/.test(c),
  // 324 missing or invalid image file, 352 unsupported video format, 381 video upload problem.
  FACEBOOK: (c) => /^(324|352|381)(\/|$)/.test(c),
  // Get Post Status fail_reason: file_format_check_failed, picture_size_check_failed, video_pull_failed…
  TIKTOK: (c) => /_(check|pull)_failed$/.test(c),
  // A registered media upload whose processing failed.
  PINTEREST: (c) => c === 'failed',
  BLUESKY: (c) => c === 'BlobTooLarge' || c === 'InvalidMimeType' || c === 'PayloadTooLarge',
  // 40005: request entity too large (the attachments).
  DISCORD: (c) => c === '40005',
};

export function failureCodeOf(platform: Platform, err: PlatformError): ChannelErrorCode {
  const code = err.opts.platformCode;
  if (err.kind === 'reauth') return 'reauth_required';
  // The API version sent is one the platform no longer serves: the operator changes a setting.
  if (code === API_VERSION_RETIRED) return 'api_version_retired';
  // Discord and Telegram: the request may have reached the platform and its answer was lost.
  if (code === 'outcome_unknown') return 'may_have_posted';
  if (err.kind === 'transient') {
    const head = code?.split('/')[0];
    const rate = err.opts.status === 429 || (head !== undefined && RATE_LIMIT_CODES[platform]?.includes(head));
    return rate ? 'rate_limited' : 'platform_unavailable';
  }
  // Our own outbound guard refused the channel's address (lib/outbound.ts): sending the same
  // request again is refused again, as a refused text is.
  if (code === 'outbound_refused') return 'rejected_content';
  const status = err.opts.status;
  if (status === 413 || status === 415 || (code !== undefined && MEDIA_CODES[platform]?.(code))) return 'media_rejected';
  return 'rejected_content';
}

export function classifyPlatformError(platform: Platform, err: PlatformError): ChannelFailureClass {
  return failureClass(failureCodeOf(platform, err));
}
