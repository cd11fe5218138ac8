// TikTok connector: Content Posting API v2, Direct Post of one video by FILE_UPLOAD —
// creator_info/query (privacy options, interaction settings, username), video/init, chunked PUTs
// to the returned upload_url, then status/fetch until the post is complete. A post of images (no
// video) is a photo post: content/init with media_type PHOTO and the images' URLs, which TikTok
// pulls itself (PULL_FROM_URL), then the same status/fetch.
//
// TikTok has no idempotency key, so a retry must not post blindly:
//  - within this worker process the publish_id of each idempotency key is kept, and findPublished
//    asks status/fetch what became of it (published → that post; upload never finished → post
//    again; still processing → wait for it rather than post again);
//  - after a restart it reads the account's recent videos (/v2/video/list/, video.list scope) for
//    one whose caption matches. That list holds public videos only, so a SELF_ONLY post made before
//    a restart cannot be found there.
import {
  type ContentInitAnswer,
  type ContentInitBody,
  type CreatorInfo,
  type CreatorInfoAnswer,
  type ErrorAnswer,
  type PostStatus,
  type PostStatusAnswer,
  PRIVACY_LEVELS,
  type PrivacyLevel,
  type TokenAnswer,
  type VideoInitAnswer,
  type VideoInitBody,
  type VideoListAnswer,
  type VideoListData,
  type VideoQueryAnswer,
} from './contracts/tiktok.ts';
import { createHttp, credential, isOk, oauthErrorOf, reasonOf, sleep, trimSlash, withMidwayExpiry, type Reply } from './http.ts';
import { type Answer, counts, str } from './json.ts';
import { TIKTOK_PHOTO_MIME_TYPES } from './catalog.ts';
import type { TikTokOptions } from './options.ts';
import { remember } from './recent.ts';
import {
  PlatformError,
  parseRetryAfter,
  type Connector,
  type MediaRef,
  type PlatformMetrics,
  type PublishRequest,
  type PublishResult,
} from './types.ts';

export interface TikTokConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each API request. */
  timeoutMs?: number;
  /** Limit for each chunk PUT to the upload_url. */
  uploadTimeoutMs?: number;
  /** API and OAuth host (https://open.tiktokapis.com). The upload URL is the one TikTok returns. */
  baseUrl?: string;
  /** The app's client key and secret; without them tokens are not refreshed. */
  oauth?: { clientId: string; clientSecret: string };
  /** Bytes per chunk, kept within TikTok's 5–64 MB (smaller videos go whole). */
  chunkSize?: number;
  /** Between status/fetch calls (limit: 30 a minute per token). */
  pollIntervalMs?: number;
  /** How long to wait for TikTok to process and publish the upload. */
  pollTimeoutMs?: number;
  /** Preferred privacy level when the creator offers it (credentials.privacyLevel wins). */
  privacyLevel?: string;
  /** How far back findPublished looks in the account's videos. */
  lookbackMs?: number;
  /**
   * A URL TikTok can pull a photo from (a photo post); by default the item's own signed link
   * (MediaRef.url). TikTok pulls only from URL prefixes verified for the app.
   */
  mediaUrl?: (item: MediaRef) => Promise<string>;
}

const MB = 1024 * 1024;
const MIN_CHUNK = 5 * MB;
const MAX_CHUNK = 64 * MB;
const MAX_CHUNKS = 1000;
const UPLOAD_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
const MAX_PHOTOS = 35;
const REAUTH = new Set(['access_token_invalid', 'scope_not_authorized', 'scope_permission_missed']);
// Daily caps (per creator, or per unaudited client) that lift within a day: worth retrying later.
const DAILY_CAPS = new Set(['spam_risk_too_many_posts', 'spam_risk_too_many_pending_share', 'reached_active_user_cap']);
const HOUR = 3600_000;

interface Creator {
  username?: string;
  /** The privacy levels this creator may post with, in TikTok's order. */
  privacyOptions: string[];
  maxVideoDurationSec: number | null;
  disableComment: boolean;
  disableDuet: boolean;
  disableStitch: boolean;
}

