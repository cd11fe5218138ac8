// X connector: API v2 with an OAuth 2.0 user-context token (credentials.accessToken). Media goes
// through the dedicated v2 upload endpoints (initialize → append → finalize → STATUS), alt text
// through POST /2/media/metadata, the post through POST /2/tweets. It hides others' replies in a
// conversation the account started (PUT /2/tweets/:id/hidden) and deletes its own posts
// (DELETE /2/tweets/:id).
import type {
  AccessOAuth2TokenResult,
  ErrorV2,
  InlineErrorV2,
  SendTweetV2Params,
  TTweetReplySettingsV2,
  TweetPublicMetricsV2,
  TweetV2DeleteTweetResult,
  TweetV2HideReplyResult,
  TweetV2LookupResult,
  TweetV2PostTweetResult,
  TweetV2UserTimelineParams,
  TweetV2UserTimelineResult,
  Tweetv2FieldsParams,
  Tweetv2SearchParams,
  Tweetv2SearchResult,
  UserV2Result,
} from 'twitter-api-v2';
// The root does not export the v2 media types; their module does.
import type {
  MediaV2MetadataCreateParams,
  MediaV2ProcessingInfo,
  MediaV2UploadInitParams,
  MediaV2UploadResponse,
} from 'twitter-api-v2/dist/esm/types/v2/media.v2.types';
import { blobOf, createHttp, credential, isOk, reasonOf, sleep, tokenError, trimSlash, type Reply, type SendOptions } from './http.ts';
import { type Answer, counts, str } from './json.ts';
import type { XOptions } from './options.ts';
import {
  PlatformError,
  parseRetryAfter,
  type CommentsRead,
  type CommentTarget,
  type Connector,
  type MediaRef,
  type Metric,
  type PlatformComment,
  type PlatformMetrics,
  type PublishRequest,
  type PublishResult,
} from './types.ts';

export interface XConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each HTTP request (not for the whole publish). */
  timeoutMs?: number;
  /** API host (https://api.x.com); it also serves media upload. */
  baseUrl?: string;
  /** Host of the OAuth 2.0 token endpoint (defaults to baseUrl). */
  authBaseUrl?: string;
  /** The app's OAuth 2.0 client; the secret is absent for public (PKCE-only) clients. */
  oauth?: { clientId: string; clientSecret?: string };
  /** Wait between media STATUS polls; by default X's own check_after_secs. */
  pollIntervalMs?: number;
  /** How long to wait for an uploaded video or GIF to finish processing. */
  pollTimeoutMs?: number;
  /** Bytes per APPEND segment (X accepts up to 5 MB). */
  chunkBytes?: number;
  /** How far back findPublished looks for a post an earlier attempt created. */
  lookbackMs?: number;
}

const X = 'X';
/** Pages of a conversation's search read at most: 20 of 100 posts. */
const MAX_SEARCH_PAGES = 20;

/** A post's text as X's API gives it, with &, < and > escaped: as written. */
function xText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
/** X's documented limit for alt text (POST /2/media/metadata). */
const MAX_ALT_TEXT = 1000;

// The published shapes (twitter-api-v2 1.29.1, the X API v2 reference at
// https://docs.x.com/x-api/): request bodies and queries are built as these types, answers read
// through them, so a field X does not have or a wrong enum value is a type error.

/**
 * X's documented `reply_settings` (https://docs.x.com/x-api/posts/create-post). The package types
 * it as its own three values or any string; held to X's list, a value X refuses does not compile.
 */
export type XReplySettings = Exclude<TTweetReplySettingsV2, 'everyone'> | 'subscribers' | 'verified';
/** POST /2/tweets. */
export type TweetParams = Omit<SendTweetV2Params, 'reply_settings'> & { reply_settings?: XReplySettings };
type MediaIds = NonNullable<NonNullable<SendTweetV2Params['media']>['media_ids']>;
/** POST /2/media/metadata: the media id and the package's metadata params. */
export interface MediaMetadataParams {
  id: string;
  metadata: MediaV2MetadataCreateParams;
}
/** PUT /2/tweets/:id/hidden (https://docs.x.com/x-api/posts/hide-replies; the package builds it inline). */
export interface HideReplyParams {
  hidden: boolean;
}
/**
 * The package types field lists as its field names or any string; only the names are allowed
 * here, as arrays, so a misspelt field is a type error.
 */
