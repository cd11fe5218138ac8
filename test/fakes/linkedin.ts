// A local fake of the LinkedIn REST API parts the connector uses: the Posts API (create, get one
// and the author finder), the Comments API (create under a post or, with parentComment, under a
// comment; list a post's comments or a comment's replies; delete), the Images, Videos and
// Documents upload flows with their upload URLs, and the OAuth token endpoint. Rest.li error
// bodies, version and protocol headers, member/organization permissions (reading comments needs
// r_organization_social for an organization's post, r_member_social for a member's; deleting
// one, its own actor), little-text truncation and DUPLICATE_POST behave as LinkedIn's do.
// LinkedIn publishes no typed SDK: the post, upload and comment create bodies are checked against
// the TypeBox schemas of platforms/contracts/linkedin.ts, written from the documentation pages,
// and one that breaks them is refused as LinkedIn refuses it, 422 with the field path; every
// answer (posts, uploads and their states, comments, social actions, errors, tokens) is built as
// that file's answer types.
import type { PublishRequest } from '../../platforms/types.ts';
import type { TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { API_VERSIONS } from '../../platforms/api-versions.ts';
import {
  type AccessTokenAnswer,
  type Comment,
  CommentBody,
  type CommentsList,
  type Document,
  FinalizeVideoUploadBody,
  type Image,
  type InitializeDocumentUploadAnswer,
  InitializeDocumentUploadBody,
  type InitializeImageUploadAnswer,
  InitializeImageUploadBody,
  type InitializeVideoUploadAnswer,
  InitializeVideoUploadBody,
  type Post,
  PostBody,
  type PostContent,
  type PostsList,
  type RestliError,
  type SocialActions,
  type Video,
} from '../../platforms/contracts/linkedin.ts';

export interface FakeLinkedInPost {
  urn: string;
  author: string;
  /** As sent (little-text escaped), which is what the finder returns. */
  commentary: string;
  /** What members see: unescaped, and cut at the first unescaped reserved character. */
  rendered: string;
  /** As received, once PostBody's schema held (so a PostContent). */
  content: Record<string, unknown> | null;
  visibility: Post['visibility'];
  token: string;
  createdAt: number;
  /** Reactions and comments members made (tests set them); socialActions reports them. */
  likes: number;
  comments: number;
}

/** A comment under a post (socialActions/{post urn}/comments). */
export interface FakeLinkedInComment {
  id: string;
  /** urn:li:comment:({post urn},{id}). */
  urn: string;
  /** The post commented on. */
  object: string;
  actor: string;
  /** As sent: comments are text with attributes, not little text. */
  text: string;
  createdAt: number;
  /** The comment this one answers (a reply); null for a comment on the post. */
  parentComment: string | null;
}

export interface FakeLinkedInAsset {
  urn: string;
  kind: 'images' | 'videos' | 'documents';
  owner: string;
  status: 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE' | 'PROCESSING_FAILED';
  size: number;
  /** Video: the part byte ranges and the ETag each part upload returned. */
  parts: { firstByte: number; lastByte: number; etag: string | null; authorization: string | null }[];
  pendingPolls: number;
  uploadAuthorization: string | null;
}

export interface FakeLinkedInRequest {
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
}

export interface FakeLinkedInToken {
  member: string;
  scopes: Set<string>;
  state: 'valid' | 'expired' | 'revoked';
}

/** A POST /rest/posts that reached LinkedIn with a JSON body (its commentary as shown), refused as a duplicate or not. */
export interface FakeLinkedInSend {
  rendered: string;
  at: number;
}

export type FakeLinkedInRoute =
  | 'posts'
  | 'findPosts'
  | 'socialActions'
  | 'comment'
  | 'comments'
  | 'deleteComment'
  | 'post'
  | 'initialize'
  | 'finalize'
  | 'upload'
  | 'asset'
  | 'token';
export type FakeLinkedInResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';

export interface FakeLinkedInOptions {
  /** LinkedIn-Version values the fake serves (default: the connector's, platforms/api-versions.ts). */
  versions?: string[];
  /** Bytes per video upload part (LinkedIn uses 4 MiB). */
  videoPartBytes?: number;
  /** GET /rest/videos answers PROCESSING this many times after finalize (default 1). */
  videoProcessingPolls?: number;
  /** Videos end in PROCESSING_FAILED with this reason. */
  failVideoProcessing?: string;
  /** A post answers 404 to its first this many comments, as a post published a moment ago does. */
  commentsUnavailableFor?: number;
}

export interface FakeLinkedIn {
  url: string;
  member: string;
  organization: string;
  clientId: string;
  clientSecret: string;
  posts: FakeLinkedInPost[];
  comments: FakeLinkedInComment[];
  assets: FakeLinkedInAsset[];
  requests: FakeLinkedInRequest[];
  /** Every publish request received, in order: a re-send shows here even when LinkedIn answers DUPLICATE_POST. */
  sends: FakeLinkedInSend[];
  tokens: Map<string, FakeLinkedInToken>;
  validRefreshTokens: Set<string>;
  failNext(n: number, response: FakeLinkedInResponse, route?: FakeLinkedInRoute): void;
  addPost(author: string, commentary: string, opts?: { createdAt?: Date }): FakeLinkedInPost;
  /** A comment someone made under a post, or a reply to `parent`. */
  addComment(object: string, actor: string, text: string, parent?: FakeLinkedInComment): FakeLinkedInComment;
  count(route: FakeLinkedInRoute): number;
  stop(): Promise<void>;
}

const RESERVED = /[\\|{}@[\]()<>#*_~]/;

/** LinkedIn's 422 for the first way a body breaks its schema: the Rest.li field path, its description and code. */
function inputError(e: ValueError): Response {
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return fieldError(e.path, 'unrecognized field found but not allowed', 'UNRECOGNIZED_FIELD');
    case ValueErrorType.ObjectRequiredProperty:
      return fieldError(e.path, 'field is required but not found and has no default value', 'FIELD_REQUIRED');
    case ValueErrorType.Union: {
      const allowed = (e.schema.anyOf as { const?: unknown }[]).map((x) => x.const);
      return fieldError(e.path, `${JSON.stringify(e.value)} is not one of ${allowed.join(', ')}`, 'INVALID_VALUE');
    }
    default:
      return fieldError(e.path, e.message, 'INVALID_VALUE');
  }
}
/** The 422 for a body that breaks `schema`, or null when it holds. */
function schemaError(schema: TSchema, body: unknown): Response | null {
  const wrong = Value.Errors(schema, body).First();
  return wrong ? inputError(wrong) : null;
}

const MAX_COMMENTARY = 3000;
/** The initializeUpload body of each upload kind. */
const INITIALIZE: Record<FakeLinkedInAsset['kind'], TSchema> = {
  images: InitializeImageUploadBody,
  videos: InitializeVideoUploadBody,
  documents: InitializeDocumentUploadBody,
};

export async function startFakeLinkedIn(opts: FakeLinkedInOptions = {}): Promise<FakeLinkedIn> {
  const member = 'urn:li:person:8675309abc';
  const organization = 'urn:li:organization:5515715';
  const clientId = 'fake-li-client';
  const clientSecret = 'fake-li-secret';
  const versions = new Set(opts.versions ?? [API_VERSIONS.LINKEDIN.version]);
  const partBytes = opts.videoPartBytes ?? 4 * 1024 * 1024;
  const posts: FakeLinkedInPost[] = [];
  const comments: FakeLinkedInComment[] = [];
  /** 404s each post has given to comments so far (commentsUnavailableFor). */
  const unavailable = new Map<string, number>();
  const assets: FakeLinkedInAsset[] = [];
  const requests: FakeLinkedInRequest[] = [];
  const sends: FakeLinkedInSend[] = [];
  const tokens = new Map<string, FakeLinkedInToken>([
    ['good-token', { member, scopes: new Set(['w_member_social']), state: 'valid' }],
    ['org-token', { member, scopes: new Set(['w_member_social', 'w_organization_social', 'r_organization_social']), state: 'valid' }],
  ]);
  const refreshIssued = Date.now();
  const validRefreshTokens = new Set(['li-refresh-1']);
  const canned = new Map<FakeLinkedInRoute, FakeLinkedInResponse[]>();
  const counts = new Map<FakeLinkedInRoute, number>();
  const hanging = new Set<() => void>();
  let serial = 7_400_000_000_000_000_000n;
  const next = () => String(serial++);
  let tokenSerial = 1;

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const u = new URL(req.url);
    const path = u.pathname;
    const method = req.method;
    requests.push({ method, path, search: u.search, headers: Object.fromEntries(req.headers) });

    const route = routeOf(method, path, u.searchParams);
    if (!route) return restError(404, `No virtual resource found`, { code: 'RESOURCE_NOT_FOUND' });
    counts.set(route, (counts.get(route) ?? 0) + 1);

    let acceptThenHang = false;
    const canned_ = canned.get(route)?.shift();
    if (canned_ === 'hang') return hang(req);
    if (canned_ === 'accept-then-hang') acceptThenHang = true;
    else if (canned_)
      return json(canned_.body ?? { status: canned_.status, message: `HTTP ${canned_.status}` }, canned_.status, canned_.headers);

    if (route === 'token') return token(req);
    if (route === 'upload') return upload(req, path);

    const bad = checkVersion(req);
    if (bad) return bad;
    const auth = authenticate(req);
    if (auth instanceof Response) return auth;
    const [bearer, tok] = auth;

    const kind = /^\/rest\/(images|videos|documents)/.exec(path)?.[1] as FakeLinkedInAsset['kind'] | undefined;
    switch (route) {
      case 'initialize':
        return initialize(req, kind!, tok);
      case 'finalize':
        return finalize(req);
      case 'asset':
        return showAsset(kind!, decodeURIComponent(path.split('/')[3] ?? ''), tok);
      case 'findPosts':
        return findPosts(u.searchParams, tok);
      case 'socialActions':
        return socialActions(decodeURIComponent(path.split('/')[3] ?? ''));
      case 'comments':
        return listComments(decodeURIComponent(path.split('/')[3] ?? ''), u.searchParams, tok);
      case 'deleteComment':
        return deleteComment(
          decodeURIComponent(path.split('/')[3] ?? ''),
          decodeURIComponent(path.split('/')[5] ?? ''),
          u.searchParams,
          tok,
        );
      case 'post':
        return showPost(decodeURIComponent(path.split('/')[3] ?? ''), tok);
      case 'comment': {
        const urn = decodeURIComponent(path.split('/')[3] ?? '');
        if (!acceptThenHang) return createComment(req, urn, tok);
        await createComment(req, urn, tok);
        return hang(req);
      }
      case 'posts': {
        if (!acceptThenHang) return createPost(req, bearer, tok);
        await createPost(req, bearer, tok);
        return hang(req);
      }
    }
  }

  function routeOf(method: string, path: string, q: URLSearchParams): FakeLinkedInRoute | null {
    if (method === 'POST' && path === '/oauth/v2/accessToken') return 'token';
    if (method === 'PUT' && path.startsWith('/upload/')) return 'upload';
    if (method === 'POST' && path === '/rest/posts') return 'posts';
    if (method === 'GET' && path === '/rest/posts' && q.get('q') === 'author') return 'findPosts';
    if (method === 'GET' && /^\/rest\/socialActions\/[^/]+$/.test(path)) return 'socialActions';
    if (method === 'POST' && /^\/rest\/socialActions\/[^/]+\/comments$/.test(path)) return 'comment';
    if (method === 'GET' && /^\/rest\/socialActions\/[^/]+\/comments$/.test(path)) return 'comments';
    if (method === 'DELETE' && /^\/rest\/socialActions\/[^/]+\/comments\/[^/]+$/.test(path)) return 'deleteComment';
    if (method === 'GET' && /^\/rest\/posts\/[^/]+$/.test(path)) return 'post';
    if (method === 'POST' && /^\/rest\/(images|videos|documents)$/.test(path) && q.get('action') === 'initializeUpload')
      return 'initialize';
    if (method === 'POST' && path === '/rest/videos' && q.get('action') === 'finalizeUpload') return 'finalize';
    if (method === 'GET' && /^\/rest\/(images|videos|documents)\/[^/]+$/.test(path)) return 'asset';
    return null;
  }

  /** GET /rest/socialActions/{urn}: the post's likes and comments summaries (its URN URL-encoded, Rest.li 2.0). */
  function socialActions(urn: string): Response {
    const post = posts.find((p) => p.urn === urn);
    if (!post) return restError(404, `Not enough permissions to access: socialActions.GET.20260901 for ${urn}`);
    const answer: SocialActions = {
      target: post.urn,
      likesSummary: { totalLikes: post.likes, likedByCurrentUser: false, aggregatedTotalLikes: post.likes },
      commentsSummary: { totalFirstLevelComments: post.comments, aggregatedTotalComments: post.comments },
    };
    return json(answer);
  }

  /**
   * POST /rest/socialActions/{post urn}/comments: 201 with the comment id in x-restli-id and the
   * comment in the body. A post LinkedIn does not have answers 404, as does one published a
   * moment ago (commentsUnavailableFor). On a comment's URN it is a reply: parentComment must name
   * that comment and object its post; a comment LinkedIn does not have answers 404.
   */
  async function createComment(req: Request, urn: string, tok: FakeLinkedInToken): Promise<Response> {
    if (urn.startsWith('urn:li:comment:')) return createReply(req, urn, tok);
    const raw = await readJson(req);
    if (!raw) return restError(400, 'Invalid JSON in the request body');
    const broken = schemaError(CommentBody, raw);
    if (broken) return broken;
    const body = raw as CommentBody;
    const actor = body.actor;
    const text = body.message.text;
    if (!text.trim()) return fieldError('/message/text', 'field is required but not found and has no default value', 'FIELD_REQUIRED');
    // Stricter than LinkedIn, which also takes the post's activity URN as the object.
    if (body.object !== urn) return fieldError('/object', `object must be the entity commented on (${urn})`, 'INVALID_VALUE');
    if (body.parentComment !== undefined) return fieldError('/parentComment', 'parentComment is for nested comments only', 'INVALID_VALUE');
    if (!mayActAs(tok, actor, true)) {
      return restError(403, 'Not enough permissions to access: partnerApiSocialActions.CREATE.20260901', {
        code: 'ACCESS_DENIED',
        serviceErrorCode: 100,
      });
    }
    const post = posts.find((p) => p.urn === urn);
    const refused = unavailable.get(urn) ?? 0;
    if (!post || refused < (opts.commentsUnavailableFor ?? 0)) {
      if (post) unavailable.set(urn, refused + 1);
      return restError(404, 'Unable to obtain activity');
    }
    const c = addComment(urn, actor, text);
    return json(commentJson(c), 201, { 'x-restli-id': c.id, 'x-linkedin-id': c.id });
  }

  /** A reply: POST /rest/socialActions/{comment urn}/comments with parentComment that comment. */
  async function createReply(req: Request, urn: string, tok: FakeLinkedInToken): Promise<Response> {
    const raw = await readJson(req);
    if (!raw) return restError(400, 'Invalid JSON in the request body');
    const broken = schemaError(CommentBody, raw);
    if (broken) return broken;
    const body = raw as CommentBody;
    const actor = body.actor;
    const text = body.message.text;
    if (!text.trim()) return fieldError('/message/text', 'field is required but not found and has no default value', 'FIELD_REQUIRED');
    if (!mayActAs(tok, actor, true)) {
      return restError(403, 'Not enough permissions to access: partnerApiSocialActions.CREATE.20260901', {
        code: 'ACCESS_DENIED',
        serviceErrorCode: 100,
      });
    }
    const parent = comments.find((c) => c.urn === urn);
    if (!parent) return restError(404, `Comment ${urn} not found`, { code: 'NOT_FOUND' });
    if (body.parentComment !== urn)
      return fieldError('/parentComment', `parentComment must be the comment answered (${urn})`, 'INVALID_VALUE');
    if (body.object !== parent.object)
      return fieldError('/object', `object must be the post commented on (${parent.object})`, 'INVALID_VALUE');
    const c = addComment(parent.object, actor, text, parent);
    return json(commentJson(c), 201, { 'x-restli-id': c.id, 'x-linkedin-id': c.id });
  }

  /** What reading the comments on `urn` (a post, or a comment of it) takes: the post's author's read permission. */
  function readable(urn: string, tok: FakeLinkedInToken): FakeLinkedInPost | null | Response {
    const object = urn.startsWith('urn:li:comment:') ? comments.find((c) => c.urn === urn)?.object : urn;
    const post = posts.find((p) => p.urn === object);
    if (!tok.scopes.has('r_member_social') && !tok.scopes.has('r_organization_social')) return denied('GET_ALL');
    if (post && !mayActAs(tok, post.author, false)) return denied('GET_ALL');
    return post ?? null;
  }

  /**
   * GET /rest/socialActions/{urn}/comments?start&count: a post's comments (not the replies), or a
   * comment's replies, oldest first. Only start and count are taken (stricter than Rest.li, which
   * ignores others), count at most 100.
   */
  function listComments(urn: string, q: URLSearchParams, tok: FakeLinkedInToken): Response {
    const post = readable(urn, tok);
    if (post instanceof Response) return post;
    for (const k of q.keys())
      if (k !== 'start' && k !== 'count') return restError(400, `Query parameter ${k} is not allowed`, { code: 'ILLEGAL_ARGUMENT' });
    if (!post) return restError(404, 'Unable to obtain activity');
    const start = Number(q.get('start') ?? '0');
    const count = Number(q.get('count') ?? '10');
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 1 || count > 100) {
      return restError(400, 'start must be 0 or more and count 1 to 100', { code: 'ILLEGAL_ARGUMENT' });
    }
    const nested = urn.startsWith('urn:li:comment:');
    const all = comments.filter((c) => (nested ? c.parentComment === urn : c.object === urn && !c.parentComment));
    const answer: CommentsList = {
      paging: { start, count, total: all.length, links: [] },
      elements: all.slice(start, start + count).map(commentJson),
    };
    return json(answer);
  }

  /**
   * DELETE /rest/socialActions/{target}/comments/{id}?actor=: 204. The target is what the comment
   * answers (the post, or the parent comment of a reply); a comment not there is 404. The actor
   * (the member when not given) must be the comment's and one the token acts as (403 otherwise).
   * A comment's replies go with it.
   */
  function deleteComment(target: string, id: string, q: URLSearchParams, tok: FakeLinkedInToken): Response {
    for (const k of q.keys()) if (k !== 'actor') return restError(400, `Query parameter ${k} is not allowed`, { code: 'ILLEGAL_ARGUMENT' });
    const c = comments.find((x) => x.id === id && (x.parentComment ? x.parentComment === target : x.object === target));
    if (!c) return restError(404, `Comment ${id} not found on ${target}`, { code: 'NOT_FOUND' });
    const actor = q.get('actor') ?? tok.member;
    if (!mayActAs(tok, actor, true) || c.actor !== actor) return denied('DELETE');
    for (let i = comments.length - 1; i >= 0; i--) {
      if (comments[i] === c || comments[i]!.parentComment === c.urn) comments.splice(i, 1);
    }
    const post = posts.find((p) => p.urn === c.object);
    if (post) post.comments--;
    return new Response(null, { status: 204 });
  }

  /** GET /rest/posts/{urn}: the post, for its author's read permission; 404 when LinkedIn has none. */
  function showPost(urn: string, tok: FakeLinkedInToken): Response {
    const p = posts.find((x) => x.urn === urn);
    if (!p) return restError(404, `Post ${urn} not found`, { code: 'NOT_FOUND' });
    if (!mayActAs(tok, p.author, false)) return denied('GET');
    return json(postJson(p));
  }

  /** A post as LinkedIn reads it back: its commentary as sent (little-text escaped). */
  function postJson(p: FakeLinkedInPost): Post {
    return {
      id: p.urn,
      author: p.author,
      commentary: p.commentary,
      visibility: p.visibility,
      lifecycleState: 'PUBLISHED',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      isReshareDisabledByAuthor: false,
      createdAt: p.createdAt,
      publishedAt: p.createdAt,
      lastModifiedAt: p.createdAt,
      ...(p.content ? { content: p.content as PostContent } : {}),
    };
  }

  const denied = (method: string) =>
    restError(403, `Not enough permissions to access: partnerApiSocialActions.${method}.20260901`, {
      code: 'ACCESS_DENIED',
      serviceErrorCode: 100,
    });

  function commentJson(c: FakeLinkedInComment): Comment {
    const stamp = { actor: c.actor, time: c.createdAt };
    const replies = comments.filter((x) => x.parentComment === c.urn).length;
    return {
      id: c.id,
      commentUrn: c.urn,
      actor: c.actor,
      object: c.object,
      ...(c.parentComment ? { parentComment: c.parentComment } : {}),
      message: { text: c.text, attributes: [] },
      created: stamp,
      lastModified: stamp,
      likesSummary: { totalLikes: 0, likedByCurrentUser: false, aggregatedTotalLikes: 0 },
      commentsSummary: { totalFirstLevelComments: replies, aggregatedTotalComments: replies },
    };
  }

  function addComment(object: string, actor: string, text: string, parent?: FakeLinkedInComment): FakeLinkedInComment {
    const id = next();
    const c: FakeLinkedInComment = {
      id,
      urn: `urn:li:comment:(${object},${id})`,
      object,
      actor,
      text,
      createdAt: Date.now(),
      parentComment: parent?.urn ?? null,
    };
    comments.push(c);
    const post = posts.find((p) => p.urn === object);
    if (post) post.comments++;
    return c;
  }

  function checkVersion(req: Request): Response | null {
    const v = req.headers.get('linkedin-version');
    if (!v) {
      return restError(400, 'A version must be present. Please specify a version by adding the LinkedIn-Version header.', {
        code: 'VERSION_MISSING',
      });
    }
    if (!versions.has(v)) return restError(426, `Requested version ${v} is not active`, { code: 'NONEXISTENT_VERSION' });
    // Stricter than LinkedIn, which misreads 1.0-encoded URNs in query strings and bodies instead.
    if (req.headers.get('x-restli-protocol-version') !== '2.0.0') return restError(400, 'X-Restli-Protocol-Version 2.0.0 is required');
    return null;
  }

  function authenticate(req: Request): [string, FakeLinkedInToken] | Response {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim() ?? '';
    const tok = tokens.get(bearer);
    if (!tok) return restError(401, 'Invalid access token', { serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN' });
    if (tok.state === 'revoked') {
      return restError(401, 'The token used in the request has been revoked by the user', {
        serviceErrorCode: 65601,
        code: 'REVOKED_ACCESS_TOKEN',
      });
    }
    if (tok.state === 'expired') {
      return restError(401, 'The token used in the request has expired', { serviceErrorCode: 65602, code: 'EXPIRED_ACCESS_TOKEN' });
    }
    return [bearer, tok];
  }

  /** May this token act as `urn` (itself, or an organization it administers with the scope)? */
  function mayActAs(tok: FakeLinkedInToken, urn: string, write: boolean): boolean {
    if (urn === tok.member) return tok.scopes.has(write ? 'w_member_social' : 'r_member_social');
    if (urn === organization) return tok.scopes.has(write ? 'w_organization_social' : 'r_organization_social');
    return false;
  }

  async function initialize(req: Request, kind: FakeLinkedInAsset['kind'], tok: FakeLinkedInToken): Promise<Response> {
    const body = await readJson(req);
    if (!body) return restError(400, 'Invalid JSON in the request body');
    const broken = schemaError(INITIALIZE[kind], body);
    if (broken) return broken;
    const r = (body as InitializeVideoUploadBody | InitializeImageUploadBody).initializeUploadRequest;
    const owner = r.owner;
    if (!mayActAs(tok, owner, true))
      return restError(403, `Not enough permissions to access: ${kind}.ACTION.20260901`, { code: 'ACCESS_DENIED', serviceErrorCode: 100 });
    const id = next();
    if (kind === 'videos') {
      const size = (r as InitializeVideoUploadBody['initializeUploadRequest']).fileSizeBytes;
      const urn = `urn:li:video:D4E10AQ${id}`;
      const parts: FakeLinkedInAsset['parts'] = [];
      for (let first = 0; first < size; first += partBytes) {
        parts.push({ firstByte: first, lastByte: Math.min(size, first + partBytes) - 1, etag: null, authorization: null });
      }
      assets.push({
        urn,
        kind,
        owner,
        status: 'WAITING_UPLOAD',
        size,
        parts,
        pendingPolls: opts.videoProcessingPolls ?? 1,
        uploadAuthorization: null,
      });
      const answer: InitializeVideoUploadAnswer = {
        value: {
          uploadUrlsExpireAt: Date.now() + 86_400_000,
          video: urn,
          uploadInstructions: parts.map((p, i) => ({
            uploadUrl: `${base}/upload/videos/${id}/${i}?sig=${id}-${i}`,
            firstByte: p.firstByte,
            lastByte: p.lastByte,
          })),
          uploadToken: '',
        },
      };
      return json(answer);
    }
    const urn = kind === 'images' ? `urn:li:image:C4D10AQ${id}` : `urn:li:document:D4D10AQ${id}`;
    assets.push({ urn, kind, owner, status: 'WAITING_UPLOAD', size: 0, parts: [], pendingPolls: 0, uploadAuthorization: null });
    const expires = { uploadUrlExpiresAt: Date.now() + 86_400_000, uploadUrl: `${base}/upload/${kind}/${id}` };
    const answer: InitializeImageUploadAnswer | InitializeDocumentUploadAnswer =
      kind === 'images' ? { value: { ...expires, image: urn } } : { value: { ...expires, document: urn } };
    return json(answer);
  }

  async function upload(req: Request, path: string): Promise<Response> {
    const [, , kind, id, part] = path.split('/');
    const asset = assets.find((a) => a.kind === kind && a.urn.endsWith(`AQ${id}`));
    if (!asset) return new Response('Not Found', { status: 404 });
    const bytes = new Uint8Array(await req.arrayBuffer());
    if (kind === 'videos') {
      const p = asset.parts[Number(part)];
      if (!p) return new Response('Not Found', { status: 404 });
      if (bytes.byteLength !== p.lastByte - p.firstByte + 1)
        return new Response('Part size does not match the upload instruction', { status: 400 });
      p.etag = `/ambry-video/signedId/${id}-${part}`;
      p.authorization = req.headers.get('authorization');
      return new Response(null, { status: 201, headers: { ETag: p.etag } });
    }
    // The single-file upload URL takes the member's bearer token.
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim() ?? '';
    if (tokens.get(bearer)?.state !== 'valid')
      return restError(401, 'Invalid access token', { serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN' });
    if (!bytes.byteLength) return new Response('Empty upload', { status: 400 });
    asset.size = bytes.byteLength;
    asset.status = 'AVAILABLE';
    asset.uploadAuthorization = req.headers.get('authorization');
    return new Response(null, { status: 201 });
  }

  async function finalize(req: Request): Promise<Response> {
    const body = await readJson(req);
    if (!body) return restError(400, 'Invalid JSON in the request body');
    const broken = schemaError(FinalizeVideoUploadBody, body);
    if (broken) return broken;
    const f = (body as FinalizeVideoUploadBody).finalizeUploadRequest;
    const asset = assets.find((a) => a.urn === f.video && a.kind === 'videos');
    if (!asset) return fieldError('/finalizeUploadRequest/video', 'Video not found', 'INVALID_VALUE');
    const ids = f.uploadedPartIds;
    const etags = asset.parts.map((p) => p.etag);
    if (etags.some((e) => !e) || JSON.stringify(ids) !== JSON.stringify(etags)) {
      return restError(400, 'Uploaded part ids do not match the uploaded parts', { code: 'INVALID_VALUE' });
    }
    asset.status = 'PROCESSING';
    return new Response(null, { status: 200 });
  }

  function showAsset(kind: FakeLinkedInAsset['kind'], urn: string, tok: FakeLinkedInToken): Response {
    const a = assets.find((x) => x.kind === kind && x.urn === urn);
    if (!a) return restError(404, `${kind} ${urn} not found`, { code: 'NOT_FOUND' });
    if (!mayActAs(tok, a.owner, true))
      return restError(403, `Not enough permissions to access: ${kind}.GET.20260901`, { code: 'ACCESS_DENIED', serviceErrorCode: 100 });
    if (a.status === 'PROCESSING') {
      if (opts.failVideoProcessing) a.status = 'PROCESSING_FAILED';
      else if (a.pendingPolls > 0) a.pendingPolls--;
      else a.status = 'AVAILABLE';
    }
    const state = {
      owner: a.owner,
      status: a.status,
      ...(a.status === 'AVAILABLE' ? { downloadUrl: `${base}/media/${encodeURIComponent(a.urn)}` } : {}),
    };
    if (kind === 'videos') {
      const failed = a.status === 'PROCESSING_FAILED' && opts.failVideoProcessing;
      const video: Video = { id: a.urn, ...state, ...(failed ? { processingFailureReason: failed } : {}) };
      return json(video);
    }
    const file: Image | Document = { id: a.urn, ...state };
    return json(file);
  }

  async function createPost(req: Request, bearer: string, tok: FakeLinkedInToken): Promise<Response> {
    const body = await readJson(req);
    if (!body) return restError(400, 'Invalid JSON in the request body');
    sends.push({ rendered: renderLittleText(typeof body.commentary === 'string' ? body.commentary : ''), at: Date.now() });
    const broken = schemaError(PostBody, body);
    if (broken) return broken;
    const sent = body as PostBody;
    const author = sent.author;
    if (!mayActAs(tok, author, true)) {
      return restError(403, 'Not enough permissions to access: partnerApiPostsExternal.CREATE.20260901', {
        code: 'ACCESS_DENIED',
        serviceErrorCode: 100,
      });
    }
    const commentary = typeof body.commentary === 'string' ? body.commentary : '';
    const rendered = renderLittleText(commentary);
    if (rendered.length > MAX_COMMENTARY) return fieldError('/commentary', `commentary length exceeds ${MAX_COMMENTARY}`, 'INVALID_VALUE');

    const content: Record<string, unknown> | null = sent.content ?? null;
    const contentError = content ? checkContent(content, author) : null;
    if (contentError) return contentError;
    if (!commentary && !content) return fieldError('/commentary', 'commentary or content is required', 'FIELD_REQUIRED');

    const dupe = posts.find((p) => p.author === author && p.commentary === commentary && commentary);
    if (dupe) {
      const duplicate: RestliError = {
        errorDetailType: 'com.linkedin.common.error.BadRequest',
        message: `com.linkedin.content.common.exception.BadRequestResponseException: Content is a duplicate of ${dupe.urn}`,
        errorDetails: { inputErrors: [{ description: 'Duplicate post is detected', input: {}, code: 'DUPLICATE_POST' }] },
        status: 422,
      };
      return json(duplicate, 422);
    }
    const video = content && String(dig(content, 'media', 'id') ?? '').startsWith('urn:li:video:');
    const post: FakeLinkedInPost = {
      urn: `urn:li:${video ? 'ugcPost' : 'share'}:${next()}`,
      author,
      commentary,
      rendered,
      content,
      visibility: sent.visibility,
      token: bearer,
      createdAt: Date.now(),
      likes: 0,
      comments: 0,
    };
    posts.push(post);
    return new Response(null, { status: 201, headers: { 'x-restli-id': post.urn, 'x-linkedin-id': post.urn } });
  }

  function checkContent(content: Record<string, unknown>, author: string): Response | null {
    const keys = Object.keys(content);
    if (keys.length !== 1) return fieldError('/content', 'exactly one content type is allowed', 'INVALID_VALUE');
    const usable = (urn: unknown, kinds: FakeLinkedInAsset['kind'][]) => {
      const a = assets.find((x) => x.urn === urn);
      return !!a && kinds.includes(a.kind) && a.owner === author && a.status === 'AVAILABLE';
    };
    if (keys[0] === 'media') {
      const id = dig(content, 'media', 'id');
      if (!usable(id, ['images', 'videos', 'documents']))
        return fieldError('/content/media/id', `Media ${String(id)} is not available or not owned by ${author}`, 'INVALID_VALUE');
      if (String(id).startsWith('urn:li:document:') && typeof dig(content, 'media', 'title') !== 'string') {
        return fieldError('/content/media/title', 'title is required for a document', 'FIELD_REQUIRED');
      }
      return null;
    }
    if (keys[0] === 'multiImage') {
      const images = dig(content, 'multiImage', 'images');
      if (!Array.isArray(images) || images.length < 2 || images.length > 20) {
        return fieldError('/content/multiImage/images', 'a multiImage post needs 2 to 20 images', 'INVALID_VALUE');
      }
      const bad = images.find((i) => !usable(dig(i, 'id'), ['images']));
      if (bad)
        return fieldError(
          '/content/multiImage/images',
          `Image ${String(dig(bad, 'id'))} is not available or not owned by ${author}`,
          'INVALID_VALUE',
        );
      return null;
    }
    return fieldError(`/content/${keys[0]}`, 'unsupported content type in this fake', 'INVALID_VALUE');
  }

  function findPosts(q: URLSearchParams, tok: FakeLinkedInToken): Response {
    const author = q.get('author') ?? '';
    if (!mayActAs(tok, author, false)) {
      return restError(403, 'Not enough permissions to access: partnerApiPostsExternal.FINDER-author.20260901', {
        code: 'ACCESS_DENIED',
        serviceErrorCode: 100,
      });
    }
    const count = Number(q.get('count') ?? '10');
    const sortBy = q.get('sortBy') ?? 'LAST_MODIFIED';
    if (!['LAST_MODIFIED', 'CREATED'].includes(sortBy)) return restError(400, `Invalid sortBy ${sortBy}`, { code: 'INVALID_VALUE' });
    const list = posts
      .filter((p) => p.author === author)
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, count);
    const answer: PostsList = { paging: { start: 0, count, links: [] }, elements: list.map(postJson) };
    return json(answer);
  }

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      return json({ error: 'invalid_client', error_description: 'Client authentication failed' }, 401);
    }
    if (form.get('grant_type') !== 'refresh_token')
      return json({ error: 'unsupported_grant_type', error_description: 'grant_type is not supported' }, 400);
    const refresh = form.get('refresh_token') ?? '';
    if (!validRefreshTokens.has(refresh)) {
      return json(
        { error: 'invalid_request', error_description: 'The provided authorization grant or refresh token is invalid, expired or revoked' },
        400,
      );
    }
    const access = `li-access-${++tokenSerial}`;
    tokens.set(access, { member, scopes: new Set(['w_member_social']), state: 'valid' });
    // Not rotated: the same refresh token, with what is left of its 365 days.
    const left = Math.max(0, 365 * 86_400 - Math.floor((Date.now() - refreshIssued) / 1000));
    const answer: AccessTokenAnswer = {
      access_token: access,
      expires_in: 5_184_000,
      refresh_token: refresh,
      refresh_token_expires_in: left,
      scope: 'w_member_social',
    };
    return json(answer);
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(restError(504, 'gave up'));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    member,
    organization,
    clientId,
    clientSecret,
    posts,
    comments,
    assets,
    requests,
    sends,
    tokens,
    validRefreshTokens,
    failNext(n, response, route = 'posts') {
      const list = canned.get(route) ?? [];
      for (let i = 0; i < n; i++) list.push(response);
      canned.set(route, list);
    },
    addPost(author, commentary, o = {}) {
      const p: FakeLinkedInPost = {
        urn: `urn:li:share:${next()}`,
        author,
        commentary,
        rendered: renderLittleText(commentary),
        content: null,
        visibility: 'PUBLIC',
        token: 'elsewhere',
        createdAt: (o.createdAt ?? new Date()).getTime(),
        likes: 0,
        comments: 0,
      };
      posts.push(p);
      return p;
    },
    addComment,
    count: (route) => counts.get(route) ?? 0,
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/** What LinkedIn shows for a little-text commentary the fake cannot parse as a template: text up to that point. */
function renderLittleText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length && RESERVED.test(s[i + 1]!)) {
      out += s[++i];
    } else if (RESERVED.test(c)) {
      return out;
    } else out += c;
  }
  return out;
}

function restError(status: number, message: string, extra: Pick<RestliError, 'code' | 'serviceErrorCode'> = {}): Response {
  const body: RestliError = { status, message, ...extra };
  return json(body, status);
}

function fieldError(fieldPath: string, description: string, code: string): Response {
  const body: RestliError = {
    errorDetailType: 'com.linkedin.common.error.BadRequest',
    message: `ERROR :: ${fieldPath} :: ${description}`,
    errorDetails: { inputErrors: [{ description, input: { inputPath: { fieldPath } }, code }] },
    status: 422,
  };
  return json(body, 422);
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

async function readJson(req: Request): Promise<Record<string, unknown> | null> {
  try {
    const v: unknown = await req.json();
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function dig(v: unknown, ...keys: string[]): unknown {
  for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A publish as the member of `f`, as the activity hands it to the connector; `over` changes any part. */
export function linkedInRequest(f: FakeLinkedIn, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello LinkedIn',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token', authorUrn: f.member },
    ...over,
  };
}
