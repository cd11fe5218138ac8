// Bluesky connector: the AT Protocol XRPC API of the account's PDS (credentials.service, e.g.
// https://bsky.social), through @atproto/api. A publish opens (or resumes) a session with the app
// password (com.atproto.server.createSession), uploads the media as blobs, and writes one
// app.bsky.feed.post record (com.atproto.repo.createRecord) with rich-text facets.
//
// Never twice: the record key is not left to the PDS but derived from req.idempotencyKey (a
// valid TID, see rkeyFor), and a repo holds at most one record per key. A retry whose earlier
// attempt was written finds it with getRecord (findPublished, and publish after a failed create).
//
// A reply to a comment is a post whose `reply` names the published post (root) and the comment
// (parent); deletePublished removes a record of the account's own repo. Nothing is hidden:
// Bluesky's only hide is the hiddenReplies list (at most 300) of the thread root's threadgate
// record, which also says who may reply; hiding would rewrite that record whole and could undo
// what the author changes in the app meanwhile.
//
// No refreshCredentials: app passwords do not expire and there is no OAuth token to refresh.
// Sessions (JWTs from the app password) live in this process only, never in the channel's
// stored credentials: createSession is tightly limited per account (30 per 5 min; 300 per day
// on a PDS, 100 on the bsky.social entryway), so a session is reused and refreshed across
// publishes, and a new one opened only when there is none or its refresh token is refused.
//
// The service (and the PDS its DID document names, which the agent switches to after login) is
// the tenant's choice: every XRPC call goes through lib/outbound.ts. The video service is the
// operator's setting and is called directly.
import { createHash } from 'node:crypto';
import {
  type $Typed,
  type AppBskyEmbedImages,
  type AppBskyEmbedVideo,
  type AppBskyFeedPost,
  AtpAgent,
  type AtpSessionData,
  type BlobRef,
  type ComAtprotoRepoStrongRef,
  jsonToLex,
  RichText,
  XRPCError,
} from '@atproto/api';
import { createOutboundFetch, DEFAULT_OUTBOUND, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../lib/outbound.ts';
import { createHttp, reasonOf, sleep, trimSlash } from './http.ts';
import { counts } from './json.ts';
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

export interface BlueskyConnectorOptions {
  /** The transport (beneath the outbound guard for XRPC calls). */
  fetch?: typeof fetch;
  /** Which service/PDS addresses may be contacted (default: public ones only). */
  outbound?: OutboundPolicy & { resolve?: Resolver };
  /** Limit for each XRPC request (uploads have uploadTimeoutMs). */
  timeoutMs?: number;
  /** Limit for one blob or video upload. */
  uploadTimeoutMs?: number;
  /** Service used when a channel's credentials carry none (the bsky.social entryway). */
  baseUrl?: string;
  /** The web app whose post URLs are returned. */
  appUrl?: string;
  /** Bluesky's video service; null uploads videos as plain blobs to the PDS (the "simple method"). */
  videoServiceUrl?: string | null;
  /** Video processing job polling. */
  pollIntervalMs?: number;
  pollTimeoutMs?: number;
}

const POST = 'app.bsky.feed.post';
/** app.bsky.embed.images: at most 4 images of at most 2,000,000 bytes each (lexicon maxSize; 1 MB before April 2026). */
const MAX_IMAGES = 4;
export const MAX_IMAGE_BYTES = 2_000_000;

interface Session {
  agent: AtpAgent;
  did: string;
  handle: string;
}

export function createBlueskyConnector(opts: BlueskyConnectorOptions = {}): Connector {
  const baseFetch = opts.fetch ?? fetch;
  const xrpcFetch = createOutboundFetch({ ...(opts.outbound ?? DEFAULT_OUTBOUND), fetch: baseFetch });
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const uploadTimeoutMs = opts.uploadTimeoutMs ?? 300_000;
  const defaultService = opts.baseUrl ?? 'https://bsky.social';
  const appUrl = trimSlash(opts.appUrl ?? 'https://bsky.app');
  const videoServiceUrl = opts.videoServiceUrl === undefined ? 'https://video.bsky.app' : opts.videoServiceUrl;
  const pollIntervalMs = opts.pollIntervalMs ?? 1_500;
  const pollTimeoutMs = opts.pollTimeoutMs ?? 300_000;
  const videoUpload = createHttp('Bluesky', { fetch: baseFetch, timeoutMs: uploadTimeoutMs });
  const videoStatus = createHttp('Bluesky', { fetch: baseFetch, timeoutMs });

  /**
   * The agent's fetch: a per-request time limit plus the caller's signal, and a transient
   * PlatformError when no HTTP answer came (the agent wraps it; classify() unwraps it).
   */
  function agentFetch(signal?: AbortSignal): typeof fetch {
    return (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const ms = url.pathname.endsWith('/com.atproto.repo.uploadBlob') ? uploadTimeoutMs : timeoutMs;
      const timeout = AbortSignal.timeout(ms);
      const signals = [timeout, signal, init?.signal].filter((s): s is AbortSignal => !!s);
      const what = `${(init?.method ?? 'GET').toUpperCase()} ${url.pathname}`;
      try {
        return await xrpcFetch(input, { ...init, signal: AbortSignal.any(signals) });
      } catch (err) {
        // Not retried: the address stays refused until the channel is reconnected with another one.
        if (err instanceof OutboundRefusedError)
          throw new PlatformError('permanent', `Bluesky service refused: ${err.message}`, { platformCode: err.code });
        if (timeout.aborted) throw new PlatformError('transient', `Bluesky ${what} timed out after ${ms} ms`);
        if (signal?.aborted) throw new PlatformError('transient', `Bluesky ${what} aborted`);
        throw new PlatformError('transient', `Bluesky ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }) as typeof fetch;
  }

  /** The last session per account (service, identifier and app password); see the file comment. */
  const sessions = new Map<string, AtpSessionData>();
  function keep(key: string, session: AtpSessionData | undefined) {
    if (session) remember(sessions, key, session);
    else sessions.delete(key);
  }

  async function login(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Session> {
    const { service, identifier, appPassword } = account(credentials, defaultService);
    const key = createHash('sha256').update(`${service}\n${identifier.toLowerCase()}\n${appPassword}`).digest('hex');
    // persistSession also sees the refreshes the agent makes by itself on an ExpiredToken.
    const agent = new AtpAgent({ service, fetch: agentFetch(signal), persistSession: (_evt, s) => keep(key, s) });
    const cached = sessions.get(key);
    if (cached) {
      try {
        await agent.resumeSession(cached);
      } catch (err) {
        // A refused refresh token clears the session (a new login follows); anything else kept
        // it, and is what the PDS answered (unreachable, 5xx, 429).
        if (agent.session) throw classify(err);
      }
    }
    if (!agent.session) {
      try {
        await agent.login({ identifier, password: appPassword });
      } catch (err) {
        // Whatever the PDS refuses about a login (wrong password, unknown account, not a PDS at
        // that URL, a takedown) is fixed by reconnecting the channel, not by retrying.
        const e = classify(err);
        throw e.kind === 'permanent' && e.opts.platformCode !== 'outbound_refused' ? new PlatformError('reauth', e.message, e.opts) : e;
      }
    }
    const s = agent.session!;
    // A takendown, suspended or deactivated account can log in but not write.
    if (!s.active)
      throw new PlatformError('reauth', `Bluesky account ${s.handle} is ${s.status ?? 'inactive'}`, { platformCode: s.status });
    return { agent, did: s.did, handle: s.handle };
  }

  /**
   * A reply names its root and parent by strong reference (URI and CID, app.bsky.feed.post
   * `reply`): the CID is read with com.atproto.repo.getRecord from the account's own PDS, which
   * answers for the repos it hosts and passes the call on to its AppView for any other (a comment
   * by an account on another PDS), so a post that is gone is refused here, before anything is
   * written.
   */
  async function strongRef(session: Session, ref: PostRef): Promise<ComAtprotoRepoStrongRef.Main> {
    const { repo, collection, rkey } = parseUri(ref.platformPostId);
    try {
      const { data } = await session.agent.com.atproto.repo.getRecord({ repo, collection, rkey });
      if (!data.cid) throw new PlatformError('transient', `Bluesky returned no CID for ${ref.platformPostId}`);
      return { uri: data.uri, cid: data.cid };
    } catch (err) {
      if (err instanceof XRPCError && err.error === 'RecordNotFound')
        throw new PlatformError('permanent', `Bluesky: the post to reply to (${ref.platformPostId}) is not there`, {
          platformCode: 'RecordNotFound',
        });
      throw err instanceof PlatformError ? err : classify(err);
    }
  }

  async function findRecord(session: Session, rkey: string): Promise<PublishResult | null> {
    try {
      const { data } = await session.agent.com.atproto.repo.getRecord({ repo: session.did, collection: POST, rkey });
      return result(session, rkey, data.value as { createdAt?: unknown });
    } catch (err) {
      if (err instanceof XRPCError && err.error === 'RecordNotFound') return null;
      throw classify(err);
    }
  }

  function result(session: Session, rkey: string, record: { createdAt?: unknown }): PublishResult {
    // A handle that no longer verifies reads "handle.invalid"; the DID always resolves.
    const profile = session.handle && session.handle !== 'handle.invalid' ? session.handle : session.did;
    return {
      platformPostId: `at://${session.did}/${POST}/${rkey}`,
      url: `${appUrl}/profile/${profile}/post/${rkey}`,
      publishedAt: typeof record.createdAt === 'string' ? record.createdAt : undefined,
    };
  }

  async function uploadImage(session: Session, item: MediaRef, signal?: AbortSignal): Promise<AppBskyEmbedImages.Image> {
    const image = await fitImage(await item.read(), item.mimeType);
    const { data } = await call(() => session.agent.uploadBlob(image.bytes, { encoding: image.mimeType, signal }));
    return {
      image: data.blob,
      alt: item.altText ?? '',
      ...(image.width && image.height ? { aspectRatio: { width: image.width, height: image.height } } : {}),
    };
  }

  async function uploadVideo(session: Session, item: MediaRef, signal?: AbortSignal): Promise<$Typed<AppBskyEmbedVideo.Main>> {
    const bytes = await item.read();
    const blob = videoServiceUrl
      ? await processVideo(session, item, bytes, signal)
      : (await call(() => session.agent.uploadBlob(bytes, { encoding: item.mimeType, signal }))).data.blob;
    return { $type: 'app.bsky.embed.video', video: blob, alt: item.altText || undefined, aspectRatio: dimensions(item) };
  }

  /**
   * Bluesky's recommended flow (docs.bsky.app "Uploading Video"): a service token for the PDS
   * lets video.bsky.app transcode the video and store it on the PDS; getJobStatus then hands
   * back the blob, so the post shows a playable video from the start.
   */
  async function processVideo(session: Session, item: MediaRef, bytes: Uint8Array, signal?: AbortSignal): Promise<BlobRef> {
    const pds = session.agent.dispatchUrl;
    const { data: auth } = await call(() =>
      session.agent.com.atproto.server.getServiceAuth({
        aud: `did:web:${pds.hostname}`,
        lxm: 'com.atproto.repo.uploadBlob',
        exp: Math.floor(Date.now() / 1000) + 30 * 60,
      }),
    );
    const url = new URL('/xrpc/app.bsky.video.uploadVideo', videoServiceUrl!);
    url.searchParams.set('did', session.did);
    url.searchParams.set('name', item.fileName || `${item.id}.mp4`);
    const r = await videoUpload.send(url.href, {
      method: 'POST',
      headers: { Authorization: `Bearer ${auth.token}`, 'Content-Type': item.mimeType },
      body: bytes,
      signal,
    });
    // The service answers the job status itself (not wrapped in {jobStatus}), also on a 409
    // "already_exists" for a video it processed before, which already carries the blob.
    let job = jobOf(r.body);
    if (!job) throw fromStatus(r.status, r.headers, reasonOf(r), errorCode(r.body));
    const deadline = Date.now() + pollTimeoutMs;
    while (!job.blob) {
      if (job.state === 'JOB_STATE_FAILED') {
        throw new PlatformError('permanent', `Bluesky video processing failed: ${job.message ?? job.error ?? 'unknown error'}`, {
          platformCode: job.failureCode ?? job.error,
        });
      }
      if (Date.now() >= deadline)
        throw new PlatformError('transient', `Bluesky video job ${job.jobId} still processing after ${pollTimeoutMs} ms`);
      await sleep(pollIntervalMs, signal);
      const status = new URL('/xrpc/app.bsky.video.getJobStatus', videoServiceUrl!);
      status.searchParams.set('jobId', job.jobId!);
      const s = await videoStatus.send(status.href, { signal });
      const next = jobOf(s.body);
      if (!next) throw fromStatus(s.status, s.headers, reasonOf(s), errorCode(s.body));
      job = next;
    }
    return jsonToLex(job.blob) as BlobRef;
  }

  return {
    platform: 'BLUESKY',

    async publish(req: PublishRequest): Promise<PublishResult> {
      const embedMedia = checkMedia(req.media);
      const session = await login(req.credentials, req.signal);
      const rkey = rkeyFor(req.idempotencyKey);

      const text = new RichText({ text: req.text });
      // Resolves @mentions to DIDs through the PDS; a handle that does not resolve stays plain text.
      await text.detectFacets(session.agent);
      const facets = text.facets?.filter((f) => f.features.every((feat) => !('did' in feat) || !!feat.did));

      const reply: AppBskyFeedPost.ReplyRef | undefined = req.replyTo && {
        root: await strongRef(session, req.replyTo.root),
        parent: await strongRef(session, req.replyTo.parent),
      };
      let embed: AppBskyFeedPost.Record['embed'];
      if (embedMedia === 'images') {
        const images: AppBskyEmbedImages.Image[] = [];
        // Sequential: keeps the order and stays within the PDS's upload limits.
        for (const item of req.media) images.push(await uploadImage(session, item, req.signal));
        embed = { $type: 'app.bsky.embed.images', images } satisfies $Typed<AppBskyEmbedImages.Main>;
      } else if (embedMedia === 'video') {
        embed = await uploadVideo(session, req.media[0]!, req.signal);
      }
      // Fields left undefined are not sent (JSON leaves them out).
      const record: AppBskyFeedPost.Record = {
        $type: POST,
        text: text.text,
        createdAt: new Date().toISOString(),
        facets: facets?.length ? facets : undefined,
        reply,
        embed,
      };

      try {
        await session.agent.com.atproto.repo.createRecord({ repo: session.did, collection: POST, rkey, record });
      } catch (err) {
        const e = classify(err);
        // The PDS refuses a second record under the same key: with a 500 today
        // (bluesky-social/atproto#3718), with an explicit error once #4728 lands. Either way
        // an earlier attempt wrote this post; answer with that one.
        if (err instanceof XRPCError && e.opts.status && ![401, 403, 429].includes(e.opts.status)) {
          const earlier = await findRecord(session, rkey).catch(() => null);
          if (earlier) return earlier;
        }
        throw e;
      }
      return result(session, rkey, record);
    },

    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const session = await login(req.credentials, req.signal);
      return findRecord(session, rkeyFor(req.idempotencyKey));
    },

    /**
     * com.atproto.repo.deleteRecord of the post in the account's own repo. The PDS answers a
     * record already gone with success; a record of another repo is refused here, before the PDS
     * would answer it as an authentication failure (401) that reads as a dead session.
     */
    async deletePublished(credentials, target: CommentTarget, signal) {
      const { repo, collection, rkey } = parseUri(target.platformCommentId);
      const session = await login(credentials, signal);
      if (repo !== session.did || collection !== POST) {
        throw new PlatformError(
          'permanent',
          `Bluesky: ${target.platformCommentId} is not a post of this account; only its own can be deleted`,
        );
      }
      await call(() => session.agent.com.atproto.repo.deleteRecord({ repo, collection, rkey }, { signal }));
    },

    metricsBatch: 25,
    /**
     * app.bsky.feed.getPosts for up to 25 post URIs, through the account's PDS (which proxies
     * it to its AppView): likes, reposts, replies, quotes and bookmarks as the AppView counts
     * them. A deleted post is not in the answer. Bluesky shows no impressions.
     */
    /**
     * app.bsky.feed.getPostThread (through the account's PDS, which asks its AppView): the replies
     * under the post, THREAD_DEPTH levels deep. Replies the viewer may not see (blocked, deleted)
     * are left out with what answers them.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const session = await login(credentials, signal);
      let thread: unknown;
      try {
        ({
          data: { thread },
        } = await session.agent.app.bsky.feed.getPostThread(
          { uri: post.platformPostId, depth: THREAD_DEPTH, parentHeight: 0 },
          { signal },
        ));
      } catch (err) {
        if (err instanceof XRPCError && err.error === 'NotFound') return { comments: [], gone: true };
        throw classify(err);
      }
      if (!isThreadView(thread)) return { comments: [], gone: true };
      const comments: PlatformComment[] = [];
      const walk = (node: ThreadView) => {
        for (const reply of node.replies ?? []) {
          if (!isThreadView(reply)) continue;
          const p = reply.post;
          const record = p.record as { text?: unknown; createdAt?: unknown; reply?: { parent?: { uri?: unknown } } };
          const parent = typeof record.reply?.parent?.uri === 'string' ? record.reply.parent.uri : node.post.uri;
          const rkey = p.uri.split('/').pop() ?? '';
          const profile = p.author.handle && p.author.handle !== 'handle.invalid' ? p.author.handle : p.author.did;
          comments.push({
            platformCommentId: p.uri,
            parentPlatformId: parent,
            author: {
              name: p.author.displayName || null,
              handle: p.author.handle,
              avatarUrl: p.author.avatar ?? null,
              profileUrl: `${appUrl}/profile/${profile}`,
            },
            text: typeof record.text === 'string' ? record.text : '',
            createdAt: typeof record.createdAt === 'string' ? record.createdAt : p.indexedAt,
            url: `${appUrl}/profile/${profile}/post/${rkey}`,
            ours: p.author.did === session.did,
          });
          walk(reply);
        }
      };
      walk(thread);
      return { comments };
    },

    async readMetrics(credentials, uris, signal) {
      const session = await login(credentials, signal);
      const { data } = await call(() => session.agent.app.bsky.feed.getPosts({ uris }, { signal }));
      const out: Record<string, PlatformMetrics> = {};
      for (const post of data.posts) {
        out[post.uri] = counts(post as unknown as Record<string, unknown>, {
          likes: 'likeCount',
          reposts: 'repostCount',
          replies: 'replyCount',
          quotes: 'quoteCount',
          saves: 'bookmarkCount',
        });
      }
      return out;
    },
  };
}

/** How deep a conversation is read (getPostThread's `depth`; the AppView caps it at 1,000). */
const THREAD_DEPTH = 100;

/** The parts of app.bsky.feed.defs#threadViewPost the reader uses. */
interface ThreadView {
  post: { uri: string; indexedAt: string; record: unknown; author: { did: string; handle: string; displayName?: string; avatar?: string } };
  replies?: unknown[];
}

/** A visible post of a thread (not a #notFoundPost or #blockedPost). */
function isThreadView(v: unknown): v is ThreadView {
  const t = v as { $type?: unknown; post?: { uri?: unknown; author?: { did?: unknown } } } | null;
  return t?.$type === 'app.bsky.feed.defs#threadViewPost' && typeof t.post?.uri === 'string' && typeof t.post.author?.did === 'string';
}

/** A post's at:// URI as its repo, collection and record key. */
function parseUri(uri: string): { repo: string; collection: string; rkey: string } {
  const parsed = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri);
  if (!parsed) throw new PlatformError('permanent', `Bluesky: ${uri} is not a post URI`);
  return { repo: parsed[1]!, collection: parsed[2]!, rkey: parsed[3]! };
}

function account(credentials: Record<string, unknown>, defaultService: string) {
  const raw = typeof credentials.service === 'string' && credentials.service.trim() ? credentials.service.trim() : defaultService;
  let service: string;
  try {
    const u = new URL(/^https?:\/\//i.test(raw) ? raw : `https://${raw}`);
    service = u.origin;
  } catch {
    throw new PlatformError('reauth', `Bluesky service is not a URL: ${raw}`);
  }
  const identifier = typeof credentials.identifier === 'string' ? credentials.identifier.trim().replace(/^@/, '') : '';
  const appPassword = typeof credentials.appPassword === 'string' ? credentials.appPassword.trim() : '';
  if (!identifier) throw new PlatformError('reauth', 'Bluesky credentials lack identifier; reconnect the channel');
  if (!appPassword) throw new PlatformError('reauth', 'Bluesky credentials lack appPassword; reconnect the channel');
  return { service, identifier, appPassword };
}

/** What the post embeds; rejects what Bluesky cannot show before anything is uploaded. */
function checkMedia(media: MediaRef[]): 'none' | 'images' | 'video' {
  if (!media.length) return 'none';
  const unsupported = media.find((m) => m.type !== 'image' && m.type !== 'gif' && m.type !== 'video');
  if (unsupported) throw new PlatformError('permanent', `Bluesky cannot attach ${unsupported.type} files (${unsupported.fileName})`);
  if (media.some((m) => m.type === 'video')) {
    if (media.length > 1) throw new PlatformError('permanent', 'Bluesky posts carry one video and nothing else');
    return 'video';
  }
  if (media.length > MAX_IMAGES)
    throw new PlatformError('permanent', `Bluesky posts carry at most ${MAX_IMAGES} images (got ${media.length})`);
  return 'images';
}

const S32 = '234567abcdefghijklmnopqrstuvwxyz';
/** Start of the window the derived TIDs' timestamps fall in (2024-01-01T00:00:00Z, in µs). */
const TID_EPOCH_US = 1_704_067_200_000_000n;
/** 2^45 µs ≈ 407 days: every derived TID is dated in the past, as a TID made at posting time would be. */
const TID_SPAN_US = 1n << 45n;

/**
 * The post's record key: a TID (13 base32-sortable chars: a 53-bit µs timestamp and a 10-bit
 * clock id, atproto.com/specs/tid) whose bits come from a hash of the idempotency key, so every
 * attempt for one (post, channel) names the same record. The PDS checks only the TID syntax; the
 * app orders posts by createdAt, not by key.
 */
export function rkeyFor(idempotencyKey: string): string {
  const h = createHash('sha256').update(`postpilot:bluesky:${idempotencyKey}`).digest();
  const n = h.readBigUInt64BE(0);
  const timestamp = TID_EPOCH_US + ((n >> 10n) % TID_SPAN_US);
  let v = (timestamp << 10n) | (n & 0x3ffn);
  let out = '';
  for (let i = 0; i < 13; i++) {
    out = S32[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

interface Fitted {
  bytes: Uint8Array;
  mimeType: string;
  width?: number;
  height?: number;
}

/**
 * The image as Bluesky takes it: at most MAX_IMAGE_BYTES (the PDS stores larger blobs and
 * accepts the post, but the embed's lexicon limit is what the app honours), re-encoded as JPEG,
 * smaller each step, when it is over; the displayed width and height for the embed's aspectRatio.
 */
async function fitImage(bytes: Uint8Array, mimeType: string): Promise<Fitted> {
  const sharp = (await import('sharp')).default;
  let meta: { width?: number; height?: number; orientation?: number } = {};
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    // Not an image sharp reads: upload as is and let the PDS judge it.
    if (bytes.byteLength <= MAX_IMAGE_BYTES) return { bytes, mimeType };
    throw new PlatformError('permanent', `Bluesky images must be at most ${MAX_IMAGE_BYTES} bytes (got ${bytes.byteLength})`);
  }
  // EXIF orientations 5–8 are rotated by 90°: the viewer sees height × width.
  const turned = (meta.orientation ?? 1) >= 5;
  const width = turned ? meta.height : meta.width;
  const height = turned ? meta.width : meta.height;
  if (bytes.byteLength <= MAX_IMAGE_BYTES) return { bytes, mimeType, width, height };

  // Bluesky serves images up to 4000 px on the long side.
  for (const [edge, quality] of [
    [4000, 85],
    [3000, 80],
    [2000, 75],
    [2000, 65],
    [1600, 60],
    [1200, 60],
  ] as const) {
    const { data, info } = await sharp(bytes)
      .rotate()
      .resize({ width: edge, height: edge, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality, mozjpeg: true })
      .toBuffer({ resolveWithObject: true });
    if (data.byteLength <= MAX_IMAGE_BYTES)
      return { bytes: new Uint8Array(data), mimeType: 'image/jpeg', width: info.width, height: info.height };
  }
  throw new PlatformError('permanent', `Bluesky images must be at most ${MAX_IMAGE_BYTES} bytes; this one stays larger even when shrunk`);
}

/** Width and height when the media item carries them (MediaRef may gain them; see the report). */
function dimensions(item: MediaRef): { width: number; height: number } | undefined {
  const { width, height } = item as MediaRef & { width?: unknown; height?: unknown };
  return typeof width === 'number' && typeof height === 'number' && width > 0 && height > 0 ? { width, height } : undefined;
}

interface JobStatus {
  jobId?: string;
  state?: string;
  blob?: unknown;
  error?: string;
  message?: string;
  failureCode?: string;
}

function jobOf(body: unknown): JobStatus | null {
  const b = body as ({ jobStatus?: JobStatus } & JobStatus) | null;
  const job = b?.jobStatus ?? b;
  return job && (typeof job.jobId === 'string' || job.blob) ? job : null;
}

function errorCode(body: unknown): string | undefined {
  const e = (body as { error?: unknown } | null)?.error;
  return typeof e === 'string' ? e : undefined;
}

/** Runs an agent call, turning its failure into a PlatformError. */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classify(err);
  }
}

/**
 * XRPC errors by the PDS's error names and statuses: an expired, invalid or refused session
 * (and a taken-down or deactivated account, which fails every post until the owner acts) →
 * reauth; 429, 5xx, no answer → transient; the rest (InvalidRequest: text over 300 graphemes,
 * a blob too large, a malformed record) → permanent, with the PDS's own message.
 */
export function classify(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  if (!(err instanceof XRPCError))
    return new PlatformError('transient', `Bluesky request failed: ${err instanceof Error ? err.message : String(err)}`);
  if (err.cause instanceof PlatformError) return err.cause;
  // 1 (Unknown): no HTTP answer; 2 (InvalidResponse): an answer that is not XRPC, e.g. a proxy's
  // page, whose parse error may quote the body: not copied, the host is the tenant's choice.
  if (err.status === 2)
    return new PlatformError('transient', 'Bluesky request failed: the service answered with something other than valid XRPC', {
      platformCode: err.error,
    });
  if (err.status < 100) return new PlatformError('transient', `Bluesky request failed: ${err.message}`, { platformCode: err.error });
  const headers = new Headers((err.headers ?? {}) as Record<string, string>);
  return fromStatus(err.status, headers, err.message || err.error || `HTTP ${err.status}`, err.error);
}

const REAUTH_CODES = new Set([
  'AuthenticationRequired',
  'ExpiredToken',
  'InvalidToken',
  'AccountTakedown',
  'AccountDeactivated',
  'AuthFactorTokenRequired',
  'AuthMissing',
]);

function fromStatus(status: number, headers: Headers, reason: string, code?: string): PlatformError {
  const message = `Bluesky ${status}: ${reason}`;
  const opts = { status, platformCode: code };
  if (status === 401 || status === 403 || (code && REAUTH_CODES.has(code))) return new PlatformError('reauth', message, opts);
  if (status === 408 || status === 429 || status >= 500) {
    return new PlatformError('transient', message, { ...opts, retryAfterMs: retryAfter(headers) });
  }
  return new PlatformError('permanent', message, opts);
}

/** Retry-After if present; else RateLimit-Reset, which atproto services send as epoch seconds. */
export function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'), now);
  if (ra !== undefined) return ra;
  const reset = headers.get('ratelimit-reset')?.trim();
  if (!reset || !/^\d+(\.\d+)?$/.test(reset)) return undefined;
  return Math.max(0, Math.ceil(Number(reset) * 1000 - now));
}