export type StrictFields<P> = { [K in keyof P]: K extends keyof Tweetv2FieldsParams ? Exclude<P[K], string> : P[K] };
/** GET /2/tweets: `ids` is the package's path argument of tweets(ids, options). */
export type LookupQuery = { ids: string[] } & StrictFields<Partial<Tweetv2FieldsParams>>;
export type SearchQuery = StrictFields<Tweetv2SearchParams>;
export type TimelineQuery = StrictFields<TweetV2UserTimelineParams>;
/** X's problem details (https://docs.x.com/x-api/fundamentals/response-codes-and-errors), `status` beside them. */
export type XProblem = ErrorV2 & { status?: number };

type Tweet = Answer<TweetV2UserTimelineResult['data'][number]>;

/** A query string from a typed query (arrays comma-separated, as X takes them). */
function queryOf(q: Record<string, string | number | readonly string[] | undefined>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(',') : String(v));
  return out;
}

/** X takes 1 to 4 media ids (the package's tuple type). */
function mediaIdsOf(ids: string[]): MediaIds {
  if (ids.length < 1 || ids.length > 4) throw new PlatformError('permanent', `X takes 1 to 4 attachments, not ${ids.length}`);
  return ids as MediaIds;
}

/** A post's counters under our metric names. */
const TWEET_COUNTS = {
  likes: 'like_count',
  replies: 'reply_count',
  reposts: 'retweet_count',
  quotes: 'quote_count',
  saves: 'bookmark_count',
  impressions: 'impression_count',
} as const satisfies Partial<Record<Metric, keyof TweetPublicMetricsV2>>;

