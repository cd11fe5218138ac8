// Instagram connector (Instagram API with Instagram Login, graph.instagram.com): professional
// accounts (credentials.igUserId, credentials.accessToken = long-lived Instagram user token).
// Publishing is the container flow: POST /{ig-user-id}/media (Instagram fetches each item from
// a public URL), poll the container until FINISHED, POST /{ig-user-id}/media_publish. The post
// options choose a feed post, a reel (REELS), a story (STORIES) or a carousel (CAROUSEL of item
// containers). A first comment → POST /{ig-media-id}/comments; a reply to a comment → POST
// /{ig-comment-id}/replies. A comment is hidden or shown again with POST /{ig-comment-id} hide,
// and a reply of the account's deleted with DELETE /{ig-comment-id}. The parameters of media,
// media_publish, comments, replies and the comment update are typed by Graph's documented ones,
// and Graph's answers are read as the documented shapes, any part of which may be missing
// (platforms/contracts/meta.ts, `Answer<…>`).
import {
  PlatformError,
  type CommentsRead,
  type Connector,
  type MediaRef,
  type PlatformComment,
  type PlatformMetrics,
  type PostRef,
  type PublishRequest,
  type PublishResult,
} from '../types.ts';
import type {
  GraphCreated,
  IgComment,
  IgCommentParams,
  IgCommentUpdateParams,
  IgContainer,
  IgMedia,
  IgMediaList,
  IgMediaParams,
  MediaPublished,
  PublishParams,
} from '../contracts/meta.ts';
import type { InstagramOptions } from '../options.ts';
import { credential, trimSlash } from '../http.ts';
import { type Answer, counts, strOrNumber } from '../json.ts';
import {
  deleteObject,
  expectSuccess,
  findComment,
  findRecentPost,
  GRAPH_API_VERSION,
  RETRYABLE_IG_SUBCODES,
  createGraphClient,
  isoTime,
  listAll,
  listData,
  notBeforeOf,
  parseGraphTime,
  publicUrl,
  readIfThere,
  refreshLongLivedToken,
  gone,
  waitForContainer,
  type CommentListing,
  type GraphClient,
  type MediaUrlResolver,
  type RecentListing,
} from './graph.ts';

export interface InstagramConnectorOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Host of the Instagram API with Instagram Login (default https://graph.instagram.com). */
  baseUrl?: string;
  apiVersion?: string;
  /** Public site for fallback post URLs (default https://www.instagram.com). */
  webUrl?: string;
  /** A public URL Instagram can fetch the item from (e.g. a signed storage URL valid for an hour). */
  mediaUrl?: MediaUrlResolver;
  pollIntervalMs?: number;
  /** How long to wait for a container (a video) to finish processing. */
  pollTimeoutMs?: number;
}

const P = 'Instagram';
const MAX_ITEMS = 10;
const MAX_COLLABORATORS = 3;
/** Graph's limit for an image's `alt_text`. */
const MAX_ALT_TEXT = 1000;
/** Slack for the clocks of this service and Meta when a story's timestamp is compared (seconds precision). */
const STORY_CLOCK_SLACK_MS = 60_000;

