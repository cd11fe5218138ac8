// YouTube connector: YouTube Data API v3 videos.insert through the resumable upload protocol,
// Google OAuth token refresh, and a look-up of the channel's uploads before a retry.
//
// No idempotency key exists for videos.insert, so a retry must not upload blindly:
//  - within this worker process the resumable session URI is kept per idempotency key. Asking a
//    session for its status repeats the final answer once the upload finished (the video), or
//    says how many bytes arrived (308), so a retry either returns the earlier video or resumes
//    the same session — one session can only ever create one video;
//  - after a restart the session is gone, and findPublished scans the channel's uploads playlist
//    (new uploads appear there at once, even while processing; 1 quota unit per call, where
//    search.list has its own 100-calls-a-day bucket) for a recent video with the same title and
//    description. That needs the youtube.readonly scope next to youtube.upload.
//
// A first comment is a comment thread on the video (commentThreads.insert, which needs the
// youtube.force-ssl scope); before a retry the video's newest threads are read for this channel's
// comment with the same text. A reply to a comment is comments.insert under the comment's thread
// (YouTube's threads are one level deep); what people answered is read with commentThreads.list
// and, where a thread holds more replies than it carries, comments.list; a comment is held for
// review and published again with comments.setModerationStatus, and a reply of ours is deleted
// with comments.delete.
//
// Request bodies, query parameters and the fields read from answers are typed by the published
// youtube_v3 types of @googleapis/youtube (type-only: nothing of it runs), with the enumerations
// the reference documents narrowed where the package types them as plain strings.
import type { youtube_v3 } from '@googleapis/youtube';
import { createHttp, credential, isOk, oauthErrorOf, reasonOf, sleep, trimSlash, withMidwayExpiry, type Reply } from './http.ts';
import type { YouTubeOptions } from './options.ts';
import { remember } from './recent.ts';
import {
  PlatformError,
  parseRetryAfter,
  type CommentsRead,
  type CommentTarget,
  type Connector,
  type MediaRef,
  type PlatformComment,
  type PlatformMetrics,
  type PostRef,
  type PublishRequest,
  type PublishResult,
} from './types.ts';
import { counts, str } from './json.ts';

export interface YouTubeConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each API request. */
  timeoutMs?: number;
  /** Limit for each chunk PUT of the upload. */
  uploadTimeoutMs?: number;
  /** Data API host (/youtube/v3/...). */
  baseUrl?: string;
  /** Upload host (/upload/youtube/v3/videos). */
  uploadBaseUrl?: string;
  /** Google OAuth host (/token). */
  authBaseUrl?: string;
  /** The Google OAuth client; without it tokens are not refreshed. */
  oauth?: { clientId: string; clientSecret: string };
  /** Bytes per PUT; rounded down to a multiple of 256 KiB as the protocol requires. */
  chunkSize?: number;
  /** Used when the channel's credentials carry no privacyStatus. */
  privacyStatus?: PrivacyStatus;
  categoryId?: string;
  /** How often one publish resumes after 5xx or lost connections before giving up (transient). */
  resumeAttempts?: number;
  resumeDelayMs?: number;
  /** How far back findPublished looks for an earlier attempt's video. */
  lookbackMs?: number;
}

/** status.privacyStatus as the reference documents it (the package types it as string). */
export type PrivacyStatus = 'public' | 'unlisted' | 'private';

const PRIVACY: readonly PrivacyStatus[] = ['public', 'unlisted', 'private'];

/** A published type with some of its string fields narrowed to the values the reference documents. */
type Narrow<T, N extends Narrowing<T, N> = Record<never, never>> = Omit<T, keyof N> & { [K in keyof N]?: N[K] };
/** Narrowings of fields T has, each to a subtype of the field's type. */
type Narrowing<T, N> = { [K in keyof N]: K extends keyof T ? NonNullable<T[K]> : never };

/** The videos.insert resource the connector sends: Schema$Video's snippet and status. */
export interface VideoInsertResource extends youtube_v3.Schema$Video {
  snippet: youtube_v3.Schema$VideoSnippet & { title: string; description: string };
  status: Narrow<youtube_v3.Schema$VideoStatus, { privacyStatus: PrivacyStatus; license: 'youtube' | 'creativeCommon' }>;
}

/**
 * A method's query parameters as its published Params type has them (the body, the media and the
 * client's auth travel otherwise). `N` narrows documented enumerations.
 */
export type YouTubeQuery<P, N extends Narrowing<QueryOf<P>, N> = Record<never, never>> = Narrow<QueryOf<P>, N>;
type QueryOf<P> = Omit<P, 'requestBody' | 'media' | 'auth'>;

