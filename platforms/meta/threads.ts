// Threads connector (graph.threads.net/v1.0): credentials.threadsUserId and
// credentials.accessToken (long-lived Threads user token). Like Instagram: POST
// /{threads-user-id}/threads creates a container (media fetched from a public URL), poll it
// until FINISHED, POST /{threads-user-id}/threads_publish. A thread item after the post is the
// same flow with reply_to_id, the item before it, and so is a reply to someone's reply. A reply
// under the account's threads is hidden or shown again with POST /{threads-reply-id}/manage_reply
// (threads_manage_replies); a post of the account's is deleted with DELETE /{threads-media-id}
// (threads_delete). The parameters of threads, threads_publish, manage_reply and the delete are
// typed by the documented ones, and the answers are read as the documented shapes, any part of
// which may be missing (platforms/contracts/meta.ts, `Answer<…>`).
import {
  PlatformError,
  type CommentsRead,
  type Connector,
  type MediaRef,
  type PlatformComment,
  type PlatformMetrics,
  type PublishRequest,
  type PublishResult,
} from '../types.ts';
import { API_VERSIONS } from '../api-versions.ts';
import type {
  GraphCreated,
  MediaPublished,
  PublishParams,
  ThreadsContainer,
  ThreadsInsights,
  ThreadsManageReplyParams,
  ThreadsMedia,
  ThreadsParams,
} from '../contracts/meta.ts';
import { credential, trimSlash } from '../http.ts';
import { type Answer, counts, strOrNumber } from '../json.ts';
import {
  deleteObject,
  expectSuccess,
  findRecentPost,
  createGraphClient,
  isoTime,
  publicUrl,
  refreshLongLivedToken,
  gone,
  listAll,
  notBeforeOf,
  waitForContainer,
  type GraphClient,
  type MediaUrlResolver,
  type RecentListing,
} from './graph.ts';

export interface ThreadsConnectorOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Threads Graph host (default https://graph.threads.net). */
  baseUrl?: string;
  /** Version in the path (default: platforms/api-versions.ts). */
  apiVersion?: string;
  /** Public site for fallback post URLs (default https://www.threads.com). */
  webUrl?: string;
  /** A public URL Threads can fetch the item from. */
  mediaUrl?: MediaUrlResolver;
  pollIntervalMs?: number;
  pollTimeoutMs?: number;
}

const P = 'Threads';
const MAX_ITEMS = 20;
// Container error_message values worth a fresh container on retry; INVALID_* and
// FAILED_PROCESSING_* describe the media itself.
const RETRYABLE_CONTAINER_ERRORS = new Set(['FAILED_DOWNLOADING_VIDEO', 'UNKNOWN']);