export function createInstagramConnector(opts: InstagramConnectorOptions = {}): Connector {
  const base = trimSlash(opts.baseUrl ?? 'https://graph.instagram.com');
  const web = trimSlash(opts.webUrl ?? 'https://www.instagram.com');
  const http = { fetch: opts.fetch, timeoutMs: opts.timeoutMs ?? 30_000 };
  const apiVersion = opts.apiVersion ?? GRAPH_API_VERSION;
  const graph = createGraphClient(P, { baseUrl: `${base}/${apiVersion}`, apiVersion, ...http });
  const root = createGraphClient(P, { baseUrl: base, ...http });
  const poll = { intervalMs: opts.pollIntervalMs ?? 5_000, timeoutMs: opts.pollTimeoutMs ?? 300_000 };

  async function createContainer(userId: string, token: string, params: IgMediaParams, signal?: AbortSignal): Promise<string> {
    const body = (await graph.post(`/${userId}/media`, params, token, signal)) as Answer<GraphCreated>;
    const id = strOrNumber(body.id);
    if (!id) throw new PlatformError('transient', `Instagram returned no container id: ${JSON.stringify(body).slice(0, 200)}`);
    return id;
  }

  async function itemParams(item: MediaRef, carouselItem: boolean, o: InstagramOptions): Promise<IgMediaParams> {
    const url = await publicUrl(P, opts.mediaUrl, item);
    if (item.type === 'video') {
      // Single feed videos are published as reels (since July 2023); VIDEO is for carousel items.
      return carouselItem ? { media_type: 'VIDEO', video_url: url, is_carousel_item: 'true' } : { media_type: 'REELS', video_url: url };
    }
    if (item.type !== 'image') throw new PlatformError('permanent', `Instagram: ${item.type} attachments are not supported`);
    const params: IgMediaParams = { image_url: url };
    if (carouselItem) params.is_carousel_item = 'true';
    // The post's alt text for this image wins over the media item's own; an empty one sends none.
    const alt =
      o.altText?.[item.id] ??
      Array.from(item.altText ?? '')
        .slice(0, MAX_ALT_TEXT)
        .join('');
    if (alt) params.alt_text = alt;
    return params;
  }

  function ready(id: string, token: string, signal?: AbortSignal): Promise<void> {
    return waitForContainer(
      P,
      id,
      async () => {
        const c = (await graph.get(`/${id}`, { fields: 'status_code,status' }, token, signal)) as Answer<IgContainer>;
        const code = strOrNumber(c.status_code);
        if (code === 'FINISHED') return true;
        if (code === 'IN_PROGRESS' || !code) return false;
        const detail = strOrNumber(c.status) ?? code;
        // An expired container (not published within 24 h) or a "try again" failure: the retried
        // publish creates fresh containers.
        const sub = /\b(22070\d\d)\b/.exec(detail)?.[1];
        const kind = code === 'EXPIRED' || (sub && RETRYABLE_IG_SUBCODES.has(Number(sub))) ? 'transient' : 'permanent';
        throw new PlatformError(kind, `Instagram media container ${id} ${code}: ${detail}`, { platformCode: code });
      },
      { ...poll, signal },
    );
  }

  async function buildContainer(userId: string, token: string, req: PublishRequest, o: InstagramOptions): Promise<string> {
    const caption: IgMediaParams = req.text ? { caption: req.text } : {};
    // Graph takes the usernames as a JSON array.
    const collaborators: IgMediaParams = o.collaborators?.length ? { collaborators: JSON.stringify(o.collaborators) } : {};
    // share_to_feed and thumb_offset belong to reels (Graph refuses share_to_feed on anything
    // else), so other types leave them out.
    if (o.type === 'reel') {
      const params: IgMediaParams = {
        media_type: 'REELS',
        video_url: await publicUrl(P, opts.mediaUrl, req.media[0]!),
        share_to_feed: (o.shareToFeed ?? true) ? 'true' : 'false',
        ...caption,
        ...collaborators,
      };
      if (o.thumbOffsetMs !== undefined) params.thumb_offset = String(Math.round(o.thumbOffsetMs));
      return single(userId, token, params, req.signal);
    }
    if (o.type === 'story') {
      // No caption: Graph ignores one on a story, and a story shows none.
      const item = req.media[0]!;
      const url = await publicUrl(P, opts.mediaUrl, item);
      const story: IgMediaParams =
        item.type === 'video' ? { media_type: 'STORIES', video_url: url } : { media_type: 'STORIES', image_url: url };
      return single(userId, token, story, req.signal);
    }
    if (o.type !== 'carousel' && req.media.length === 1) {
      return single(userId, token, { ...(await itemParams(req.media[0]!, false, o)), ...caption, ...collaborators }, req.signal);
    }
    // Children first (each must be FINISHED), then the carousel container that lists them.
    const children: string[] = [];
    for (const item of req.media) {
      const id = await createContainer(userId, token, await itemParams(item, true, o), req.signal);
      await ready(id, token, req.signal);
      children.push(id);
    }
    return single(userId, token, { media_type: 'CAROUSEL', children: children.join(','), ...caption, ...collaborators }, req.signal);
  }

  async function single(userId: string, token: string, params: IgMediaParams, signal?: AbortSignal): Promise<string> {
    const id = await createContainer(userId, token, params, signal);
    await ready(id, token, signal);
    return id;
  }

  return {
    platform: 'INSTAGRAM',
    metricsBatch: 1,

    /** A media's like_count (absent when the owner hides likes) and comments_count, read as its fields. */
    /**
     * GET /{ig-media-id}/comments: the top-level comments, oldest first, each with its `replies`
     * (Instagram answers a comment one level deep). Instagram shows a commenter's username, not
     * their name or picture.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const { userId, token } = account(credentials);
      const fields = 'id,text,timestamp,username,from,replies{id,text,timestamp,username,from}';
      const items = await listAll<IgComment>(graph, token, `/${post.platformPostId}/comments`, { fields, limit: '50' }, signal);
      if (!items) return { comments: [], gone: true };
      const comments: PlatformComment[] = [];
      const add = (c: Answer<Omit<IgComment, 'replies'>>, parent: string) => {
        const id = strOrNumber(c.id);
        const createdAt = isoTime(c.timestamp);
        const username = strOrNumber(c.username) ?? strOrNumber(c.from?.username);
        if (!id || !createdAt || !username) return undefined;
        comments.push({
          platformCommentId: id,
          parentPlatformId: parent,
          author: { name: null, handle: username, avatarUrl: null, profileUrl: `${web}/${encodeURIComponent(username)}/` },
          text: strOrNumber(c.text) ?? '',
          createdAt,
          url: null,
          ours: strOrNumber(c.from?.id) === userId,
        });
        return id;
      };
      for (const c of items) {
        const id = add(c, post.platformPostId);
        const replies = c.replies?.data;
        if (id && Array.isArray(replies)) for (const r of replies) if (r && typeof r === 'object') add(r, id);
      }
      return { comments };
    },

    async readMetrics(credentials, ids, signal) {
      const { token } = account(credentials);
      const out: Record<string, PlatformMetrics> = {};
      for (const id of ids) {
        const media = (await gone(graph.get(`/${id}`, { fields: 'like_count,comments_count' }, token, signal))) as Answer<IgMedia> | null;
        if (!media) continue;
        out[id] = counts(media, { likes: 'like_count', replies: 'comments_count' });
      }
      return out;
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const { userId, token } = account(req.credentials);
      if (req.replyTo) return comment(graph, web, token, req, req.replyTo);
      if (!req.media.length) throw new PlatformError('permanent', 'Instagram: a post needs at least one image or video');
      if (req.media.length > MAX_ITEMS) throw new PlatformError('permanent', `Instagram: at most ${MAX_ITEMS} items per carousel`);
      const o = optionsOf(req);

      // A retry that fails before media_publish leaves unpublished containers behind; they are
      // invisible and expire after 24 hours.
      const containerId = await buildContainer(userId, token, req, o);
      const publish: PublishParams = { creation_id: containerId };
      const published = (await graph.post(`/${userId}/media_publish`, publish, token, req.signal)) as Answer<MediaPublished>;
      const mediaId = strOrNumber(published.id);
      if (!mediaId)
        throw new PlatformError('transient', `Instagram media_publish returned no id: ${JSON.stringify(published).slice(0, 200)}`);
      return { platformPostId: mediaId, ...(await permalink(graph, web, mediaId, token, req.signal)) };
    },

    /**
     * No idempotency key in the Graph API, and a container id does not survive the attempt, so
     * before a retry the account's recent media are searched for this caption, and a story
     * among its live stories (findStory). A comment is looked for among the post's comments, a
     * reply among the replies of the top-level comment it went under (Instagram answers one
     * level deep: a reply to a reply goes under the top-level comment, named by the reply's
     * parent_id): one with this text by the post's owner (the comment's `username` is the
     * post's, read from the post, `root`), which is this account.
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const { userId, token } = account(req.credentials);
      if (req.replyTo) {
        const { root, parent } = req.replyTo;
        const rootMedia = (await graph.get(`/${root.platformPostId}`, { fields: 'username' }, token, req.signal)) as Answer<IgMedia>;
        const owner = strOrNumber(rootMedia.username);
        const path =
          parent.platformPostId === root.platformPostId
            ? `/${root.platformPostId}/comments`
            : `/${await topLevelComment(graph, parent.platformPostId, token, req.signal)}/replies`;
        const listing: CommentListing<IgComment> = {
          path,
          fields: { text: 'text', time: 'timestamp', extra: ['username'] },
          mine: (c) => {
            const author = strOrNumber(c.username);
            return !owner || !author || author === owner;
          },
          url: (_, id) => commentUrl(web, root, id),
          pages: 5,
          limit: 50,
          notBefore: notBeforeOf(req),
        };
        return findComment(graph, token, listing, req.text, req.signal);
      }
      if ((req.options as InstagramOptions | undefined)?.type === 'story') return findStory(graph, web, userId, token, req);
      const kind = req.media.length > 1 ? 'CAROUSEL_ALBUM' : req.media[0]?.type === 'video' ? 'VIDEO' : 'IMAGE';
      const listing: RecentListing<IgMedia> = {
        path: `/${userId}/media`,
        fields: { text: 'caption', time: 'timestamp', url: 'permalink', kind: 'media_type' },
        limit: 50,
        fallbackUrl: () => `${web}/`,
      };
      return findRecentPost(graph, token, listing, req.text, kind, req.signal);
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      return refreshLongLivedToken(root, 'ig_refresh_token', credential(P, credentials, 'accessToken'), signal);
    },

    /**
     * POST /{ig-comment-id} with hide (instagram_business_manage_comments): hidden from everyone
     * but its author, or shown again. A comment already so is success; one Instagram refuses to
     * hide (the media owner's own comments stay visible) is permanent.
     */
    async hideComment(credentials, target, hidden, signal): Promise<void> {
      const { token } = account(credentials);
      const id = target.platformCommentId;
      const params: IgCommentUpdateParams = { hide: hidden ? 'true' : 'false' };
      expectSuccess(P, `hide ${id}`, await graph.post(`/${id}`, params, token, signal));
    },

    /**
     * DELETE /{ig-comment-id}. Instagram lets the media's owner delete anyone's comment on it,
     * and the service deletes only the account's own replies, so the author (`from`) is read
     * first: a comment someone else wrote is refused here, before anything is deleted. A comment
     * Graph no longer has is success.
     */
    async deletePublished(credentials, target, signal): Promise<void> {
      const { userId, token } = account(credentials);
      const id = target.platformCommentId;
      const c = (await readIfThere(graph.get(`/${id}`, { fields: 'from' }, token, signal))) as Answer<IgComment> | null;
      if (!c) return;
      const from = strOrNumber(c.from?.id);
      if (from !== userId) {
        const by = strOrNumber(c.from?.username) ?? from ?? 'someone else';
        throw new PlatformError('permanent', `Instagram: comment ${id} was written by ${by}, not by this account`);
      }
      await deleteObject(P, graph, id, token, signal);
    },
  };
}

