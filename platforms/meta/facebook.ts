// Facebook Pages connector: posts as the Page with a Page access token (credentials.pageId,
// credentials.accessToken). Text → POST /{page-id}/feed; photos → uploaded unpublished to
// /{page-id}/photos, then one feed post with attached_media; a video → POST /{page-id}/videos.
// The `link` option is the text post's link preview, or the end of the text beside media.
// A first comment → POST /{post-id}/comments, as the Page; a reply to a comment → POST
// /{comment-id}/comments. A comment is hidden or shown again with POST /{comment-id} is_hidden,
// and a reply of the Page's deleted with DELETE /{comment-id}. The parameters of feed, photos,
// videos, comments and the comment update are typed by Graph's documented ones, and Graph's
// answers are read as the documented shapes, any part of which may be missing
// (platforms/contracts/meta.ts, `Answer<…>`).
import {
  PlatformError,
  type CommentsRead,
  type Connector,
  type MediaRef,
  type PlatformMetrics,
  type PostRef,
  type PublishRequest,
  type PublishResult,
} from '../types.ts';
import type { FacebookOptions } from '../options.ts';
import type {
  GraphCreated,
  PageComment,
  PageCommentParams,
  PageCommentUpdateParams,
  PageFeedAttachedMedia,
  PageFeedParams,
  PagePhotoCreated,
  PagePhotoParams,
  PagePost,
  PageVideoParams,
} from '../contracts/meta.ts';
import { blobOf, credential, trimSlash } from '../http.ts';
import { type Answer, counts, strOrNumber } from '../json.ts';
import {
  deleteObject,
  expectSuccess,
  findComment,
  findRecentPost,
  gone,
  GRAPH_API_VERSION,
  createGraphClient,
  isoTime,
  listAll,
  notBeforeOf,
  readIfThere,
  type CommentListing,
  type GraphClient,
  type RecentListing,
} from './graph.ts';

export interface FacebookConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each HTTP request (a video upload is one request). */
  timeoutMs?: number;
  /** Graph API host (default https://graph.facebook.com). */
  baseUrl?: string;
  /** Graph API version in the path (default: platforms/api-versions.ts, META_GRAPH_API_VERSION). */
  apiVersion?: string;
  /** Public site for post URLs (default https://www.facebook.com). */
  webUrl?: string;
}

const P = 'Facebook';
const MAX_PHOTOS = 10;