/** A publish_id handed out for an idempotency key, kept until the post is known to exist or fail. */
interface Pending {
  publishId: string;
  size: number;
  privacy: string;
  username?: string;
  /** A photo post: TikTok pulls the images itself, nothing is uploaded. */
  photo?: boolean;
}

interface Status {
  status: string;
  failReason?: string;
  uploadedBytes: number;
  postIds: string[];
}

export function createTikTokConnector(opts: TikTokConnectorOptions = {}): Connector {
  const api = createHttp('TikTok', { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const uploader = createHttp('TikTok', { fetch: opts.fetch, timeoutMs: opts.uploadTimeoutMs ?? 300_000 });
  const base = trimSlash(opts.baseUrl ?? 'https://open.tiktokapis.com');
  const pollIntervalMs = opts.pollIntervalMs ?? 5_000;
  const pollTimeoutMs = opts.pollTimeoutMs ?? 10 * 60_000;
  const lookbackMs = opts.lookbackMs ?? 24 * HOUR;
  const pending = new Map<string, Pending>();

  async function call(path: string, token: string, json: unknown, signal?: AbortSignal): Promise<Reply> {
    return checked(await api.send(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, json, signal }));
  }

  async function creatorInfo(token: string, signal?: AbortSignal): Promise<Creator> {
    const r = await api.send(`${base}/v2/post/publish/creator_info/query/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json; charset=UTF-8' },
      signal,
    });
    const d: Answer<CreatorInfo> = (checked(r).body as Answer<CreatorInfoAnswer>).data ?? {};
    const options = Array.isArray(d.privacy_level_options) ? d.privacy_level_options.filter((o): o is string => typeof o === 'string') : [];
    return {
      username: typeof d.creator_username === 'string' && d.creator_username ? d.creator_username : undefined,
      privacyOptions: options,
      maxVideoDurationSec: typeof d.max_video_post_duration_sec === 'number' ? d.max_video_post_duration_sec : null,
      // The creator's own "No one" settings must be honoured, never overridden.
      disableComment: d.comment_disabled === true,
      disableDuet: d.duet_disabled === true,
      disableStitch: d.stitch_disabled === true,
    };
  }

  async function upload(url: string, item: MediaRef, bytes: Uint8Array, chunk: number, count: number, signal?: AbortSignal): Promise<void> {
    const size = bytes.byteLength;
    const type = UPLOAD_TYPES.includes(item.mimeType) ? item.mimeType : 'video/mp4';
    let index = 0;
    let failures = 0;
    while (index < count) {
      const from = index * chunk;
      const to = index === count - 1 ? size : from + chunk; // the last chunk takes the trailing bytes
      let r: Reply;
      try {
        r = await uploader.send(url, {
          method: 'PUT',
          headers: { 'Content-Type': type, 'Content-Range': `bytes ${from}-${to - 1}/${size}` },
          body: bytes.subarray(from, to),
          signal,
        });
      } catch (err) {
        if (!(err instanceof PlatformError) || signal?.aborted || ++failures > 3) throw err;
        continue; // resend; a 416 then tells where the upload really stands
      }
      if (r.status === 201) return;
      if (r.status === 206) {
        index++;
        failures = 0;
        continue;
      }
      if (r.status === 416) {
        // "Content-Range does not reflect the actual upload progress": go on from what TikTok holds.
        const held = heldBytes(r.headers.get('content-range'), chunk, size);
        if (held === undefined || ++failures > 3) throw uploadError(r);
        if (held >= size) return;
        index = held / chunk;
        continue;
      }
      if (r.status >= 500 && ++failures <= 3) continue;
      throw uploadError(r);
    }
    throw new PlatformError('transient', 'TikTok upload ended without 201 Created');
  }

  async function fetchStatus(token: string, publishId: string, signal?: AbortSignal): Promise<Status> {
    const r = await call('/v2/post/publish/status/fetch/', token, { publish_id: publishId }, signal);
    const d: Answer<PostStatus> = (r.body as Answer<PostStatusAnswer>).data ?? {};
    return {
      status: typeof d.status === 'string' ? d.status : '',
      failReason: typeof d.fail_reason === 'string' && d.fail_reason ? d.fail_reason : undefined,
      uploadedBytes: typeof d.uploaded_bytes === 'number' ? d.uploaded_bytes : 0,
      postIds: postIdsOf(r.text),
    };
  }

  /** Polls status/fetch until the post is out; throws on FAILED or when processing outlasts the wait. */
  async function untilPublished(key: string, p: Pending, token: string, signal?: AbortSignal): Promise<PublishResult> {
    const deadline = Date.now() + pollTimeoutMs;
    for (;;) {
      const s = await fetchStatus(token, p.publishId, signal);
      if (s.status === 'PUBLISH_COMPLETE') {
        // The public post id comes only once moderation passed, and never for non-public posts.
        if (s.postIds[0] || p.privacy !== 'PUBLIC_TO_EVERYONE' || Date.now() >= deadline) {
          pending.delete(key);
          return published(p, s.postIds[0]);
        }
      } else if (s.status === 'FAILED') {
        pending.delete(key);
        throw failReasonError(s.failReason);
      } else if (Date.now() >= deadline) {
        throw new PlatformError('transient', `TikTok post ${p.publishId} still ${s.status || 'processing'} after ${pollTimeoutMs} ms`);
      }
      await sleep(pollIntervalMs, signal);
    }
  }

  async function findInVideoList(req: PublishRequest, token: string): Promise<PublishResult | null> {
    const caption = normalize(req.text);
    if (!caption) return null; // nothing to recognise the post by
    const since = Date.now() - lookbackMs;
    let cursor: number | undefined;
    for (let page = 0; page < 3; page++) {
      const body: Record<string, unknown> = { max_count: 20 };
      if (cursor !== undefined) body.cursor = cursor;
      const r = await call('/v2/video/list/?fields=id,title,video_description,create_time,share_url', token, body, req.signal);
      const d: Answer<VideoListData> = (r.body as Answer<VideoListAnswer>).data ?? {};
      let older = false;
      for (const v of d.videos ?? []) {
        const at = typeof v.create_time === 'number' ? v.create_time * 1000 : 0;
        if (at < since) {
          older = true;
          continue;
        }
        if (typeof v.id === 'string' && v.id && [v.video_description, v.title].some((t) => sameCaption(t, caption))) {
          const share =
            typeof v.share_url === 'string' && v.share_url ? v.share_url.split('?')[0]! : `https://www.tiktok.com/video/${v.id}`;
          return { platformPostId: v.id, url: share, publishedAt: new Date(at).toISOString() };
        }
      }
      if (older || d.has_more !== true || typeof d.cursor !== 'number') return null;
      cursor = d.cursor;
    }
    return null;
  }

  async function refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const refreshToken = credential('TikTok', credentials, 'refreshToken');
    const r = await api.send(`${base}/v2/oauth/token/`, {
      method: 'POST',
      form: {
        client_key: opts.oauth!.clientId,
        client_secret: opts.oauth!.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      },
      signal,
    });
    const b = r.body as Answer<TokenAnswer> | null;
    if (!isOk(r) || typeof b?.access_token !== 'string' || !b.access_token) throw oauthError(r);
    const now = Date.now();
    const fresh: Record<string, unknown> = {
      accessToken: b.access_token,
      expiresAt: new Date(now + (typeof b.expires_in === 'number' ? b.expires_in : 7200) * 1000).toISOString(),
    };
    // TikTok rotates refresh tokens: the one just used stops working once this one is issued.
    if (typeof b.refresh_token === 'string' && b.refresh_token) fresh.refreshToken = b.refresh_token;
    if (typeof b.refresh_expires_in === 'number') fresh.refreshExpiresAt = new Date(now + b.refresh_expires_in * 1000).toISOString();
    if (typeof b.open_id === 'string' && b.open_id) fresh.openId = b.open_id;
    return fresh;
  }

  /** creator_info and the privacy level the post goes out with. */
  async function postSettings(req: PublishRequest, token: string): Promise<{ creator: Creator; privacy: PrivacyLevel; o: TikTokOptions }> {
    const o = (req.options ?? {}) as TikTokOptions;
    const creator = await creatorInfo(token, req.signal);
    // A level the post asked for is checked against today's creator_info before any byte is read:
    // the creator may have lost it since the post was written (an account turned private).
    const privacy =
      o.privacyLevel !== undefined
        ? offeredPrivacy(creator.privacyOptions, o.privacyLevel)
        : choosePrivacy(creator.privacyOptions, req.credentials.privacyLevel ?? opts.privacyLevel);
    return { creator, privacy, o };
  }

  async function photoUrl(item: MediaRef): Promise<string> {
    if (opts.mediaUrl) return opts.mediaUrl(item);
    if (item.url) return item.url();
    throw new PlatformError('permanent', `TikTok pulls a photo post's images from URLs, and media ${item.id} has none`);
  }

  /**
   * A photo post: content/init (media_type PHOTO, DIRECT_POST) with the images' URLs, the first
   * image as cover. Duets, stitches and the AI label belong to videos: post_info of a photo post
   * has no such fields. The format and count are checked before any request.
   */
  async function publishPhotos(req: PublishRequest, token: string): Promise<PublishResult> {
    if (req.media.length > MAX_PHOTOS) {
      throw new PlatformError('permanent', `TikTok: a photo post has at most ${MAX_PHOTOS} images; this one has ${req.media.length}`);
    }
    const odd = req.media.find((m) => !TIKTOK_PHOTO_MIME_TYPES.includes(m.mimeType));
    if (odd) {
      throw new PlatformError('permanent', `TikTok photo posts take JPEG or WEBP images; ${odd.fileName} is ${odd.mimeType}`, {
        platformCode: 'file_format_check_failed',
      });
    }
    const urls: string[] = [];
    for (const item of req.media) urls.push(await photoUrl(item));
    const { creator, privacy, o } = await postSettings(req, token);
    // Written out field by field (an absent one undefined, which JSON leaves out) so that the
    // contract's type checks each of them: a spread's fields escape that check.
    const body: ContentInitBody = {
      post_info: {
        description: req.text || undefined,
        privacy_level: privacy,
        disable_comment: creator.disableComment || o.disableComment === true,
        auto_add_music: o.autoAddMusic === true,
        brand_content_toggle: o.brandContentToggle === true,
        brand_organic_toggle: o.brandOrganicToggle === true,
      },
      source_info: { source: 'PULL_FROM_URL', photo_images: urls, photo_cover_index: 0 },
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    };
    const init = await call('/v2/post/publish/content/init/', token, body, req.signal);
    const publishId = (init.body as Answer<ContentInitAnswer>).data?.publish_id;
    if (typeof publishId !== 'string' || !publishId) {
      throw new PlatformError('transient', `TikTok content/init returned no publish_id: ${init.text.slice(0, 200)}`);
    }
    const username = creator.username ?? str(req.credentials.username);
    const p: Pending = { publishId, size: 0, privacy, photo: true, ...(username ? { username } : {}) };
    remember(pending, req.idempotencyKey, p);
    return untilPublished(req.idempotencyKey, p, token, req.signal);
  }

  async function publish(req: PublishRequest): Promise<PublishResult> {
    const token = credential('TikTok', req.credentials, 'accessToken');
    const item = req.media.find((m) => m.type === 'video');
    if (!item && req.media.length && req.media.every((m) => m.type === 'image')) return publishPhotos(req, token);
    if (!item) throw new PlatformError('permanent', `TikTok needs a video or 1 to ${MAX_PHOTOS} images to publish`);
    if (req.media.length > 1) throw new PlatformError('permanent', `TikTok takes one video, or 1 to ${MAX_PHOTOS} images, not both`);
    const { creator, privacy, o } = await postSettings(req, token);
    const bytes = await item.read();
    const { chunk, count } = chunking(bytes.byteLength, opts.chunkSize);

    const body: VideoInitBody = {
      post_info: {
        title: req.text || undefined,
        privacy_level: privacy,
        // What the creator turned off stays off, whatever the post asked for.
        disable_duet: creator.disableDuet || o.disableDuet === true,
        disable_comment: creator.disableComment || o.disableComment === true,
        disable_stitch: creator.disableStitch || o.disableStitch === true,
        brand_content_toggle: o.brandContentToggle === true,
        brand_organic_toggle: o.brandOrganicToggle === true,
        is_aigc: o.isAigc,
      },
      source_info: { source: 'FILE_UPLOAD', video_size: bytes.byteLength, chunk_size: chunk, total_chunk_count: count },
    };
    const init = await call('/v2/post/publish/video/init/', token, body, req.signal);
    const data = (init.body as Answer<VideoInitAnswer>).data;
    if (typeof data?.publish_id !== 'string' || typeof data.upload_url !== 'string') {
      throw new PlatformError('transient', `TikTok video/init returned no publish_id/upload_url: ${init.text.slice(0, 200)}`);
    }
    const username = creator.username ?? str(req.credentials.username);
    const p: Pending = { publishId: data.publish_id, size: bytes.byteLength, privacy, ...(username ? { username } : {}) };
    remember(pending, req.idempotencyKey, p);

    await upload(data.upload_url, item, bytes, chunk, count, req.signal);
    return untilPublished(req.idempotencyKey, p, token, req.signal);
  }

  async function findPublished(req: PublishRequest): Promise<PublishResult | null> {
    const token = credential('TikTok', req.credentials, 'accessToken');
    const p = pending.get(req.idempotencyKey);
    if (!p) return findInVideoList(req, token);
    let s: Status;
    try {
      s = await fetchStatus(token, p.publishId, req.signal);
    } catch (err) {
      if (!(err instanceof PlatformError) || err.opts.platformCode !== 'invalid_publish_id') throw err;
      pending.delete(req.idempotencyKey);
      return null;
    }
    // An upload that stopped short can never be published: TikTok waits for bytes nobody sends.
    // A failed one published nothing either. Both are posted again.
    if (s.status === 'FAILED' || (!p.photo && s.status === 'PROCESSING_UPLOAD' && s.uploadedBytes < p.size)) {
      pending.delete(req.idempotencyKey);
      return null;
    }
    return untilPublished(req.idempotencyKey, p, token, req.signal);
  }

  /**
   * POST /v2/video/query/ (video.list scope) for up to 20 of the creator's own videos: views,
   * likes, comments and shares. A video not (or no longer) public is not in the answer.
   */
  async function readMetrics(credentials: Record<string, unknown>, ids: string[], signal?: AbortSignal) {
    const token = credential('TikTok', credentials, 'accessToken');
    const r = await call(
      '/v2/video/query/?fields=id,view_count,like_count,comment_count,share_count',
      token,
      { filters: { video_ids: ids } },
      signal,
    );
    const out: Record<string, PlatformMetrics> = {};
    for (const v of (r.body as Answer<VideoQueryAnswer>).data?.videos ?? []) {
      if (typeof v.id !== 'string' || !v.id) continue;
      out[v.id] = counts(v, { views: 'view_count', likes: 'like_count', replies: 'comment_count', reposts: 'share_count' });
    }
    return out;
  }

  /**
   * creator_info/query, the same read publish makes: what this creator may post now. TikTok asks
   * apps to show these options before each post, so they are read live rather than kept.
   */
  async function readCapabilities(credentials: Record<string, unknown>, _query: { subreddit?: string }, signal?: AbortSignal) {
    const c = await creatorInfo(credential('TikTok', credentials, 'accessToken'), signal);
    return {
      platform: 'TIKTOK' as const,
      creatorUsername: c.username ?? null,
      privacyLevelOptions: c.privacyOptions,
      maxVideoDurationSec: c.maxVideoDurationSec,
      commentDisabled: c.disableComment,
      duetDisabled: c.disableDuet,
      stitchDisabled: c.disableStitch,
    };
  }

  const connector: Connector = { platform: 'TIKTOK', publish, findPublished, readMetrics, metricsBatch: 20, readCapabilities };
  if (opts.oauth) connector.refreshCredentials = refreshCredentials;
  // An access token that ran out during a long upload is refreshed before the retry: no reconnect.
  return withMidwayExpiry(connector, Boolean(opts.oauth));
}

