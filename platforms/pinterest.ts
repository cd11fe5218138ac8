// Pinterest connector: API v5 (api.pinterest.com/v5). A post is one Pin on the channel's board
// (credentials.boardId, or the post's `boardId` option): the post text is the Pin's description, the image travels inline as
// base64 (media_source image_base64), and a video goes through Pinterest's media upload first
// (POST /v5/media → multipart POST of the file to the returned S3 form → GET /v5/media/{id} until
// `succeeded`) and is pinned with media_source video_id.
import type {
  BoardPinsList,
  BoardsList,
  CreatePinBody,
  ErrorAnswer,
  ImageContentType,
  Media,
  MediaSource,
  MediaUpload,
  Pin,
  PinAnalytics,
  RefreshTokenAnswer,
  RegisterMediaBody,
} from './contracts/pinterest.ts';
import { blobOf, bucketError, credential, createHttp, isOk, reasonOf, sleep, trimSlash, type Reply, type SendOptions } from './http.ts';
import {
  PlatformError,
  parseRetryAfter,
  type Connector,
  type MediaRef,
  type PlatformMetrics,
  type PublishRequest,
  type PublishResult,
} from './types.ts';
import { type Answer, counts } from './json.ts';
import type { PinterestOptions } from './options.ts';

export interface PinterestConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each API request. */
  timeoutMs?: number;
  /** Limit for the upload of a video to Pinterest's media bucket. */
  uploadTimeoutMs?: number;
  /** The API host (https://api.pinterest.com); paths start with /v5. */
  baseUrl?: string;
  /** Where Pins are shown (https://www.pinterest.com). */
  webBaseUrl?: string;
  /** The Pinterest app's id and secret, needed to refresh access tokens. */
  oauth?: { clientId: string; clientSecret: string };
  /** How often, and how long, to wait for an uploaded video to be processed. */
  pollIntervalMs?: number;
  pollTimeoutMs?: number;
  /** How far back findPublished looks for a Pin an earlier attempt made (default 24 h). */
  lookbackMs?: number;
  /** Pages of the board (100 Pins each) findPublished reads at most. */
  lookupPages?: number;
  /** Pages of the account's boards (250 each) readCapabilities reads at most. */
  boardPages?: number;
}

/** A Pin as read, its id checked. */
type PinRead = Answer<Pin> & { id: string };

interface Account {
  token: string;
  boardId: string;
}

const P = 'Pinterest';
const MAX_ALT_TEXT = 500;

