// A local fake of the parts of Reddit the connector uses: the OAuth API (submit, gallery submit,
// comment, a post's comment tree and /api/morechildren, /api/del, /api/info, media asset leases,
// /api/v1/me, a user's submissions and comments, a subreddit's about, link flairs and post
// requirements), the S3 bucket the leases point at, and the
// token endpoint of www.reddit.com, with Reddit's answer shapes (`{"json": {"errors": [[code, msg,
// field]], "data": …}}`, `{"message", "error"}` for HTTP errors, 200 `{"error": "invalid_grant"}`
// for a rejected refresh token) and X-Ratelimit-* headers. Each route needs its OAuth scope
// (403 insufficient_scope otherwise); the comment tree and morechildren refuse a parameter or
// sort Reddit does not document (stricter than Reddit, which ignores them); /api/del answers {}
// whatever it did, and deletes only the user's own things, as Reddit does.
//
// Reddit publishes no typed SDK: what the connector posts is checked against the schemas of
// platforms/contracts/reddit.ts, written from the API reference
// (https://www.reddit.com/dev/api/#POST_api_submit, #POST_api_comment) and, for the gallery
// submit and the media lease the reference does not list, from the fields PRAW sends. A field
// with a value the documentation does not allow is reported as Reddit reports it with
// api_type=json, 200 and `{"json": {"errors": [[code, message, field]]}}` (BAD_SR_NAME for a
// name no subreddit can have, INVALID_OPTION for an unknown kind, flag or type, TOO_LONG past a
// limit, NO_TEXT for a missing field); a comment on something that is no fullname is refused with
// HTTP 403, as one on a thing Reddit does not have; a lease for a media type Reddit does not take
// with 400. A field the documentation does not list is refused with 400 Bad Request (stricter
// than Reddit, which ignores it) so that a misspelt field fails here instead of being dropped
// silently. The answers the connector reads are built as the contract's answer types
// (SubmitAnswer, GalleryAnswer, CommentAnswer, MoreChildrenAnswer, RefusalAnswer, LeaseAnswer,
// LinkListing, CommentListing, CommentTree, InfoListing, IdentityAnswer, SubredditThing,
// LinkFlairList, PostRequirements, HttpErrorAnswer, TokenAnswer, TokenRefusal), so a field their
// sources do not name, or a value of another type, does not compile here.
import type { PublishRequest } from '../../platforms/types.ts';
import type { TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import {
  type ApiErrorEntry,
  AssetLeaseForm,
  type Comment,
  CommentForm,
  type CommentAnswer,
  type CommentListing,
  type CommentThing,
  type CommentTree,
  GalleryBody,
  type GalleryAnswer,
  type HttpErrorAnswer,
  type IdentityAnswer,
  type InfoListing,
  type LeaseAnswer,
  type Link,
  type LinkFlairList,
  type LinkListing,
  type LinkThing,
  type MoreChildrenAnswer,
  type MoreThing,
  type PostRequirements,
  type RefusalAnswer,
  SubmitForm,
  type SubmitAnswer,
  type SubredditThing,
  type TokenAnswer,
  type TokenRefusal,
} from '../../platforms/contracts/reddit.ts';

/**
 * Reddit's refusal of a request that breaks `schema`, or undefined when it holds: `own` answers
 * first for the fields an endpoint refuses in a way of its own.
 */
function shapeProblem(schema: TSchema, body: unknown, own: (e: ValueError, field: string) => Response | undefined = () => undefined) {
  const e = Value.Errors(schema, body).First();
  if (!e) return undefined;
  // The field Reddit names: the last name of the path (a gallery item's `caption`, not its index).
  const field =
    e.path
      .split('/')
      .filter((s) => s && !/^\d+$/.test(s))
      .pop() ?? 'body';
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return badRequest();
  const answer = own(e, field);
  if (answer) return answer;
  if (field === 'sr') return errors([['BAD_SR_NAME', "This community name isn't recognizable. Check the spelling and try again.", 'sr']]);
  if (e.type === ValueErrorType.ObjectRequiredProperty) return errors([['NO_TEXT', 'we need something here', field]]);
  if (e.type === ValueErrorType.StringMaxLength) return errors([['TOO_LONG', `this is too long (max: ${e.schema.maxLength})`, field]]);
  return errors([['INVALID_OPTION', 'that option is not valid', field]]);
}

/** A comment's thing_id that is no fullname: Reddit's VSubmitParent finds no such thing, 403. */
const commentProblem = (f: Record<string, string>) =>
  shapeProblem(CommentForm, f, (_e, field) => (field === 'thing_id' ? redditJson({ message: 'Forbidden', error: 403 }, 403) : undefined));

/** A lease without its fields is a bad request; one for a media type Reddit does not take says so. */
const leaseProblem = (f: Record<string, string>) =>
  shapeProblem(AssetLeaseForm, f, (e, field) =>
    field === 'mimetype' && e.type !== ValueErrorType.ObjectRequiredProperty
      ? redditJson({ message: 'Bad Request', error: 400, reason: 'unsupported mimetype' }, 400)
      : badRequest(),
  );

export interface FakeRedditPost {
  id: string;
  name: string;
  kind: 'self' | 'link' | 'image' | 'video' | 'gallery';
  subreddit: string;
  title: string;
  text: string;
  url: string | null;
  videoPosterUrl: string | null;
  galleryItems: { media_id: string; caption: string }[];
  author: string;
  createdUtc: number;
  permalink: string;
  /** Media posts appear in listings only after this many more listing requests (Reddit processes them first). */
  pendingPolls: number;
  /** Votes and comments (tests set what readers did). */
  score: number;
  numComments: number;
  /** Comments are locked: /api/comment answers THREAD_LOCKED. */
  locked: boolean;
  /** The link flair template, and the NSFW and spoiler marks, as submitted. */
  flairId?: string | null;
  nsfw?: boolean;
  spoiler?: boolean;
}

export interface FakeRedditComment {
  id: string;
  name: string;
  /** The submission's fullname (t3_…). */
  linkId: string;
  /** The fullname answered (the submission, or a comment under it). */
  parentId: string;
  body: string;
  author: string;
  subreddit: string;
  createdUtc: number;
  permalink: string;
  /** Deleted by its author: shown as [deleted] while replies hang under it, else not at all. */
  deleted: boolean;
}

export interface FakeRedditUpload {
  assetId: string;
  key: string;
  url: string;
  mimeType: string;
  fileName: string;
  size: number;
  fieldOrder: string[];
}

export interface FakeRequest {
  method: string;
  path: string;
  userAgent: string | null;
  authorization: string | null;
}

export type FakeResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';
export type FakeRoute =
  | 'submit'
  | 'gallery'
  | 'comment'
  | 'asset'
  | 'bucket'
  | 'listing'
  | 'comments'
  | 'info'
  | 'me'
  | 'token'
  | 'about'
  | 'flairs'
  | 'requirements'
  | 'search'
  | 'tree'
  | 'morechildren'
  | 'del';

/** A subreddit's settings, as its about page, link flairs and post requirements report them. */
export interface FakeSubreddit {
  /** Text posts refused (NO_SELFS); about says submission_type "link" unless submissionType is set. */
  noSelfs?: boolean;
  /** Posting refused to this user (SUBREDDIT_NOTALLOWED). */
  restricted?: boolean;
  /** Only approved members see it: about answers 403 with reason "private". */
  private?: boolean;
  submissionType?: 'any' | 'link' | 'self';
  allowImages?: boolean;
  allowVideos?: boolean;
  allowGalleries?: boolean;
  over18?: boolean;
  flairs?: { id: string; text: string }[];
  /** The user may not pick link flair here: link_flair_v2 answers 403. */
  flairsHidden?: boolean;
  flairRequired?: boolean;
  titleMin?: number | null;
  titleMax?: number | null;
}

export interface FakeReddit {
  /** Serves both oauth.reddit.com and www.reddit.com paths. */
  url: string;
  posts: FakeRedditPost[];
  comments: FakeRedditComment[];
  uploads: FakeRedditUpload[];
  requests: FakeRequest[];
  /** access token → the user and scopes it acts for. */
  tokens: Map<string, { user: string; scopes: string[] }>;
  refreshTokens: Map<string, { user: string; scopes: string[] }>;
  /** Subreddits that exist, by lower-case name (tests change their settings). */
  subreddits: Record<string, FakeSubreddit>;
  /** The next n requests to `route` (default submit) answer this instead. */
  failNext(n: number, response: FakeResponse, route?: FakeRoute): void;
  expireToken(token: string): void;
  /** Adds an earlier post of the account (e.g. one a lost attempt made). */
  addPost(p: Partial<FakeRedditPost> & Pick<FakeRedditPost, 'subreddit' | 'title'>): FakeRedditPost;
  /** Adds a comment under a submission, or under `parent` (by the account unless author says otherwise). */
  addComment(post: FakeRedditPost, body: string, author?: string, parent?: FakeRedditComment): FakeRedditComment;
  stop(): Promise<void>;
}

export interface FakeRedditOptions {
  /** Subreddits that exist; `noSelfs` ones reject text posts, `restricted` ones reject the user. */
  subreddits?: Record<string, FakeSubreddit>;
  mediaPendingPolls?: number;
  /** Return a new refresh token on every refresh (Reddit does not today). */
  rotateRefreshTokens?: boolean;
  client?: { id: string; secret: string };
}

// The scopes the service's connect flow asks for (web/oauth.ts). flair: reading a subreddit's link
// flairs (GET /r/{sr}/api/link_flair_v2). /api/del needs `edit`, which tests grant where they delete.
const SCOPES = ['submit', 'identity', 'read', 'history', 'flair'];
/** CommentSortMenu's options. */
const COMMENT_SORTS = ['confidence', 'top', 'new', 'controversial', 'old', 'random', 'qa', 'live'];
const TREE_PARAMS = new Set([
  'sort',
  'limit',
  'depth',
  'raw_json',
  'comment',
  'context',
  'showedits',
  'showmore',
  'sr_detail',
  'threaded',
  'truncate',
]);
const MORE_PARAMS = new Set(['api_type', 'link_id', 'children', 'sort', 'limit_children', 'depth', 'id', 'raw_json']);
/** Reddit's MAX_RECURSION: the deepest a comment tree goes. */
const MAX_DEPTH = 10;
/** Comments a tree holds unless limit says otherwise (g.num_comments), and at most (g.max_comments). */
const TREE_DEFAULT = 200;
const TREE_MAX = 500;
/** Comments one /api/morechildren answer holds (CHILD_FETCH_COUNT). */
const MORE_COUNT = 20;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime'];
const MAX_COMMENT = 10_000;
const GENERIC_AGENT = /^(bun|node|undici|python-requests|curl|axios|go-http-client)\b/i;

export async function startFakeReddit(opts: FakeRedditOptions = {}): Promise<FakeReddit> {
  const subreddits: Record<string, FakeSubreddit> = opts.subreddits ?? {
    test: {},
    pics: { noSelfs: true },
    secretclub: { restricted: true },
  };
  const client = opts.client ?? { id: 'client-id', secret: 'client-secret' };
  const posts: FakeRedditPost[] = [];
  const comments: FakeRedditComment[] = [];
  const uploads: FakeRedditUpload[] = [];
  const requests: FakeRequest[] = [];
  const tokens = new Map([['good-token', { user: 'poster', scopes: SCOPES }]]);
  const refreshTokens = new Map([['refresh-1', { user: 'poster', scopes: SCOPES }]]);
  const leases = new Map<string, { fields: { name: string; value: string }[]; assetId: string; fileName: string }>();
  const canned = new Map<FakeRoute, FakeResponse[]>();
  const hanging = new Set<() => void>();
  let seq = 1_000_000;
  const base36 = () => (seq++).toString(36);
  let tokenSeq = 1;
  let clock = Math.floor(Date.now() / 1000);
  const now = () => Math.max((clock += 1), Math.floor(Date.now() / 1000));

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const u = new URL(req.url);
    const path = u.pathname;
    requests.push({ method: req.method, path, userAgent: req.headers.get('user-agent'), authorization: req.headers.get('authorization') });
    const route = routeOf(req.method, path);
    if (!route) return redditJson({ message: 'Not Found', error: 404 }, 404);

    const agent = req.headers.get('user-agent') ?? '';
    if (route !== 'bucket' && (!agent || GENERIC_AGENT.test(agent))) {
      // Reddit throttles requests without a descriptive User-Agent.
      return new Response('<html><body><h1>whoa there, pardner!</h1></body></html>', {
        status: 429,
        headers: { 'Content-Type': 'text/html' },
      });
    }

    let acceptThenHang = false;
    const next = canned.get(route)?.shift();
    if (next === 'hang') return hang(req);
    if (next === 'accept-then-hang') acceptThenHang = true;
    else if (next && typeof next.body === 'string')
      return new Response(next.body, { status: next.status, headers: { 'Content-Type': 'application/xml', ...next.headers } });
    else if (next) return redditJson(next.body ?? { message: `HTTP ${next.status}`, error: next.status }, next.status, next.headers);

    if (route === 'token') return token(req);
    if (route === 'bucket') return bucket(req);

    const auth = authorize(req);
    if (auth instanceof Response) return auth;
    const needed = {
      submit: 'submit',
      gallery: 'submit',
      comment: 'submit',
      asset: 'submit',
      listing: 'history',
      comments: 'history',
      info: 'read',
      me: 'identity',
      about: 'read',
      search: 'read',
      flairs: 'flair',
      requirements: 'submit',
      tree: 'read',
      morechildren: 'read',
      del: 'edit',
    }[route];
    if (!auth.scopes.includes(needed)) {
      return redditJson({ message: 'Forbidden', error: 403 }, 403, {
        'www-authenticate': `Bearer realm="reddit", error="insufficient_scope", scope="${needed}"`,
      });
    }
    let res: Response;
    if (route === 'me') res = redditJson({ name: auth.user, id: 'u1', is_suspended: false } satisfies IdentityAnswer);
    else if (route === 'listing') res = listing(decodeURIComponent(path.split('/')[2]!), Number(u.searchParams.get('limit') ?? 25));
    else if (route === 'comments') res = userComments(decodeURIComponent(path.split('/')[2]!), Number(u.searchParams.get('limit') ?? 25));
    else if (route === 'comment') res = await comment(req, auth.user);
    else if (route === 'info') res = info(u.searchParams.get('id') ?? '');
    else if (route === 'asset') res = await asset(req);
    else if (route === 'about') res = about(decodeURIComponent(path.split('/')[2]!));
    else if (route === 'search') res = redditJson({ kind: 'Listing', data: { after: null, dist: 0, children: [], before: null } });
    else if (route === 'flairs') res = linkFlairs(decodeURIComponent(path.split('/')[2]!));
    else if (route === 'requirements') res = postRequirements(decodeURIComponent(path.split('/')[3]!));
    else if (route === 'tree') res = tree(decodeURIComponent(/\/comments\/([^/]+)/.exec(path)![1]!), u.searchParams);
    else if (route === 'morechildren')
      res = moreChildren(req.method === 'GET' ? u.searchParams : new URLSearchParams((await formOf(req)) ?? {}));
    else if (route === 'del') res = await del(req, auth.user);
    else if (route === 'gallery') res = await gallery(req, auth.user);
    else res = await submit(req, auth.user);
    return acceptThenHang ? hang(req) : res;
  }

  function routeOf(method: string, path: string): FakeRoute | null {
    if (method === 'POST' && path === '/api/submit') return 'submit';
    if (method === 'POST' && path === '/api/submit_gallery_post.json') return 'gallery';
    if (method === 'POST' && path === '/api/media/asset.json') return 'asset';
    if (method === 'POST' && path === '/media-bucket') return 'bucket';
    if (method === 'POST' && path === '/api/v1/access_token') return 'token';
    if (method === 'GET' && path === '/api/v1/me') return 'me';
    if (method === 'GET' && path === '/api/info') return 'info';
    if (method === 'GET' && /^\/user\/[^/]+\/submitted\/?$/.test(path)) return 'listing';
    if (method === 'POST' && path === '/api/comment') return 'comment';
    if (method === 'GET' && /^\/user\/[^/]+\/comments\/?$/.test(path)) return 'comments';
    if (method === 'GET' && /^\/r\/[^/]+\/about\/?$/.test(path)) return 'about';
    if (method === 'GET' && /^\/r\/[^/]+\/api\/link_flair_v2\/?$/.test(path)) return 'flairs';
    if (method === 'GET' && /^\/api\/v1\/[^/]+\/post_requirements\/?$/.test(path)) return 'requirements';
    if (method === 'GET' && /^\/subreddits\/search(\.json)?$/.test(path)) return 'search';
    if (method === 'GET' && /^(\/r\/[^/]+)?\/comments\/[^/]+(\/[^/]*)?\/?$/.test(path)) return 'tree';
    if ((method === 'GET' || method === 'POST') && path === '/api/morechildren') return 'morechildren';
    if (method === 'POST' && path === '/api/del') return 'del';
    return null;
  }

  function authorize(req: Request): { user: string; scopes: string[] } | Response {
    const token = /^bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
    const found = token ? tokens.get(token) : undefined;
    if (found) return found;
    return redditJson({ message: 'Unauthorized', error: 401 }, 401, { 'www-authenticate': 'Bearer realm="reddit", error="invalid_token"' });
  }

  async function submit(req: Request, user: string): Promise<Response> {
    const f = await formOf(req);
    if (!f) return redditJson({ message: 'Bad Request', error: 400 }, 400);
    if (f.api_type !== 'json') {
      // Without api_type=json Reddit answers in its old jQuery format.
      return redditJson({
        jquery: [
          [0, 1, 'call', ['body']],
          [1, 2, 'attr', 'find'],
        ],
        success: false,
      });
    }
    const broken = shapeProblem(SubmitForm, f);
    if (broken) return broken;
    const kind = f.kind;
    if (kind !== 'self' && kind !== 'link' && kind !== 'image' && kind !== 'video')
      return errors([['INVALID_OPTION', 'that option is not valid', 'kind']]);
    const problem = checkCommon(f.sr, f.title) ?? checkKind(kind, f) ?? checkFlair(f.sr!, f.flair_id);
    if (problem) return errors([problem]);
    const sub = subName(f.sr!);
    if (kind === 'link' && f.resubmit !== 'true' && posts.some((p) => p.kind === 'link' && p.url === f.url && p.subreddit === sub)) {
      return errors([['ALREADY_SUB', 'that link has already been submitted', 'url']]);
    }
    const post = create({
      kind,
      subreddit: sub,
      title: f.title!,
      text: f.text ?? '',
      url: f.url ?? null,
      videoPosterUrl: f.video_poster_url ?? null,
      author: user,
      flairId: f.flair_id || null,
      nsfw: f.nsfw === 'true',
      spoiler: f.spoiler === 'true',
    });
    if (kind === 'image' || kind === 'video') {
      return redditJson({
        json: {
          errors: [],
          data: {
            user_submitted_page: `https://www.reddit.com/user/${user}/submitted/`,
            websocket_url: `wss://ws.example/rte_images/${post.id}`,
          },
        },
      } satisfies SubmitAnswer);
    }
    return redditJson({
      json: { errors: [], data: { url: `https://www.reddit.com${post.permalink}`, drafts_count: 0, id: post.id, name: post.name } },
    } satisfies SubmitAnswer);
  }

  /**
   * POST /api/comment: a parent Reddit does not have is refused with HTTP 403 (its VSubmitParent
   * aborts so, "normally 404"); a locked thread with THREAD_LOCKED in json.errors.
   */
  async function comment(req: Request, user: string): Promise<Response> {
    const f = await formOf(req);
    if (!f) return badRequest();
    if (f.api_type !== 'json') return redditJson({ jquery: [[0, 1, 'call', ['body']]], success: false });
    const broken = commentProblem(f);
    if (broken) return broken;
    const thing = f.thing_id ?? '';
    const post = posts.find((p) => p.name === thing);
    const parentComment = comments.find((c) => c.name === thing);
    const link = post ?? posts.find((p) => p.name === parentComment?.linkId);
    if (!link) return redditJson({ message: 'Forbidden', error: 403 }, 403);
    if (link.locked) return errors([['THREAD_LOCKED', 'Comments are locked.', 'parent']]);
    if (parentComment?.deleted) return errors([['DELETED_COMMENT', 'that comment has been deleted', 'parent']]);
    const text = f.text ?? '';
    if (!text.trim()) return errors([['NO_TEXT', 'we need something here', 'text']]);
    if (text.length > MAX_COMMENT) return errors([['TOO_LONG', `this is too long (max: ${MAX_COMMENT})`, 'text']]);
    const c = addComment(link, text, user, thing);
    return redditJson({ json: { errors: [], data: { things: [{ kind: 't1', data: commentData(c) }] } } } satisfies CommentAnswer);
  }

  function addComment(post: FakeRedditPost, body: string, author = 'poster', parentId = post.name): FakeRedditComment {
    const id = base36();
    const c: FakeRedditComment = {
      id,
      name: `t1_${id}`,
      linkId: post.name,
      parentId,
      body,
      author,
      subreddit: post.subreddit,
      createdUtc: now(),
      permalink: `${post.permalink}${id}/`,
      deleted: false,
    };
    comments.push(c);
    post.numComments++;
    return c;
  }

  function commentData(c: FakeRedditComment): Comment {
    return {
      id: c.id,
      name: c.name,
      link_id: c.linkId,
      parent_id: c.parentId,
      body: c.deleted ? '[deleted]' : c.body,
      author: c.deleted ? '[deleted]' : c.author,
      subreddit: c.subreddit,
      permalink: c.permalink,
      created_utc: c.createdUtc,
      score: 1,
      replies: '',
    };
  }

  /** GET /user/{name}/comments: the user's comments, newest first. */
  function userComments(user: string, limit: number): Response {
    const children = comments
      .filter((c) => !c.deleted && c.author.toLowerCase() === user.toLowerCase())
      .sort((a, b) => b.createdUtc - a.createdUtc)
      .slice(0, Math.min(Math.max(limit, 1), 100))
      .map((c): CommentThing => ({ kind: 't1', data: commentData(c) }));
    return redditJson({ kind: 'Listing', data: { after: null, before: null, dist: children.length, children } } satisfies CommentListing);
  }

  async function gallery(req: Request, user: string): Promise<Response> {
    const body: unknown = await req.json().catch(() => undefined);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return badRequest();
    const broken = shapeProblem(GalleryBody, body);
    if (broken) return broken;
    const b = body as GalleryBody;
    const problem = checkCommon(b.sr, b.title) ?? checkFlair(b.sr!, b.flair_id);
    if (problem) return errors([problem]);
    const items = b.items;
    if (items.length < 2 || items.length > 20) return errors([['BAD_GALLERY', 'galleries need between 2 and 20 items', 'items']]);
    const bad = items.find((i) => !uploads.some((x) => x.assetId === i.media_id && IMAGE_TYPES.includes(x.mimeType)));
    if (bad) return errors([['MEDIA_UPLOAD_FAILED', `media ${bad.media_id} is not an uploaded image`, 'items']]);
    const post = create({
      kind: 'gallery',
      subreddit: subName(b.sr!),
      title: b.title!,
      text: b.text ?? '',
      galleryItems: items.map((i) => ({ media_id: i.media_id, caption: i.caption ?? '' })),
      author: user,
      pendingPolls: 0,
      flairId: b.flair_id || null,
      nsfw: b.nsfw === true,
      spoiler: b.spoiler === true,
    });
    return redditJson({ json: { errors: [], data: { url: `https://www.reddit.com/gallery/${post.id}` } } } satisfies GalleryAnswer);
  }

  function checkCommon(sr: string | undefined, title: string | undefined): [string, string, string] | null {
    if (!sr) return ['SUBREDDIT_REQUIRED', 'please enter a subreddit', 'sr'];
    const sub = subreddits[subName(sr)];
    if (!sub) return ['SUBREDDIT_NOEXIST', "that subreddit doesn't exist", 'sr'];
    if (sub.restricted || sub.private) return ['SUBREDDIT_NOTALLOWED', "you aren't allowed to post there.", 'sr'];
    if (!title?.trim()) return ['NO_TEXT', 'we need something here', 'title'];
    if (title.length > 300) return ['TOO_LONG', 'this is too long (max: 300)', 'title'];
    return null;
  }

  /**
   * A flair template id must be one of the subreddit's link flairs (BAD_FLAIR_TEMPLATE_ID); a
   * subreddit that requires flair refuses a post without one (SUBMIT_VALIDATION_FLAIR_REQUIRED).
   */
  function checkFlair(sr: string, flairId: string | undefined): [string, string, string] | null {
    const sub = subreddits[subName(sr)]!;
    if (flairId) {
      if (!(sub.flairs ?? []).some((x) => x.id === flairId)) return ['BAD_FLAIR_TEMPLATE_ID', 'invalid flair template id', 'flair_id'];
      return null;
    }
    if (sub.flairRequired) return ['SUBMIT_VALIDATION_FLAIR_REQUIRED', 'Your post must contain post flair.', 'flair'];
    return null;
  }

  function checkKind(kind: string, f: Record<string, string>): [string, string, string] | null {
    if (kind === 'self' && subreddits[subName(f.sr!)]!.noSelfs) return ['NO_SELFS', "this subreddit doesn't allow text posts", 'sr'];
    if ((f.text ?? '').length > 40_000) return ['TOO_LONG', 'this is too long (max: 40000)', 'text'];
    if (kind === 'link' && !f.url) return ['NO_URL', 'a url is required', 'url'];
    if (kind === 'image' && !uploadAt(f.url, IMAGE_TYPES)) return ['BAD_URL', 'you should check that url', 'url'];
    if (kind === 'video') {
      if (!uploadAt(f.url, VIDEO_TYPES)) return ['BAD_URL', 'you should check that url', 'url'];
      if (!uploadAt(f.video_poster_url, IMAGE_TYPES)) return ['NO_VIDEO_POSTER', 'a video post needs a poster image', 'video_poster_url'];
    }
    return null;
  }

  /**
   * GET /r/{sr}/about: a t5 thing. Reddit sends a name it has no subreddit for to a subreddit
   * search (302 to /subreddits/search.json?q=…), and refuses a private one with 403 reason "private".
   */
  function about(sr: string): Response {
    const name = subName(sr);
    const sub = subreddits[name];
    if (!sub) return new Response(null, { status: 302, headers: { Location: `/subreddits/search.json?q=${encodeURIComponent(name)}` } });
    if (sub.private) return redditJson({ reason: 'private', message: 'Forbidden', error: 403 } satisfies HttpErrorAnswer, 403);
    return redditJson({
      kind: 't5',
      data: {
        id: name,
        display_name: name,
        display_name_prefixed: `r/${name}`,
        name: `t5_${name}`,
        url: `/r/${name}/`,
        subreddit_type: sub.restricted ? 'restricted' : 'public',
        submission_type: sub.submissionType ?? (sub.noSelfs ? 'link' : 'any'),
        allow_images: sub.allowImages ?? true,
        allow_videos: sub.allowVideos ?? true,
        allow_galleries: sub.allowGalleries ?? true,
        over18: sub.over18 ?? false,
        link_flair_enabled: (sub.flairs ?? []).length > 0,
        can_assign_link_flair: !sub.flairsHidden,
        user_is_banned: false,
        user_is_contributor: false,
        user_is_moderator: false,
      },
    } satisfies SubredditThing);
  }

  /** GET /r/{sr}/api/link_flair_v2: the flairs the user may pick, or 403 when they may not pick any. */
  function linkFlairs(sr: string): Response {
    const sub = subreddits[subName(sr)];
    if (!sub) return redditJson({ message: 'Not Found', error: 404 }, 404);
    if (sub.private || sub.flairsHidden) return redditJson({ message: 'Forbidden', error: 403 }, 403);
    return redditJson(
      (sub.flairs ?? []).map((f) => ({
        type: 'text',
        text_editable: false,
        allowable_content: 'all',
        text: f.text,
        max_emojis: 10,
        text_color: 'dark',
        mod_only: false,
        css_class: '',
        richtext: [],
        background_color: '',
        id: f.id,
      })) satisfies LinkFlairList,
    );
  }

  /** GET /api/v1/{sr}/post_requirements: every rule the subreddit may set, null where it sets none. */
  function postRequirements(sr: string): Response {
    const sub = subreddits[subName(sr)];
    if (!sub) return redditJson({ message: 'Not Found', error: 404 }, 404);
    if (sub.private) return redditJson({ reason: 'private', message: 'Forbidden', error: 403 }, 403);
    return redditJson({
      title_regexes: [],
      body_blacklisted_strings: [],
      title_blacklisted_strings: [],
      body_text_max_length: null,
      title_required_strings: [],
      guidelines_text: null,
      gallery_min_items: null,
      domain_blacklist: [],
      domain_whitelist: [],
      title_text_max_length: sub.titleMax ?? null,
      body_restriction_policy: 'none',
      link_restriction_policy: 'none',
      guidelines_display_policy: null,
      body_required_strings: [],
      title_text_min_length: sub.titleMin ?? null,
      gallery_captions_requirement: 'none',
      is_flair_required: sub.flairRequired ?? false,
      gallery_max_items: null,
      gallery_urls_requirement: 'none',
      body_regexes: [],
      link_repost_age: null,
      body_text_min_length: null,
    } satisfies PostRequirements);
  }

  const uploadAt = (url: string | undefined, types: string[]) => !!url && uploads.some((x) => x.url === url && types.includes(x.mimeType));

  async function asset(req: Request): Promise<Response> {
    const f = await formOf(req);
    if (!f) return badRequest();
    const broken = leaseProblem(f);
    if (broken) return broken;
    const { filepath, mimetype } = f as AssetLeaseForm;
    const assetId = `a${base36()}`;
    const key = `rte_images/${assetId}`;
    const fields: LeaseAnswer['args']['fields'] = [
      { name: 'acl', value: 'private' },
      { name: 'key', value: key },
      { name: 'X-Amz-Credential', value: 'AKIAFAKE/20261121/us-east-1/s3/aws4_request' },
      { name: 'X-Amz-Algorithm', value: 'AWS4-HMAC-SHA256' },
      { name: 'X-Amz-Date', value: '20261121T000000Z' },
      { name: 'success_action_status', value: '201' },
      { name: 'content-type', value: mimetype },
      { name: 'x-amz-storage-class', value: 'STANDARD' },
      { name: 'x-amz-meta-ext', value: filepath.split('.').pop() ?? '' },
      { name: 'policy', value: btoa(JSON.stringify({ expiration: new Date(Date.now() + 600_000).toISOString(), key })) },
      { name: 'X-Amz-Signature', value: `sig-${assetId}` },
      { name: 'x-amz-security-token', value: 'fake-session-token' },
    ];
    leases.set(key, { fields, assetId, fileName: filepath });
    return redditJson({
      args: { action: `//127.0.0.1:${server.port}/media-bucket`, fields },
      asset: {
        asset_id: assetId,
        processing_state: 'incomplete',
        payload: { filepath },
        websocket_url: `wss://ws.example/rte_images/${assetId}`,
      },
    } satisfies LeaseAnswer);
  }

  /** S3 POST object: every lease field, unchanged and in order, then the file; no Authorization header. */
  async function bucket(req: Request): Promise<Response> {
    if (req.headers.get('authorization')) return s3Error(400, 'InvalidArgument', 'Unsupported Authorization Type');
    const form = await req.formData().catch(() => null);
    if (!form) return s3Error(400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');
    const names = [...form.keys()];
    const key = form.get('key');
    const lease = typeof key === 'string' ? leases.get(key) : undefined;
    if (!lease) return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", ...]');
    const expected = [...lease.fields.map((f) => f.name), 'file'];
    if (names.join(',') !== expected.join(','))
      return s3Error(400, 'InvalidArgument', `Fields out of order or missing: ${names.join(',')}`);
    if (lease.fields.some((f) => form.get(f.name) !== f.value))
      return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed');
    const file = form.get('file');
    if (!(file instanceof Blob) || file.size === 0)
      return s3Error(400, 'IncorrectNumberOfFilesInPostRequest', 'POST requires exactly one file upload per request.');
    leases.delete(key as string);
    const url = `${base}/media-bucket/${key}`;
    uploads.push({
      assetId: lease.assetId,
      key: key as string,
      url,
      mimeType: lease.fields.find((f) => f.name === 'content-type')!.value,
      fileName: file instanceof File && file.name ? file.name : lease.fileName,
      size: file.size,
      fieldOrder: names,
    });
    const xml = `<?xml version="1.0" encoding="UTF-8"?><PostResponse><Location>${url.replace(/\//g, '%2F')}</Location><Bucket>reddit-uploaded-media</Bucket><Key>${key}</Key><ETag>"etag"</ETag></PostResponse>`;
    return new Response(xml, { status: 201, headers: { 'Content-Type': 'application/xml' } });
  }

  function listing(user: string, limit: number): Response {
    const own = posts.filter((p) => p.author.toLowerCase() === user.toLowerCase());
    const visible = own.filter((p) => {
      if (p.pendingPolls > 0) {
        p.pendingPolls--;
        return false;
      }
      return true;
    });
    const children = visible
      .sort((a, b) => b.createdUtc - a.createdUtc)
      .slice(0, Math.min(Math.max(limit, 1), 100))
      .map((p) => ({ kind: 't3' as const, data: listingData(p) }));
    return redditJson({ kind: 'Listing', data: { after: null, before: null, dist: children.length, children } } satisfies LinkListing);
  }

  /** GET /api/info?id=: the things named (at most 100 fullnames), in a Listing; unknown ones left out. */
  function info(ids: string): Response {
    const names = ids.split(',').filter(Boolean);
    if (names.length > 100) return redditJson({ message: 'Bad Request', error: 400 }, 400);
    const children = names.flatMap((n): (LinkThing | CommentThing)[] => {
      const p = posts.find((x) => x.name === n);
      if (p) return [{ kind: 't3', data: listingData(p) }];
      const c = comments.find((x) => x.name === n);
      return c ? [{ kind: 't1', data: commentData(c) }] : [];
    });
    return redditJson({ kind: 'Listing', data: { after: null, before: null, dist: children.length, children } } satisfies InfoListing);
  }

  /** A comment as listed: without raw_json=1 Reddit escapes &, < and > in its text (its legacy HTML-safe JSON). */
  function shown(c: FakeRedditComment, q: URLSearchParams) {
    const d = commentData(c);
    if (q.get('raw_json') === '1') return d;
    return { ...d, body: d.body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') };
  }

  /** A comment's replies in sort order; a deleted one only while replies hang under it. */
  function repliesTo(parent: string, sort: string): FakeRedditComment[] {
    const kids = comments.filter((c) => c.parentId === parent && (!c.deleted || hasLiveReplies(c)));
    return sort === 'new' ? kids.sort((a, b) => b.createdUtc - a.createdUtc) : kids.sort((a, b) => a.createdUtc - b.createdUtc);
  }

  function hasLiveReplies(c: FakeRedditComment): boolean {
    return comments.some((x) => x.parentId === c.name && (!x.deleted || hasLiveReplies(x)));
  }

  const listingOf = <T>(children: T[]) => ({
    kind: 'Listing' as const,
    data: { after: null, dist: null, modhash: '', children, before: null },
  });

  function moreStub(parent: string, depth: number, cut: FakeRedditComment[]): MoreThing {
    const count = cut.reduce((n, c) => n + 1 + descendants(c).length, 0);
    return { kind: 'more', data: { count, name: cut[0]!.name, id: cut[0]!.id, parent_id: parent, depth, children: cut.map((c) => c.id) } };
  }

  function descendants(c: FakeRedditComment): FakeRedditComment[] {
    return comments.filter((x) => x.parentId === c.name).flatMap((x) => [x, ...descendants(x)]);
  }

  /**
   * GET /comments/{article}: [the post's Listing, the comment tree's Listing]. A tree holds at
   * most `limit` comments (depth first), the rest of a parent's replies named by a `more` stub;
   * below `depth` (at most 10 levels) a stub without ids ("continue this thread") stands for them.
   * A post Reddit does not have is 404.
   */
  function tree(article: string, q: URLSearchParams): Response {
    for (const k of q.keys())
      if (!TREE_PARAMS.has(k)) return redditJson({ message: 'Bad Request', error: 400, reason: `unknown parameter ${k}` }, 400);
    const sort = q.get('sort') ?? 'confidence';
    if (!COMMENT_SORTS.includes(sort)) return redditJson({ message: 'Bad Request', error: 400, reason: `unknown sort ${sort}` }, 400);
    const post = posts.find((p) => p.id === article);
    if (!post) return redditJson({ message: 'Not Found', error: 404 }, 404);
    const limit = Number(q.get('limit'));
    let budget = Math.min(limit > 0 ? limit : TREE_DEFAULT, TREE_MAX);
    const asked = Number(q.get('depth'));
    const maxDepth = asked > 0 && asked < MAX_DEPTH ? asked : MAX_DEPTH;
    const build = (parent: string, depth: number): (CommentThing | MoreThing)[] => {
      const kids = repliesTo(parent, sort);
      if (!kids.length) return [];
      if (depth >= maxDepth) return [{ kind: 'more', data: { count: 0, name: 't1__', id: '_', parent_id: parent, depth, children: [] } }];
      const out: (CommentThing | MoreThing)[] = [];
      const cut: FakeRedditComment[] = [];
      for (const k of kids) {
        if (budget <= 0) {
          cut.push(k);
          continue;
        }
        budget--;
        const replies = build(k.name, depth + 1);
        out.push({ kind: 't1', data: { ...shown(k, q), depth, replies: replies.length ? listingOf(replies) : '' } });
      }
      if (cut.length) out.push(moreStub(parent, depth, cut));
      return out;
    };
    const children = build(post.name, 0);
    return redditJson([listingOf<LinkThing>([{ kind: 't3', data: listingData(post) }]), listingOf(children)] satisfies CommentTree);
  }

  /**
   * /api/morechildren (GET or POST): the comments named, each followed by its replies, flat, at
   * most MORE_COUNT; what did not fit is named by one `more` stub. A link_id Reddit does not have
   * is 403 (its validator finds no link). Without api_type=json the answer is jQuery's.
   */
  function moreChildren(q: URLSearchParams): Response {
    for (const k of q.keys())
      if (!MORE_PARAMS.has(k)) return redditJson({ message: 'Bad Request', error: 400, reason: `unknown parameter ${k}` }, 400);
    const sort = q.get('sort') ?? 'confidence';
    if (!COMMENT_SORTS.includes(sort)) return redditJson({ message: 'Bad Request', error: 400, reason: `unknown sort ${sort}` }, 400);
    const link = posts.find((p) => p.name === q.get('link_id'));
    if (!link) return redditJson({ message: 'Forbidden', error: 403 }, 403);
    if (q.get('api_type') !== 'json') return redditJson({ jquery: [[0, 1, 'call', ['body']]], success: false });
    const ids = (q.get('children') ?? '').split(',').filter(Boolean);
    const flat: FakeRedditComment[] = [];
    const walk = (c: FakeRedditComment) => {
      flat.push(c);
      for (const r of repliesTo(c.name, sort)) walk(r);
    };
    for (const id of ids) {
      const c = comments.find((x) => x.id === id && x.linkId === link.name && (!x.deleted || hasLiveReplies(x)));
      if (c && !flat.includes(c)) walk(c);
    }
    const page = flat.slice(0, MORE_COUNT);
    const things: (CommentThing | MoreThing)[] = page.map((c): CommentThing => ({ kind: 't1', data: { ...shown(c, q), replies: '' } }));
    const rest = flat.slice(MORE_COUNT).filter((c) => !flat.slice(MORE_COUNT).some((x) => x.name === c.parentId));
    if (rest.length) things.push(moreStub(rest[0]!.parentId, 0, rest));
    return redditJson({ json: { errors: [], data: { things } } } satisfies MoreChildrenAnswer);
  }

  /** POST /api/del: {} whatever happened; only the user's own comment is deleted (Reddit's VByNameIfAuthor). */
  async function del(req: Request, user: string): Promise<Response> {
    const f = await formOf(req);
    const c = comments.find((x) => x.name === f?.id);
    if (c && c.author.toLowerCase() === user.toLowerCase() && !c.deleted) {
      c.deleted = true;
      const post = posts.find((p) => p.name === c.linkId);
      if (post) post.numComments--;
    }
    return redditJson({});
  }

  function listingData(p: FakeRedditPost): Link {
    return {
      id: p.id,
      name: p.name,
      title: p.title,
      subreddit: p.subreddit,
      subreddit_name_prefixed: `r/${p.subreddit}`,
      author: p.author,
      permalink: p.permalink,
      url: p.kind === 'self' ? `https://www.reddit.com${p.permalink}` : (p.url ?? `https://www.reddit.com/gallery/${p.id}`),
      created_utc: p.createdUtc,
      is_self: p.kind === 'self',
      is_video: p.kind === 'video',
      selftext: p.text,
      score: p.score,
      ups: Math.max(p.score, 0),
      num_comments: p.numComments,
    };
  }

  async function token(req: Request): Promise<Response> {
    const basic = /^basic\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
    if (!basic || atob(basic) !== `${client.id}:${client.secret}`) return redditJson({ message: 'Unauthorized', error: 401 }, 401);
    const f = await formOf(req);
    if (f?.grant_type !== 'refresh_token') return redditJson({ error: 'unsupported_grant_type' } satisfies TokenRefusal, 400);
    const grant = f.refresh_token ? refreshTokens.get(f.refresh_token) : undefined;
    if (!grant) return redditJson({ error: 'invalid_grant' } satisfies TokenRefusal);
    const access = `access-${tokenSeq++}`;
    tokens.set(access, grant);
    const body: TokenAnswer = { access_token: access, token_type: 'bearer', expires_in: 86400, scope: grant.scopes.join(' ') };
    if (opts.rotateRefreshTokens) {
      refreshTokens.delete(f.refresh_token!);
      const next = `refresh-${tokenSeq++}`;
      refreshTokens.set(next, grant);
      body.refresh_token = next;
    }
    return redditJson(body);
  }

  function create(p: Partial<FakeRedditPost> & Pick<FakeRedditPost, 'kind' | 'subreddit' | 'title' | 'author'>): FakeRedditPost {
    const id = base36();
    const slug = p.title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 50);
    const post: FakeRedditPost = {
      id,
      name: `t3_${id}`,
      text: '',
      url: null,
      videoPosterUrl: null,
      galleryItems: [],
      createdUtc: now(),
      permalink: `/r/${p.subreddit}/comments/${id}/${slug}/`,
      pendingPolls: p.kind === 'image' || p.kind === 'video' ? (opts.mediaPendingPolls ?? 1) : 0,
      score: 1,
      numComments: 0,
      locked: false,
      ...p,
    };
    posts.push(post);
    return post;
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(redditJson({ message: 'gave up', error: 504 }, 504));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    posts,
    comments,
    uploads,
    requests,
    tokens,
    refreshTokens,
    subreddits,
    failNext(n, response, route = 'submit') {
      const list = canned.get(route) ?? [];
      for (let i = 0; i < n; i++) list.push(response);
      canned.set(route, list);
    },
    expireToken(t) {
      tokens.delete(t);
    },
    addPost(p) {
      return create({ kind: 'self', author: 'poster', ...p, subreddit: subName(p.subreddit) });
    },
    addComment: (post, body, author, parent) => addComment(post, body, author, parent?.name ?? post.name),
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

function badRequest(): Response {
  return redditJson({ message: 'Bad Request', error: 400 }, 400);
}

function errors(list: ApiErrorEntry[]): Response {
  return redditJson({ json: { errors: list } } satisfies RefusalAnswer);
}

function redditJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'Content-Type': 'application/json; charset=UTF-8',
      'x-ratelimit-used': '1',
      'x-ratelimit-remaining': '99.0',
      'x-ratelimit-reset': '420',
      ...headers,
    },
  });
}

function s3Error(status: number, code: string, message: string): Response {
  const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>fake</RequestId></Error>`;
  return new Response(xml, { status, headers: { 'Content-Type': 'application/xml' } });
}

async function formOf(req: Request): Promise<Record<string, string> | null> {
  if (!(req.headers.get('content-type') ?? '').includes('application/x-www-form-urlencoded')) return null;
  return Object.fromEntries(new URLSearchParams(await req.text()));
}

const subName = (sr: string) => sr.replace(/^\/?r\//i, '').toLowerCase();

/** A publish of a self post to r/test, as the activity hands it to the connector; `over` changes any part. */
export function redditRequest(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Body of the post, in **markdown**.',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token' },
    reddit: { subreddit: 'test', title: 'A title for r/test' },
    ...over,
  };
}