/** One of post_info.privacy_level's values, to tell them among creator_info's options. */
const isPrivacyLevel = (v: unknown): v is PrivacyLevel => (PRIVACY_LEVELS as readonly unknown[]).includes(v);

/**
 * PUBLIC_TO_EVERYONE when offered (or the channel's configured level), else the first option;
 * only levels the Content Posting API reference lists are chosen.
 */
function choosePrivacy(options: string[], preferred: unknown): PrivacyLevel {
  const known = options.filter(isPrivacyLevel);
  if (isPrivacyLevel(preferred) && known.includes(preferred)) return preferred;
  if (known.includes('PUBLIC_TO_EVERYONE')) return 'PUBLIC_TO_EVERYONE';
  if (known[0]) return known[0];
  throw new PlatformError(
    'permanent',
    options.length
      ? `TikTok creator_info offered no privacy level the Content Posting API lists (it offers ${options.join(', ')})`
      : 'TikTok creator_info offered no privacy_level_options',
  );
}

/** The level a post asked for, when the creator offers it; otherwise final, as TikTok would refuse it too. */
function offeredPrivacy(options: string[], wanted: string): PrivacyLevel {
  if (isPrivacyLevel(wanted) && options.includes(wanted)) return wanted;
  if (options.includes(wanted)) {
    throw new PlatformError('permanent', `TikTok: privacy level ${wanted} is not one the Content Posting API lists`, {
      platformCode: 'privacy_level_option_mismatch',
    });
  }
  throw new PlatformError(
    'permanent',
    `TikTok: privacy level ${wanted} is not offered to this account (it offers ${options.join(', ') || 'none'})`,
    { platformCode: 'privacy_level_option_mismatch' },
  );
}