export function createFacebookConnector(opts: FacebookConnectorOptions = {}): Connector {
  const base = trimSlash(opts.baseUrl ?? 'https://graph.facebook.com');
  const web = trimSlash(opts.webUrl ?? 'https://www.facebook.com');
  const apiVersion = opts.apiVersion ?? GRAPH_API_VERSION;
  const graph = createGraphClient(P, {
    baseUrl: `${base}/${apiVersion}`,
    apiVersion,
    fetch: opts.fetch,
    timeoutMs: opts.timeoutMs ?? 120_000,
  });

  return {
    platform: 'FACEBOOK',
    metricsBatch: 1,

    /**
     * A Page post's reactions and comments (their summaries' total_count) and its shares, read as
     * fields of the post. Impressions need the read_insights permission and are not read.
     */
    /**
     * GET /{post-id}/comments with filter=stream: every comment and reply, oldest first, each
     * with its `parent` when it answers a comment. `from` (id and name) is there for the Page's
     * own posts; Facebook shows no handle, avatar or profile of the people who comment.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const { pageId, token } = account(credentials);
      const query = { filter: 'stream', order: 'chronological', limit: '100', fields: 'id,message,created_time,from,permalink_url,parent' };
      const items = await listAll<PageComment>(graph, token, `/${post.platformPostId}/comments`, query, signal);
      if (!items) return { comments: [], gone: true };
      return {
        comments: items.flatMap((c) => {
          const id = strOrNumber(c.id);
          const createdAt = isoTime(c.created_time);
          if (!id || !createdAt) return [];
          const from = strOrNumber(c.from?.id);
          return [
            {
              platformCommentId: id,
              parentPlatformId: strOrNumber(c.parent?.id) ?? post.platformPostId,
              author: { name: strOrNumber(c.from?.name) ?? null, handle: null, avatarUrl: null, profileUrl: null },
              text: strOrNumber(c.message) ?? '',
              createdAt,
              url: strOrNumber(c.permalink_url) ?? null,
              ours: from === pageId,
            },
          ];
        }),
      };
    },

    async readMetrics(credentials, ids, signal) {
      const { token } = account(credentials);
      const out: Record<string, PlatformMetrics> = {};
      for (const id of ids) {
        const post = (await gone(
          graph.get(
            `/${id}`,
            { fields: 'shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)' },
            token,
            signal,
          ),
        )) as Answer<PagePost> | null;
        if (!post) continue;
        out[id] = counts(
          {
            likes: post.reactions?.summary?.total_count,
            replies: post.comments?.summary?.total_count,
            reposts: post.shares?.count ?? 0,
          },
          { likes: 'likes', replies: 'replies', reposts: 'reposts' },
        );
      }
      return out;
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const { pageId, token } = account(req.credentials);
      if (req.replyTo) return comment(graph, web, token, req, req.replyTo.parent);
      const videos = req.media.filter((m) => m.type === 'video');
      if (videos.length) {
        if (req.media.length > 1) throw new PlatformError('permanent', 'Facebook: a video must be the only attachment of a post');
        return publishVideo(graph, web, pageId, token, messageOf(req), videos[0]!, req.signal);
      }
      if (req.media.length > MAX_PHOTOS) {
        throw new PlatformError('permanent', `Facebook: at most ${MAX_PHOTOS} photos per post`);
      }
      const unsupported = req.media.find((m) => m.type !== 'image' && m.type !== 'gif');
      if (unsupported) throw new PlatformError('permanent', `Facebook: ${unsupported.type} attachments are not supported`);

      // Sequential uploads keep the photo order. A retried publish uploads again; unpublished
      // photos that never get attached to a post stay invisible.
      const photoIds: string[] = [];
      for (const item of req.media) photoIds.push(await uploadPhoto(graph, pageId, token, item, req.signal));

      const params: PageFeedParams & PageFeedAttachedMedia = {};
      const message = messageOf(req);
      if (message) params.message = message;
      const link = linkOf(req);
      if (link && !photoIds.length) params.link = link;
      for (const [i, id] of photoIds.entries()) params[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id });
      const post = (await graph.post(`/${pageId}/feed`, params, token, req.signal)) as Answer<GraphCreated>;
      const id = strOrNumber(post.id);
      if (!id) throw new PlatformError('transient', `Facebook returned no post id: ${JSON.stringify(post).slice(0, 200)}`);
      return { platformPostId: id, url: `${web}/${id}` };
    },

    /**
     * The Graph API has no idempotency key, so before a retry the Page's own recent posts
     * (/{page-id}/posts, not visitor posts) are searched for this text. A comment is looked for
     * among the comments of what it answers (/{post-id}/comments, or a comment's replies at
     * /{comment-id}/comments), newest first: one by the Page (`from`) with this message.
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const { pageId, token } = account(req.credentials);
      if (req.replyTo) {
        const listing: CommentListing<PageComment> = {
          path: `/${req.replyTo.parent.platformPostId}/comments`,
          query: { filter: 'toplevel', order: 'reverse_chronological' },
          fields: { text: 'message', time: 'created_time', extra: ['permalink_url', 'from'] },
          // `from` is left out where the token may not see the author; then the text decides.
          mine: (c) => {
            const from = strOrNumber(c.from?.id);
            return !from || from === pageId;
          },
          url: (c, id) => strOrNumber(c.permalink_url) ?? `${web}/${id}`,
          pages: 3,
          limit: 100,
          notBefore: notBeforeOf(req),
        };
        return findComment(graph, token, listing, req.text, req.signal);
      }
      const kind = req.media.some((m) => m.type === 'video') ? 'added_video' : req.media.length ? 'added_photos' : undefined;
      const listing: RecentListing<PagePost> = {
        path: `/${pageId}/posts`,
        fields: { text: 'message', time: 'created_time', url: 'permalink_url', kind: 'status_type' },
        limit: 100,
        since: true,
        fallbackUrl: (id: string) => `${web}/${id}`,
      };
      return findRecentPost(graph, token, listing, messageOf(req), kind, req.signal);
    },

    /**
     * POST /{comment-id} with is_hidden (pages_manage_engagement): hidden from everyone but its
     * author and the Page's admins, or shown again. A comment already so is success; one the
     * Page may not hide (its `can_hide` is false) Graph refuses, permanent.
     */
    async hideComment(credentials, target, hidden, signal): Promise<void> {
      const { token } = account(credentials);
      const id = target.platformCommentId;
      const params: PageCommentUpdateParams = { is_hidden: hidden ? 'true' : 'false' };
      expectSuccess(P, `hide ${id}`, await graph.post(`/${id}`, params, token, signal));
    },

    /**
     * DELETE /{comment-id}. Graph lets a Page delete anyone's comment under its posts, and the
     * service deletes only the Page's own replies, so the author (`from`) is read first: a
     * comment someone else wrote is refused here, before anything is deleted. A comment Graph no
     * longer has is success.
     */
    async deletePublished(credentials, target, signal): Promise<void> {
      const { pageId, token } = account(credentials);
      const id = target.platformCommentId;
      const c = (await readIfThere(graph.get(`/${id}`, { fields: 'from' }, token, signal))) as Answer<PageComment> | null;
      if (!c) return;
      const from = strOrNumber(c.from?.id);
      if (from !== pageId) {
        throw new PlatformError(
          'permanent',
          `Facebook: comment ${id} was written by ${from ?? 'someone the Page cannot see'}, not by the Page`,
        );
      }
      await deleteObject(P, graph, id, token, signal);
    },
  };
}

