// A local fake of Meta's Graph-style APIs, in one of three flavors: Facebook Pages
// (graph.facebook.com), Instagram with Instagram Login (graph.instagram.com) and Threads
// (graph.threads.net). It speaks their paths (/{version}/{id}/{edge}), takes the token as the
// `access_token` parameter (query, form or multipart) or an Authorization header, answers with
// Graph error bodies ({"error":{message,type,code,error_subcode,fbtrace_id}}), fetches container
// media from the given URL as Meta does, and serves the long-lived token refresh endpoint.
// Follow-ups: Threads replies are posts with a parent (reply_to_id on the container, listed by
// /{user}/replies (the user's own replies) and /{media}/replies, not by /{user}/threads); Facebook
// and Instagram comments are kept with their post (POST and GET /{post-id}/comments), replies to a
// comment with their parent (Facebook POST and GET /{comment-id}/comments; Instagram POST and GET
// /{ig-comment-id}/replies, one level deep: a reply to a reply goes under the top-level comment).
// A follow-up whose parent does not exist is refused as Graph refuses an unknown object id.
// Moderation: Facebook POST /{comment-id} is_hidden, Instagram POST /{ig-comment-id} hide, Threads
// POST /{reply-id}/manage_reply hide, each only by the post's owner (a hidden comment stays in
// the owner's listings, with is_hidden / hidden / hide_status); DELETE /{id} of a comment the
// account wrote or one under its own post (Facebook, Instagram), of its own posts (Threads).
// Instagram stories are listed by /{ig-user-id}/stories while live (24 hours); alt_text is taken
// on image containers only.
// Graph publishes no typed SDK: the parameters of the create, comment and moderation edges are
// checked against the TypeBox schemas of platforms/contracts/meta.ts, written from the reference
// pages, and a request that breaks them is refused as Graph refuses it; the answers (errors
// included) are built as the Static types of the answer schemas there, so a field Graph's pages
// do not document does not compile here.
import type { TObject, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { API_VERSIONS } from '../../platforms/api-versions.ts';
import {
  DeleteParams,
  type GraphCreated,
  type GraphError,
  type GraphErrorDetail,
  type GraphList,
  type GraphPaging,
  type GraphSuccess,
  type IgComment,
  IgCommentParams,
  IgCommentUpdateParams,
  type IgContainer,
  type IgMedia,
  IgMediaParams,
  type MediaPublished,
  type PageComment,
  PageCommentParams,
  PageCommentUpdateParams,
  PageFeedAttachedMedia,
  PageFeedParams,
  type PagePhotoCreated,
  PagePhotoParams,
  type PagePost,
  PageVideoParams,
  PublishParams,
  type RefreshedToken,
  type ThreadsContainer,
  type ThreadsInsights,
  ThreadsManageReplyParams,
  type ThreadsMedia,
  ThreadsParams,
} from '../../platforms/contracts/meta.ts';
import { download } from './download.ts';
export type MetaFlavor = 'facebook' | 'instagram' | 'threads';

/**
 * 'hang': never answer. 'accept-then-hang': do the work (e.g. publish), then never answer —
 * what a client sees when the platform accepted a post but the connection died.
 */
export type FakeResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';

/** Which requests a scripted failure hits. */
export type FakeRoute =
  | 'publish'
  | 'upload'
  | 'container'
  | 'status'
  | 'read'
  | 'list'
  | 'insights'
  | 'refresh'
  | 'comment'
  | 'moderate'
  | 'delete';

export interface FakeGraphPost {
  id: string;
  text: string;
  /** FB status_type, or IG/Threads media_type. */
  kind: string;
  created: Date;
  permalink: string;
  shortcode: string;
  /** FB: attached photo ids; IG/Threads: the published container. */
  media: string[];
  videoId?: string;
  /** FB: the `link` of a post without photos (Graph ignores it beside attached_media). */
  link?: string;
  /** IG: a story (media_type STORIES), which /{ig-user-id}/media does not list; /{ig-user-id}/stories lists it for 24 hours. */
  story?: boolean;
  /** Threads replies: the post answered (reply_to_id) and the first post of the conversation. */
  replyTo?: string;
  rootId?: string;
  /** A post or Threads reply by someone else (seedPost `by: 'other'`, seedReply); absent: the account's own. */
  author?: { id: string; username: string };
  /** Threads: a reply hidden by manage_reply (HIDDEN), or shown again (UNHUSHED); absent: never hidden. */
  hideStatus?: 'HIDDEN' | 'UNHUSHED';
  /** What people did (tests set them); likes null: the owner hides the like count (Instagram). */
  stats: { likes: number | null; comments: number; shares: number; views: number; reposts: number; quotes: number };
}

/** A post as the fake answers it: a Page post, an IG media or a Threads media, by flavor. */
type PostJson = PagePost | IgMedia | ThreadsMedia;

/** A Facebook or Instagram comment, kept with the post it is under. */
export interface FakeComment {
  id: string;
  /** The post (FB: post or video id; IG: media id) the comment is under. */
  postId: string;
  text: string;
  /** The account (the Page, the IG user) or someone else; `name` is an Instagram comment's username. */
  from: { id: string; name: string };
  created: Date;
  permalink: string;
  /** The comment this one answers (a reply), within the same post. */
  parentId?: string;
  /** Hidden by the post's owner (Facebook is_hidden, Instagram hide). */
  hidden?: boolean;
}

export interface FakeContainer {
  id: string;
  mediaType: string;
  /** What the container was created with (without the token), as received. */
  params: Record<string, string>;
  /** IG: the `collaborators` usernames, parsed. */
  collaborators: string[];
  carouselItem: boolean;
  children: string[];
  status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';
  errorMessage?: string;
  pendingPolls: number;
  fetched: { url: string; contentType: string; size: number } | null;
}

export interface FakeUpload {
  id: string;
  kind: 'photo' | 'video';
  fileName: string;
  mimeType: string;
  size: number;
  published: boolean;
  attachedTo: string | null;
  params: Record<string, string>;
}

export interface FakeGraphRequest {
  method: string;
  path: string;
  version: string | null;
  route: FakeRoute | 'media' | 'unknown';
  params: Record<string, string>;
}

export interface FakeMeta {
  url: string;
  flavor: MetaFlavor;
  /** The Page id, IG user id or Threads user id the tokens belong to. */
  accountId: string;
  posts: FakeGraphPost[];
  /** Facebook and Instagram comments, oldest first. */
  comments: FakeComment[];
  containers: FakeContainer[];
  uploads: FakeUpload[];
  requests: FakeGraphRequest[];
  validTokens: Set<string>;
  /** Tokens answered with 190/463 "Session has expired". */
  expiredTokens: Set<string>;
  /** Tokens handed out by the refresh endpoint, in order. */
  refreshed: string[];
  failNext(n: number, response: FakeResponse, route?: FakeRoute): void;
  expireToken(token: string): void;
  /** Serves bytes at a public URL on this fake (what a signed storage URL is in production). */
  hostMedia(bytes: Uint8Array, contentType: string): string;
  /**
   * A post made outside this test run (e.g. older than the lookup window); IG `story`: a story;
   * `by: 'other'`: another account's post (a Page's, a user's), which this account does not own.
   */
  seedPost(p: { text: string; ageMs: number; kind?: string; story?: boolean; by?: 'account' | 'other' }): FakeGraphPost;
  /**
   * A comment under a post of the fake, written `ageMs` ago by the account or (`by: 'other'`,
   * or `from`) by someone else; with `parentId`, a reply to that comment of the post.
   */
  seedComment(c: {
    postId: string;
    text: string;
    by?: 'account' | 'other';
    from?: FakeComment['from'];
    ageMs?: number;
    parentId?: string;
  }): FakeComment;
  /** Threads: someone else replies to a post of the conversation (the post itself or a reply under it). */
  seedReply(r: { parentId: string; text: string; username: string; ageMs?: number }): FakeGraphPost;
  stop(): Promise<void>;
}

export interface FakeMetaOptions {
  /** Status polls answered IN_PROGRESS before a video container is FINISHED (default 1; images finish at once). */
  videoPendingPolls?: number;
  /** Containers fail processing: ERROR with this status / error_message. */
  containerError?: string;
  /** Versions Graph no longer serves: a request in one answers error 2635. */
  retiredVersions?: string[];
}

interface Ctx {
  req: Request;
  method: string;
  segs: string[];
  params: Record<string, string>;
  files: Record<string, File>;
  token: string | undefined;
}

const ACCOUNT = { facebook: '104881234567890', instagram: '17841400000000001', threads: '25000000000000001' } as const;
const GOOD_TOKEN = { facebook: 'EAAG-page-token', instagram: 'IGAA-user-token', threads: 'THAA-user-token' } as const;
const USERNAME = 'fakeaccount';
const PAGE_NAME = 'Fake Page';
const OTHER = { id: '5550000000000001', name: 'someoneelse' };
/** The fields of a Threads media (the conversation's listing refuses others). */
const THREADS_FIELDS = new Set([
  'id',
  'text',
  'timestamp',
  'username',
  'permalink',
  'shortcode',
  'media_type',
  'media_product_type',
  'media_url',
  'is_quote_post',
  'is_reply',
  'is_reply_owned_by_me',
  'replied_to',
  'root_post',
  'has_replies',
  'hide_status',
  'reply_audience',
  'owner',
]);
/** The fields a listing of comments may ask for (others: error 100), as Graph's Comment and IG Comment nodes have them. */
const COMMENT_FIELDS = {
  facebook: new Set([
    'id',
    'message',
    'created_time',
    'from',
    'permalink_url',
    'parent',
    'attachment',
    'comment_count',
    'like_count',
    'is_hidden',
    'can_hide',
    'can_remove',
    'can_reply_privately',
    'message_tags',
    'object',
  ]),
  instagram: new Set([
    'id',
    'text',
    'timestamp',
    'username',
    'from',
    'replies',
    'like_count',
    'hidden',
    'media',
    'parent_id',
    'user',
    'legacy_instagram_comment_id',
  ]),
};
const SIXTY_DAYS_S = 60 * 24 * 3600;
const DAY_MS = 24 * 3600_000;
/** Graph's limit for an Instagram image's alt_text. */
const MAX_ALT_TEXT = 1000;

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/bmp', 'image/tiff', 'image/webp'];

/**
 * The parameters an edge documents, as a pattern of names: its schema's (platforms/contracts/meta.ts),
 * the token, which every request carries, and `also` (patterns: an upload's file, the feed's
 * attached_media list).
 */
function documented(schema: TObject, ...also: string[]): RegExp {
  return new RegExp(`^(${[...Object.keys(schema.properties), ...also, 'access_token'].join('|')})$`);
}

/** Graph's 400 for the first parameter that breaks `schema`, or null. */
function paramsRefused(schema: TSchema, params: Record<string, string>): Response | null {
  const e = Value.Errors(schema, params).First();
  if (!e) return null;
  const name = e.path.slice(1).split('/')[0] ?? '';
  if (params[name] === undefined) return need(name);
  return invalidValue(name, params[name]);
}

export async function startFakeMeta(flavor: MetaFlavor, opts: FakeMetaOptions = {}): Promise<FakeMeta> {
  const accountId = ACCOUNT[flavor];
  const posts: FakeGraphPost[] = [];
  const comments: FakeComment[] = [];
  const containers: FakeContainer[] = [];
  const uploads: FakeUpload[] = [];
  const requests: FakeGraphRequest[] = [];
  const validTokens = new Set<string>([GOOD_TOKEN[flavor]]);
  const expiredTokens = new Set<string>();
  const refreshed: string[] = [];
  const canned: { route: FakeRoute; response: FakeResponse }[] = [];
  const hosted = new Map<string, { bytes: Uint8Array; contentType: string }>();
  const hanging = new Set<() => void>();
  let seq = 1;
  const nextId = () => String(BigInt(flavor === 'facebook' ? '122100000000000000' : accountId) + BigInt(1000 + seq++));

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method === 'GET' && url.pathname.startsWith('/__media/')) return serveMedia(url.pathname.slice(9));

    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const version = parts[0] && /^v\d+\.\d+$/.test(parts[0]) ? parts.shift()! : null;
    let parsed: { params: Record<string, string>; files: Record<string, File> };
    try {
      parsed = await readParams(req, url);
    } catch {
      return graphError(400, { message: coded(100, 'Invalid parameter'), type: 'OAuthException', code: 100 });
    }
    const ctx: Ctx = { req, method: req.method, segs: parts, ...parsed, token: tokenOf(req, parsed.params) };
    const route = routeOf(ctx, version);
    requests.push({ method: req.method, path: url.pathname, version, route, params: parsed.params });

    let acceptThenHang = false;
    if (route !== 'unknown' && route !== 'media') {
      const i = canned.findIndex((c) => c.route === route);
      if (i >= 0) {
        const { response } = canned.splice(i, 1)[0]!;
        if (response === 'hang') return hang(req);
        if (response === 'accept-then-hang') acceptThenHang = true;
        else return json(response.body ?? {}, response.status, response.headers);
      }
    }

    if (route === 'refresh') return refresh(ctx);
    if (version && opts.retiredVersions?.includes(version)) {
      const current = flavor === 'threads' ? API_VERSIONS.THREADS.version : API_VERSIONS.FACEBOOK.version;
      return graphError(400, {
        message: coded(2635, `You are calling a deprecated version of the Ads API. Please update to the latest version: ${current}.`),
        type: 'OAuthException',
        code: 2635,
      });
    }
    if (!version || route === 'unknown') {
      return graphError(400, { message: `Unknown path components: ${url.pathname}`, type: 'OAuthException', code: 2500 });
    }
    const denied = checkToken(ctx.token);
    if (denied) return denied;

    const res = await dispatch(ctx, route);
    return acceptThenHang ? hang(req) : res;
  }

  function routeOf(ctx: Ctx, version: string | null): FakeGraphRequest['route'] {
    const [a, b, c] = ctx.segs;
    if (ctx.method === 'GET' && !version && a === 'refresh_access_token' && !b && flavor !== 'facebook') return 'refresh';
    if (!a || c) return 'unknown';
    if (ctx.method === 'GET' && !b) return containers.some((x) => x.id === a) ? 'status' : 'read';
    if (ctx.method === 'GET' && b === 'insights' && flavor === 'threads') return 'insights';
    const followUps = flavor === 'threads' ? 'replies' : 'comments';
    const ownPosts = flavor === 'facebook' ? 'posts' : flavor === 'instagram' ? 'media' : 'threads';
    if (ctx.method === 'DELETE') return b ? 'unknown' : 'delete';
    if (ctx.method === 'GET')
      return b === ownPosts ||
        b === followUps ||
        (flavor === 'instagram' && (b === 'stories' || b === 'replies')) ||
        (flavor === 'threads' && b === 'conversation')
        ? 'list'
        : 'unknown';
    if (ctx.method !== 'POST') return 'unknown';
    // A node update (POST /{id}) hides a Facebook or Instagram comment; Threads has manage_reply.
    if (!b) return flavor === 'threads' ? 'unknown' : 'moderate';
    if (b === 'manage_reply' && flavor === 'threads') return 'moderate';
    if ((b === 'comments' && flavor !== 'threads') || (b === 'replies' && flavor === 'instagram')) return 'comment';
    if (flavor === 'facebook') return b === 'feed' || b === 'videos' ? 'publish' : b === 'photos' ? 'upload' : 'unknown';
    if (flavor === 'instagram') return b === 'media' ? 'container' : b === 'media_publish' ? 'publish' : 'unknown';
    return b === 'threads' ? 'container' : b === 'threads_publish' ? 'publish' : 'unknown';
  }

  async function dispatch(ctx: Ctx, route: FakeGraphRequest['route']): Promise<Response> {
    const [id, edge] = ctx.segs as [string, string | undefined];
    if (route === 'insights') return insights(id, ctx.params);
    if (route === 'comment') return createComment(ctx, id, edge);
    if (route === 'moderate') return flavor === 'threads' ? manageReply(ctx, id) : moderateComment(ctx, id);
    if (route === 'delete') return deleteNode(ctx, id);
    if (route === 'list' && edge === 'comments') return listComments(id, ctx.params);
    if (route === 'list' && edge === 'conversation') return listConversation(id, ctx.params);
    if (route === 'list' && edge === 'replies' && flavor === 'instagram') return listReplies(id, ctx.params);
    // A user's replies are the user's own; a media's, everyone's.
    if (route === 'list' && edge === 'replies')
      return listPosts(ctx.params, (p) => (id === accountId ? !!p.replyTo && !p.author : p.replyTo === id), id);
    if (edge && id !== accountId) return unsupported(ctx.method, id);
    // An IG user's stories: the live ones, those of the last 24 hours.
    if (route === 'list' && edge === 'stories') return listPosts(ctx.params, (p) => !!p.story && Date.now() - p.created.getTime() < DAY_MS);
    switch (route) {
      case 'publish':
        if (flavor === 'facebook') return edge === 'feed' ? createFeedPost(ctx) : createVideo(ctx);
        return publishContainer(ctx);
      case 'upload':
        return uploadPhoto(ctx);
      case 'container':
        return createContainer(ctx);
      case 'status':
        return containerStatus(id, ctx.params);
      case 'read':
        return readPost(id, ctx.params);
      case 'list':
        // A user's threads leave out the user's replies; an IG user's media leave out stories;
        // neither has another account's posts.
        return listPosts(ctx.params, (p) => !p.replyTo && !p.story && !p.author);
      default:
        return unsupported(ctx.method, id);
    }
  }

  // ---- auth --------------------------------------------------------------------------------

  function checkToken(token: string | undefined): Response | null {
    if (!token) {
      return graphError(400, {
        message: 'An active access token must be used to query information about the current user.',
        type: 'OAuthException',
        code: 2500,
      });
    }
    if (expiredTokens.has(token)) {
      return graphError(
        400,
        {
          message: `Error validating access token: Session has expired on ${new Date(Date.now() - 3600_000).toUTCString()}. The current time is ${new Date().toUTCString()}.`,
          type: 'OAuthException',
          code: 190,
          error_subcode: 463,
        },
        { 'WWW-Authenticate': 'OAuth "Facebook Platform" "invalid_token" "Error validating access token: Session has expired"' },
      );
    }
    if (!validTokens.has(token)) {
      return graphError(
        400,
        { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 },
        {
          'WWW-Authenticate': 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token - Cannot parse access token"',
        },
      );
    }
    return null;
  }

  function refresh(ctx: Ctx): Response {
    const want = flavor === 'instagram' ? 'ig_refresh_token' : 'th_refresh_token';
    if (ctx.params.grant_type !== want) {
      return graphError(400, {
        message: `Unsupported grant_type: ${ctx.params.grant_type ?? '(none)'}`,
        type: 'OAuthException',
        code: 100,
      });
    }
    const denied = checkToken(ctx.token);
    if (denied) return denied;
    // The answer carries a token string the caller must store; the old one stays valid.
    const fresh = `${GOOD_TOKEN[flavor]}-r${refreshed.length + 1}`;
    validTokens.add(fresh);
    refreshed.push(fresh);
    return json({ access_token: fresh, token_type: 'bearer', expires_in: SIXTY_DAYS_S } satisfies RefreshedToken);
  }

  // ---- Facebook ----------------------------------------------------------------------------

  function createFeedPost(ctx: Ctx): Response {
    // attached_media also comes whole, as a JSON list.
    const bad = unknownParam(ctx.params, documented(PageFeedParams, 'attached_media(\\[\\d+\\])?'));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(PageFeedParams, ctx.params) ?? paramsRefused(PageFeedAttachedMedia, ctx.params);
    if (wrong) return wrong;
    const refs: string[] = [];
    for (const [k, v] of Object.entries(ctx.params)) {
      if (!k.startsWith('attached_media')) continue;
      try {
        const parsed: unknown = JSON.parse(v);
        for (const x of Array.isArray(parsed) ? parsed : [parsed]) refs.push(String((x as { media_fbid?: unknown }).media_fbid ?? ''));
      } catch {
        return invalidParam(k);
      }
    }
    const photos = refs.map((id) => uploads.find((u) => u.id === id && u.kind === 'photo' && !u.published && !u.attachedTo));
    if (photos.some((p) => !p))
      return graphError(400, {
        message: coded(100, 'param attached_media must be an array of unpublished photos of this Page'),
        type: 'OAuthException',
        code: 100,
      });
    const message = ctx.params.message ?? '';
    if (!message.trim() && !refs.length && !ctx.params.link)
      return graphError(400, {
        message: coded(100, 'Invalid parameter'),
        type: 'OAuthException',
        code: 100,
        error_user_msg: 'Your post is empty.',
      });
    if (message.length > 63206)
      return graphError(400, {
        message: coded(100, 'Invalid parameter'),
        type: 'OAuthException',
        code: 100,
        error_user_msg: 'The message is too long.',
      });
    const last = posts.at(-1);
    if (!refs.length && message.trim() && last && last.text === message) {
      return graphError(400, {
        message: coded(506, 'Duplicate status message'),
        type: 'OAuthException',
        code: 506,
        error_subcode: 1455006,
        is_transient: false,
        error_user_title: 'Duplicate Status Update',
        error_user_msg:
          'This status update is identical to the last one you posted. Try posting something different, or delete your previous update.',
      });
    }
    const post = addPost(message, refs.length ? 'added_photos' : 'mobile_status_update', refs);
    // A post with photos shows them, not the link.
    if (ctx.params.link && !refs.length) post.link = ctx.params.link;
    for (const p of photos) p!.attachedTo = post.id;
    return json({ id: post.id } satisfies GraphCreated);
  }

  function uploadPhoto(ctx: Ctx): Response {
    const bad = unknownParam(ctx.params, documented(PagePhotoParams, 'source'));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(PagePhotoParams, ctx.params);
    if (wrong) return wrong;
    const file = ctx.files.source;
    if (!file && !ctx.params.url)
      return graphError(400, { message: coded(324, 'Requires upload file'), type: 'OAuthException', code: 324 });
    if (file && !IMAGE_TYPES.includes(file.type)) {
      return graphError(400, {
        message: coded(100, 'Invalid image format. It should be an image file data.'),
        type: 'OAuthException',
        code: 100,
      });
    }
    const published = ctx.params.published !== 'false';
    const upload = addUpload('photo', file, ctx.params, published);
    if (!published) return json({ id: upload.id } satisfies PagePhotoCreated);
    const post = addPost(ctx.params.message ?? ctx.params.caption ?? '', 'added_photos', [upload.id]);
    upload.attachedTo = post.id;
    return json({ id: upload.id, post_id: post.id } satisfies PagePhotoCreated);
  }

  function createVideo(ctx: Ctx): Response {
    const bad = unknownParam(ctx.params, documented(PageVideoParams, 'source'));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(PageVideoParams, ctx.params);
    if (wrong) return wrong;
    const file = ctx.files.source;
    if (!file && !ctx.params.file_url)
      return graphError(400, { message: coded(100, 'No file data was uploaded'), type: 'OAuthException', code: 100 });
    if (file && !file.type.startsWith('video/'))
      return graphError(400, {
        message: coded(352, "Sorry, the video file you selected is in a format that we don't support."),
        type: 'OAuthException',
        code: 352,
      });
    const upload = addUpload('video', file, ctx.params, true);
    const post = addPost(ctx.params.description ?? '', 'added_video', [upload.id]);
    post.videoId = upload.id;
    upload.attachedTo = post.id;
    return json({ id: upload.id } satisfies GraphCreated);
  }

  function addUpload(kind: 'photo' | 'video', file: File | undefined, params: Record<string, string>, published: boolean): FakeUpload {
    const u: FakeUpload = {
      id: nextId(),
      kind,
      fileName: file?.name ?? '',
      mimeType: file?.type ?? '',
      size: file?.size ?? 0,
      published,
      attachedTo: null,
      params: withoutToken(params),
    };
    uploads.push(u);
    return u;
  }

  // ---- Instagram and Threads containers ----------------------------------------------------

  async function createContainer(ctx: Ctx): Promise<Response> {
    const p = ctx.params;
    const schema = flavor === 'instagram' ? IgMediaParams : ThreadsParams;
    const bad = unknownParam(p, documented(schema));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(schema, p);
    if (wrong) return wrong;

    const carouselItem = p.is_carousel_item === 'true';
    const textKey = flavor === 'instagram' ? 'caption' : 'text';
    const text = p[textKey] ?? '';
    const maxText = flavor === 'instagram' ? 2200 : 500;
    if ([...text].length > maxText) {
      return graphError(
        400,
        flavor === 'instagram'
          ? { message: 'The caption is too long.', type: 'OAuthException', code: 100, error_subcode: 2207010 }
          : { message: `Param text must be at most ${maxText} characters long.`, type: 'OAuthException', code: 100 },
      );
    }

    const mediaType = p.media_type ?? (flavor === 'instagram' && p.image_url ? 'IMAGE' : '');
    const need = (field: string) =>
      graphError(400, { message: coded(100, `The parameter ${field} is required`), type: 'OAuthException', code: 100 });
    let children: string[] = [];
    let mediaUrl: string | undefined;
    switch (mediaType) {
      case 'TEXT':
        if (flavor !== 'threads') return invalidValue('media_type', mediaType);
        if (!text.trim()) return need('text');
        break;
      case 'IMAGE':
        if (!p.image_url) return need('image_url');
        mediaUrl = p.image_url;
        break;
      case 'VIDEO':
        if (!p.video_url) return need('video_url');
        if (flavor === 'instagram' && !carouselItem) {
          return graphError(400, {
            message: 'The media type VIDEO is only supported for carousel items; publish a single video with media_type=REELS.',
            type: 'OAuthException',
            code: 100,
          });
        }
        mediaUrl = p.video_url;
        break;
      case 'REELS':
        if (flavor !== 'instagram') return invalidValue('media_type', mediaType);
        if (!p.video_url) return need('video_url');
        if (carouselItem) return invalidValue('is_carousel_item', 'true');
        mediaUrl = p.video_url;
        break;
      case 'STORIES':
        if (flavor !== 'instagram') return invalidValue('media_type', mediaType);
        if (!p.image_url === !p.video_url) return need('image_url or video_url');
        if (carouselItem) return invalidValue('is_carousel_item', 'true');
        mediaUrl = p.image_url ?? p.video_url;
        break;
      case 'CAROUSEL': {
        children = (p.children ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const max = flavor === 'instagram' ? 10 : 20;
        const ok = children.every((id) => containers.find((c) => c.id === id && c.carouselItem && c.status === 'FINISHED'));
        if (children.length < 2 || children.length > max || !ok) {
          return graphError(400, {
            message: `Carousel validation failed: children must list 2 to ${max} finished carousel item containers.`,
            type: 'OAuthException',
            code: 100,
            error_subcode: 2207028,
          });
        }
        break;
      }
      default:
        return mediaType ? invalidValue('media_type', mediaType) : need('media_type');
    }
    if (carouselItem && !mediaUrl) return invalidValue('is_carousel_item', 'true');
    // share_to_feed and thumb_offset are reel settings; collaborators are invited on feed posts,
    // reels and carousels (at most 3), not on stories or carousel items.
    if (p.share_to_feed !== undefined && mediaType !== 'REELS') return invalidParam('share_to_feed');
    if (p.share_to_feed !== undefined && !['true', 'false'].includes(p.share_to_feed))
      return invalidValue('share_to_feed', p.share_to_feed);
    if (p.thumb_offset !== undefined && !/^\d+$/.test(p.thumb_offset)) return invalidValue('thumb_offset', p.thumb_offset);
    let collaborators: string[] = [];
    if (p.collaborators !== undefined) {
      if (mediaType === 'STORIES' || carouselItem) return invalidParam('collaborators');
      try {
        const parsed: unknown = JSON.parse(p.collaborators);
        if (!Array.isArray(parsed) || !parsed.every((u) => typeof u === 'string' && u)) throw new Error('not a list of usernames');
        collaborators = parsed;
      } catch {
        return invalidValue('collaborators', p.collaborators);
      }
      if (collaborators.length > 3) {
        return graphError(400, { message: coded(100, 'A post can have at most 3 collaborators'), type: 'OAuthException', code: 100 });
      }
    }
    // Instagram takes alt_text on image containers only (a feed image, a carousel's image), not on
    // a video, a reel, a story or the carousel itself.
    if (flavor === 'instagram' && p.alt_text !== undefined) {
      if (mediaType !== 'IMAGE') return invalidParam('alt_text');
      if ([...p.alt_text].length > MAX_ALT_TEXT) {
        return graphError(400, {
          message: coded(100, `Param alt_text must be at most ${MAX_ALT_TEXT} characters long.`),
          type: 'OAuthException',
          code: 100,
        });
      }
    }
    if (p.reply_to_id !== undefined && (carouselItem || !posts.some((x) => x.id === p.reply_to_id))) {
      return carouselItem ? invalidParam('reply_to_id') : unsupported('POST', p.reply_to_id);
    }

    const c: FakeContainer = {
      id: nextId(),
      mediaType,
      params: withoutToken(p),
      collaborators,
      carouselItem,
      children,
      status: 'FINISHED',
      pendingPolls: 0,
      fetched: null,
    };
    if (mediaUrl) {
      // Meta downloads the media from the URL when the container is created.
      const got = await download(mediaUrl);
      if (!got) {
        if (flavor === 'instagram' && mediaType === 'IMAGE') {
          return graphError(400, {
            message: 'Only photo or video can be accepted as media type.',
            type: 'OAuthException',
            code: 9004,
            error_subcode: 2207052,
            is_transient: false,
            error_user_title: 'Media download has failed.',
            error_user_msg: `The media could not be fetched from this uri: ${mediaUrl}`,
          });
        }
        c.status = 'ERROR';
        c.errorMessage =
          flavor === 'threads'
            ? mediaType === 'VIDEO'
              ? 'FAILED_DOWNLOADING_VIDEO'
              : 'UNKNOWN'
            : 'Error: Media download has failed (2207052)';
      } else {
        c.fetched = { url: mediaUrl, ...got };
        const wanted = mediaType === 'IMAGE' || (mediaType === 'STORIES' && p.image_url) ? 'image/' : 'video/';
        if (!got.contentType.startsWith(wanted)) {
          c.status = 'ERROR';
          c.errorMessage = flavor === 'threads' ? 'UNKNOWN' : 'Error: The media type is not supported (2207026)';
        } else if (wanted === 'video/') {
          c.status = 'IN_PROGRESS';
          c.pendingPolls = opts.videoPendingPolls ?? 1;
        }
      }
    }
    if (opts.containerError && c.status !== 'ERROR') {
      c.status = 'ERROR';
      c.errorMessage = opts.containerError;
    }
    containers.push(c);
    return json({ id: c.id } satisfies GraphCreated);
  }

  function containerStatus(id: string, params: Record<string, string>): Response {
    const c = containers.find((x) => x.id === id)!;
    if (c.status === 'IN_PROGRESS') {
      if (c.pendingPolls > 0) c.pendingPolls--;
      else c.status = 'FINISHED';
    }
    if (flavor === 'instagram') {
      const all: IgContainer = { id: c.id, status_code: c.status, status: c.status === 'ERROR' ? c.errorMessage : igStatusText(c.status) };
      return json(pick(all, params.fields, ['id']));
    }
    const all: ThreadsContainer = { id: c.id, status: c.status, ...(c.status === 'ERROR' ? { error_message: c.errorMessage } : {}) };
    return json(pick(all, params.fields, ['id']));
  }

  function publishContainer(ctx: Ctx): Response {
    const bad = unknownParam(ctx.params, documented(PublishParams));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(PublishParams, ctx.params);
    if (wrong) return wrong;
    const c = containers.find((x) => x.id === ctx.params.creation_id);
    if (!c || c.carouselItem) {
      return graphError(400, {
        message: 'Unsupported post request. The creation_id is not a container of this user.',
        type: 'OAuthException',
        code: 100,
        error_subcode: 33,
      });
    }
    if (c.status !== 'FINISHED') {
      return graphError(400, {
        message: 'Media ID is not available',
        type: 'OAuthException',
        code: 9007,
        error_subcode: 2207027,
        is_transient: false,
        error_user_title: 'Media not ready for publishing',
        error_user_msg: 'The media is not ready for publishing, please wait for a moment',
      });
    }
    c.status = 'PUBLISHED';
    const story = c.mediaType === 'STORIES';
    const kind = story
      ? c.params.image_url
        ? 'IMAGE'
        : 'VIDEO'
      : ({ TEXT: 'TEXT_POST', IMAGE: 'IMAGE', VIDEO: 'VIDEO', REELS: 'VIDEO', CAROUSEL: 'CAROUSEL_ALBUM' }[c.mediaType] ?? c.mediaType);
    // Graph takes a caption on a story without complaint and shows none.
    const text = story ? '' : (c.params[flavor === 'instagram' ? 'caption' : 'text'] ?? '');
    const post = addPost(text, kind, [c.id, ...c.children]);
    if (story) markStory(post);
    const parent = c.params.reply_to_id ? posts.find((x) => x.id === c.params.reply_to_id) : undefined;
    if (parent) {
      post.replyTo = parent.id;
      post.rootId = parent.rootId ?? parent.id;
      parent.stats.comments++;
    }
    return json({ id: post.id } satisfies MediaPublished);
  }

  /** A story: not among the user's media, and its permalink is the story's own. */
  function markStory(post: FakeGraphPost) {
    post.story = true;
    post.permalink = `https://www.instagram.com/stories/${USERNAME}/${post.id}/`;
  }

  // ---- reads -------------------------------------------------------------------------------

  function readPost(id: string, params: Record<string, string>): Response {
    const c = commentById(id);
    if (c) return commentFieldsRefused(params.fields) ?? json(pick(commentJson(c), params.fields, ['id']));
    const post = posts.find((p) => p.id === id);
    if (!post) return unsupported('GET', id);
    if (flavor === 'threads') {
      const refused = unknownField(params.fields, THREADS_FIELDS, 'ThreadsMedia');
      if (refused) return refused;
    }
    return json(pick(postJson(post), params.fields, ['id']));
  }

  /** Threads media insights: one entry per metric asked, lifetime values. */
  function insights(id: string, params: Record<string, string>): Response {
    const post = posts.find((p) => p.id === id);
    if (!post) return unsupported('GET', id);
    const known: Record<string, number | null> = {
      views: post.stats.views,
      likes: post.stats.likes,
      replies: post.stats.comments,
      reposts: post.stats.reposts,
      quotes: post.stats.quotes,
    };
    const asked = (params.metric ?? '').split(',').filter(Boolean);
    const unknown = asked.find((m) => !(m in known));
    if (!asked.length || unknown) {
      return graphError(400, {
        message: coded(
          100,
          `metric[${asked.length ? asked.indexOf(unknown!) : 0}] must be one of the following values: ${Object.keys(known).join(', ')}`,
        ),
        type: 'OAuthException',
        code: 100,
      });
    }
    const answer: ThreadsInsights = {
      data: asked.map((name) => ({
        name,
        period: 'lifetime',
        values: [{ value: known[name] ?? 0 }],
        title: name,
        description: name,
        id: `${id}/insights/${name}/lifetime`,
      })),
    };
    return json(answer);
  }

  function listPosts(params: Record<string, string>, which: (p: FakeGraphPost) => boolean, mediaId?: string): Response {
    if (mediaId && mediaId !== accountId && !posts.some((p) => p.id === mediaId)) return unsupported('GET', mediaId);
    const since = params.since ? Number(params.since) * 1000 : -Infinity;
    const limit = Math.min(Number(params.limit ?? 25) || 25, 100);
    const data = posts
      .filter((p) => which(p) && p.created.getTime() >= since)
      .sort((a, b) => b.created.getTime() - a.created.getTime())
      .slice(0, limit)
      .map((p) => pick(postJson(p), params.fields, ['id']));
    const answer: GraphList<Partial<PostJson>> = { data, paging: { cursors: { before: 'QVFIUmJl', after: 'QVFIUmFm' } } };
    return json(answer);
  }

  /**
   * Threads' GET /{media-id}/conversation: every reply under the post, at any depth, flat;
   * newest first unless `reverse=false`; paged by an `after` cursor. A field a Threads media
   * does not have is refused (error 100).
   */
  function listConversation(id: string, params: Record<string, string>): Response {
    if (!posts.some((p) => p.id === id)) return unsupported('GET', id);
    const refused = unknownField(params.fields, THREADS_FIELDS, 'ThreadsMedia');
    if (refused) return refused;
    if (params.reverse && !['true', 'false'].includes(params.reverse)) return invalidValue('reverse', params.reverse);
    const all = posts.filter((p) => p.rootId === id).sort((a, b) => a.created.getTime() - b.created.getTime());
    if (params.reverse !== 'false') all.reverse();
    const { page, paging } = pageOf(all, params, 100, `${base}/${id}/conversation`);
    const answer: GraphList<Partial<ThreadsMedia>> = { data: page.map((p) => pick(threadsMediaJson(p), params.fields, ['id'])), paging };
    return json(answer);
  }

  /** A post as the flavor's node: a Page post, an IG media, a Threads media. */
  function postJson(p: FakeGraphPost): PostJson {
    return flavor === 'facebook' ? pagePostJson(p) : flavor === 'instagram' ? igMediaJson(p) : threadsMediaJson(p);
  }

  function pagePostJson(p: FakeGraphPost): PagePost {
    return {
      id: p.id,
      message: p.text || undefined,
      created_time: graphTime(p.created),
      permalink_url: p.permalink,
      status_type: p.kind,
      // Graph leaves `shares` out of a post nobody shared.
      shares: p.stats.shares ? { count: p.stats.shares } : undefined,
      reactions: { data: [], summary: { total_count: p.stats.likes ?? 0, viewer_reaction: 'NONE' } },
      comments: { data: [], summary: { order: 'ranked', total_count: p.stats.comments, can_comment: true } },
    };
  }

  function igMediaJson(p: FakeGraphPost): IgMedia {
    return {
      like_count: p.stats.likes ?? undefined,
      comments_count: p.stats.comments,
      id: p.id,
      caption: p.text || undefined,
      media_type: p.kind,
      permalink: p.permalink,
      shortcode: p.shortcode,
      timestamp: graphTime(p.created),
      username: USERNAME,
    };
  }

  function threadsMediaJson(p: FakeGraphPost): ThreadsMedia {
    return {
      id: p.id,
      text: p.text || undefined,
      media_type: p.kind,
      permalink: p.permalink,
      shortcode: p.shortcode,
      timestamp: graphTime(p.created),
      username: p.author?.username ?? USERNAME,
      is_reply: !!p.replyTo,
      is_reply_owned_by_me: p.replyTo ? !p.author : undefined,
      replied_to: p.replyTo ? { id: p.replyTo } : undefined,
      root_post: p.rootId ? { id: p.rootId } : undefined,
      hide_status: p.replyTo ? hideStatusOf(p) : undefined,
    };
  }

  /** A reply's hide_status: that of the top-level reply it is under (manage_reply hides those with it). */
  function hideStatusOf(p: FakeGraphPost): NonNullable<ThreadsMedia['hide_status']> {
    let top: FakeGraphPost | undefined = p;
    for (let parentId = top.replyTo; top && parentId && parentId !== top.rootId; parentId = top?.replyTo) {
      top = posts.find((x) => x.id === parentId);
    }
    return top?.hideStatus ?? 'NOT_HUSHED';
  }

  // ---- Facebook and Instagram comments -----------------------------------------------------

  /** The post a comment goes under: a post id, or on Facebook a video's id. */
  function commentTarget(id: string): FakeGraphPost | undefined {
    return posts.find((p) => p.id === id || (flavor === 'facebook' && p.videoId === id));
  }

  /** A Facebook or Instagram comment of this fake (a reply included). */
  function commentById(id: string): FakeComment | undefined {
    return comments.find((c) => c.id === id);
  }

  /** The account owns the post: its own, not another account's (seedPost `by: 'other'`). */
  const ownsPost = (p: FakeGraphPost | undefined) => !!p && !p.author;
  const wrote = (c: FakeComment) => c.from.id === accountId;

  /**
   * POST /{post-id}/comments (a comment on the post), Facebook POST /{comment-id}/comments (a
   * reply to the comment) and Instagram POST /{ig-comment-id}/replies (a reply, put under the
   * top-level comment when it answers a reply; Instagram refuses a reply to a hidden comment).
   */
  function createComment(ctx: Ctx, id: string, edge: string | undefined): Response {
    const schema = flavor === 'facebook' ? PageCommentParams : IgCommentParams;
    const bad = unknownParam(ctx.params, documented(schema));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(schema, ctx.params);
    if (wrong) return wrong;
    const answered = flavor === 'facebook' || edge === 'replies' ? commentById(id) : undefined;
    const post = answered ? commentTarget(answered.postId) : edge === 'comments' ? commentTarget(id) : undefined;
    if (!post) return unsupported('POST', id);
    const message = ctx.params.message ?? '';
    if (!message.trim()) {
      return flavor === 'facebook' && (ctx.params.attachment_id || ctx.params.attachment_url)
        ? invalidParam('attachment_id')
        : graphError(400, {
            message: coded(100, flavor === 'facebook' ? 'Missing message or attachment' : 'The parameter message is required'),
            type: 'OAuthException',
            code: 100,
          });
    }
    if (flavor === 'instagram' && answered?.hidden) {
      return graphError(400, { message: coded(100, 'You cannot reply to a hidden comment.'), type: 'OAuthException', code: 100 });
    }
    const parentId = flavor === 'instagram' ? (answered?.parentId ?? answered?.id) : answered?.id;
    const c = addComment(post, message, { id: accountId, name: flavor === 'facebook' ? PAGE_NAME : USERNAME }, new Date(), parentId);
    return json({ id: c.id } satisfies GraphCreated);
  }

  function addComment(post: FakeGraphPost, text: string, from: FakeComment['from'], created = new Date(), parentId?: string): FakeComment {
    const n = nextId();
    // Facebook names a comment {post}_{comment}; Instagram by a number of its own.
    const id = flavor === 'facebook' ? `${post.id.split('_').at(-1)}_${n}` : n;
    const permalink = flavor === 'facebook' ? `${post.permalink}?comment_id=${n}` : '';
    const c: FakeComment = { id, postId: post.id, text, from, created, permalink, ...(parentId ? { parentId } : {}) };
    comments.push(c);
    comments.sort((a, b) => a.created.getTime() - b.created.getTime());
    post.stats.comments++;
    return c;
  }

  /**
   * A post's comments, oldest first (Facebook: order=reverse_chronological for newest first),
   * paged by an `after` cursor; on Facebook a comment's id lists its replies. Hidden comments are
   * listed too: the post's owner sees them (is_hidden, hidden).
   */
  function listComments(id: string, params: Record<string, string>): Response {
    const parent = flavor === 'facebook' ? commentById(id) : undefined;
    const post = parent ? undefined : commentTarget(id);
    if (!post && !parent) return unsupported('GET', id);
    if (params.order && !['chronological', 'reverse_chronological'].includes(params.order)) return invalidValue('order', params.order);
    if (params.filter && !['toplevel', 'stream'].includes(params.filter)) return invalidValue('filter', params.filter);
    const refused = commentFieldsRefused(params.fields);
    if (refused) return refused;
    // Facebook's default (and `toplevel`) lists the comments on the post itself; `stream` every
    // comment and reply. Instagram lists the top-level ones; their replies come as a field.
    const all = parent
      ? comments.filter((c) => c.parentId === parent.id)
      : comments.filter((c) => c.postId === post!.id && (params.filter === 'stream' || !c.parentId));
    if (params.order === 'reverse_chronological') all.reverse();
    const { page, paging } = pageOf(all, params, flavor === 'facebook' ? 100 : 50, `${base}/${id}/comments`);
    const answer: GraphList<Partial<PageComment | IgComment>> = {
      data: page.map((c) => pick(commentJson(c), params.fields, ['id'])),
      paging,
    };
    return json(answer);
  }

  /** Instagram's GET /{ig-comment-id}/replies: the replies to a top-level comment, oldest first. */
  function listReplies(id: string, params: Record<string, string>): Response {
    const parent = commentById(id);
    if (!parent) return unsupported('GET', id);
    const refused = commentFieldsRefused(params.fields);
    if (refused) return refused;
    const all = comments.filter((c) => c.parentId === parent.id);
    const { page, paging } = pageOf(all, params, 50, `${base}/${id}/replies`);
    const answer: GraphList<Partial<IgComment>> = { data: page.map((c) => pick(igCommentJson(c), params.fields, ['id'])), paging };
    return json(answer);
  }

  function commentFieldsRefused(fields: string | undefined): Response | null {
    return flavor === 'facebook'
      ? unknownField(fields, COMMENT_FIELDS.facebook, 'Comment')
      : unknownField(fields, COMMENT_FIELDS.instagram, 'IGComment');
  }

  /**
   * Facebook POST /{comment-id} (is_hidden, or the Page's own comment's message) and Instagram
   * POST /{ig-comment-id} (hide): only the owner of the post the comment is under may hide it,
   * and not the owner's own comment (Facebook's can_hide is false for it; Instagram keeps the
   * media owner's comments visible). Hiding a hidden comment is success.
   */
  function moderateComment(ctx: Ctx, id: string): Response {
    // Facebook's is_hidden is optional (an edit sends message alone); Instagram's hide is required.
    const schema = flavor === 'facebook' ? PageCommentUpdateParams : IgCommentUpdateParams;
    const bad = unknownParam(ctx.params, documented(schema));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(schema, ctx.params);
    if (wrong) return wrong;
    const c = commentById(id);
    if (!c) return unsupported('POST', id);
    const value = ctx.params[flavor === 'facebook' ? 'is_hidden' : 'hide'];
    const mine = ownsPost(commentTarget(c.postId));
    if (value !== undefined) {
      if (!mine) return unsupported('POST', id);
      if (wrote(c)) {
        return graphError(400, {
          message: coded(
            100,
            flavor === 'facebook' ? 'This comment cannot be hidden (can_hide is false)' : 'The media owner’s own comment cannot be hidden',
          ),
          type: 'OAuthException',
          code: 100,
        });
      }
      c.hidden = value === 'true';
    }
    if (ctx.params.message !== undefined) {
      if (!wrote(c)) return unsupported('POST', id);
      c.text = ctx.params.message;
    }
    return json({ success: true } satisfies GraphSuccess);
  }

  /**
   * Threads' POST /{threads-reply-id}/manage_reply: the owner of the thread hides a top-level
   * reply (one that answers the thread's first post), and with it the replies under it; a reply
   * nested deeper is refused, as is a reply under someone else's thread. Hiding a hidden reply
   * is success.
   */
  function manageReply(ctx: Ctx, id: string): Response {
    const bad = unknownParam(ctx.params, documented(ThreadsManageReplyParams));
    if (bad) return invalidParam(bad);
    const wrong = paramsRefused(ThreadsManageReplyParams, ctx.params);
    if (wrong) return wrong;
    const hide = ctx.params.hide;
    const reply = posts.find((p) => p.id === id);
    if (!reply) return unsupported('POST', id);
    const root = posts.find((p) => p.id === reply.rootId);
    if (!reply.replyTo || !root || !ownsPost(root)) return unsupported('POST', id);
    if (reply.replyTo !== root.id) {
      return graphError(400, {
        message: coded(100, 'Only top-level replies can be hidden; a nested reply is hidden with the top-level reply it is under.'),
        type: 'OAuthException',
        code: 100,
      });
    }
    reply.hideStatus = hide === 'true' ? 'HIDDEN' : reply.hideStatus ? 'UNHUSHED' : undefined;
    return json({ success: true } satisfies GraphSuccess);
  }

  /**
   * DELETE /{id}. Facebook and Instagram: a comment the account wrote, or any comment under the
   * account's own post (the owner moderates), with the replies under it. Threads: the account's
   * own post or reply. Anything else, and what is gone, is Graph's 100/33.
   */
  function deleteNode(ctx: Ctx, id: string): Response {
    const bad = unknownParam(ctx.params, documented(DeleteParams));
    if (bad) return invalidParam(bad);
    if (flavor === 'threads') {
      const i = posts.findIndex((p) => p.id === id);
      const p = posts[i];
      if (!p || p.author) return unsupported('DELETE', id);
      posts.splice(i, 1);
      const parent = posts.find((x) => x.id === p.replyTo);
      if (parent) parent.stats.comments = Math.max(0, parent.stats.comments - 1);
      return json({ success: true, deleted_id: id } satisfies GraphSuccess);
    }
    const c = commentById(id);
    const post = c ? commentTarget(c.postId) : undefined;
    if (!c || !post || (!wrote(c) && !ownsPost(post))) return unsupported('DELETE', id);
    const gone = new Set([c.id, ...comments.filter((x) => x.parentId === c.id).map((x) => x.id)]);
    for (let i = comments.length - 1; i >= 0; i--) if (gone.has(comments[i]!.id)) comments.splice(i, 1);
    post.stats.comments = Math.max(0, post.stats.comments - gone.size);
    return json({ success: true } satisfies GraphSuccess);
  }

  /** A comment as the flavor's node: a Facebook Comment, an IG Comment. */
  function commentJson(c: FakeComment): PageComment | IgComment {
    return flavor === 'facebook' ? pageCommentJson(c) : igCommentJson(c);
  }

  function pageCommentJson(c: FakeComment): PageComment {
    const parent = c.parentId ? { parent: { id: c.parentId, message: commentById(c.parentId)?.text } } : {};
    const owner = ownsPost(commentTarget(c.postId));
    return {
      id: c.id,
      message: c.text,
      created_time: graphTime(c.created),
      from: c.from,
      permalink_url: c.permalink,
      ...parent,
      is_hidden: !!c.hidden,
      can_hide: owner && !wrote(c),
      can_remove: owner || wrote(c),
    };
  }

  function igCommentJson(c: FakeComment): IgComment {
    const own: IgComment = {
      id: c.id,
      text: c.text,
      timestamp: graphTime(c.created),
      username: c.from.name,
      from: { id: c.from.id, username: c.from.name },
      media: { id: c.postId },
      hidden: !!c.hidden,
    };
    if (c.parentId) return { ...own, parent_id: c.parentId };
    const replies = comments.filter((x) => x.parentId === c.id).map(igCommentJson);
    return replies.length ? { ...own, replies: { data: replies } } : own;
  }

  function addPost(text: string, kind: string, media: string[], created = new Date()): FakeGraphPost {
    const id = flavor === 'facebook' ? `${accountId}_${nextId()}` : nextId();
    const shortcode = `C${(seq * 7919).toString(36).toUpperCase()}x${id.slice(-4)}`;
    const permalink =
      flavor === 'facebook'
        ? `https://www.facebook.com/${id.replace('_', '/posts/')}`
        : flavor === 'instagram'
          ? `https://www.instagram.com/p/${shortcode}/`
          : `https://www.threads.com/@${USERNAME}/post/${shortcode}`;
    const post: FakeGraphPost = {
      id,
      text,
      kind,
      created,
      permalink,
      shortcode,
      media,
      stats: { likes: 0, comments: 0, shares: 0, views: 0, reposts: 0, quotes: 0 },
    };
    posts.push(post);
    return post;
  }

  // ---- media hosting -----------------------------------------------------------------------

  function serveMedia(key: string): Response {
    const m = hosted.get(key);
    if (!m) return new Response('not found', { status: 404 });
    return new Response(m.bytes as Uint8Array<ArrayBuffer>, { headers: { 'Content-Type': m.contentType } });
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(graphError(504, { message: 'gave up', type: 'OAuthException', code: 2 }));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    flavor,
    accountId,
    posts,
    comments,
    containers,
    uploads,
    requests,
    validTokens,
    expiredTokens,
    refreshed,
    failNext(n, response, route = 'publish') {
      for (let i = 0; i < n; i++) canned.push({ route, response });
    },
    expireToken(token) {
      validTokens.delete(token);
      expiredTokens.add(token);
    },
    hostMedia(bytes, contentType) {
      const key = `m${hosted.size + 1}`;
      hosted.set(key, { bytes, contentType });
      return `${base}/__media/${key}`;
    },
    seedPost({ text, ageMs, kind, story, by = 'account' }) {
      const defaultKind = flavor === 'facebook' ? 'mobile_status_update' : flavor === 'instagram' ? 'IMAGE' : 'TEXT_POST';
      const post = addPost(text, kind ?? defaultKind, [], new Date(Date.now() - ageMs));
      if (story) markStory(post);
      if (by === 'other') {
        post.author = { id: OTHER.id, username: OTHER.name };
        // A Page post's id starts with its Page's.
        if (flavor === 'facebook') post.id = post.id.replace(`${accountId}_`, `${OTHER.id}_`);
      }
      posts.sort((a, b) => a.created.getTime() - b.created.getTime());
      return post;
    },
    seedComment({ postId, text, by = 'account', from, ageMs = 0, parentId }) {
      const post = commentTarget(postId);
      if (!post) throw new Error(`no post ${postId}`);
      if (parentId && !comments.some((c) => c.id === parentId && c.postId === post.id)) throw new Error(`no comment ${parentId}`);
      const own = { id: accountId, name: flavor === 'facebook' ? PAGE_NAME : USERNAME };
      return addComment(post, text, from ?? (by === 'account' ? own : OTHER), new Date(Date.now() - ageMs), parentId);
    },
    seedReply({ parentId, text, username, ageMs = 0 }) {
      const parent = posts.find((p) => p.id === parentId);
      if (flavor !== 'threads' || !parent) throw new Error(`no Threads post ${parentId}`);
      const reply = addPost(text, 'TEXT_POST', [], new Date(Date.now() - ageMs));
      Object.assign(reply, { replyTo: parent.id, rootId: parent.rootId ?? parent.id, author: { id: `9${reply.id}`, username } });
      reply.permalink = `https://www.threads.com/@${username}/post/${reply.shortcode}`;
      parent.stats.comments++;
      posts.sort((a, b) => a.created.getTime() - b.created.getTime());
      return reply;
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/** Graph merges query-string and body parameters; bodies may be form, multipart or JSON. */
async function readParams(req: Request, url: URL): Promise<{ params: Record<string, string>; files: Record<string, File> }> {
  const params: Record<string, string> = Object.fromEntries(url.searchParams);
  const files: Record<string, File> = {};
  const type = req.headers.get('content-type') ?? '';
  if (req.method === 'POST' && type.includes('application/json')) {
    const body: unknown = await req.json();
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    for (const [k, v] of Object.entries(body)) params[k] = typeof v === 'string' ? v : JSON.stringify(v);
  } else if (req.method === 'POST' && (type.includes('form-urlencoded') || type.includes('multipart/form-data'))) {
    for (const [k, v] of await req.formData()) {
      if (typeof v === 'string') params[k] = v;
      else files[k] = v as File;
    }
  }
  return { params, files };
}

function tokenOf(req: Request, params: Record<string, string>): string | undefined {
  const auth = /^(?:Bearer|OAuth)\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
  return params.access_token || auth || undefined;
}

function unknownParam(params: Record<string, string>, allowed: RegExp): string | undefined {
  return Object.keys(params).find((k) => k !== 'fields' && !allowed.test(k));
}

function invalidParam(name: string): Response {
  return graphError(400, { message: coded(100, `Param ${name} is not a valid parameter`), type: 'OAuthException', code: 100 });
}

function need(name: string): Response {
  return graphError(400, { message: coded(100, `The parameter ${name} is required`), type: 'OAuthException', code: 100 });
}

function invalidValue(name: string, value: string): Response {
  return graphError(400, { message: coded(100, `Param ${name} has an invalid value: ${value}`), type: 'OAuthException', code: 100 });
}

/** A Graph error message: Graph starts each with its error code, as "(#code) text". */
export function coded(code: number, text: string): string {
  return `(#${code}) ${text}`;
}

function unsupported(method: string, id: string): Response {
  return graphError(400, {
    message: `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    type: 'GraphMethodException',
    code: 100,
    error_subcode: 33,
  });
}

/** Graph's error answer (GraphError): `error` as given, with a fresh `fbtrace_id`. */
function graphError(status: number, error: Omit<GraphErrorDetail, 'fbtrace_id'>, headers: Record<string, string> = {}): Response {
  const body: GraphError = { error: { ...error, fbtrace_id: `A${Math.random().toString(36).slice(2, 12)}` } };
  return json(body, status, headers);
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=UTF-8', ...headers } });
}

/** Only the requested fields (Graph answers `fields=a,b` with a, b and the id). */
function pick<T extends object>(all: T, fields: string | undefined, always: string[]): Partial<T> {
  const from = all as Record<string, unknown>;
  // A field may carry modifiers (`reactions.summary(total_count).limit(0)`): its name comes first.
  const want = fields ? fields.split(',').map((f) => f.trim().split(/[.{(]/)[0]!) : Object.keys(all);
  const out: Record<string, unknown> = {};
  for (const k of [...always, ...want]) if (from[k] !== undefined) out[k] = from[k];
  return out as Partial<T>;
}

/**
 * One page of a Graph listing by its `after` cursor (an offset here, opaque to the client), at
 * most `max` (and `limit`, default 25) items; `paging.next` (to `nextUrl`) only when more follow.
 */
function pageOf<T>(all: T[], params: Record<string, string>, max: number, nextUrl: string) {
  const limit = Math.min(Number(params.limit ?? 25) || 25, max);
  const start = params.after ? Number(atob(params.after)) : 0;
  const page = all.slice(start, start + limit);
  const end = start + page.length;
  const paging: GraphPaging = { cursors: { before: btoa(String(start)), after: btoa(String(end)) } };
  if (end < all.length) paging.next = `${nextUrl}?after=${btoa(String(end))}`;
  return { page, paging };
}

/** Graph's refusal of a field the node does not have (error 100), or null when every field of `fields` is one of `known`. */
function unknownField(fields: string | undefined, known: Set<string>, node: string): Response | null {
  const name = topLevelFields(fields ?? '')
    .map((f) => f.split(/[.{(]/)[0]!)
    .find((f) => f && !known.has(f));
  return name
    ? graphError(400, {
        message: coded(100, `Tried accessing nonexisting field (${name}) on node type (${node})`),
        type: 'OAuthException',
        code: 100,
      })
    : null;
}

/** A `fields` list's names at the top level: `a,b{c,d},e` is a, b{c,d} and e. */
function topLevelFields(fields: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of fields) {
    if (ch === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
      continue;
    }
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

function withoutToken(params: Record<string, string>): Record<string, string> {
  const { access_token: _, ...rest } = params;
  return rest;
}

function graphTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, '+0000');
}

function igStatusText(status: string): string {
  return status === 'FINISHED'
    ? 'Finished: Media has been uploaded and it is complete.'
    : status === 'IN_PROGRESS'
      ? 'In Progress: Media is still being processed.'
      : status === 'PUBLISHED'
        ? 'Published: Media has been published.'
        : status;
}