/**
 * TikTok's rules: under 5 MB the whole file is one chunk; otherwise chunks of 5–64 MB,
 * total_chunk_count = floor(size / chunk_size) (the last chunk takes the rest), 1000 at most.
 */
export function chunking(size: number, wanted = 10 * MB): { chunk: number; count: number } {
  if (size <= 0) throw new PlatformError('permanent', 'TikTok cannot upload an empty video');
  if (size < MIN_CHUNK) return { chunk: size, count: 1 };
  let chunk = Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Math.floor(wanted)));
  chunk = Math.max(chunk, Math.ceil(size / MAX_CHUNKS));
  const count = Math.floor(size / chunk);
  // One chunk: declare the whole size when TikTok allows it (≤ 64 MB), the plainest form.
  return count <= 1 && size <= MAX_CHUNK ? { chunk: size, count: 1 } : { chunk, count: Math.max(1, count) };
}

/** TikTok answers {data, error: {code, message, log_id}}; any code but "ok" is a failure, even on 200. */
function checked(r: Reply): Reply {
  const err = (r.body as Answer<ErrorAnswer> | null)?.error;
  const code = typeof err?.code === 'string' ? err.code : undefined;
  if (isOk(r) && (code === undefined || code === 'ok') && r.body) return r;
  const message = typeof err?.message === 'string' && err.message ? err.message : undefined;
  return tiktokError(r, code, message);
}