function linkOf(req: PublishRequest): string | undefined {
  return ((req.options ?? {}) as FacebookOptions).link || undefined;
}

/**
 * The post's text as sent. A text post carries the link as its `link` parameter, which Facebook
 * shows as a preview. A post with photos (attached_media) or a video shows those, and Graph
 * ignores `link` there, so the link goes at the end of the text, where Facebook makes it
 * clickable (unless the text already has it).
 */
function messageOf(req: PublishRequest): string {
  const link = linkOf(req);
  if (!link || !req.media.length || req.text.includes(link)) return req.text;
  return req.text ? `${req.text}\n\n${link}` : link;
}

/**
 * A comment under the post, or a reply under a comment (both /{id}/comments), as the Page (the
 * Page token comments in the Page's name). Graph answers only the id, `{post}_{comment}`; the
 * link is the comment's permalink_url, read after, and a failed read does not fail (and so
 * retry) a comment that exists.
 */
async function comment(graph: GraphClient, web: string, token: string, req: PublishRequest, post: PostRef): Promise<PublishResult> {
  if (req.media.length) throw new PlatformError('permanent', 'Facebook: a comment carries no attachments');
  const params: PageCommentParams = { message: req.text };
  const created = (await graph.post(`/${post.platformPostId}/comments`, params, token, req.signal)) as Answer<GraphCreated>;
  const id = strOrNumber(created.id);
  if (!id) throw new PlatformError('transient', `Facebook returned no comment id: ${JSON.stringify(created).slice(0, 200)}`);
  try {
    const c = (await graph.get(`/${id}`, { fields: 'permalink_url,created_time' }, token, req.signal)) as Answer<PageComment>;
    return { platformPostId: id, url: strOrNumber(c.permalink_url) ?? `${web}/${id}`, publishedAt: isoTime(c.created_time) };
  } catch {
    return { platformPostId: id, url: `${web}/${id}` };
  }
}

function account(credentials: Record<string, unknown>): { pageId: string; token: string } {
  return { pageId: credential(P, credentials, 'pageId'), token: credential(P, credentials, 'accessToken') };
}

/** A multipart body: the edge's parameters and the file as `source`. */
async function upload(params: Record<string, string | undefined>, item: MediaRef): Promise<FormData> {
  const form = new FormData();
  form.set('source', blobOf(await item.read(), item.mimeType), item.fileName);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, v);
  return form;
}

async function uploadPhoto(graph: GraphClient, pageId: string, token: string, item: MediaRef, signal?: AbortSignal): Promise<string> {
  const params: PagePhotoParams = { published: 'false' };
  const photo = (await graph.post(`/${pageId}/photos`, await upload(params, item), token, signal)) as Answer<PagePhotoCreated>;
  const id = strOrNumber(photo.id);
  if (!id) throw new PlatformError('transient', `Facebook photo upload returned no id: ${JSON.stringify(photo).slice(0, 200)}`);
  return id;
}

/**
 * A non-resumable upload (multipart `source`) on graph.facebook.com: the graph-video host is
 * deprecated, and the Resumable Upload API needs a user token and the app id, not a Page token.
 */
async function publishVideo(
  graph: GraphClient,
  web: string,
  pageId: string,
  token: string,
  text: string,
  item: MediaRef,
  signal?: AbortSignal,
): Promise<PublishResult> {
  const params: PageVideoParams = text ? { description: text } : {};
  const video = (await graph.post(`/${pageId}/videos`, await upload(params, item), token, signal)) as Answer<GraphCreated>;
  const id = strOrNumber(video.id);
  if (!id) throw new PlatformError('transient', `Facebook video upload returned no id: ${JSON.stringify(video).slice(0, 200)}`);
  return { platformPostId: id, url: `${web}/${pageId}/videos/${id}` };
}