export function createXConnector(opts: XConnectorOptions = {}): Connector {
  const http = createHttp(X, { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const base = trimSlash(opts.baseUrl ?? 'https://api.x.com');
  const authBase = trimSlash(opts.authBaseUrl ?? base);
  const pollTimeoutMs = opts.pollTimeoutMs ?? 300_000;
  const chunkBytes = opts.chunkBytes ?? 4 * 1024 * 1024;
  const lookbackMs = opts.lookbackMs ?? 24 * 60 * 60 * 1000;

  async function call(token: string, method: string, path: string, o: Omit<SendOptions, 'method' | 'headers'> = {}): Promise<Reply> {
    const r = await http.send(`${base}${path}`, { ...o, method, headers: { Authorization: `Bearer ${token}` } });
    if (isOk(r)) return r;
    throw xError(r);
  }

  async function uploadMedia(token: string, item: MediaRef, signal?: AbortSignal): Promise<string> {
    const category = mediaCategory(item);
    const bytes = await item.read();
    const params: MediaV2UploadInitParams = { media_type: item.mimeType, total_bytes: bytes.byteLength, media_category: category };
    const init = await call(token, 'POST', '/2/media/upload/initialize', { json: params, signal });
    const id = str((init.body as Answer<MediaV2UploadResponse> | null)?.data?.id);
    if (!id) throw new PlatformError('transient', `X media initialize returned no id: ${init.text.slice(0, 200)}`);

    for (let index = 0, offset = 0; offset < bytes.byteLength; index++, offset += chunkBytes) {
      const form = new FormData();
      form.append('segment_index', String(index));
      form.append('media', blobOf(bytes.slice(offset, offset + chunkBytes), 'application/octet-stream'), item.fileName || 'media');
      await call(token, 'POST', `/2/media/upload/${id}/append`, { multipart: form, signal });
    }

    const fin = await call(token, 'POST', `/2/media/upload/${id}/finalize`, { signal });
    await waitUntilProcessed(token, id, (fin.body as Answer<MediaV2UploadResponse> | null)?.data?.processing_info, signal);

    // X documents alt text for images and GIFs only.
    if (item.altText && category !== 'tweet_video') {
      const meta: MediaMetadataParams = { id, metadata: { alt_text: { text: item.altText.slice(0, MAX_ALT_TEXT) } } };
      await call(token, 'POST', '/2/media/metadata', { json: meta, signal });
    }
    return id;
  }

  /** Videos and GIFs are processed after FINALIZE; a tweet may attach them only once they succeeded. */
  async function waitUntilProcessed(
    token: string,
    id: string,
    info: Answer<MediaV2ProcessingInfo> | null | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const deadline = Date.now() + pollTimeoutMs;
    while (info && info.state !== 'succeeded') {
      if (info.state === 'failed') {
        throw new PlatformError('permanent', `X could not process media ${id}: ${info.error?.message ?? 'processing failed'}`);
      }
      if (Date.now() >= deadline) throw new PlatformError('transient', `X media ${id} still processing after ${pollTimeoutMs} ms`);
      await sleep(opts.pollIntervalMs ?? Math.max(1, info.check_after_secs ?? 1) * 1000, signal);
      // The package has no type for the STATUS query (https://docs.x.com/x-api/media/get-media-upload-status).
      const q = new URLSearchParams({ command: 'STATUS', media_id: id });
      const r = await call(token, 'GET', `/2/media/upload?${q}`, { signal });
      info = (r.body as Answer<MediaV2UploadResponse> | null)?.data?.processing_info;
    }
  }

  async function userId(token: string, credentials: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    const known = str(credentials.userId);
    if (known) return known;
    const r = await call(token, 'GET', '/2/users/me', { signal });
    const id = str((r.body as Answer<UserV2Result> | null)?.data?.id);
    if (!id) throw new PlatformError('transient', `X /2/users/me returned no id: ${r.text.slice(0, 200)}`);
    return id;
  }

  function tweetUrl(credentials: Record<string, unknown>, id: string): string {
    const username = str(credentials.username);
    return username ? `https://x.com/${encodeURIComponent(username)}/status/${id}` : `https://x.com/i/web/status/${id}`;
  }

  return {
    platform: 'X',
    metricsBatch: 100,

    /**
     * GET /2/tweets?ids=…&tweet.fields=public_metrics (up to 100 ids). public_metrics carries
     * like, reply, retweet, quote, bookmark and impression counts; a deleted or unseen post comes
     * back in errors[] instead of data[] and is left out.
     */
    /**
     * GET /2/tweets/search/recent?query=conversation_id:<id> (X searches the last 7 days only on
     * this endpoint): the posts of the conversation, newest first, paged by `next_token`, with
     * their authors (expansions=author_id). The account's own are by the user the direct replies
     * answer (`in_reply_to_user_id`). No answer at all: the post is looked up, to tell a quiet
     * post from one X no longer has.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const token = credential(X, credentials, 'accessToken');
      type Found = Answer<Tweetv2SearchResult>;
      type FoundUser = NonNullable<NonNullable<Found['includes']>['users']>[number];
      const found: { tweets: NonNullable<Found['data']>; users: Map<string, FoundUser> } = { tweets: [], users: new Map() };
      let next: string | undefined;
      for (let page = 0; page < MAX_SEARCH_PAGES; page++) {
        const q: SearchQuery = {
          query: `conversation_id:${post.platformPostId}`,
          max_results: 100,
          'tweet.fields': ['author_id', 'created_at', 'conversation_id', 'in_reply_to_user_id', 'referenced_tweets'],
          expansions: ['author_id'],
          'user.fields': ['name', 'username', 'profile_image_url'],
          next_token: next,
        };
        const r = await call(token, 'GET', `/2/tweets/search/recent?${queryOf(q)}`, { signal });
        const body = r.body as Found | null;
        const data = body?.data;
        for (const t of Array.isArray(data) ? data : []) if (t && typeof t === 'object') found.tweets.push(t);
        const users = body?.includes?.users;
        for (const u of Array.isArray(users) ? users : []) {
          const id = str(u?.id);
          if (id) found.users.set(id, u);
        }
        next = str(body?.meta?.next_token);
        if (!next) break;
      }
      if (!found.tweets.length) {
        const q: LookupQuery = { ids: [post.platformPostId] };
        const r = await call(token, 'GET', `/2/tweets?${queryOf(q)}`, { signal });
        return Array.isArray((r.body as Answer<TweetV2LookupResult> | null)?.data) ? { comments: [] } : { comments: [], gone: true };
      }
      const parentOf = (t: Tweet) => {
        const refs = t.referenced_tweets;
        const replied = Array.isArray(refs) ? refs.find((x) => x?.type === 'replied_to') : undefined;
        return str(replied?.id);
      };
      const own = str(found.tweets.find((t) => parentOf(t) === post.platformPostId)?.in_reply_to_user_id);
      const comments: PlatformComment[] = [];
      // Oldest first, as written.
      for (const t of found.tweets.toReversed()) {
        const id = str(t.id);
        const createdAt = str(t.created_at);
        const author = str(t.author_id);
        const user = author ? found.users.get(author) : undefined;
        const username = str(user?.username);
        if (!id || !createdAt || !author) continue;
        comments.push({
          platformCommentId: id,
          parentPlatformId: parentOf(t) ?? post.platformPostId,
          author: {
            name: str(user?.name) ?? null,
            handle: username ?? null,
            avatarUrl: str(user?.profile_image_url) ?? null,
            profileUrl: username ? `https://x.com/${encodeURIComponent(username)}` : null,
          },
          text: xText(String(t.text ?? '')),
          createdAt,
          url: username ? `https://x.com/${encodeURIComponent(username)}/status/${id}` : `https://x.com/i/web/status/${id}`,
          ours: own !== undefined && author === own,
        });
      }
      return { comments };
    },

    async readMetrics(credentials, ids, signal) {
      const token = credential(X, credentials, 'accessToken');
      const q: LookupQuery = { ids, 'tweet.fields': ['public_metrics'] };
      const r = await call(token, 'GET', `/2/tweets?${queryOf(q)}`, { signal });
      const out: Record<string, PlatformMetrics> = {};
      const data = (r.body as Answer<TweetV2LookupResult> | null)?.data;
      for (const t of Array.isArray(data) ? data : []) {
        const id = str(t?.id);
        const m = t?.public_metrics;
        if (!id || !m || typeof m !== 'object') continue;
        out[id] = counts(m as Record<string, unknown>, TWEET_COUNTS);
      }
      return out;
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const token = credential(X, req.credentials, 'accessToken');
      for (const item of req.media) mediaCategory(item); // reject unsupported types before uploading anything
      if (req.media.length) mediaIdsOf(req.media.map((m) => m.id));
      // Sequential: keeps the attachment order. Uploads of a failed attempt expire unused.
      const mediaIds: string[] = [];
      for (const item of req.media) mediaIds.push(await uploadMedia(token, item, req.signal));

      // A thread item answers the item before it; X refuses (403) a reply to a post it no longer shows.
      // The poll is sent as given: X's schema checks it (and refuses one beside media) and names the field.
      const o = (req.options ?? {}) as XOptions;
      const json: TweetParams = {
        text: req.text || undefined,
        media: mediaIds.length ? { media_ids: mediaIdsOf(mediaIds) } : undefined,
        reply: req.replyTo ? { in_reply_to_tweet_id: req.replyTo.parent.platformPostId } : undefined,
        reply_settings: o.replySettings,
        poll: o.poll ? { options: o.poll.options, duration_minutes: o.poll.durationMinutes } : undefined,
      };
      const r = await call(token, 'POST', '/2/tweets', { json, signal: req.signal }).catch((err: unknown) => {
        // X is reported to refuse, now and then, a reply to a post made seconds before, as if the
        // parent were gone (403 "deleted or not visible"): a thread's replies follow each other
        // within seconds. A reply so refused is transient: the workflow's retry policy asks again
        // with its backoff, and a parent really gone fails the channel once its attempts run out.
        if (!req.replyTo || !unseenParent(err)) throw err;
        throw new PlatformError('transient', `${err.message} (the post replied to may not be visible yet; asked again later)`, err.opts);
      });
      const id = str((r.body as Answer<TweetV2PostTweetResult> | null)?.data?.id);
      // A 2xx without an id: the post may exist, so retry (findPublished looks it up first).
      if (!id) throw new PlatformError('transient', `X returned an unexpected body: ${r.text.slice(0, 200)}`, { status: r.status });
      return { platformPostId: id, url: tweetUrl(req.credentials, id) };
    },

    /**
     * X has no idempotency key for POST /2/tweets, so before a retry we read the account's own
     * recent posts (GET /2/users/:id/tweets) and look for one with this exact text and the same
     * number of attachments, created within lookbackMs. X itself rejects identical text posted
     * again soon after, so the exact text identifies the post an earlier attempt created. A post
     * is looked for among posts that answer nothing; a reply among the account's replies, and it
     * must answer the same parent (referenced_tweets replied_to). X puts the handles a reply to
     * another account answers before its text ("@ann Thanks!"), so those are left out on both sides.
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const token = credential(X, req.credentials, 'accessToken');
      const uid = await userId(token, req.credentials, req.signal);
      const parent = req.replyTo?.parent.platformPostId;
      const q: TimelineQuery = {
        // Replies cannot be narrowed to the account's own threads, so the answers it gave others
        // share the listing: a full page keeps the reply in it.
        max_results: parent ? 100 : 20,
        exclude: parent ? ['retweets'] : ['retweets', 'replies'],
        start_time: rfc3339(Date.now() - lookbackMs),
        'tweet.fields': ['created_at', 'attachments', 'note_tweet', 'referenced_tweets'],
      };
      const r = await call(token, 'GET', `/2/users/${encodeURIComponent(uid)}/tweets?${queryOf(q)}`, { signal: req.signal });
      const data = (r.body as Answer<TweetV2UserTimelineResult> | null)?.data;
      const tweets = (Array.isArray(data) ? data : []).filter((t): t is Tweet => !!t && typeof t === 'object' && !!str(t.id));
      const want = comparable(withoutLeadingMentions(req.text));
      const hit = tweets.find(
        (t) =>
          comparable(withoutLeadingMentions(t.note_tweet?.text ?? t.text ?? '')) === want &&
          (t.attachments?.media_keys?.length ?? 0) === req.media.length &&
          repliedTo(t) === parent,
      );
      if (!hit) return null;
      const id = hit.id as string;
      return { platformPostId: id, url: tweetUrl(req.credentials, id), publishedAt: str(hit.created_at) };
    },

    /**
     * PUT /2/tweets/:id/hidden with {"hidden": true|false} (scope tweet.moderate.write). X hides
     * only replies in a conversation the account started, never the account's own posts, and
     * answers a hide that is already so with success. Every refusal (403: not our conversation,
     * our own post, a token without the scope; 404: gone) is permanent: asking again changes nothing.
     */
    async hideComment(credentials, target: CommentTarget, hidden, signal) {
      const token = credential(X, credentials, 'accessToken');
      const id = tweetId(target.platformCommentId);
      const r = await http.send(`${base}/2/tweets/${id}/hidden`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}` },
        json: { hidden } satisfies HideReplyParams,
        signal,
      });
      if (!isOk(r)) {
        const err = xError(r);
        if (r.status !== 403 || err.kind !== 'permanent') throw err;
        throw new PlatformError(
          'permanent',
          `${err.message} (X hides only others' replies in a conversation the account started, with a token granted tweet.moderate.write)`,
          err.opts,
        );
      }
      const now = (r.body as Answer<TweetV2HideReplyResult> | null)?.data?.hidden;
      if (typeof now !== 'boolean')
        throw new PlatformError('transient', `X answered the hide without data.hidden: ${r.text.slice(0, 200)}`, { status: r.status });
      if (now !== hidden) throw new PlatformError('permanent', `X kept reply ${id} ${now ? 'hidden' : 'shown'}`, { status: r.status });
    },

    /**
     * DELETE /2/tweets/:id (the account's own posts only; X answers {"data":{"deleted":true}}).
     * A post X no longer has is success: 404, `deleted: false`, or a not-found entry in errors[].
     */
    async deletePublished(credentials, target: CommentTarget, signal) {
      const token = credential(X, credentials, 'accessToken');
      const id = tweetId(target.platformCommentId);
      const r = await http.send(`${base}/2/tweets/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` }, signal });
      if (r.status === 404) return;
      if (!isOk(r)) throw xError(r);
      const body = r.body as Answer<TweetV2DeleteTweetResult> | null;
      if (typeof body?.data?.deleted === 'boolean') return;
      const errors = body?.errors;
      if (Array.isArray(errors) && errors.some((e) => str(e?.type)?.endsWith('/resource-not-found'))) return;
      throw new PlatformError('transient', `X answered the delete without data.deleted: ${r.text.slice(0, 200)}`, { status: r.status });
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      const refreshToken = credential(X, credentials, 'refreshToken');
      const client = opts.oauth;
      if (!client?.clientId) {
        throw new PlatformError('permanent', 'X token refresh needs the app client id (X_CLIENT_ID) on the worker');
      }
      // Confidential clients authenticate with Basic; public clients send only client_id.
      const headers: Record<string, string> = {};
      if (client.clientSecret) {
        headers.Authorization = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
      }
      const r = await http.send(`${authBase}/2/oauth2/token`, {
        method: 'POST',
        headers,
        form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.clientId },
        signal,
      });
      if (!isOk(r)) throw tokenError(X, r, retryAfter(r.headers));
      const token = r.body as Answer<AccessOAuth2TokenResult> | null;
      const accessToken = str(token?.access_token);
      if (!accessToken) throw new PlatformError('transient', `X token endpoint returned no access_token: ${r.text.slice(0, 200)}`);
      const expiresIn = Number(token?.expires_in) || 7200;
      const fresh: Record<string, unknown> = { accessToken, expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() };
      // X rotates refresh tokens: the old one is dead once this one is issued.
      const rotated = str(token?.refresh_token);
      if (rotated) fresh.refreshToken = rotated;
      return fresh;
    },
  };
}