function tiktokError(r: Reply, code: string | undefined, text: string | undefined): never {
  const reason = text ?? (code ? undefined : reasonOf(r));
  const message = `TikTok ${r.status}: ${[reason, code && code !== 'ok' ? `(${code})` : undefined].filter(Boolean).join(' ') || `HTTP ${r.status}`}`;
  const o = { status: r.status, platformCode: code };
  const retryAfter = parseRetryAfter(r.headers.get('retry-after'));
  if ((code && REAUTH.has(code)) || (r.status === 401 && !code)) throw new PlatformError('reauth', message, o);
  if (code === 'rate_limit_exceeded' || r.status === 429) {
    // TikTok's limits are per token per minute; without Retry-After the next minute is the window.
    throw new PlatformError('transient', message, { ...o, retryAfterMs: retryAfter ?? 60_000 });
  }
  if (code && DAILY_CAPS.has(code)) throw new PlatformError('transient', message, { ...o, retryAfterMs: retryAfter ?? HOUR });
  if (code === 'internal_error' || r.status === 408 || r.status >= 500)
    throw new PlatformError('transient', message, { ...o, retryAfterMs: retryAfter });
  if (isOk(r) && !code) throw new PlatformError('transient', `TikTok returned an unexpected body: ${r.text.slice(0, 200)}`, o);
  throw new PlatformError('permanent', message, o);
}