type TextFormat = 'html' | 'plainText';
/** The query of each method the connector calls. */
type Q = {
  insert: YouTubeQuery<youtube_v3.Params$Resource$Videos$Insert>;
  channels: YouTubeQuery<youtube_v3.Params$Resource$Channels$List>;
  playlistItems: YouTubeQuery<youtube_v3.Params$Resource$Playlistitems$List>;
  videos: YouTubeQuery<youtube_v3.Params$Resource$Videos$List>;
  categories: YouTubeQuery<youtube_v3.Params$Resource$Videocategories$List>;
  threadInsert: YouTubeQuery<youtube_v3.Params$Resource$Commentthreads$Insert>;
  threads: YouTubeQuery<youtube_v3.Params$Resource$Commentthreads$List, { order: 'time' | 'relevance'; textFormat: TextFormat }>;
  commentInsert: YouTubeQuery<youtube_v3.Params$Resource$Comments$Insert>;
  comments: YouTubeQuery<youtube_v3.Params$Resource$Comments$List, { textFormat: TextFormat }>;
  moderate: YouTubeQuery<
    youtube_v3.Params$Resource$Comments$Setmoderationstatus,
    { moderationStatus: 'heldForReview' | 'published' | 'likelySpam' | 'rejected' }
  >;
  deleteComment: YouTubeQuery<youtube_v3.Params$Resource$Comments$Delete>;
};

/** Typed query parameters as a query string: lists comma-separated, as the API takes them. */
export function youtubeQuery<M extends keyof Q>(_method: M, params: Q[M]): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  return q;
}

const QUANTUM = 256 * 1024;
const TITLE_MAX = 100;
const DESCRIPTION_MAX_BYTES = 5000;
const RESUMABLE = new Set([500, 502, 503, 504]);

interface Session {
  uri: string;
  mediaId: string;
  size: number;
}

type Video = youtube_v3.Schema$Video;
type YouTubeComment = youtube_v3.Schema$Comment;
type CommentThread = youtube_v3.Schema$CommentThread;

type Progress = { done: true; video: Video } | { done: false; offset: number } | { expired: true };