/** The top-level comment a reply goes under: the comment itself, or the one it replies to (`parent_id`). */
async function topLevelComment(graph: GraphClient, commentId: string, token: string, signal?: AbortSignal): Promise<string> {
  const c = (await graph.get(`/${commentId}`, { fields: 'parent_id' }, token, signal)) as Answer<IgComment>;
  return strOrNumber(c.parent_id) ?? commentId;
}

/**
 * A story carries no caption, and /{ig-user-id}/media does not list stories: GET
 * /{ig-user-id}/stories lists the live ones (the last 24 hours). The story an earlier attempt
 * made is the oldest of this media kind since the first attempt (less STORY_CLOCK_SLACK_MS: Graph
 * counts whole seconds, and the clocks differ); one posted later by hand comes after it. Without
 * the first attempt's time nothing tells ours apart from the account's other stories: null, and
 * the retry publishes again.
 */
async function findStory(
  graph: GraphClient,
  web: string,
  userId: string,
  token: string,
  req: PublishRequest,
): Promise<PublishResult | null> {
  if (!req.firstAttemptAt) return null;
  const since = req.firstAttemptAt.getTime() - STORY_CLOCK_SLACK_MS;
  const kind = req.media[0]?.type === 'video' ? 'VIDEO' : 'IMAGE';
  const body = (await graph.get(
    `/${userId}/stories`,
    { fields: 'id,media_type,permalink,timestamp', limit: '100' },
    token,
    req.signal,
  )) as Answer<IgMediaList>;
  const hits = listData<IgMedia>(body)
    .map((s) => ({
      id: strOrNumber(s.id),
      kind: strOrNumber(s.media_type),
      url: strOrNumber(s.permalink),
      at: parseGraphTime(strOrNumber(s.timestamp) ?? ''),
    }))
    .filter((s) => s.id && s.kind === kind && s.at !== undefined && s.at >= since)
    .sort((a, b) => a.at! - b.at!);
  const hit = hits[0];
  if (!hit?.id) return null;
  return { platformPostId: hit.id, url: hit.url ?? `${web}/`, publishedAt: new Date(hit.at!).toISOString() };
}