function mediaCategory(item: MediaRef): 'tweet_image' | 'tweet_gif' | 'tweet_video' {
  if (item.type === 'video') return 'tweet_video';
  if (item.type === 'gif' || item.mimeType === 'image/gif') return 'tweet_gif';
  if (item.type === 'image') return 'tweet_image';
  throw new PlatformError('permanent', `X does not accept ${item.type} attachments (${item.fileName})`);
}

/**
 * X v2 errors are RFC 7807 problems ({title, detail, type, status}, validation errors also in
 * errors[]). 401 is a dead token; 403 is a refusal of this post (duplicate content, policy,
 * app permissions, a reply to a post that is deleted or not visible) except when the stored
 * token is an app-only one.
 */
function xError(r: Reply): PlatformError {
  const message = `X ${r.status}: ${xReason(r)}`;
  const status = r.status;
  const problem = r.body as Answer<XProblem> | null;
  const type = str(problem?.type);
  const platformCode = type && type !== 'about:blank' ? type : str(problem?.title);
  if (status === 401) return new PlatformError('reauth', message, { status, platformCode });
  if (status === 403 && type?.endsWith('/unsupported-authentication'))
    return new PlatformError('reauth', message, { status, platformCode });
  if (status === 408 || status === 429 || status >= 500) {
    return new PlatformError('transient', message, { status, platformCode, retryAfterMs: retryAfter(r.headers) });
  }
  return new PlatformError('permanent', message, { status, platformCode });
}