export function createThreadsConnector(opts: ThreadsConnectorOptions = {}): Connector {
  const base = trimSlash(opts.baseUrl ?? 'https://graph.threads.net');
  const web = trimSlash(opts.webUrl ?? 'https://www.threads.com');
  const http = { fetch: opts.fetch, timeoutMs: opts.timeoutMs ?? 30_000 };
  const apiVersion = opts.apiVersion ?? API_VERSIONS.THREADS.version;
  const graph = createGraphClient(P, { baseUrl: `${base}/${apiVersion}`, apiVersion, ...http });
  const root = createGraphClient(P, { baseUrl: base, ...http });
  const poll = { intervalMs: opts.pollIntervalMs ?? 5_000, timeoutMs: opts.pollTimeoutMs ?? 300_000 };

  async function createContainer(userId: string, token: string, params: ThreadsParams, signal?: AbortSignal): Promise<string> {
    const body = (await graph.post(`/${userId}/threads`, params, token, signal)) as Answer<GraphCreated>;
    const id = strOrNumber(body.id);
    if (!id) throw new PlatformError('transient', `Threads returned no container id: ${JSON.stringify(body).slice(0, 200)}`);
    return id;
  }

  async function itemParams(item: MediaRef): Promise<ThreadsParams> {
    if (item.type !== 'image' && item.type !== 'video') {
      throw new PlatformError('permanent', `Threads: ${item.type} attachments are not supported`);
    }
    const url = await publicUrl(P, opts.mediaUrl, item);
    const params: ThreadsParams = item.type === 'video' ? { media_type: 'VIDEO', video_url: url } : { media_type: 'IMAGE', image_url: url };
    if (item.altText) params.alt_text = item.altText;
    return params;
  }

  function ready(id: string, token: string, signal?: AbortSignal): Promise<void> {
    return waitForContainer(
      P,
      id,
      async () => {
        const c = (await graph.get(`/${id}`, { fields: 'status,error_message' }, token, signal)) as Answer<ThreadsContainer>;
        const status = strOrNumber(c.status);
        if (status === 'FINISHED') return true;
        if (status === 'IN_PROGRESS' || !status) return false;
        const detail = strOrNumber(c.error_message) ?? status;
        const kind = status === 'EXPIRED' || RETRYABLE_CONTAINER_ERRORS.has(detail) ? 'transient' : 'permanent';
        throw new PlatformError(kind, `Threads media container ${id} ${status}: ${detail}`, { platformCode: detail });
      },
      { ...poll, signal },
    );
  }

  async function buildContainer(userId: string, token: string, req: PublishRequest): Promise<string> {
    // A reply names its parent on the container that is published (never on carousel items).
    const text: ThreadsParams = {
      ...(req.text ? { text: req.text } : {}),
      ...(req.replyTo ? { reply_to_id: req.replyTo.parent.platformPostId } : {}),
    };
    if (!req.media.length) {
      // Text containers need no processing; Meta's wait advice is for media.
      return createContainer(userId, token, { media_type: 'TEXT', ...text }, req.signal);
    }
    if (req.media.length === 1) {
      const id = await createContainer(userId, token, { ...(await itemParams(req.media[0]!)), ...text }, req.signal);
      await ready(id, token, req.signal);
      return id;
    }
    const children: string[] = [];
    for (const item of req.media) {
      const id = await createContainer(userId, token, { ...(await itemParams(item)), is_carousel_item: 'true' }, req.signal);
      await ready(id, token, req.signal);
      children.push(id);
    }
    const id = await createContainer(userId, token, { media_type: 'CAROUSEL', children: children.join(','), ...text }, req.signal);
    await ready(id, token, req.signal);
    return id;
  }

  return {
    platform: 'THREADS',
    metricsBatch: 1,

    /**
     * GET /{threads-media-id}/conversation (threads_read_replies): every reply under the post, at
     * any depth, flat and oldest first (`reverse=false`), each with the post it answers
     * (`replied_to`) and whether the account wrote it (`is_reply_owned_by_me`). Threads shows
     * the username, not a name or picture.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const { token } = account(credentials);
      const query = {
        fields: 'id,text,timestamp,username,permalink,replied_to,is_reply_owned_by_me',
        reverse: 'false',
        limit: '100',
      };
      const items = await listAll<ThreadsMedia>(graph, token, `/${post.platformPostId}/conversation`, query, signal);
      if (!items) return { comments: [], gone: true };
      return {
        comments: items.flatMap((r): PlatformComment[] => {
          const id = strOrNumber(r.id);
          const createdAt = isoTime(r.timestamp);
          const username = strOrNumber(r.username);
          if (!id || !createdAt || !username) return [];
          return [
            {
              platformCommentId: id,
              parentPlatformId: strOrNumber(r.replied_to?.id) ?? post.platformPostId,
              author: { name: null, handle: username, avatarUrl: null, profileUrl: `${web}/@${encodeURIComponent(username)}` },
              text: strOrNumber(r.text) ?? '',
              createdAt,
              url: strOrNumber(r.permalink) ?? null,
              ours: r.is_reply_owned_by_me === true,
            },
          ];
        }),
      };
    },

    /** The media insights of a thread (threads_manage_insights): views, likes, replies, reposts, quotes. */
    async readMetrics(credentials, ids, signal) {
      const { token } = account(credentials);
      const out: Record<string, PlatformMetrics> = {};
      for (const id of ids) {
        const read = graph.get(`/${id}/insights`, { metric: 'views,likes,replies,reposts,quotes' }, token, signal);
        const insights = (await gone(read)) as Answer<ThreadsInsights> | null;
        if (!insights) continue;
        const values: Record<string, unknown> = {};
        for (const m of Array.isArray(insights.data) ? insights.data : []) {
          if (typeof m.name === 'string') values[m.name] = m.values?.[0]?.value;
        }
        out[id] = counts(values, { views: 'views', likes: 'likes', replies: 'replies', reposts: 'reposts', quotes: 'quotes' });
      }
      return out;
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const { userId, token } = account(req.credentials);
      if (!req.media.length && !req.text.trim()) throw new PlatformError('permanent', 'Threads: a post needs text or media');
      if (req.media.length > MAX_ITEMS) throw new PlatformError('permanent', `Threads: at most ${MAX_ITEMS} items per carousel`);

      const containerId = await buildContainer(userId, token, req);
      const publish: PublishParams = { creation_id: containerId };
      const published = (await graph.post(`/${userId}/threads_publish`, publish, token, req.signal)) as Answer<MediaPublished>;
      const postId = strOrNumber(published.id);
      if (!postId) throw new PlatformError('transient', `Threads publish returned no id: ${JSON.stringify(published).slice(0, 200)}`);
      return { platformPostId: postId, ...(await permalink(graph, web, postId, token, req.signal)) };
    },

    /**
     * No idempotency key in the Threads API, so before a retry the user's own recent threads
     * are searched for this text. /threads lists no replies: a reply is looked for among the
     * user's replies (GET /{threads-user-id}/replies), and must answer the same parent
     * (`replied_to`).
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const { userId, token } = account(req.credentials);
      const kind =
        req.media.length > 1 ? 'CAROUSEL_ALBUM' : req.media[0]?.type === 'video' ? 'VIDEO' : req.media.length ? 'IMAGE' : 'TEXT_POST';
      const parent = req.replyTo?.parent.platformPostId;
      const listing: RecentListing<ThreadsMedia> = {
        path: `/${userId}/${parent ? 'replies' : 'threads'}`,
        fields: { text: 'text', time: 'timestamp', url: 'permalink', kind: 'media_type' },
        // Replies to others share the listing: a full page keeps this one in it.
        limit: parent ? 100 : 50,
        since: true,
        fallbackUrl: () => `${web}/`,
        ...(parent ? { answering: { field: 'replied_to', id: parent }, notBefore: notBeforeOf(req) } : {}),
      };
      return findRecentPost(graph, token, listing, req.text, kind, req.signal);
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      return refreshLongLivedToken(root, 'th_refresh_token', credential(P, credentials, 'accessToken'), signal);
    },

    /**
     * POST /{threads-reply-id}/manage_reply with hide (threads_manage_replies). Threads hides a
     * top-level reply under the account's own post, and the replies under it with it; a reply
     * nested deeper cannot be hidden on its own, and Threads refuses it (permanent), as it
     * refuses a reply under someone else's post.
     */
    async hideComment(credentials, target, hidden, signal): Promise<void> {
      const { token } = account(credentials);
      const id = target.platformCommentId;
      const params: ThreadsManageReplyParams = { hide: hidden ? 'true' : 'false' };
      expectSuccess(P, `hide ${id}`, await graph.post(`/${id}/manage_reply`, params, token, signal));
    },

    /**
     * DELETE /{threads-media-id} (threads_delete, at most 100 deletes a day per account). Threads
     * deletes only the account's own posts and replies; a post it no longer has is success.
     */
    async deletePublished(credentials, target, signal): Promise<void> {
      const { token } = account(credentials);
      await deleteObject(P, graph, target.platformCommentId, token, signal);
    },
  };
}

function account(credentials: Record<string, unknown>): { userId: string; token: string } {
  return { userId: credential(P, credentials, 'threadsUserId'), token: credential(P, credentials, 'accessToken') };
}

/** The thread is live once threads_publish answered; a failed lookup falls back to a built URL. */
async function permalink(graph: GraphClient, web: string, postId: string, token: string, signal?: AbortSignal) {
  try {
    const m = (await graph.get(`/${postId}`, { fields: 'permalink,shortcode,username,timestamp' }, token, signal)) as Answer<ThreadsMedia>;
    const shortcode = strOrNumber(m.shortcode);
    const username = strOrNumber(m.username);
    const built = shortcode && username ? `${web}/@${username}/post/${shortcode}` : `${web}/`;
    return { url: strOrNumber(m.permalink) ?? built, publishedAt: isoTime(m.timestamp) };
  } catch {
    return { url: `${web}/` };
  }
}