/**
 * A comment under the post (POST /{ig-media-id}/comments), or a reply to a comment (POST
 * /{ig-comment-id}/replies; Instagram puts a reply to a reply under the top-level comment).
 * Graph answers only its id.
 */
async function comment(
  graph: GraphClient,
  web: string,
  token: string,
  req: PublishRequest,
  { root, parent }: { root: PostRef; parent: PostRef },
): Promise<PublishResult> {
  if (req.media.length) throw new PlatformError('permanent', 'Instagram: a comment carries no attachments');
  const path = parent.platformPostId === root.platformPostId ? `/${root.platformPostId}/comments` : `/${parent.platformPostId}/replies`;
  const params: IgCommentParams = { message: req.text };
  const created = (await graph.post(path, params, token, req.signal)) as Answer<GraphCreated>;
  const id = strOrNumber(created.id);
  if (!id) throw new PlatformError('transient', `Instagram returned no comment id: ${JSON.stringify(created).slice(0, 200)}`);
  return { platformPostId: id, url: commentUrl(web, root, id) };
}

/**
 * Graph gives a comment no link. Instagram's site opens one under its post at
 * /p/{shortcode}/c/{comment-id}/ (/reel/… for reels), so that is built from the post's
 * permalink; a post URL of another shape is the comment's URL as it is.
 */
