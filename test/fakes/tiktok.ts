// A local fake of TikTok's Content Posting API v2 (Direct Post of a video by FILE_UPLOAD, and of
// photos by PULL_FROM_URL through content/init), the upload server, status/fetch, the Display
// API's /v2/video/list/ and the OAuth token endpoint, with TikTok's envelope {data, error: {code,
// message, log_id}} (code "ok" on success) and its error codes. Photos are pulled from URLs under
// a verified prefix (by default the media this fake hosts, hostMedia).
//
// TikTok publishes no typed SDK: the create requests are checked against the schemas of
// platforms/contracts/tiktok.ts (its Content Posting API v2 reference, POST
// /v2/post/publish/video/init/ and POST /v2/post/publish/content/init/). A body whose fields have
// a type or value the reference does not list (an unknown privacy_level, a source other than
// FILE_UPLOAD/PULL_FROM_URL, a non-integer size) is refused as TikTok refuses it, 400 with error
// code invalid_params. The answers are built as the contract's answer types (CreatorInfo,
// VideoInitData, ContentInitData, PostStatusAnswer, VideoListData, VideoQueryData, TokenAnswer,
// ErrorAnswer), so a field the reference does not document, or a value of another type, does not
// compile here.
import { createTikTokConnector, type TikTokConnectorOptions } from '../../platforms/tiktok.ts';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type ApiError,
  type ContentInitData,
  ContentInitBody,
  type CreatorInfo,
  type ErrorAnswer,
  type PostStatusAnswer,
  type PostStatusValue,
  type TokenAnswer,
  type Video,
  VideoInitBody,
  type VideoInitData,
  type VideoListData,
  type VideoQueryData,
} from '../../platforms/contracts/tiktok.ts';
import { download } from './download.ts';