/** The upload server's answers (media transfer guide): 403 expired upload_url, 404 unknown task. */
function uploadError(r: Reply): PlatformError {
  const message = `TikTok upload ${r.status}: ${reasonOf(r)}`;
  // An expired or unknown upload task published nothing; the next attempt starts a new one.
  if (r.status === 403 || r.status === 404 || r.status === 408 || r.status === 429 || r.status >= 500) {
    return new PlatformError('transient', message, { status: r.status, retryAfterMs: parseRetryAfter(r.headers.get('retry-after')) });
  }
  return new PlatformError('permanent', message, { status: r.status });
}

/** status/fetch fail_reason values (Get Post Status reference). */
function failReasonError(reason: string | undefined): PlatformError {
  const message = `TikTok publish failed: ${reason ?? 'no fail_reason given'}`;
  const o = { platformCode: reason };
  if (reason === 'internal') return new PlatformError('transient', message, o);
  if (reason === 'auth_removed') return new PlatformError('reauth', message, o);
  if (reason === 'spam_risk_too_many_posts') return new PlatformError('transient', message, { ...o, retryAfterMs: HOUR });
  return new PlatformError('permanent', message, o);
}

/** OAuth errors are {error, error_description, log_id}; invalid_grant = refresh token expired or revoked. */
function oauthError(r: Reply): PlatformError {
  const { code, reason } = oauthErrorOf(r);
  const message = `TikTok token refresh ${r.status}: ${reason}`;
  const o = { status: r.status, platformCode: code };
  if (code === 'invalid_grant') return new PlatformError('reauth', message, o);
  if (r.status === 408 || r.status === 429 || r.status >= 500 || code === 'temporarily_unavailable' || code === 'server_error') {
    return new PlatformError('transient', message, { ...o, retryAfterMs: parseRetryAfter(r.headers.get('retry-after')) });
  }
  if (isOk(r) && !code) return new PlatformError('transient', `TikTok token refresh returned no access_token: ${r.text.slice(0, 200)}`, o);
  // invalid_client and the like: this deployment's client key/secret is wrong, not the user's grant.
  return new PlatformError('permanent', message, o);
}