/** X's refusal of a reply whose parent it does not show (deleted, protected, or not yet visible). */
function unseenParent(err: unknown): err is PlatformError {
  return err instanceof PlatformError && err.opts.status === 403 && /reply to a Tweet that is deleted or not visible/i.test(err.message);
}

function xReason(r: Reply): string {
  // Problem details' errors[] carry `message`; errors[] beside data (InlineErrorV2) carry `detail`.
  type Entry = Answer<XProblem['errors'][number] & InlineErrorV2>;
  const body = r.body as (Answer<Omit<XProblem, 'errors'>> & { errors?: Entry[] }) | null;
  const detail = str(body?.detail);
  const errors = body?.errors;
  const messages = Array.isArray(errors) ? errors.map((e) => str(e?.message) ?? str(e?.detail)).filter((m): m is string => !!m) : [];
  if (detail && messages.length) return `${detail} (${messages.join('; ')})`;
  return detail ?? (messages.length ? messages.join('; ') : reasonOf(r));
}

/**
 * Retry-After if sent; else the reset (epoch seconds) of an exhausted 24-hour user or app cap;
 * else the reset of the 15-minute window (x-rate-limit-reset).
 */
function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'), now);
  if (ra !== undefined) return ra;
  for (const cap of ['x-user-limit-24hour', 'x-app-limit-24hour']) {
    if (headers.get(`${cap}-remaining`)?.trim() === '0') {
      const at = epochMs(headers.get(`${cap}-reset`));
      if (at !== undefined) return Math.max(0, at - now);
    }
  }
  const at = epochMs(headers.get('x-rate-limit-reset'));
  return at === undefined ? undefined : Math.max(0, at - now);
}