export function createPinterestConnector(opts: PinterestConnectorOptions = {}): Connector {
  const api = createHttp(P, { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const bucket = createHttp(P, { fetch: opts.fetch, timeoutMs: opts.uploadTimeoutMs ?? 600_000 });
  const baseUrl = trimSlash(opts.baseUrl ?? 'https://api.pinterest.com');
  const webBaseUrl = trimSlash(opts.webBaseUrl ?? 'https://www.pinterest.com');
  const pollIntervalMs = opts.pollIntervalMs ?? 2_000;
  const pollTimeoutMs = opts.pollTimeoutMs ?? 600_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 3600_000;
  const lookupPages = opts.lookupPages ?? 3;
  const boardPages = opts.boardPages ?? 5;

  async function call(acct: Account, method: string, path: string, o: SendOptions = {}): Promise<Reply> {
    const r = await api.send(`${baseUrl}/v5${path}`, { ...o, method, headers: { ...o.headers, Authorization: `Bearer ${acct.token}` } });
    if (!isOk(r)) throw httpError(r);
    return r;
  }

  function toResult(pin: PinRead): PublishResult {
    const at = pin.created_at ? Date.parse(pin.created_at) : NaN;
    return {
      platformPostId: pin.id,
      url: `${webBaseUrl}/pin/${encodeURIComponent(pin.id)}/`,
      ...(Number.isNaN(at) ? {} : { publishedAt: new Date(at).toISOString() }),
    };
  }

  /** Registers a video upload, sends the file to the signed S3 form and waits until Pinterest has processed it. */
  async function uploadVideo(acct: Account, item: MediaRef, signal?: AbortSignal): Promise<string> {
    const register: RegisterMediaBody = { media_type: 'video' };
    const r = await call(acct, 'POST', '/media', { json: register, signal });
    const reg = r.body as Answer<MediaUpload> | null;
    if (
      typeof reg?.media_id !== 'string' ||
      typeof reg.upload_url !== 'string' ||
      !reg.upload_parameters ||
      typeof reg.upload_parameters !== 'object'
    ) {
      throw new PlatformError('transient', `Pinterest returned an unexpected media registration: ${r.text.slice(0, 200)}`);
    }
    const form = new FormData();
    for (const [k, v] of Object.entries(reg.upload_parameters)) form.append(k, String(v));
    form.append('file', blobOf(await item.read(), item.mimeType), item.fileName);
    const up = await bucket.send(reg.upload_url, { method: 'POST', multipart: form, signal });
    if (!isOk(up)) throw bucketError('Pinterest media upload', up);
    await waitUntilProcessed(acct, reg.media_id, signal);
    return reg.media_id;
  }

  async function waitUntilProcessed(acct: Account, mediaId: string, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + pollTimeoutMs;
    for (;;) {
      const r = await call(acct, 'GET', `/media/${encodeURIComponent(mediaId)}`, { signal });
      const status = (r.body as Answer<Media> | null)?.status;
      if (status === 'succeeded') return;
      if (status === 'failed')
        throw new PlatformError('permanent', `Pinterest could not process the video (media ${mediaId} failed)`, { platformCode: 'failed' });
      if (Date.now() >= deadline)
        throw new PlatformError('transient', `Pinterest media ${mediaId} still ${String(status)} after ${pollTimeoutMs} ms`);
      await sleep(pollIntervalMs, signal);
    }
  }

  async function mediaSource(acct: Account, item: MediaRef, signal?: AbortSignal): Promise<MediaSource> {
    if (item.type === 'video') {
      const mediaId = await uploadVideo(acct, item, signal);
      // The cover is a frame of the video itself (Pinterest takes the last one if the video is shorter).
      return { source_type: 'video_id', media_id: mediaId, cover_image_key_frame_time: 1 };
    }
    const { bytes, mimeType } = await pinnableImage(item);
    return { source_type: 'image_base64', content_type: mimeType, data: Buffer.from(bytes).toString('base64') };
  }

  return {
    platform: 'PINTEREST',
    metricsBatch: 1,

    /**
     * GET /v5/pins/{id}/analytics over the last 90 days (the most Pinterest serves, longer than
     * the last reading's age): impressions, saves and outbound clicks. A Pin no longer there
     * (404) is left out.
     */
    async readMetrics(credentials, ids, signal) {
      const token = credential(P, credentials, 'accessToken');
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const q = new URLSearchParams({
        start_date: day(Date.now() - 89 * 86_400_000),
        end_date: day(Date.now()),
        metric_types: 'IMPRESSION,SAVE,OUTBOUND_CLICK',
      });
      const out: Record<string, PlatformMetrics> = {};
      for (const id of ids) {
        const r = await api.send(`${baseUrl}/v5/pins/${encodeURIComponent(id)}/analytics?${q}`, {
          method: 'GET',
          headers: { Authorization: `Bearer ${token}` },
          signal,
        });
        if (r.status === 404) continue;
        if (!isOk(r)) throw httpError(r);
        const summary = (r.body as Answer<PinAnalytics> | null)?.all?.summary_metrics ?? {};
        out[id] = counts(summary, { impressions: 'IMPRESSION', saves: 'SAVE', clicks: 'OUTBOUND_CLICK' });
      }
      return out;
    },

    /**
     * GET /v5/boards, every page up to `boardPages` (250 boards each): the boards a Pin may go to.
     * An account with more boards than that is listed in part, newest first as Pinterest orders them.
     */
    async readCapabilities(credentials, _query, signal) {
      const token = credential(P, credentials, 'accessToken');
      const boards: { id: string; name: string; privacy: string | null }[] = [];
      let bookmark: string | undefined;
      let complete = false;
      for (let page = 0; page < boardPages; page++) {
        const q = new URLSearchParams({ page_size: '250', ...(bookmark ? { bookmark } : {}) });
        const r = await api.send(`${baseUrl}/v5/boards?${q}`, { method: 'GET', headers: { Authorization: `Bearer ${token}` }, signal });
        if (!isOk(r)) throw httpError(r);
        const body = r.body as Answer<BoardsList> | null;
        for (const b of body?.items ?? []) {
          if (typeof b.id !== 'string' || !b.id) continue;
          boards.push({
            id: b.id,
            name: typeof b.name === 'string' ? b.name : '',
            privacy: typeof b.privacy === 'string' ? b.privacy : null,
          });
        }
        if (!body?.bookmark) {
          complete = true;
          break;
        }
        bookmark = body.bookmark;
      }
      const own = credentials.boardId;
      return {
        platform: 'PINTEREST' as const,
        boards,
        boardsComplete: complete,
        defaultBoardId: typeof own === 'string' && own ? own : null,
      };
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const o = pinOptions(req);
      const acct = account(req.credentials, o.boardId);
      const item = onlyMedia(req.media);
      const pin: CreatePinBody = { board_id: acct.boardId, media_source: await mediaSource(acct, item, req.signal) };
      if (req.text.trim()) pin.description = req.text;
      // The title and alt text go as given: Pinterest's own refusal of one too long says more than a cut.
      if (o.title) pin.title = o.title;
      if (o.link) pin.link = o.link;
      const alt = altTextOf(req);
      if (alt) pin.alt_text = alt;
      const r = await call(acct, 'POST', '/pins', { json: pin, signal: req.signal });
      const created = r.body as Answer<Pin> | null;
      if (typeof created?.id !== 'string' || !created.id) {
        throw new PlatformError('transient', `Pinterest returned an unexpected Pin: ${r.text.slice(0, 200)}`, { status: r.status });
      }
      return toResult({ ...created, id: created.id });
    },

    /**
     * Pinterest has no idempotency key. The channel's board is the record: a Pin of the same kind
     * (image or video) with the same description (and alt text, when there is one) created within
     * `lookbackMs` is taken as the one an earlier attempt made. Boards may be ordered by hand, so
     * up to `lookupPages` pages are read rather than stopping at the first old Pin. A post without
     * text or alt text cannot be told apart from other Pins and is never matched.
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const acct = account(req.credentials, pinOptions(req).boardId);
      const item = req.media[0];
      const alt = altTextOf(req);
      if (!req.text.trim() && !alt) return null;
      const since = Date.now() - lookbackMs;
      const kind = item?.type === 'video' ? 'video' : 'image';
      const matches = (p: Answer<Pin>): p is PinRead =>
        typeof p.id === 'string' &&
        norm(p.description ?? '') === norm(req.text) &&
        norm(p.alt_text ?? '') === norm(alt) &&
        (!p.media?.media_type || p.media.media_type === kind) &&
        (!p.created_at || Date.parse(p.created_at) >= since);
      let bookmark: string | undefined;
      for (let page = 0; page < lookupPages; page++) {
        const q = new URLSearchParams({ page_size: '100', ...(bookmark ? { bookmark } : {}) });
        const r = await call(acct, 'GET', `/boards/${encodeURIComponent(acct.boardId)}/pins?${q}`, { signal: req.signal });
        const body = r.body as Answer<BoardPinsList> | null;
        const hit = (body?.items ?? []).find(matches);
        if (hit) return toResult(hit);
        if (!body?.bookmark) return null;
        bookmark = body.bookmark;
      }
      return null;
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      if (!opts.oauth) {
        throw new PlatformError(
          'permanent',
          'Pinterest token refresh needs the app credentials (PINTEREST_CLIENT_ID, PINTEREST_CLIENT_SECRET) on the worker',
        );
      }
      const refreshToken = credential(P, credentials, 'refreshToken');
      const r = await api.send(`${baseUrl}/v5/oauth/token`, {
        method: 'POST',
        headers: { Authorization: `Basic ${btoa(`${opts.oauth.clientId}:${opts.oauth.clientSecret}`)}` },
        form: { grant_type: 'refresh_token', refresh_token: refreshToken },
        signal,
      });
      return tokenResult(r);
    },
  };
}

/**
 * Since May 2025 Pinterest issues only continuous refresh tokens: every refresh answers with a new
 * refresh token (60 days), which must replace the old one.
 */
function tokenResult(r: Reply): Record<string, unknown> {
  if (r.status === 408 || r.status === 429 || r.status >= 500) throw httpError(r);
  if (!isOk(r)) {
    // A spent, revoked or expired grant answers 401 {"code": 283, "message": "The authorization grant is invalid"}.
    const { reason, code } = errorOf(r);
    throw new PlatformError('reauth', `Pinterest token refresh failed (${r.status}): ${reason}`, { status: r.status, platformCode: code });
  }
  const b = r.body as Answer<RefreshTokenAnswer> | null;
  if (typeof b?.access_token !== 'string' || typeof b.expires_in !== 'number') {
    throw new PlatformError('transient', `Pinterest returned an unexpected token answer: ${r.text.slice(0, 200)}`);
  }
  const now = Date.now();
  const out: Record<string, unknown> = { accessToken: b.access_token, expiresAt: new Date(now + b.expires_in * 1000).toISOString() };
  if (typeof b.refresh_token === 'string' && b.refresh_token) out.refreshToken = b.refresh_token;
  if (typeof b.refresh_token_expires_in === 'number')
    out.refreshTokenExpiresAt = new Date(now + b.refresh_token_expires_in * 1000).toISOString();
  return out;
}

/** The board of the post's `boardId` option, else the channel's; the post's board needs no channel board. */
function account(credentials: Record<string, unknown>, boardId?: string): Account {
  return { token: credential(P, credentials, 'accessToken'), boardId: boardId || credential(P, credentials, 'boardId') };
}

function pinOptions(req: PublishRequest): PinterestOptions {
  return (req.options ?? {}) as PinterestOptions;
}

/** The `altText` option as given, else the image's own alt text cut to what Pinterest takes. */
function altTextOf(req: PublishRequest): string {
  const option = pinOptions(req).altText;
  if (option) return option;
  return req.media[0]?.altText?.slice(0, MAX_ALT_TEXT) ?? '';
}

function onlyMedia(media: MediaRef[]): MediaRef {
  if (media.length !== 1) throw new PlatformError('permanent', `Pinterest: a Pin needs exactly one image or video (got ${media.length})`);
  const item = media[0]!;
  if (item.type !== 'image' && item.type !== 'gif' && item.type !== 'video') {
    throw new PlatformError('permanent', `Pinterest: a Pin needs an image or a video, not ${item.type}`);
  }
  return item;
}

/** Pinterest takes JPEG and PNG inline; WebP becomes JPEG, a GIF its first frame as PNG. */
async function pinnableImage(item: MediaRef): Promise<{ bytes: Uint8Array; mimeType: ImageContentType }> {
  const bytes = await item.read();
  if (item.mimeType === 'image/jpeg' || item.mimeType === 'image/png') return { bytes, mimeType: item.mimeType };
  const sharp = (await import('sharp')).default;
  if (item.mimeType === 'image/gif') return { bytes: new Uint8Array(await sharp(bytes).png().toBuffer()), mimeType: 'image/png' };
  return { bytes: new Uint8Array(await sharp(bytes).jpeg({ quality: 90 }).toBuffer()), mimeType: 'image/jpeg' };
}

/** Pinterest's error body is `{"code": <number>, "message": "..."}`. */
function errorOf(r: Reply): { reason: string; code?: string } {
  const b = r.body as Answer<ErrorAnswer> | null;
  return {
    reason: typeof b?.message === 'string' && b.message ? b.message : reasonOf(r),
    code: typeof b?.code === 'number' || typeof b?.code === 'string' ? String(b.code) : undefined,
  };
}

function httpError(r: Reply): PlatformError {
  const { reason, code } = errorOf(r);
  const message = `Pinterest ${r.status}: ${reason}`;
  const o = { status: r.status, platformCode: code };
  if (r.status === 401) return new PlatformError('reauth', message, o);
  if (r.status === 408 || r.status === 429 || r.status >= 500)
    return new PlatformError('transient', message, { ...o, retryAfterMs: retryAfter(r.headers) });
  // 400 invalid Pin, 403 image too small/large/broken or board not allowed, 404 board not found.
  return new PlatformError('permanent', message, o);
}

/** Retry-After, else X-RateLimit-Reset (seconds until the window resets, or an epoch time). */
function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'), now);
  if (ra !== undefined) return ra;
  const raw = headers.get('x-ratelimit-reset');
  const reset = Number(raw);
  if (!raw || !Number.isFinite(reset)) return undefined;
  return reset > 1e9 ? Math.max(0, Math.ceil(reset * 1000 - now)) : Math.ceil(reset * 1000);
}

const norm = (t: string) => t.replace(/\r\n/g, '\n').trim();