/** status/fetch's list of public post ids, under the name TikTok spells it with. */
const POST_IDS: keyof PostStatus = 'publicaly_available_post_id';
const POST_IDS_IN_TEXT = new RegExp(`"${POST_IDS}"\\s*:\\s*\\[([^\\]]*)\\]`);

/**
 * publicaly_available_post_id is a list of int64: ids past 2^53 lose digits in JSON.parse, so
 * they are read from the raw text.
 */
function postIdsOf(text: string): string[] {
  const m = POST_IDS_IN_TEXT.exec(text);
  return m
    ? m[1]!
        .split(',')
        .map((s) => s.trim().replace(/^"|"$/g, ''))
        .filter((s) => /^\d+$/.test(s))
    : [];
}

function published(p: Pending, postId: string | undefined): PublishResult {
  const profile = p.username ? `https://www.tiktok.com/@${p.username}` : 'https://www.tiktok.com';
  // Without a public post id (private post, or moderation outlasting the wait) the publish_id
  // is the only handle TikTok gives; the post itself exists, so it is not sent again.
  if (!postId) return { platformPostId: p.publishId, url: profile };
  // TikTok shows a photo post at /photo/{id}, a video at /video/{id}.
  return { platformPostId: postId, url: `${profile}/${p.photo ? 'photo' : 'video'}/${postId}` };
}

/**
 * `Content-Range: bytes 0-{UPLOADED_BYTES}/{TOTAL}` → bytes TikTok holds. The guide calls the
 * number "bytes uploaded" while HTTP ranges end on the last byte's index; whichever reading
 * falls on a chunk boundary is the one to go on from.
 */
function heldBytes(range: string | null, chunk: number, size: number): number | undefined {
  const m = /bytes\s+\d+-(\d+)\/\d+/.exec(range ?? '');
  if (!m) return undefined;
  const n = Number(m[1]);
  return [n + 1, n].find((held) => held >= size || held % chunk === 0);
}

/** TikTok keeps at most 150 characters of a caption in video.list; a long one must start alike. */
function sameCaption(listed: unknown, caption: string): boolean {
  if (typeof listed !== 'string') return false;
  const t = normalize(listed);
  return t === caption || (t.length >= 100 && caption.startsWith(t));
}

const normalize = (s: string) => s.replace(/\s+/g, ' ').trim();