/** The invalid_params refusal for a body that breaks `schema`, naming the first field at fault. */
function shapeProblem(schema: TSchema, body: unknown): Response | undefined {
  const e = Value.Errors(schema, body).First();
  if (!e) return undefined;
  const field = e.path.replace(/^\//, '').replace(/\//g, '.') || 'body';
  return apiError(400, 'invalid_params', `${field}: ${e.message}`);
}
/** What creator_info/query answers (tests change it): the contract's CreatorInfo. */
export type FakeCreator = CreatorInfo;

export interface FakeVideoSource {
  source: string;
  video_size: number;
  chunk_size: number;
  total_chunk_count: number;
}

export interface FakePhotoSource {
  source: string;
  photo_images: string[];
  photo_cover_index: number;
}

export interface FakePublish {
  publishId: string;
  token: string;
  /** video: video/init (FILE_UPLOAD, sourceInfo a FakeVideoSource); photo: content/init (a FakePhotoSource). */
  kind: 'video' | 'photo';
  postInfo: Record<string, unknown>;
  sourceInfo: FakeVideoSource | FakePhotoSource;
  /** content/init's post_mode (photos). */
  postMode?: string;
  /** Photos as pulled at content/init, in order (null: the URL did not answer). */
  photos: ({ url: string; contentType: string; size: number } | null)[];
  uploadId: string;
  received: number;
  /** Byte length of each accepted chunk, in order. */
  chunks: number[];
  contentTypes: string[];
  uploadExpired: boolean;
  /** status/fetch answers PROCESSING_UPLOAD (photos: PROCESSING_DOWNLOAD) this many more times after the upload completed. */
  processingPolls: number;
  /** PUBLISH_COMPLETE answers without a post id this many more times (moderation). */
  moderationPolls: number;
  failReason: string | null;
  post: FakePost | null;
}

export interface FakePost {
  /** int64 beyond 2^53, serialised as a bare JSON number in status/fetch like TikTok's. */
  id: string;
  caption: string;
  privacy: string;
  createdMs: number;
  token: string;
  /** A photo post (content/init). */
  photo?: boolean;
  /** What viewers did (tests set them); video/query reports them. */
  stats: { view_count: number; like_count: number; comment_count: number; share_count: number };
}

export interface FakeRequest {
  method: string;
  path: string;
  search: string;
  contentRange: string | null;
  contentType: string | null;
}

export type FakeResponse =
  | { status: number; body?: unknown; headers?: Record<string, string>; accept?: boolean }
  | 'hang'
  | 'accept-then-hang';

export type FakeRoute = 'creator_info' | 'init' | 'content_init' | 'upload' | 'status' | 'video_list' | 'video_query' | 'token';

export interface FakeTikTokOptions {
  /** status/fetch polls answering PROCESSING_UPLOAD after the upload (default 1). */
  processingPolls?: number;
  /** Polls of a public post answering PUBLISH_COMPLETE without its id (default 0). */
  moderationPolls?: number;
  /** An unaudited client: anything but SELF_ONLY is refused at video/init. */
  unaudited?: boolean;
}

export interface FakeTikTok {
  url: string;
  creator: FakeCreator;
  publishes: FakePublish[];
  posts: FakePost[];
  requests: FakeRequest[];
  validTokens: Set<string>;
  /** Scopes each token lacks (default: none). */
  missingScopes: Map<string, Set<string>>;
  refreshTokens: Set<string>;
  issued: { accessToken: string; refreshToken: string }[];
  /** URL prefixes verified for the app: TikTok pulls photos from these only (default: this fake's hosted media). */
  verifiedUrlPrefixes: string[];
  /** Serves bytes at a URL on this fake (what a signed storage URL is in production). */
  hostMedia(bytes: Uint8Array, contentType: string): string;
  failNext(n: number, response: FakeResponse, route?: FakeRoute): void;
  /** The next completed upload ends FAILED with this fail_reason. */
  failPublishNext(reason: string): void;
  expireToken(token: string): void;
  addPost(p: Partial<FakePost> & { caption: string }): FakePost;
  stop(): Promise<void>;
}

export const FAKE_APP = { clientId: 'awfakeclientkey', clientSecret: 'fake-client-secret' };

const MB = 1024 * 1024;
const POST_INFO = new Set([
  'title',
  'privacy_level',
  'disable_duet',
  'disable_stitch',
  'disable_comment',
  'video_cover_timestamp_ms',
  'brand_content_toggle',
  'brand_organic_toggle',
  'is_aigc',
]);
const SOURCE_INFO = new Set(['source', 'video_size', 'chunk_size', 'total_chunk_count', 'video_url']);
// content/init (photos): TikTok's photo post_info has no duet, stitch, cover timestamp or AI label.
const PHOTO_POST_INFO = new Set([
  'title',
  'description',
  'privacy_level',
  'disable_comment',
  'auto_add_music',
  'brand_content_toggle',
  'brand_organic_toggle',
]);
const PHOTO_SOURCE_INFO = new Set(['source', 'photo_images', 'photo_cover_index']);
const PHOTO_TYPES = ['image/jpeg', 'image/webp'];
const MAX_PHOTOS = 35;
const NO_STATS = () => ({ view_count: 0, like_count: 0, comment_count: 0, share_count: 0 });

const VIDEO_FIELDS = new Set([
  'id',
  'create_time',
  'cover_image_url',
  'share_url',
  'video_description',
  'duration',
  'height',
  'width',
  'title',
  'embed_html',
  'embed_link',
  'like_count',
  'comment_count',
  'share_count',
  'view_count',
]);

export async function startFakeTikTok(opts: FakeTikTokOptions = {}): Promise<FakeTikTok> {
  const creator: FakeCreator = {
    creator_avatar_url: 'https://p16-sign.tiktokcdn.com/avatar.jpeg',
    creator_username: 'kite.maker',
    creator_nickname: 'Kite Maker',
    privacy_level_options: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'],
    comment_disabled: false,
    duet_disabled: false,
    stitch_disabled: false,
    max_video_post_duration_sec: 600,
  };
  const publishes: FakePublish[] = [];
  const posts: FakePost[] = [];
  const requests: FakeRequest[] = [];
  const validTokens = new Set(['good-token']);
  const missingScopes = new Map<string, Set<string>>();
  const refreshTokens = new Set(['good-refresh']);
  const issued: { accessToken: string; refreshToken: string }[] = [];
  const canned: Record<FakeRoute, FakeResponse[]> = {
    creator_info: [],
    init: [],
    content_init: [],
    upload: [],
    status: [],
    video_list: [],
    video_query: [],
    token: [],
  };
  const failReasons: string[] = [];
  const hanging = new Set<() => void>();
  let counter = 0;
  let nextPostId = 7_380_080_137_682_881_835n;

  const hosted = new Map<string, { bytes: Uint8Array; contentType: string }>();
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;
  const verifiedUrlPrefixes = [`${base}/__media/`];

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method === 'GET' && url.pathname.startsWith('/__media/')) {
      const m = hosted.get(url.pathname.slice('/__media/'.length));
      return m
        ? new Response(m.bytes as Uint8Array<ArrayBuffer>, { headers: { 'Content-Type': m.contentType } })
        : new Response(null, { status: 404 });
    }
    requests.push({
      method: req.method,
      path: url.pathname,
      search: url.search,
      contentRange: req.headers.get('content-range'),
      contentType: req.headers.get('content-type'),
    });
    const route = routeOf(req.method, url.pathname);
    if (!route) return apiError(404, 'not_found', 'The requested path does not exist.');

    const next = canned[route].shift();
    if (next === 'hang') return hang(req);
    const acceptThenHang = next === 'accept-then-hang';
    let after: Exclude<FakeResponse, 'hang' | 'accept-then-hang'> | undefined;
    if (next && next !== 'accept-then-hang') {
      if (!next.accept) return reply(next);
      after = next;
    }

    let res: Response;
    if (route === 'token') res = await token(req);
    else if (route === 'upload') res = await upload(req, url);
    else {
      const scope = route === 'video_list' || route === 'video_query' ? 'video.list' : 'video.publish';
      const auth = authorize(req, scope);
      if (auth instanceof Response) return auth;
      if (route !== 'creator_info' && !(req.headers.get('content-type') ?? '').startsWith('application/json')) {
        return apiError(400, 'invalid_params', 'Content-Type must be application/json.');
      }
      if (route === 'creator_info') res = ok(creator);
      else if (route === 'init') res = await init(req, auth);
      else if (route === 'content_init') res = await contentInit(req, auth);
      else if (route === 'status') res = await status(req);
      else if (route === 'video_query') res = await videoQuery(req, url, auth);
      else res = await videoList(req, url, auth);
    }
    if (acceptThenHang) return hang(req);
    return after ? reply(after) : res;
  }

  function routeOf(method: string, path: string): FakeRoute | null {
    if (method === 'PUT' && path === '/upload/') return 'upload';
    if (method !== 'POST') return null;
    const routes: Record<string, FakeRoute> = {
      '/v2/oauth/token/': 'token',
      '/v2/post/publish/creator_info/query/': 'creator_info',
      '/v2/post/publish/video/init/': 'init',
      '/v2/post/publish/content/init/': 'content_init',
      '/v2/post/publish/status/fetch/': 'status',
      '/v2/video/list/': 'video_list',
      '/v2/video/query/': 'video_query',
    };
    return routes[path] ?? null;
  }

  function authorize(req: Request, scope: string): string | Response {
    const t = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
    if (!t || !validTokens.has(t)) {
      return apiError(401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
    }
    if (missingScopes.get(t)?.has(scope)) {
      return apiError(401, 'scope_not_authorized', `The user did not authorize the scope required for completing this request. (${scope})`);
    }
    return t;
  }

  /**
   * Who may see the post, as video/init and content/init both check it: brand_content_toggle
   * given, a privacy level among the creator's, branded content not private (TikTok's
   * guidelines), an unaudited app posting privately only.
   */
  function audienceProblem(info: Record<string, unknown>): Response | undefined {
    if (typeof info.brand_content_toggle !== 'boolean')
      return apiError(400, 'invalid_param', 'post_info.brand_content_toggle is required.');
    if (typeof info.privacy_level !== 'string' || !creator.privacy_level_options.includes(info.privacy_level)) {
      return apiError(
        403,
        'privacy_level_option_mismatch',
        'privacy_level is not specified or not among the options from the privacy_level_options returned in /publish/creator_info/query/ API.',
      );
    }
    if (info.brand_content_toggle === true && info.privacy_level === 'SELF_ONLY') {
      return apiError(400, 'invalid_param', 'Branded content visibility cannot be set to private.');
    }
    if (opts.unaudited && info.privacy_level !== 'SELF_ONLY') {
      return apiError(403, 'unaudited_client_can_only_post_to_private_accounts', 'Unaudited clients can only post to a private account.');
    }
    return undefined;
  }

  async function init(req: Request, tok: string): Promise<Response> {
    const body = (await req.json().catch(() => null)) as {
      post_info?: Record<string, unknown>;
      source_info?: Record<string, unknown>;
    } | null;
    if (!body || typeof body.post_info !== 'object' || typeof body.source_info !== 'object') {
      return apiError(400, 'invalid_param', 'post_info and source_info are required.');
    }
    const info = body.post_info!;
    const src = body.source_info!;
    for (const k of Object.keys(body))
      if (k !== 'post_info' && k !== 'source_info') return apiError(400, 'invalid_param', `Unknown field ${k}.`);
    for (const k of Object.keys(info)) if (!POST_INFO.has(k)) return apiError(400, 'invalid_param', `Unknown field post_info.${k}.`);
    for (const k of Object.keys(src)) if (!SOURCE_INFO.has(k)) return apiError(400, 'invalid_param', `Unknown field source_info.${k}.`);
    if (info.title !== undefined && (typeof info.title !== 'string' || info.title.length > 2200)) {
      return apiError(400, 'invalid_param', 'The title is invalid or longer than 2200 characters.');
    }
    for (const k of ['disable_duet', 'disable_stitch', 'disable_comment', 'brand_organic_toggle', 'is_aigc']) {
      if (info[k] !== undefined && typeof info[k] !== 'boolean') return apiError(400, 'invalid_param', `post_info.${k} must be a boolean.`);
    }
    // After the fake's own field checks (their words stay as tests read them) and before the
    // audience; without brand_content_toggle the audience check refuses with TikTok's own words.
    const broken = shapeProblem(VideoInitBody, body);
    if (broken && typeof info.brand_content_toggle === 'boolean') return broken;
    const refused = audienceProblem(info);
    if (refused) return refused;
    if (src.source !== 'FILE_UPLOAD') return apiError(400, 'invalid_param', 'This fake only takes source FILE_UPLOAD.');
    const problem = chunkProblem(Number(src.video_size), Number(src.chunk_size), Number(src.total_chunk_count));
    if (problem) return apiError(400, 'invalid_param', problem);

    const n = ++counter;
    const p: FakePublish = {
      publishId: `v_pub_file~v2-1.${7_300_000_000_000_000_000n + BigInt(n)}`,
      token: tok,
      kind: 'video',
      postInfo: info,
      sourceInfo: src as unknown as FakeVideoSource,
      photos: [],
      uploadId: `upl${n}`,
      received: 0,
      chunks: [],
      contentTypes: [],
      uploadExpired: false,
      processingPolls: opts.processingPolls ?? 1,
      moderationPolls: opts.moderationPolls ?? 0,
      failReason: null,
      post: null,
    };
    publishes.push(p);
    return ok({
      publish_id: p.publishId,
      upload_url: `${base}/upload/?upload_id=${p.uploadId}&upload_token=tok${n}`,
    } satisfies VideoInitData);
  }

  /**
   * content/init, photos (Direct Post): media_type PHOTO, post_mode, post_info and source_info
   * (PULL_FROM_URL, 1 to 35 photo_images under a verified URL prefix, photo_cover_index among
   * them). TikTok pulls the images (here at once): JPEG or WEBP only; one that does not answer
   * fails the post (photo_pull_failed).
   */
  async function contentInit(req: Request, tok: string): Promise<Response> {
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
    if (!body) return apiError(400, 'invalid_param', 'The request body is not valid JSON.');
    for (const k of Object.keys(body)) {
      if (!['post_info', 'source_info', 'post_mode', 'media_type'].includes(k))
        return apiError(400, 'invalid_param', `Unknown field ${k}.`);
    }
    if (body.media_type !== 'PHOTO') return apiError(400, 'invalid_param', 'media_type must be PHOTO.');
    if (body.post_mode === undefined) return apiError(400, 'invalid_param', 'post_mode is required.');
    if (body.post_mode !== 'DIRECT_POST' && body.post_mode !== 'MEDIA_UPLOAD')
      return apiError(400, 'invalid_param', 'post_mode must be DIRECT_POST or MEDIA_UPLOAD.');
    if (body.post_mode !== 'DIRECT_POST') return apiError(400, 'invalid_param', 'This fake only takes post_mode DIRECT_POST.');
    const info = body.post_info as Record<string, unknown> | undefined;
    const src = body.source_info as Record<string, unknown> | undefined;
    if (!info || typeof info !== 'object' || !src || typeof src !== 'object') {
      return apiError(400, 'invalid_param', 'post_info and source_info are required.');
    }
    for (const k of Object.keys(info)) if (!PHOTO_POST_INFO.has(k)) return apiError(400, 'invalid_param', `Unknown field post_info.${k}.`);
    for (const k of Object.keys(src))
      if (!PHOTO_SOURCE_INFO.has(k)) return apiError(400, 'invalid_param', `Unknown field source_info.${k}.`);
    if (info.title !== undefined && (typeof info.title !== 'string' || [...info.title].length > 90)) {
      return apiError(400, 'invalid_param', 'The title is invalid or longer than 90 characters.');
    }
    if (info.description !== undefined && (typeof info.description !== 'string' || [...info.description].length > 4000)) {
      return apiError(400, 'invalid_param', 'The description is invalid or longer than 4000 characters.');
    }
    for (const k of ['disable_comment', 'auto_add_music', 'brand_organic_toggle']) {
      if (info[k] !== undefined && typeof info[k] !== 'boolean') return apiError(400, 'invalid_param', `post_info.${k} must be a boolean.`);
    }
    if (src.source !== 'PULL_FROM_URL') return apiError(400, 'invalid_param', 'Photos are posted with source PULL_FROM_URL.');
    const urls = src.photo_images;
    if (!Array.isArray(urls) || urls.length < 1 || urls.length > MAX_PHOTOS || urls.some((u) => typeof u !== 'string' || !u)) {
      return apiError(400, 'invalid_param', `photo_images must hold 1 to ${MAX_PHOTOS} image URLs.`);
    }
    const cover = src.photo_cover_index;
    if (typeof cover !== 'number' || !Number.isInteger(cover) || cover < 0 || cover >= urls.length) {
      return apiError(400, 'invalid_param', 'photo_cover_index must be the index of one of photo_images.');
    }
    // After the fake's own field checks (their words stay as tests read them) and before the
    // audience; without brand_content_toggle the audience check refuses with TikTok's own words.
    const broken = shapeProblem(ContentInitBody, body);
    if (broken && typeof info.brand_content_toggle === 'boolean') return broken;
    const refused = audienceProblem(info);
    if (refused) return refused;
    if ((urls as string[]).some((u) => !verifiedUrlPrefixes.some((prefix) => u.startsWith(prefix)))) {
      return apiError(403, 'url_ownership_unverified', 'The URL prefix or domain of photo_images is not verified for this app.');
    }
    const photos: FakePublish['photos'] = [];
    for (const [i, u] of (urls as string[]).entries()) {
      const got = await download(u);
      if (got && !PHOTO_TYPES.includes(got.contentType.split(';')[0]!.trim())) {
        return apiError(400, 'invalid_param', `photo_images[${i}] is not a JPEG or WEBP image.`);
      }
      photos.push(got ? { url: u, ...got } : null);
    }

    const n = ++counter;
    const p: FakePublish = {
      publishId: `p_pub_url~v2-1.${7_300_000_000_000_000_000n + BigInt(n)}`,
      token: tok,
      kind: 'photo',
      postInfo: info,
      sourceInfo: src as unknown as FakePhotoSource,
      postMode: body.post_mode,
      photos,
      uploadId: '',
      received: 0,
      chunks: [],
      contentTypes: [],
      uploadExpired: false,
      processingPolls: opts.processingPolls ?? 1,
      moderationPolls: opts.moderationPolls ?? 0,
      failReason: null,
      post: null,
    };
    publishes.push(p);
    if (photos.some((x) => !x)) p.failReason = 'photo_pull_failed';
    else complete(p);
    return ok({ publish_id: p.publishId } satisfies ContentInitData);
  }

  async function upload(req: Request, url: URL): Promise<Response> {
    const p = publishes.find(
      (x) => x.uploadId === url.searchParams.get('upload_id') && `tok${x.uploadId.slice(3)}` === url.searchParams.get('upload_token'),
    );
    if (!p) return new Response(null, { status: 404 });
    if (p.uploadExpired) return new Response(null, { status: 403 });
    const bytes = new Uint8Array(await req.arrayBuffer());
    const type = req.headers.get('content-type') ?? '';
    if (!['video/mp4', 'video/quicktime', 'video/webm'].includes(type)) return new Response(null, { status: 400 });
    const { video_size: size, chunk_size: chunk, total_chunk_count: count } = p.sourceInfo as FakeVideoSource;
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers.get('content-range') ?? '');
    if (!m || Number(m[3]) !== size || bytes.byteLength !== Number(m[2]) - Number(m[1]) + 1) return new Response(null, { status: 400 });
    const from = Number(m[1]);
    if (from !== p.received || p.received >= size) return new Response(null, { status: 416, headers: held(p) });
    const index = from / chunk;
    const expected = index === count - 1 ? size - from : chunk;
    if (bytes.byteLength !== expected) return new Response(null, { status: 400 });
    p.received += bytes.byteLength;
    p.chunks.push(bytes.byteLength);
    p.contentTypes.push(type);
    if (p.received < size) return new Response(null, { status: 206, headers: held(p) });
    complete(p);
    return new Response(null, { status: 201, headers: held(p) });
  }

  /** The upload is in: TikTok processes and posts it (or fails it) whether or not anyone polls. */
  function complete(p: FakePublish) {
    const reason = failReasons.shift();
    if (reason) {
      p.failReason = reason;
      return;
    }
    // A video's caption is its title; a photo post's, its description.
    const caption = p.kind === 'photo' ? p.postInfo.description : p.postInfo.title;
    p.post = {
      id: String(nextPostId++),
      caption: typeof caption === 'string' ? caption : '',
      privacy: String(p.postInfo.privacy_level),
      createdMs: Date.now(),
      stats: NO_STATS(),
      token: p.token,
      ...(p.kind === 'photo' ? { photo: true } : {}),
    };
    posts.push(p.post);
  }

  async function status(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => null)) as { publish_id?: unknown } | null;
    const p = publishes.find((x) => x.publishId === body?.publish_id);
    if (!p) return apiError(400, 'invalid_publish_id', 'The publish_id does not exist');
    let state: PostStatusValue;
    let ids: string[] = [];
    // A photo post is pulled by TikTok (PROCESSING_DOWNLOAD); a video waits for its bytes.
    const size = p.kind === 'video' ? (p.sourceInfo as FakeVideoSource).video_size : 0;
    if (p.received < size || p.processingPolls > 0) {
      if (p.received >= size) p.processingPolls--;
      state = p.kind === 'photo' ? 'PROCESSING_DOWNLOAD' : 'PROCESSING_UPLOAD';
    } else if (p.failReason) {
      state = 'FAILED';
    } else {
      state = 'PUBLISH_COMPLETE';
      if (p.post!.privacy === 'PUBLIC_TO_EVERYONE') {
        if (p.moderationPolls > 0) p.moderationPolls--;
        else ids = [p.post!.id];
      }
    }
    const answer: PostStatusAnswer = {
      data: {
        status: state,
        ...(p.failReason ? { fail_reason: p.failReason } : {}),
        publicaly_available_post_id: [],
        uploaded_bytes: p.received,
      },
      error: okError(),
    };
    // The int64 ids go out as bare numbers, as TikTok sends them: spliced into the typed answer's
    // text, as a JavaScript number would lose their last digits.
    const empty = '"publicaly_available_post_id":[]';
    const text = JSON.stringify(answer).replace(empty, `"publicaly_available_post_id":[${ids.join(',')}]`);
    return new Response(text, { headers: { 'Content-Type': 'application/json' } });
  }

  /** video/query: the token's own public videos among filters.video_ids (1 to 20), with the fields asked. */
  async function videoQuery(req: Request, url: URL, tok: string): Promise<Response> {
    const fields = (url.searchParams.get('fields') ?? '').split(',').filter(Boolean);
    if (!fields.length || fields.some((f) => !VIDEO_FIELDS.has(f)))
      return apiError(400, 'invalid_params', 'fields is missing or has an unknown field.');
    const body = (await req.json().catch(() => null)) as { filters?: { video_ids?: unknown } } | null;
    const ids = body?.filters?.video_ids;
    if (!Array.isArray(ids) || !ids.length || ids.length > 20 || ids.some((id) => typeof id !== 'string')) {
      return apiError(400, 'invalid_params', 'filters.video_ids must hold 1 to 20 video ids.');
    }
    const videos = posts
      .filter((p) => ids.includes(p.id) && p.token === tok && p.privacy === 'PUBLIC_TO_EVERYONE')
      .map((p) => only(fields, { id: p.id, create_time: Math.floor(p.createdMs / 1000), ...p.stats }));
    return ok({ videos } satisfies VideoQueryData);
  }

  async function videoList(req: Request, url: URL, tok: string): Promise<Response> {
    const fields = (url.searchParams.get('fields') ?? '').split(',').filter(Boolean);
    if (!fields.length || fields.some((f) => !VIDEO_FIELDS.has(f)))
      return apiError(400, 'invalid_params', 'fields is missing or has an unknown field.');
    const body = (await req.json().catch(() => null)) as { max_count?: unknown; cursor?: unknown } | null;
    const max = body?.max_count ?? 10;
    if (typeof max !== 'number' || max < 1 || max > 20) return apiError(400, 'invalid_params', 'max_count must be between 1 and 20.');
    const cursor = typeof body?.cursor === 'number' ? body.cursor : Number.MAX_SAFE_INTEGER;
    // video.list reads public videos only.
    const visible = posts
      .filter((p) => p.privacy === 'PUBLIC_TO_EVERYONE' && validTokens.has(tok) && p.createdMs < cursor)
      .sort((a, b) => b.createdMs - a.createdMs);
    const page = visible.slice(0, max);
    const videos = page.map((p) =>
      only(fields, {
        id: p.id,
        create_time: Math.floor(p.createdMs / 1000),
        share_url: `https://www.tiktok.com/@${creator.creator_username}/video/${p.id}?utm_campaign=tt4d_open_api&utm_source=${FAKE_APP.clientId}`,
        video_description: p.caption.slice(0, 150),
        title: p.caption.slice(0, 150),
        duration: 12,
      }),
    );
    return ok({
      videos,
      cursor: page.length ? page.at(-1)!.createdMs : cursor,
      has_more: visible.length > max,
    } satisfies VideoListData);
  }

  async function token(req: Request): Promise<Response> {
    if (!(req.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
      return oauthError(400, 'invalid_request', 'The request parameters are malformed.');
    }
    const form = new URLSearchParams(await req.text());
    if (form.get('client_key') !== FAKE_APP.clientId || form.get('client_secret') !== FAKE_APP.clientSecret) {
      return oauthError(401, 'invalid_client', 'Client key or secret is incorrect.');
    }
    if (form.get('grant_type') !== 'refresh_token') return oauthError(400, 'unsupported_grant_type', 'The grant type is not supported.');
    const old = form.get('refresh_token') ?? '';
    if (!refreshTokens.has(old)) return oauthError(400, 'invalid_grant', 'Refresh token is invalid or expired.');
    refreshTokens.delete(old); // rotated: the one just used stops working
    const n = issued.length + 1;
    const pair = { accessToken: `act.fresh${n}`, refreshToken: `rft.fresh${n}` };
    issued.push(pair);
    refreshTokens.add(pair.refreshToken);
    validTokens.add(pair.accessToken);
    const answer: TokenAnswer = {
      access_token: pair.accessToken,
      expires_in: 7200,
      open_id: '-000OBJ2Vf5bWo1xxQzhCnTA2BtOoe2T8UuH',
      refresh_expires_in: 15_552_000,
      refresh_token: pair.refreshToken,
      scope: 'user.info.basic,video.publish,video.list',
      token_type: 'Bearer',
    };
    return Response.json(answer);
  }

  function held(p: FakePublish): Record<string, string> {
    return p.received ? { 'Content-Range': `bytes 0-${p.received - 1}/${(p.sourceInfo as FakeVideoSource).video_size}` } : {};
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(new Response(null, { status: 504 }));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    creator,
    publishes,
    posts,
    requests,
    validTokens,
    missingScopes,
    refreshTokens,
    issued,
    verifiedUrlPrefixes,
    hostMedia(bytes, contentType) {
      const key = `m${hosted.size + 1}`;
      hosted.set(key, { bytes, contentType });
      return `${base}/__media/${key}`;
    },
    failNext(n, response, route = 'init') {
      for (let i = 0; i < n; i++) canned[route].push(response);
    },
    failPublishNext(reason) {
      failReasons.push(reason);
    },
    expireToken(t) {
      validTokens.delete(t);
    },
    addPost(p) {
      const post: FakePost = {
        id: String(nextPostId++),
        privacy: 'PUBLIC_TO_EVERYONE',
        createdMs: Date.now(),
        token: 'good-token',
        stats: NO_STATS(),
        ...p,
      };
      posts.push(post);
      return post;
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/** The media transfer guide's chunk rules; a wrong plan is refused at video/init. */
function chunkProblem(size: number, chunk: number, count: number): string | null {
  if (![size, chunk, count].every(Number.isInteger) || size <= 0 || chunk <= 0)
    return 'video_size, chunk_size and total_chunk_count must be positive integers.';
  if (size > 4096 * MB) return 'The video is larger than 4 GB.';
  if (size < 5 * MB) return chunk === size && count === 1 ? null : 'The chunk size is invalid: a video under 5 MB is uploaded whole.';
  if (chunk > 64 * MB || (chunk < 5 * MB && chunk !== size)) return 'The chunk size is invalid.';
  if (count !== Math.floor(size / chunk) || count < 1 || count > 1000) return 'The total chunk count is invalid.';
  if (size - (count - 1) * chunk > 128 * MB) return 'The final chunk is larger than 128 MB.';
  return null;
}

/** The body of a TikTok API error, for scripting failures with failNext. */
export function tiktokErrorBody(code: string, message: string): ErrorAnswer {
  return { data: {}, error: { code, message, log_id: logId() } };
}

function apiError(status: number, code: string, message: string): Response {
  return Response.json(tiktokErrorBody(code, message), { status });
}

function oauthError(status: number, error: string, description: string): Response {
  return Response.json({ error, error_description: description, log_id: logId() }, { status });
}

/** A success in TikTok's envelope; each caller types its `data` by the contract (`satisfies`). */
function ok(data: CreatorInfo | VideoInitData | ContentInitData | VideoListData | VideoQueryData): Response {
  return Response.json({ data, error: okError() });
}

/** The error object of a success: code "ok". */
function okError(): ApiError {
  return { code: 'ok', message: '', log_id: logId() };
}

/** A Video Object with only the fields asked for in `fields`, as video/list and video/query give it. */
function only(fields: string[], all: Video): Video {
  return Object.fromEntries(Object.entries(all).filter(([k]) => fields.includes(k)));
}

function reply(r: Exclude<FakeResponse, 'hang' | 'accept-then-hang'>): Response {
  if (r.body === undefined) return new Response(null, { status: r.status, headers: r.headers });
  return Response.json(r.body, { status: r.status, headers: r.headers });
}

let logs = 0;
function logId(): string {
  return `20261110120000${String(++logs).padStart(6, '0')}ABCDEF`;
}

/** The connector pointed at `f` as the fake's registered app, with short timeouts and polls; `over` changes any option. */
export function tikTokConnector(f: { url: string }, over: TikTokConnectorOptions = {}) {
  return createTikTokConnector({
    baseUrl: f.url,
    oauth: FAKE_APP,
    timeoutMs: 2_000,
    uploadTimeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
    ...over,
  });
}