export function createYouTubeConnector(opts: YouTubeConnectorOptions = {}): Connector {
  const api = createHttp('YouTube', { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const uploader = createHttp('YouTube', { fetch: opts.fetch, timeoutMs: opts.uploadTimeoutMs ?? 300_000 });
  const base = trimSlash(opts.baseUrl ?? 'https://www.googleapis.com');
  const uploadBase = trimSlash(opts.uploadBaseUrl ?? 'https://www.googleapis.com');
  const authBase = trimSlash(opts.authBaseUrl ?? 'https://oauth2.googleapis.com');
  const chunkSize = Math.max(QUANTUM, Math.floor((opts.chunkSize ?? 8 * 1024 * 1024) / QUANTUM) * QUANTUM);
  const resumeAttempts = opts.resumeAttempts ?? 3;
  const resumeDelayMs = opts.resumeDelayMs ?? 1_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 3600_000;
  /** Resumable sessions by idempotency key, kept until the upload answered for good. */
  const sessions = new Map<string, Session>();

  async function startSession(req: PublishRequest, token: string, item: MediaRef, size: number): Promise<Session> {
    const query = youtubeQuery('insert', {
      uploadType: 'resumable',
      part: ['snippet', 'status'],
      notifySubscribers: optionsOf(req).notifySubscribers,
    });
    const url = `${uploadBase}/upload/youtube/v3/videos?${query}`;
    const r = await api.send(url, {
      method: 'POST',
      headers: { ...bearer(token), 'X-Upload-Content-Length': String(size), 'X-Upload-Content-Type': uploadType(item) },
      json: metadata(req, item.fileName, opts),
      signal: req.signal,
    });
    if (!isOk(r)) throw youtubeError(r);
    const location = r.headers.get('location');
    if (!location) throw new PlatformError('transient', 'YouTube started an upload session without a Location', { status: r.status });
    const session = { uri: new URL(location, url).toString(), mediaId: item.id, size };
    remember(sessions, req.idempotencyKey, session);
    return session;
  }

  /** Empty PUT with `Content-Range: bytes *\/size`: the finished video, or how far the bytes got. */
  async function progress(session: Session, token: string, signal?: AbortSignal): Promise<Progress> {
    const r = await uploader.send(session.uri, { method: 'PUT', headers: statusQuery(session, token), body: '', signal });
    return answer(r);
  }

  function answer(r: Reply): Progress {
    if (r.status === 200 || r.status === 201) return { done: true, video: (r.body ?? {}) as Video };
    if (r.status === 308) return { done: false, offset: rangeEnd(r.headers.get('range')) };
    if (r.status === 404) return { expired: true };
    throw youtubeError(r);
  }

  /** One PUT to the session; a lost connection or a 500/502/503/504 comes back as a value to resume from. */
  async function put(
    session: Session,
    headers: Record<string, string>,
    body: Uint8Array | string,
    signal?: AbortSignal,
  ): Promise<Progress | PlatformError> {
    let r: Reply;
    try {
      r = await uploader.send(session.uri, { method: 'PUT', headers, body, signal });
    } catch (err) {
      if (err instanceof PlatformError && !signal?.aborted) return err;
      throw err;
    }
    return RESUMABLE.has(r.status) ? youtubeError(r) : answer(r);
  }

  /**
   * Sends the bytes from wherever the session stands (a session from an earlier attempt is asked
   * first). After a failed PUT it never assumes what the server kept: it asks, then goes on from there.
   */
  async function sendBytes(
    session: Session,
    token: string,
    item: MediaRef,
    bytes: Uint8Array,
    fresh: boolean,
    signal?: AbortSignal,
  ): Promise<Video | null> {
    let state = fresh ? { done: false as const, offset: 0 } : await put(session, statusQuery(session, token), '', signal);
    let failures = 0;
    for (;;) {
      if (state instanceof PlatformError) {
        if (++failures > resumeAttempts) throw state;
        await sleep(resumeDelayMs * 2 ** (failures - 1), signal);
        state = await put(session, statusQuery(session, token), '', signal);
        continue;
      }
      if ('expired' in state) return null;
      if (state.done) return state.video;
      const from = state.offset;
      const to = Math.min(from + chunkSize, session.size);
      const headers = { ...bearer(token), 'Content-Type': uploadType(item), 'Content-Range': `bytes ${from}-${to - 1}/${session.size}` };
      state = await put(session, headers, bytes.subarray(from, to), signal);
      if (!(state instanceof PlatformError)) failures = 0;
    }
  }

  async function findInUploads(req: PublishRequest, token: string): Promise<PublishResult | null> {
    const channels = await get(
      `${base}/youtube/v3/channels?${youtubeQuery('channels', { part: ['contentDetails'], mine: true })}`,
      token,
      req.signal,
    );
    const items = (channels.body as youtube_v3.Schema$ChannelListResponse | null)?.items;
    const playlistId = items?.[0]?.contentDetails?.relatedPlaylists?.uploads;
    if (typeof playlistId !== 'string' || !playlistId) return null;

    // The same title and description the upload was sent with, options included.
    const { snippet } = metadata(req, videoFor(req)?.fileName ?? '', opts);
    const title = snippet.title;
    const description = normalize(snippet.description);
    const since = Date.now() - lookbackMs;
    let pageToken: string | undefined;
    for (let page = 0; page < 2; page++) {
      const q = youtubeQuery('playlistItems', { part: ['snippet'], playlistId, maxResults: 50, pageToken });
      const r = await get(`${base}/youtube/v3/playlistItems?${q}`, token, req.signal);
      const body = r.body as youtube_v3.Schema$PlaylistItemListResponse | null;
      let older = false;
      for (const item of body?.items ?? []) {
        const s = item.snippet;
        const at = Date.parse(String(s?.publishedAt ?? ''));
        if (Number.isNaN(at) || at < since) {
          older = true;
          continue;
        }
        const id = s?.resourceId?.videoId;
        if (typeof id === 'string' && s?.title === title && normalize(String(s?.description ?? '')) === description) {
          return { platformPostId: id, url: watchUrl(id), publishedAt: new Date(at).toISOString() };
        }
      }
      if (older || typeof body?.nextPageToken !== 'string') return null;
      pageToken = body.nextPageToken;
    }
    return null;
  }

  /**
   * POST commentThreads?part=snippet: a top-level comment on the video. The thread's id is its
   * top-level comment's id, which the watch URL's `lc` parameter opens. A video YouTube does not
   * have answers 404 videoNotFound, one with comments turned off 403 commentsDisabled: both final.
   */
  async function comment(req: PublishRequest, token: string, video: PostRef): Promise<PublishResult> {
    if (req.media.length) throw new PlatformError('permanent', 'YouTube comments carry no attachments');
    const videoId = video.platformPostId;
    const thread: CommentThread = { snippet: { videoId, topLevelComment: { snippet: { textOriginal: req.text } } } };
    const r = await api.send(`${base}/youtube/v3/commentThreads?${youtubeQuery('threadInsert', { part: ['snippet'] })}`, {
      method: 'POST',
      headers: bearer(token),
      json: thread,
      signal: req.signal,
    });
    if (!isOk(r)) throw youtubeError(r);
    const found = commentResult((r.body ?? {}) as CommentThread, videoId);
    if (!found) throw new PlatformError('transient', `YouTube created the comment without an id: ${r.text.slice(0, 200)}`);
    return found;
  }

  /**
   * Comments have no idempotency key: the video's newest threads (commentThreads.list, order=time,
   * a few pages) are read for a top-level comment by this channel with this text. The channel is
   * credentials.channelId, else channels.list?mine=true.
   */
  async function findComment(req: PublishRequest, token: string, video: PostRef): Promise<PublishResult | null> {
    const videoId = video.platformPostId;
    const own = typeof req.credentials.channelId === 'string' && req.credentials.channelId ? req.credentials.channelId : null;
    const channelId = own ?? (await myChannelId(token, req.signal));
    if (!channelId) return null;
    const text = normalize(req.text);
    let pageToken: string | undefined;
    for (let page = 0; page < 3; page++) {
      const q = youtubeQuery('threads', { part: ['snippet'], videoId, maxResults: 100, order: 'time', textFormat: 'plainText', pageToken });
      const r = await get(`${base}/youtube/v3/commentThreads?${q}`, token, req.signal);
      const body = r.body as youtube_v3.Schema$CommentThreadListResponse | null;
      for (const thread of body?.items ?? []) {
        const top = thread.snippet?.topLevelComment;
        if (top?.snippet?.authorChannelId?.value === channelId && normalize(said(top)) === text) {
          return commentResult(thread, videoId);
        }
      }
      if (typeof body?.nextPageToken !== 'string') return null;
      pageToken = body.nextPageToken;
    }
    return null;
  }

  async function myChannelId(token: string, signal?: AbortSignal): Promise<string | null> {
    const r = await get(`${base}/youtube/v3/channels?${youtubeQuery('channels', { part: ['id'], mine: true })}`, token, signal);
    const id = (r.body as youtube_v3.Schema$ChannelListResponse | null)?.items?.[0]?.id;
    return typeof id === 'string' && id ? id : null;
  }

  /** The channel's own id: credentials.channelId, else channels.list?mine=true. */
  async function ownChannel(credentials: Record<string, unknown>, token: string, signal?: AbortSignal): Promise<string | null> {
    const own = str(credentials.channelId);
    return own ?? (await myChannelId(token, signal));
  }

  /**
   * comments.list?id=: the comment a reply answers. A reply's snippet.parentId names its thread's
   * top-level comment, which is where YouTube takes a reply (threads are one level deep); a
   * top-level comment has none. null: YouTube has no such comment (404 commentNotFound, or none
   * listed).
   */
  async function threadOf(commentId: string, token: string, signal?: AbortSignal): Promise<string | null> {
    const q = youtubeQuery('comments', { part: ['snippet'], id: [commentId], textFormat: 'plainText' });
    const r = await api.send(`${base}/youtube/v3/comments?${q}`, { headers: bearer(token), signal });
    if (r.status === 404) return null;
    if (!isOk(r)) throw youtubeError(r);
    const item = (r.body as youtube_v3.Schema$CommentListResponse | null)?.items?.find((c) => c.id === commentId);
    if (!item) return null;
    return str(item.snippet?.parentId) ?? commentId;
  }

  /**
   * POST comments?part=snippet with snippet.parentId: a reply in the thread of the comment
   * answered. A comment YouTube no longer has is final (404 parentCommentNotFound, or not found
   * before sending).
   */
  async function reply(req: PublishRequest, token: string, video: PostRef, parent: PostRef): Promise<PublishResult> {
    if (req.media.length) throw new PlatformError('permanent', 'YouTube comments carry no attachments');
    const parentId = await threadOf(parent.platformPostId, token, req.signal);
    if (!parentId) {
      throw new PlatformError('permanent', `YouTube has no comment ${parent.platformPostId} to reply to`, {
        status: 404,
        platformCode: 'commentNotFound',
      });
    }
    const created: YouTubeComment = { snippet: { parentId, textOriginal: req.text } };
    const r = await api.send(`${base}/youtube/v3/comments?${youtubeQuery('commentInsert', { part: ['snippet'] })}`, {
      method: 'POST',
      headers: bearer(token),
      json: created,
      signal: req.signal,
    });
    if (!isOk(r)) throw youtubeError(r);
    const found = replyResult(r.body as YouTubeComment | null, video.platformPostId);
    if (!found) throw new PlatformError('transient', `YouTube created the reply without an id: ${r.text.slice(0, 200)}`);
    return found;
  }

  /** Replies have no idempotency key: the thread's replies are read for one by this channel with this text. */
  async function findReply(req: PublishRequest, token: string, video: PostRef, parent: PostRef): Promise<PublishResult | null> {
    const parentId = await threadOf(parent.platformPostId, token, req.signal);
    if (!parentId) return null;
    const channelId = await ownChannel(req.credentials, token, req.signal);
    if (!channelId) return null;
    const text = normalize(req.text);
    const replies = await repliesOf(parentId, token, req.signal, FIND_REPLY_PAGES);
    const hit = replies.find((c) => c.snippet?.authorChannelId?.value === channelId && normalize(said(c)) === text);
    return hit ? replyResult(hit, video.platformPostId) : null;
  }

  /** comments.list?parentId=: a thread's replies, page by page (at most `pages` pages of 100). */
  async function repliesOf(parentId: string, token: string, signal: AbortSignal | undefined, pages: number): Promise<YouTubeComment[]> {
    const out: YouTubeComment[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < pages; page++) {
      const q = youtubeQuery('comments', { part: ['snippet'], parentId, maxResults: 100, textFormat: 'plainText', pageToken });
      const r = await api.send(`${base}/youtube/v3/comments?${q}`, { headers: bearer(token), signal });
      // The top-level comment went while its thread was read: it has no replies left.
      if (r.status === 404) return out;
      if (!isOk(r)) throw youtubeError(r);
      const body = r.body as youtube_v3.Schema$CommentListResponse | null;
      out.push(...(body?.items ?? []));
      pageToken = str(body?.nextPageToken);
      if (!pageToken) break;
    }
    return out;
  }

  /**
   * commentThreads.list?part=snippet,replies&videoId=… (newest threads first, 100 a page, at most
   * THREAD_PAGES pages), as plain text. A thread carries some of its replies; where
   * snippet.totalReplyCount says there are more, comments.list?parentId= reads them all (at most
   * REPLY_PAGES pages a thread). Only published comments are listed: one held for review is not.
   * A video YouTube no longer has (404 videoNotFound) is gone; one with comments turned off
   * (403 commentsDisabled) has none.
   */
  async function readComments(credentials: Record<string, unknown>, post: PostRef, signal?: AbortSignal): Promise<CommentsRead> {
    const token = credential('YouTube', credentials, 'accessToken');
    const videoId = post.platformPostId;
    const found: { comment: YouTubeComment; parent: string }[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < THREAD_PAGES; page++) {
      const q = youtubeQuery('threads', { part: ['snippet', 'replies'], videoId, maxResults: 100, textFormat: 'plainText', pageToken });
      const r = await api.send(`${base}/youtube/v3/commentThreads?${q}`, { headers: bearer(token), signal });
      if (!isOk(r)) {
        const err = youtubeError(r);
        if (err.opts.platformCode === 'videoNotFound') return { comments: [], gone: true };
        if (err.opts.platformCode === 'commentsDisabled') break;
        throw err;
      }
      const body = r.body as youtube_v3.Schema$CommentThreadListResponse | null;
      for (const thread of body?.items ?? []) {
        const top = thread.snippet?.topLevelComment;
        const topId = str(top?.id) ?? str(thread.id);
        if (!top || !topId) continue;
        found.push({ comment: top, parent: videoId });
        const inline = thread.replies?.comments ?? [];
        const total = Number(thread.snippet?.totalReplyCount) || 0;
        const replies = inline.length >= total ? inline : await repliesOf(topId, token, signal, REPLY_PAGES);
        for (const c of replies) found.push({ comment: c, parent: str(c.snippet?.parentId) ?? topId });
      }
      pageToken = str(body?.nextPageToken);
      if (!pageToken) break;
    }
    if (!found.length) return { comments: [] };
    const channelId = await ownChannel(credentials, token, signal);
    const comments: PlatformComment[] = [];
    for (const { comment, parent } of found) {
      const c = platformComment(comment, parent, videoId, channelId);
      if (c) comments.push(c);
    }
    return { comments };
  }

  /**
   * comments.setModerationStatus: heldForReview hides a comment (it leaves the public thread and
   * waits in YouTube Studio's review queue), published shows it again. `rejected` is not used: a
   * rejected comment can never be published again. Only the owner of the video may do either
   * (403 forbidden otherwise).
   */
  async function hideComment(credentials: Record<string, unknown>, target: CommentTarget, hidden: boolean, signal?: AbortSignal) {
    const token = credential('YouTube', credentials, 'accessToken');
    const q = youtubeQuery('moderate', { id: [target.platformCommentId], moderationStatus: hidden ? 'heldForReview' : 'published' });
    const r = await api.send(`${base}/youtube/v3/comments/setModerationStatus?${q}`, { method: 'POST', headers: bearer(token), signal });
    if (!isOk(r)) throw youtubeError(r);
  }

  /** comments.delete, which only a comment's author may use; a comment YouTube no longer has (404 commentNotFound) is deleted already. */
  async function deletePublished(credentials: Record<string, unknown>, target: CommentTarget, signal?: AbortSignal) {
    const token = credential('YouTube', credentials, 'accessToken');
    const q = youtubeQuery('deleteComment', { id: target.platformCommentId });
    const r = await api.send(`${base}/youtube/v3/comments?${q}`, { method: 'DELETE', headers: bearer(token), signal });
    if (isOk(r)) return;
    const err = youtubeError(r);
    if (err.opts.platformCode === 'commentNotFound') return;
    throw err;
  }

  async function get(url: string, token: string, signal?: AbortSignal): Promise<Reply> {
    const r = await api.send(url, { headers: bearer(token), signal });
    if (!isOk(r)) throw youtubeError(r);
    return r;
  }

  async function refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const refreshToken = credential('YouTube', credentials, 'refreshToken');
    const r = await api.send(`${authBase}/token`, {
      method: 'POST',
      form: {
        client_id: opts.oauth!.clientId,
        client_secret: opts.oauth!.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      },
      signal,
    });
    const body = r.body as { access_token?: unknown; expires_in?: unknown; refresh_token?: unknown } | null;
    if (!isOk(r) || typeof body?.access_token !== 'string') throw oauthError(r);
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    const fresh: Record<string, unknown> = {
      accessToken: body.access_token,
      expiresAt: new Date(Date.now() + seconds * 1000).toISOString(),
    };
    // Google keeps the refresh token; should it ever send one, it replaces the stored one.
    if (typeof body.refresh_token === 'string' && body.refresh_token) fresh.refreshToken = body.refresh_token;
    return fresh;
  }

  async function publish(req: PublishRequest): Promise<PublishResult> {
    const token = credential('YouTube', req.credentials, 'accessToken');
    if (req.replyTo) {
      const { root, parent } = req.replyTo;
      // The first comment answers the video itself; a reply answers a comment under it.
      return parent.platformPostId === root.platformPostId ? comment(req, token, root) : reply(req, token, root, parent);
    }
    const item = videoFor(req);
    if (!item) throw new PlatformError('permanent', 'YouTube needs a video to publish');
    const bytes = await item.read();
    if (!bytes.byteLength) throw new PlatformError('permanent', `YouTube cannot upload an empty file (${item.fileName})`);

    let session = sessions.get(req.idempotencyKey);
    if (session && (session.mediaId !== item.id || session.size !== bytes.byteLength)) session = undefined;
    for (let round = 0; round < 2; round++) {
      // A session left by an earlier attempt is resumed, never replaced while it lives.
      const fresh = !session;
      session ??= await startSession(req, token, item, bytes.byteLength);
      let video: Video | null;
      try {
        video = await sendBytes(session, token, item, bytes, fresh, req.signal);
      } catch (err) {
        // A refused upload is final; a lost or failing one is resumed by the next attempt.
        if (err instanceof PlatformError && err.kind === 'permanent') sessions.delete(req.idempotencyKey);
        throw err;
      }
      if (video) {
        sessions.delete(req.idempotencyKey);
        return result(video);
      }
      // 404: the session expired before its last byte, so it created nothing; start a new one.
      sessions.delete(req.idempotencyKey);
      session = undefined;
    }
    throw new PlatformError('transient', 'YouTube upload sessions keep expiring');
  }

  async function findPublished(req: PublishRequest): Promise<PublishResult | null> {
    const token = credential('YouTube', req.credentials, 'accessToken');
    if (req.replyTo) {
      const { root, parent } = req.replyTo;
      return parent.platformPostId === root.platformPostId ? findComment(req, token, root) : findReply(req, token, root, parent);
    }
    const session = sessions.get(req.idempotencyKey);
    if (session) {
      const state = await progress(session, token, req.signal);
      if ('expired' in state) {
        sessions.delete(req.idempotencyKey);
        return null;
      }
      if (!state.done) return null; // publish resumes this very session
      sessions.delete(req.idempotencyKey);
      return result(state.video);
    }
    return findInUploads(req, token);
  }

  /**
   * videos.list?part=statistics for up to 50 ids: viewCount, likeCount (absent when the owner
   * hides likes) and commentCount, as strings. A deleted or private video is not in items.
   */
  async function readMetrics(
    credentials: Record<string, unknown>,
    ids: string[],
    signal?: AbortSignal,
  ): Promise<Record<string, PlatformMetrics>> {
    const token = credential('YouTube', credentials, 'accessToken');
    const r = await get(
      `${base}/youtube/v3/videos?${youtubeQuery('videos', { part: ['statistics'], id: ids, maxResults: 50 })}`,
      token,
      signal,
    );
    const out: Record<string, PlatformMetrics> = {};
    for (const item of (r.body as youtube_v3.Schema$VideoListResponse | null)?.items ?? []) {
      if (typeof item.id !== 'string' || !item.statistics) continue;
      out[item.id] = counts(item.statistics as Record<string, unknown>, {
        views: 'viewCount',
        likes: 'likeCount',
        replies: 'commentCount',
      });
    }
    return out;
  }

  /**
   * videoCategories.list for the channel's region (credentials.regionCode, else US): the categories
   * an upload may take. Those with `assignable` false exist for browsing only and are left out.
   */
  async function readCapabilities(credentials: Record<string, unknown>, _query: { subreddit?: string }, signal?: AbortSignal) {
    const token = credential('YouTube', credentials, 'accessToken');
    const regionCode = typeof credentials.regionCode === 'string' && credentials.regionCode ? credentials.regionCode : 'US';
    const r = await get(
      `${base}/youtube/v3/videoCategories?${youtubeQuery('categories', { part: ['snippet'], regionCode })}`,
      token,
      signal,
    );
    const items = (r.body as youtube_v3.Schema$VideoCategoryListResponse | null)?.items ?? [];
    const categories = items
      .filter((c) => typeof c.id === 'string' && c.snippet?.assignable === true)
      .map((c) => ({ id: c.id as string, title: typeof c.snippet?.title === 'string' ? c.snippet.title : '' }));
    return { platform: 'YOUTUBE' as const, categories };
  }

  const connector: Connector = {
    platform: 'YOUTUBE',
    publish,
    findPublished,
    readMetrics,
    metricsBatch: 50,
    readCapabilities,
    readComments,
    hideComment,
    deletePublished,
  };
  if (opts.oauth) connector.refreshCredentials = refreshCredentials;
  // An access token that ran out during a long upload is refreshed before the retry: no reconnect.
  return withMidwayExpiry(connector, Boolean(opts.oauth));
}

/** Threads read at most, 100 a page: 5,000 top-level comments. */
const THREAD_PAGES = 50;
/** Replies of one thread read at most, 100 a page. */
const REPLY_PAGES = 10;
/** Replies looked through for an earlier attempt's: the thread's first 500. */
const FIND_REPLY_PAGES = 5;

/** What a comment says: textOriginal, which YouTube shows its author only, else textDisplay (asked for as plain text). */
function said(c: YouTubeComment): string {
  const s = c.snippet;
  return typeof s?.textOriginal === 'string' ? s.textOriginal : typeof s?.textDisplay === 'string' ? s.textDisplay : '';
}

/**
 * A comment as the service keeps it. YouTube shows a channel by its handle: authorDisplayName is
 * "@handle" for most channels, and authorChannelUrl ends in /@handle; a display name that is not
 * a handle is kept as the name.
 */
function platformComment(c: YouTubeComment, parent: string, videoId: string, channelId: string | null): PlatformComment | null {
  const id = str(c.id);
  const s = c.snippet;
  const createdAt = str(s?.publishedAt);
  if (!id || !createdAt) return null;
  const display = str(s?.authorDisplayName);
  const profileUrl = str(s?.authorChannelUrl) ?? null;
  const fromUrl = profileUrl ? /\/@([^/?#]+)\/?$/.exec(profileUrl)?.[1] : undefined;
  const handle = fromUrl ? decoded(fromUrl) : display?.startsWith('@') ? display.slice(1) : null;
  return {
    platformCommentId: id,
    parentPlatformId: parent,
    author: {
      name: display && !display.startsWith('@') ? display : null,
      handle: handle || null,
      avatarUrl: str(s?.authorProfileImageUrl) ?? null,
      profileUrl,
    },
    text: said(c),
    createdAt,
    url: `${watchUrl(videoId)}&lc=${encodeURIComponent(id)}`,
    ours: channelId !== null && s?.authorChannelId?.value === channelId,
  };
}

/** A URL's path part decoded; as it stands when it is no valid percent-encoding. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** A reply as a published item: its id, and the watch URL that opens it. */
function replyResult(c: YouTubeComment | null, videoId: string): PublishResult | null {
  const id = str(c?.id);
  if (!id) return null;
  const url = `${watchUrl(videoId)}&lc=${encodeURIComponent(id)}`;
  const publishedAt = str(c?.snippet?.publishedAt);
  return publishedAt ? { platformPostId: id, url, publishedAt } : { platformPostId: id, url };
}

/** A comment thread as a published item: its id, and the watch URL that opens that comment. */
function commentResult(thread: CommentThread, videoId: string): PublishResult | null {
  const id = typeof thread.id === 'string' && thread.id ? thread.id : thread.snippet?.topLevelComment?.id;
  if (typeof id !== 'string' || !id) return null;
  const url = `${watchUrl(videoId)}&lc=${encodeURIComponent(id)}`;
  const publishedAt = thread.snippet?.topLevelComment?.snippet?.publishedAt;
  return typeof publishedAt === 'string' ? { platformPostId: id, url, publishedAt } : { platformPostId: id, url };
}

/**
 * The videos.insert resource. The post's options win over the channel's credentials, which win
 * over the connector's defaults. A title or description the post chose is sent as written: the
 * post's validation checks it, and YouTube's refusal (invalidTitle) says what is wrong with it.
 */
function metadata(req: PublishRequest, fileName: string, opts: YouTubeConnectorOptions): VideoInsertResource {
  const c = req.credentials;
  const o = optionsOf(req);
  const privacy =
    [o.privacyStatus, c.privacyStatus, opts.privacyStatus].find((p): p is PrivacyStatus => PRIVACY.includes(p as PrivacyStatus)) ??
    'public';
  const categoryId = o.categoryId || (typeof c.categoryId === 'string' && c.categoryId ? c.categoryId : opts.categoryId);
  const title = o.title ?? buildTitle(req.text, fileName);
  const snippet: VideoInsertResource['snippet'] = {
    title: o.short ? shortTitle(title) : title,
    description: o.description ?? buildDescription(req.text),
  };
  if (o.tags?.length) snippet.tags = o.tags;
  if (categoryId) snippet.categoryId = categoryId;
  return { snippet, status: { privacyStatus: privacy, selfDeclaredMadeForKids: o.madeForKids ?? false } };
}

const optionsOf = (req: PublishRequest) => (req.options ?? {}) as YouTubeOptions;

/** The first non-empty line (else the file name), without < >, at most 100 characters. */
export function buildTitle(text: string, fileName: string): string {
  const line = text
    .split(/\r?\n/)
    .map((l) => clean(l).trim())
    .find(Boolean);
  const fallback = clean(fileName.replace(/\.[^.]+$/, '')).trim();
  const title = line || fallback || 'Untitled';
  const chars = Array.from(title);
  return chars.length > TITLE_MAX ? chars.slice(0, TITLE_MAX).join('').trimEnd() : title;
}

/**
 * A Short's title: `#Shorts` added when the title has none (YouTube takes Shorts from the video's
 * shape and length; the tag labels it for viewers and search), the title cut to leave it room.
 */
export function shortTitle(title: string): string {
  if (/#shorts\b/i.test(title)) return title;
  const tag = ' #Shorts';
  const chars = Array.from(title);
  const room = TITLE_MAX - tag.length;
  const base = chars.length > room ? chars.slice(0, room).join('').trimEnd() : title;
  return `${base}${tag}`;
}

/** The text without < > (YouTube rejects them), cut to 5000 UTF-8 bytes on a character boundary. */
export function buildDescription(text: string): string {
  const out = clean(text);
  const encoder = new TextEncoder();
  if (encoder.encode(out).byteLength <= DESCRIPTION_MAX_BYTES) return out;
  let bytes = 0;
  let cut = '';
  for (const ch of out) {
    bytes += encoder.encode(ch).byteLength;
    if (bytes > DESCRIPTION_MAX_BYTES) break;
    cut += ch;
  }
  return cut;
}

/**
 * Google's error body (https://developers.google.com/youtube/v3/docs/errors): the HTTP status,
 * a message, and the errors, the first naming the reason a client acts on.
 */
export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    errors: { message: string; domain: string; reason: string; location?: string; locationType?: string }[];
    status?: string;
  };
}

/** Reasons that mean "not now": a rate the project or the user went over. */
const LIMIT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

/** Google's error body mapped to the error classes: the reason is the platform code. */
function youtubeError(r: Reply): PlatformError {
  const err = (r.body as Partial<GoogleErrorBody> | null)?.error;
  const reason = typeof err?.errors?.[0]?.reason === 'string' ? err.errors[0].reason : undefined;
  const text = typeof err?.message === 'string' && err.message ? stripTags(err.message) : reasonOf(r);
  const message = `YouTube ${r.status}: ${text}${reason ? ` (${reason})` : ''}`;
  const o = { status: r.status, platformCode: reason };
  const retryAfterMs = parseRetryAfter(r.headers.get('retry-after'));
  if (r.status === 401 || reason === 'insufficientPermissions') return new PlatformError('reauth', message, o);
  // The project's daily quota is reset at midnight Pacific time; retrying earlier only burns attempts.
  if (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded') {
    return new PlatformError('transient', message, { ...o, retryAfterMs: retryAfterMs ?? msUntilMidnightPacific() });
  }
  if ((reason !== undefined && LIMIT_REASONS.has(reason)) || r.status === 429) {
    return new PlatformError('transient', message, { ...o, retryAfterMs });
  }
  if (r.status === 408 || r.status >= 500) return new PlatformError('transient', message, { ...o, retryAfterMs });
  return new PlatformError('permanent', message, o);
}

/** Google's token endpoint: {error, error_description}; invalid_grant = refresh token expired or revoked. */
function oauthError(r: Reply): PlatformError {
  const { code, reason } = oauthErrorOf(r);
  const message = `YouTube token refresh ${r.status}: ${reason}`;
  const o = { status: r.status, platformCode: code };
  if (code === 'invalid_grant') return new PlatformError('reauth', message, o);
  if (r.status === 408 || r.status === 429 || r.status >= 500) {
    return new PlatformError('transient', message, { ...o, retryAfterMs: parseRetryAfter(r.headers.get('retry-after')) });
  }
  if (isOk(r)) return new PlatformError('transient', `YouTube token refresh returned no access_token: ${r.text.slice(0, 200)}`, o);
  // invalid_client and the like: this deployment's OAuth client is wrong, not the user's grant.
  return new PlatformError('permanent', message, o);
}

/** Milliseconds until the next midnight in America/Los_Angeles (DST-aware). */
export function msUntilMidnightPacific(now = Date.now()): number {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const wall = (t: number) => {
    const p = Object.fromEntries(fmt.formatToParts(t).map((x) => [x.type, Number(x.value)]));
    return { y: p.year!, m: p.month!, d: p.day!, utc: Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) };
  };
  const today = wall(now);
  const nextDay = Date.UTC(today.y, today.m - 1, today.d + 1);
  const offsetNow = today.utc - Math.floor(now / 1000) * 1000;
  let midnight = nextDay - offsetNow;
  // The offset at midnight differs from now's on a DST change day.
  midnight = nextDay - (wall(midnight).utc - midnight);
  return midnight - now;
}

function result(video: Video): PublishResult {
  const id = video.id;
  if (typeof id !== 'string' || !id) {
    throw new PlatformError('transient', `YouTube finished the upload without a video id: ${JSON.stringify(video).slice(0, 200)}`);
  }
  const publishedAt = typeof video.snippet?.publishedAt === 'string' ? video.snippet.publishedAt : undefined;
  return publishedAt ? { platformPostId: id, url: watchUrl(id), publishedAt } : { platformPostId: id, url: watchUrl(id) };
}

function videoFor(req: PublishRequest): MediaRef | undefined {
  return req.media.find((m) => m.type === 'video');
}

/** `Range: bytes=0-N` → the next byte to send; no header means nothing arrived. */
function rangeEnd(range: string | null): number {
  const m = /bytes=\d+-(\d+)/.exec(range ?? '');
  return m ? Number(m[1]) + 1 : 0;
}

const uploadType = (item: MediaRef) => (item.mimeType.startsWith('video/') ? item.mimeType : 'application/octet-stream');
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const statusQuery = (session: Session, token: string) => ({ ...bearer(token), 'Content-Range': `bytes */${session.size}` });
const watchUrl = (id: string) => `https://www.youtube.com/watch?v=${encodeURIComponent(id)}`;
const clean = (s: string) => s.replace(/</g, '‹').replace(/>/g, '›');
const normalize = (s: string) => s.replace(/\s+/g, ' ').trim();
const stripTags = (s: string) => s.replace(/<[^>]*>/g, '');