function epochMs(v: string | null): number | undefined {
  return v && /^\d+$/.test(v.trim()) ? Number(v.trim()) * 1000 : undefined;
}

/**
 * X returns a post's text with &, < and > as HTML entities, links replaced by t.co links and a
 * t.co link to the attached media appended; compare with links and trailing links neutralized.
 */
function comparable(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/https?:\/\/\S+/g, '\u0000')
    .replace(/(\s*\u0000)+\s*$/, '')
    .normalize('NFC')
    .trim();
}

/** A post id as X writes them (digits only), so it cannot change the path it is put in. */
function tweetId(id: string): string {
  if (!/^\d{1,19}$/.test(id)) throw new PlatformError('permanent', `X: ${id} is not a post id`);
  return id;
}

/** The text without the handles it starts with: those X adds before a reply to another account. */
function withoutLeadingMentions(text: string): string {
  return text.replace(/^(\s*@\w{1,15}\b)+\s*/, '');
}

/** The post a tweet answers (its `replied_to` reference); undefined for a post that answers nothing. */
function repliedTo(t: Tweet): string | undefined {
  const refs = t.referenced_tweets;
  return str((Array.isArray(refs) ? refs : []).find((ref) => ref?.type === 'replied_to')?.id);
}

/** X rejects fractional seconds in start_time. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