function commentUrl(web: string, post: PostRef, commentId: string): string {
  const m = /^(https:\/\/[^/]+\/(?:p|reel)\/[^/?#]+)\/?(?:[?#].*)?$/.exec(post.url);
  return m ? `${m[1]}/c/${commentId}/` : post.url || `${web}/`;
}

/**
 * The post options, checked before any request: what Graph would refuse only after the media
 * containers were made (and fetched) is refused here at once.
 */
function optionsOf(req: PublishRequest): InstagramOptions {
  const o = (req.options ?? {}) as InstagramOptions;
  const n = req.media.length;
  const refuse = (why: string) => new PlatformError('permanent', `Instagram: ${why}`);
  if (o.collaborators && o.collaborators.length > MAX_COLLABORATORS) throw refuse(`at most ${MAX_COLLABORATORS} collaborators`);
  if (o.thumbOffsetMs !== undefined && !(Number.isFinite(o.thumbOffsetMs) && o.thumbOffsetMs >= 0)) {
    throw refuse('the cover frame offset must be a number of milliseconds from the start');
  }
  switch (o.type) {
    case 'feed':
      if (n !== 1) throw refuse('a feed post carries one image or video (several are a carousel)');
      break;
    case 'reel':
      if (n !== 1 || req.media[0]!.type !== 'video') throw refuse('a reel is one video');
      break;
    case 'story':
      if (n !== 1 || !['image', 'video'].includes(req.media[0]!.type)) throw refuse('a story is one image or video');
      // Collaborators are invited on feed posts, reels and carousels only.
      if (o.collaborators?.length) throw refuse('a story takes no collaborators');
      break;
    case 'carousel':
      if (n < 2 || n > MAX_ITEMS) throw refuse(`a carousel has 2 to ${MAX_ITEMS} items`);
      break;
  }
  // Graph takes alt_text on image containers only: not on a video, a reel or a story.
  for (const [id, text] of Object.entries(o.altText ?? {})) {
    const item = req.media.find((m) => m.id === id);
    if (item?.type !== 'image') throw refuse(`alt text for ${id}, which is not an image of this post`);
    if (o.type === 'story') throw refuse('a story takes no alt text');
    if (Array.from(text).length > MAX_ALT_TEXT) throw refuse(`the alt text of ${id} is over ${MAX_ALT_TEXT} characters`);
  }
  return o;
}

function account(credentials: Record<string, unknown>): { userId: string; token: string } {
  return { userId: credential(P, credentials, 'igUserId'), token: credential(P, credentials, 'accessToken') };
}

/**
 * The post is live once media_publish answered: a failed permalink lookup must not fail (and so
 * retry) the publish, so it falls back to the shortcode or the site itself.
 */
async function permalink(graph: GraphClient, web: string, mediaId: string, token: string, signal?: AbortSignal) {
  try {
    const m = (await graph.get(`/${mediaId}`, { fields: 'permalink,shortcode,timestamp' }, token, signal)) as Answer<IgMedia>;
    const shortcode = strOrNumber(m.shortcode);
    return { url: strOrNumber(m.permalink) ?? (shortcode ? `${web}/p/${shortcode}/` : `${web}/`), publishedAt: isoTime(m.timestamp) };
  } catch {
    return { url: `${web}/` };
  }
}
