// A local fake of the parts of Google's APIs the YouTube connector uses: the resumable upload
// protocol of videos.insert (session POST → Location, chunked PUTs answered 308 + Range, status
// queries with `Content-Range: bytes */N`, 404 for an expired session), channels.list?mine=true,
// playlistItems.list on the uploads playlist, commentThreads.insert and commentThreads.list (with
// the replies part), comments.list, comments.insert, comments.setModerationStatus and
// comments.delete, videoCategories.list, and the OAuth token endpoint. Errors have Google's
// shape: {"error": {"code", "message", "errors": [{"domain", "reason", "message"}], "status"}}.
// The comment methods refuse a part or a parameter they do not document (unknownPart,
// unexpectedParameter), a token without youtube.force-ssl for what they write, another channel's
// video or comment (403 forbidden), and a comment or video YouTube does not have, with the
// reasons and messages of YouTube's reference. The bodies it receives are checked against TypeBox
// schemas of the published youtube_v3 resources (@googleapis/youtube; test/shapes-youtube.test.ts
// holds them to those types): a field the resource does not have is refused as Google refuses an
// unknown name, a value of the wrong type or outside a documented enumeration as YouTube refuses
// invalid metadata.
import type { youtube_v3 } from '@googleapis/youtube';
import { Type as T, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

const Strict = { additionalProperties: false } as const;

/** videos.insert: the writable parts of Schema$Video's snippet and status. */
export const VideoInsertSchema = T.Object(
  {
    snippet: T.Optional(
      T.Object(
        {
          title: T.Optional(T.String()),
          description: T.Optional(T.String()),
          tags: T.Optional(T.Array(T.String())),
          categoryId: T.Optional(T.String()),
          defaultLanguage: T.Optional(T.String()),
        },
        Strict,
      ),
    ),
    status: T.Optional(
      T.Object(
        {
          privacyStatus: T.Optional(T.Union([T.Literal('public'), T.Literal('unlisted'), T.Literal('private')])),
          embeddable: T.Optional(T.Boolean()),
          license: T.Optional(T.Union([T.Literal('youtube'), T.Literal('creativeCommon')])),
          publicStatsViewable: T.Optional(T.Boolean()),
          publishAt: T.Optional(T.String()),
          selfDeclaredMadeForKids: T.Optional(T.Boolean()),
          containsSyntheticMedia: T.Optional(T.Boolean()),
        },
        Strict,
      ),
    ),
  },
  Strict,
);

/** commentThreads.insert: Schema$CommentThread's snippet with its top-level comment's text. */
export const CommentThreadInsertSchema = T.Object(
  {
    snippet: T.Object(
      {
        videoId: T.String(),
        channelId: T.Optional(T.String()),
        topLevelComment: T.Object({ snippet: T.Object({ textOriginal: T.String() }, Strict) }, Strict),
      },
      Strict,
    ),
  },
  Strict,
);

/** comments.insert: Schema$Comment's snippet, a reply's parent and text. */
export const CommentInsertSchema = T.Object({ snippet: T.Object({ parentId: T.String(), textOriginal: T.String() }, Strict) }, Strict);

/**
 * A body that breaks the resource's schema, refused as Google refuses it: an unknown field by
 * name ("Invalid JSON payload received. Unknown name …"), any other break with the method's
 * invalid-metadata reason.
 */
function refuseShape(schema: TSchema, body: unknown, invalidReason: string): Response | null {
  const errors = [...Value.Errors(schema, body)];
  if (!errors.length) return null;
  // Google reads the JSON into the resource first: an unknown name fails before any value is checked.
  const unknown = errors.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties);
  if (unknown) {
    const path = unknown.path.split('/').filter(Boolean);
    const name = path.pop()!;
    return unknownField(name, ['resource', ...path].join('.'));
  }
  return googleError(400, invalidReason, 'The request metadata is invalid.', 'INVALID_ARGUMENT');
}

export interface FakeVideo {
  id: string;
  title: string;
  description: string;
  categoryId: string | null;
  tags: string[];
  privacyStatus: string;
  selfDeclaredMadeForKids: boolean | null;
  mimeType: string;
  size: number;
  token: string;
  publishedAt: string;
  /** The channel that owns the video (ours unless a test says otherwise). */
  channelId: string;
  /** videos.list statistics (tests set what viewers did); likeCount null when the owner hides it. */
  statistics: { viewCount: number; likeCount: number | null; commentCount: number; favoriteCount: number };
}

/** A comment: a top-level one (its thread has the same id), or a reply in a thread (parentId). */
export interface FakeComment {
  id: string;
  videoId: string;
  /** The thread's top-level comment, for a reply; null for a top-level comment. */
  parentId: string | null;
  text: string;
  authorChannelId: string;
  /** As YouTube shows a channel: its handle ("@name") for most. */
  authorDisplayName: string;
  publishedAt: string;
  /** published: shown; heldForReview: waiting in the owner's review queue; rejected: hidden for good. */
  moderationStatus: 'published' | 'heldForReview' | 'rejected';
}

export interface FakeSession {
  uploadId: string;
  token: string;
  size: number;
  mimeType: string;
  metadata: { snippet: Record<string, unknown>; status: Record<string, unknown> };
  /** The session POST's `notifySubscribers` query parameter; null when not sent (YouTube: true). */
  notifySubscribers: boolean | null;
  received: number;
  /** Byte length of every data PUT that was accepted, in order. */
  chunks: number[];
  video: FakeVideo | null;
  expired: boolean;
}

export interface FakeRequest {
  method: string;
  path: string;
  search: string;
  contentRange: string | null;
  authorization: string | null;
}

/**
 * `accept: true` applies the request, then answers this instead (a PUT whose chunk arrived but
 * whose answer was a 503). 'hang': never answer. 'accept-then-hang': apply it, then never answer.
 */
export type FakeResponse =
  | { status: number; body?: unknown; headers?: Record<string, string>; accept?: boolean }
  | 'hang'
  | 'accept-then-hang';

export interface FakeYouTubeOptions {
  /**
   * Refuse an upload whose metadata leaves out status.selfDeclaredMadeForKids, as a channel that
   * must declare its audience for every video (off by default: the connector always sends it).
   */
  requireMadeForKids?: boolean;
}

export type FakeRoute =
  | 'insert'
  | 'upload'
  | 'channels'
  | 'playlistItems'
  | 'videos'
  | 'comment'
  | 'comments'
  | 'reply'
  | 'replies'
  | 'moderate'
  | 'deleteComment'
  | 'categories'
  | 'token';

export interface FakeYouTube {
  url: string;
  channelId: string;
  videos: FakeVideo[];
  comments: FakeComment[];
  sessions: FakeSession[];
  requests: FakeRequest[];
  validTokens: Set<string>;
  /** Valid for videos.insert only (youtube.upload scope): reads answer 403 insufficientPermissions. */
  uploadOnlyTokens: Set<string>;
  /** Valid, but granted without youtube.force-ssl: commentThreads.insert answers 403 insufficientPermissions. */
  noCommentTokens: Set<string>;
  refreshTokens: Set<string>;
  /** Access tokens issued by POST /token, in order. */
  issuedTokens: string[];
  failNext(n: number, response: FakeResponse, route?: FakeRoute): void;
  expireToken(token: string): void;
  /** The session answers 404 from now on, as Google does for an expired session URI. */
  expireSession(uploadId: string): void;
  /** Puts a video in the uploads playlist as if uploaded earlier. */
  addVideo(v: Partial<FakeVideo> & { title: string; description: string }): FakeVideo;
  /** A comment on a video, by another channel unless authorChannelId says otherwise. */
  addComment(c: Partial<FakeComment> & { videoId: string; text: string }): FakeComment;
  /** A reply in the thread of `parent` (a top-level comment), by another channel unless `over` says otherwise. */
  addReply(parent: FakeComment, text: string, over?: Partial<FakeComment>): FakeComment;
  stop(): Promise<void>;
}

export const FAKE_CLIENT = { clientId: 'client-123.apps.googleusercontent.com', clientSecret: 'GOCSPX-secret' };

const QUANTUM = 256 * 1024;
const MAX_COMMENT = 10_000;
/**
 * videoCategories.list for the US, as YouTube answers it: some categories exist for browsing only
 * (assignable false) and cannot be given to an upload. The fake answers this list for every region.
 */
export const VIDEO_CATEGORIES: { id: string; title: string; assignable: boolean }[] = [
  { id: '1', title: 'Film & Animation', assignable: true },
  { id: '2', title: 'Autos & Vehicles', assignable: true },
  { id: '10', title: 'Music', assignable: true },
  { id: '15', title: 'Pets & Animals', assignable: true },
  { id: '17', title: 'Sports', assignable: true },
  { id: '18', title: 'Short Movies', assignable: false },
  { id: '19', title: 'Travel & Events', assignable: true },
  { id: '20', title: 'Gaming', assignable: true },
  { id: '21', title: 'Videoblogging', assignable: false },
  { id: '22', title: 'People & Blogs', assignable: true },
  { id: '23', title: 'Comedy', assignable: true },
  { id: '24', title: 'Entertainment', assignable: true },
  { id: '25', title: 'News & Politics', assignable: true },
  { id: '26', title: 'Howto & Style', assignable: true },
  { id: '27', title: 'Education', assignable: true },
  { id: '28', title: 'Science & Technology', assignable: true },
  { id: '29', title: 'Nonprofits & Activism', assignable: true },
  { id: '30', title: 'Movies', assignable: false },
  { id: '44', title: 'Trailers', assignable: false },
];
const CATEGORIES = new Set(VIDEO_CATEGORIES.filter((c) => c.assignable).map((c) => c.id));

export async function startFakeYouTube(opts: FakeYouTubeOptions = {}): Promise<FakeYouTube> {
  const channelId = 'UCfakechannel0000000000a';
  const uploadsPlaylist = `UU${channelId.slice(2)}`;
  const videos: FakeVideo[] = [];
  const comments: FakeComment[] = [];
  const sessions: FakeSession[] = [];
  const requests: FakeRequest[] = [];
  const validTokens = new Set(['good-token']);
  const uploadOnlyTokens = new Set<string>();
  const noCommentTokens = new Set<string>();
  const refreshTokens = new Set(['good-refresh']);
  const issuedTokens: string[] = [];
  const canned: Record<FakeRoute, FakeResponse[]> = {
    insert: [],
    upload: [],
    channels: [],
    playlistItems: [],
    videos: [],
    comment: [],
    comments: [],
    reply: [],
    replies: [],
    moderate: [],
    deleteComment: [],
    categories: [],
    token: [],
  };
  const hanging = new Set<() => void>();
  let counter = 0;

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    requests.push({
      method: req.method,
      path,
      search: url.search,
      contentRange: req.headers.get('content-range'),
      authorization: req.headers.get('authorization'),
    });
    const route = routeOf(req.method, path, url);
    if (!route) return googleError(404, 'notFound', 'Not Found', 'NOT_FOUND');

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
      const auth = authorize(req, route);
      if (auth instanceof Response) return auth;
      if (route === 'insert') res = await insert(req, url, auth);
      else if (route === 'channels') res = channels(url);
      else if (route === 'videos') res = videoList(url);
      else if (route === 'comment') res = await insertComment(req, url, auth);
      else if (route === 'comments') res = commentList(url);
      else if (route === 'reply') res = await insertReply(req, url);
      else if (route === 'replies') res = replyList(url);
      else if (route === 'moderate') res = moderate(url);
      else if (route === 'deleteComment') res = deleteComment(url);
      else if (route === 'categories') res = categoryList(url);
      else res = playlistItems(url);
    }
    if (acceptThenHang) return hang(req);
    return after ? reply(after) : res;
  }

  function routeOf(method: string, path: string, url: URL): FakeRoute | null {
    if (path === '/upload/youtube/v3/videos') {
      if (method === 'POST' && url.searchParams.get('uploadType') === 'resumable') return 'insert';
      if (method === 'PUT' && url.searchParams.get('upload_id')) return 'upload';
    }
    if (method === 'GET' && path === '/youtube/v3/channels') return 'channels';
    if (method === 'GET' && path === '/youtube/v3/playlistItems') return 'playlistItems';
    if (method === 'GET' && path === '/youtube/v3/videos') return 'videos';
    if (method === 'POST' && path === '/youtube/v3/commentThreads') return 'comment';
    if (method === 'GET' && path === '/youtube/v3/commentThreads') return 'comments';
    if (method === 'POST' && path === '/youtube/v3/comments') return 'reply';
    if (method === 'GET' && path === '/youtube/v3/comments') return 'replies';
    if (method === 'POST' && path === '/youtube/v3/comments/setModerationStatus') return 'moderate';
    if (method === 'DELETE' && path === '/youtube/v3/comments') return 'deleteComment';
    if (method === 'GET' && path === '/youtube/v3/videoCategories') return 'categories';
    if (method === 'POST' && path === '/token') return 'token';
    return null;
  }

  function authorize(req: Request, route: FakeRoute): string | Response {
    const token = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
    if (!token || !(validTokens.has(token) || uploadOnlyTokens.has(token))) {
      return googleError(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
        'UNAUTHENTICATED',
        { 'WWW-Authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
        'Invalid Credentials',
      );
    }
    if (route !== 'insert' && !validTokens.has(token)) {
      return googleError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
    }
    // Writing comments (comments.insert, setModerationStatus, delete) needs youtube.force-ssl.
    if ((route === 'reply' || route === 'moderate' || route === 'deleteComment') && noCommentTokens.has(token)) {
      return googleError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
    }
    return token;
  }

  async function insert(req: Request, url: URL, token: string): Promise<Response> {
    const parts = (url.searchParams.get('part') ?? '').split(',');
    if (!parts.includes('snippet') || !parts.includes('status')) {
      return googleError(400, 'unexpectedPart', 'The part parameter must name snippet and status for this fake.', 'INVALID_ARGUMENT');
    }
    if (!(req.headers.get('content-type') ?? '').startsWith('application/json')) {
      return googleError(400, 'badContent', 'The metadata must be sent as application/json.', 'INVALID_ARGUMENT');
    }
    const size = Number(req.headers.get('x-upload-content-length'));
    if (!Number.isInteger(size) || size <= 0) {
      return googleError(400, 'badRequest', 'X-Upload-Content-Length must be the byte size of the video.', 'INVALID_ARGUMENT');
    }
    const mimeType = req.headers.get('x-upload-content-type') ?? '';
    if (!mimeType.startsWith('video/') && mimeType !== 'application/octet-stream') {
      return googleError(400, 'invalidContentType', `Media type '${mimeType}' is not supported.`, 'INVALID_ARGUMENT');
    }
    let body: Record<string, unknown>;
    try {
      body = (await req.json()) as Record<string, unknown>;
    } catch {
      return googleError(400, 'parseError', 'Parse Error', 'INVALID_ARGUMENT');
    }
    const problem = validateMetadata(body);
    if (problem) return problem;
    const notify = url.searchParams.get('notifySubscribers');
    if (notify !== null && notify !== 'true' && notify !== 'false') {
      return googleError(400, 'invalidParameter', `Invalid boolean value: '${notify}'.`, 'INVALID_ARGUMENT');
    }
    const uploadId = `AUs${++counter}x${Math.random().toString(36).slice(2, 10)}`;
    sessions.push({
      uploadId,
      token,
      size,
      mimeType,
      metadata: body as FakeSession['metadata'],
      notifySubscribers: notify === null ? null : notify === 'true',
      received: 0,
      chunks: [],
      video: null,
      expired: false,
    });
    const location = `${base}/upload/youtube/v3/videos?uploadType=resumable&upload_id=${uploadId}&part=snippet%2Cstatus`;
    return new Response(null, { status: 200, headers: { Location: location, 'X-GUploader-UploadID': uploadId } });
  }

  function validateMetadata(body: Record<string, unknown>): Response | null {
    const broken = refuseShape(VideoInsertSchema, body, 'invalidVideoMetadata');
    if (broken) return broken;
    const snippet = (body.snippet ?? {}) as Record<string, unknown>;
    const status = (body.status ?? {}) as Record<string, unknown>;
    const title = snippet.title;
    if (typeof title !== 'string' || !title.trim() || Array.from(title).length > 100 || /[<>]/.test(title)) {
      return googleError(400, 'invalidTitle', 'The request metadata specifies an invalid or empty video title.', 'INVALID_ARGUMENT');
    }
    const description = snippet.description ?? '';
    if (typeof description !== 'string' || new TextEncoder().encode(description).byteLength > 5000 || /[<>]/.test(description)) {
      return googleError(400, 'invalidDescription', 'The request metadata specifies an invalid video description.', 'INVALID_ARGUMENT');
    }
    if (snippet.tags !== undefined && !validTags(snippet.tags)) {
      return googleError(400, 'invalidTags', 'The request metadata specifies invalid video keywords.', 'INVALID_ARGUMENT');
    }
    if (snippet.categoryId !== undefined && (typeof snippet.categoryId !== 'string' || !CATEGORIES.has(snippet.categoryId))) {
      return googleError(400, 'invalidCategoryId', 'The request metadata specifies an invalid video category.', 'INVALID_ARGUMENT');
    }
    if (opts.requireMadeForKids && status.selfDeclaredMadeForKids === undefined) {
      return googleError(
        400,
        'invalidVideoMetadata',
        'The request metadata must declare whether the video is made for kids (status.selfDeclaredMadeForKids).',
        'INVALID_ARGUMENT',
      );
    }
    return null;
  }

  async function upload(req: Request, url: URL): Promise<Response> {
    const session = sessions.find((s) => s.uploadId === url.searchParams.get('upload_id'));
    if (!session || session.expired) return new Response('Not Found', { status: 404, headers: { 'Content-Type': 'text/plain' } });
    const bytes = new Uint8Array(await req.arrayBuffer());
    const range = req.headers.get('content-range') ?? '';
    const query = /^bytes \*\/(\d+)$/.exec(range);
    if (query) {
      if (Number(query[1]) !== session.size || bytes.byteLength) return badRange(range);
      return progress(session);
    }
    if (session.video) return progress(session); // finished: repeats the final answer
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    if (!m) return badRange(range);
    const [from, to, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (total !== session.size || to < from || to >= total || bytes.byteLength !== to - from + 1) return badRange(range);
    const type = req.headers.get('content-type');
    if (type && type !== session.mimeType) {
      return googleError(
        400,
        'invalidContentType',
        `Content-Type ${type} differs from X-Upload-Content-Type ${session.mimeType}.`,
        'INVALID_ARGUMENT',
      );
    }
    const last = to === total - 1;
    if (!last && bytes.byteLength % QUANTUM !== 0) {
      return googleError(400, 'badRequest', `Chunk size ${bytes.byteLength} is not a multiple of ${QUANTUM} bytes.`, 'INVALID_ARGUMENT');
    }
    // A block that overlaps or skips bytes is not taken; the client learns the real offset from Range.
    if (from !== session.received) return progress(session);
    session.received = to + 1;
    session.chunks.push(bytes.byteLength);
    if (last) session.video = createVideo(session);
    return progress(session);
  }

  function progress(session: FakeSession): Response {
    if (session.video) return json(videoJson(session.video), 201);
    const headers: Record<string, string> = { 'Content-Length': '0' };
    if (session.received > 0) headers.Range = `bytes=0-${session.received - 1}`;
    return new Response(null, { status: 308, headers });
  }

  function createVideo(session: FakeSession): FakeVideo {
    const { snippet, status } = session.metadata;
    const video: FakeVideo = {
      id: `yt${String(++counter).padStart(9, '0')}`,
      title: String(snippet.title),
      description: String(snippet.description ?? ''),
      categoryId: typeof snippet.categoryId === 'string' ? snippet.categoryId : null,
      tags: Array.isArray(snippet.tags) ? (snippet.tags as string[]) : [],
      privacyStatus: String(status.privacyStatus ?? 'public'),
      selfDeclaredMadeForKids: typeof status.selfDeclaredMadeForKids === 'boolean' ? status.selfDeclaredMadeForKids : null,
      statistics: { viewCount: 0, likeCount: 0, commentCount: 0, favoriteCount: 0 },
      mimeType: session.mimeType,
      size: session.size,
      token: session.token,
      publishedAt: new Date().toISOString(),
      channelId,
    };
    videos.push(video);
    return video;
  }

  /** videos.list by id (at most 50); the statistics part as strings, likeCount left out when hidden. */
  function videoList(url: URL): Response {
    const ids = (url.searchParams.get('id') ?? '').split(',').filter(Boolean);
    if (!ids.length) {
      return googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: myRated, chart, id', 'INVALID_ARGUMENT');
    }
    if (ids.length > 50)
      return googleError(400, 'invalidFilters', 'The request specifies an invalid filter parameter.', 'INVALID_ARGUMENT');
    const parts = (url.searchParams.get('part') ?? '').split(',');
    const items = videos
      .filter((v) => ids.includes(v.id))
      .map((v) => ({
        kind: 'youtube#video',
        id: v.id,
        ...(parts.includes('statistics')
          ? {
              statistics: {
                viewCount: String(v.statistics.viewCount),
                ...(v.statistics.likeCount === null ? {} : { likeCount: String(v.statistics.likeCount) }),
                favoriteCount: String(v.statistics.favoriteCount),
                commentCount: String(v.statistics.commentCount),
              },
            }
          : {}),
      }));
    return json(
      answer<youtube_v3.Schema$VideoListResponse>({
        kind: 'youtube#videoListResponse',
        pageInfo: { totalResults: items.length, resultsPerPage: items.length },
        items,
      }),
    );
  }

  /** commentThreads.insert: a top-level comment as this channel; the thread resource in the answer. */
  async function insertComment(req: Request, url: URL, token: string): Promise<Response> {
    if (noCommentTokens.has(token)) {
      return googleError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
    }
    if (!(url.searchParams.get('part') ?? '').split(',').includes('snippet')) {
      return googleError(400, 'unexpectedPart', 'The part parameter must name snippet for this fake.', 'INVALID_ARGUMENT');
    }
    let body: Record<string, unknown>;
    try {
      body = (await req.json()) as Record<string, unknown>;
    } catch {
      return googleError(400, 'parseError', 'Parse Error', 'INVALID_ARGUMENT');
    }
    const broken = refuseShape(CommentThreadInsertSchema, body, 'invalidCommentMetadata');
    if (broken) return broken;
    const snippet = (body.snippet ?? {}) as { videoId?: unknown; topLevelComment?: { snippet?: { textOriginal?: unknown } } };
    const text = snippet.topLevelComment?.snippet?.textOriginal;
    if (typeof snippet.videoId !== 'string' || typeof text !== 'string' || !text.trim()) {
      return googleError(400, 'invalidCommentMetadata', 'The request metadata is invalid.', 'INVALID_ARGUMENT');
    }
    if (Array.from(text).length > MAX_COMMENT) {
      return googleError(
        400,
        'commentTextTooLong',
        'The comment resource that is being inserted contains too many characters in the <code>snippet.topLevelComment.snippet.textOriginal</code> property.',
        'INVALID_ARGUMENT',
      );
    }
    if (!videos.some((v) => v.id === snippet.videoId)) return videoNotFound('insert');
    return json(threadJson(addComment({ videoId: snippet.videoId, text, authorChannelId: channelId }), ['id', 'snippet'], 'html'));
  }

  /**
   * commentThreads.list by videoId: the video's published top-level comments (moderationStatus
   * heldForReview or likelySpam lists those instead, for the video's owner only), newest first,
   * paged; the replies part carries a thread's first REPLIES_INLINE replies, totalReplyCount all
   * of them. textDisplay is HTML unless textFormat=plainText; textOriginal only for its author.
   */
  function commentList(url: URL): Response {
    const q = url.searchParams;
    const bad = unexpected(q, THREAD_LIST_PARAMS);
    if (bad) return bad;
    const parts = partsOf(q, ['id', 'snippet', 'replies']);
    if (parts instanceof Response) return parts;
    const videoId = q.get('videoId');
    if (!videoId) {
      return googleError(
        400,
        'missingRequiredParameter',
        'No filter selected. Expected one of: allThreadsRelatedToChannelId, videoId, id',
        'INVALID_ARGUMENT',
      );
    }
    const format = textFormat(q);
    if (format instanceof Response) return format;
    const video = videos.find((v) => v.id === videoId);
    if (!video) return videoNotFound('list');
    const max = maxResults(q, 20);
    if (max instanceof Response) return max;
    const order = q.get('order') ?? 'time';
    if (order !== 'time' && order !== 'relevance') return invalidValue(order, ['time', 'relevance']);
    const status = q.get('moderationStatus') ?? 'published';
    if (!['published', 'heldForReview', 'likelySpam'].includes(status))
      return invalidValue(status, ['heldForReview', 'likelySpam', 'published']);
    if (status !== 'published' && video.channelId !== channelId)
      return forbidden('The request is not properly authorized to retrieve the specified comment threads.');
    const newestFirst = comments.filter((c) => c.videoId === videoId && !c.parentId && c.moderationStatus === status).reverse();
    const start = pageStart(q);
    if (start instanceof Response) return start;
    const next = start + max < newestFirst.length ? btoa(String(start + max)) : undefined;
    return json(
      answer<youtube_v3.Schema$CommentThreadListResponse>({
        kind: 'youtube#commentThreadListResponse',
        ...(next ? { nextPageToken: next } : {}),
        pageInfo: { totalResults: newestFirst.length, resultsPerPage: max },
        items: newestFirst.slice(start, start + max).map((c) => threadJson(c, parts, format)),
      }),
    );
  }

  /**
   * comments.list: by id (a comma-separated list; 404 commentNotFound when one is not there) or
   * by parentId (the thread's published replies, oldest first, paged). maxResults and pageToken
   * go with parentId only.
   */
  function replyList(url: URL): Response {
    const q = url.searchParams;
    const bad = unexpected(q, COMMENT_LIST_PARAMS);
    if (bad) return bad;
    const parts = partsOf(q, ['id', 'snippet']);
    if (parts instanceof Response) return parts;
    const format = textFormat(q);
    if (format instanceof Response) return format;
    const ids = q.get('id');
    const parentId = q.get('parentId');
    if (!ids === !parentId) {
      return ids
        ? googleError(400, 'incompatibleParameters', 'The id and parentId parameters cannot be used together.', 'INVALID_ARGUMENT')
        : googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: id, parentId', 'INVALID_ARGUMENT');
    }
    if (ids) {
      if (q.has('maxResults') || q.has('pageToken')) {
        return googleError(
          400,
          'incompatibleParameters',
          'The id parameter cannot be used with maxResults or pageToken.',
          'INVALID_ARGUMENT',
        );
      }
      const wanted = ids.split(',');
      const found = wanted.map((id) => comments.find((c) => c.id === id));
      if (found.some((c) => !c)) return commentNotFound('One or more of the comments identified by the id parameter could not be found.');
      return json(
        answer<youtube_v3.Schema$CommentListResponse>({
          kind: 'youtube#commentListResponse',
          items: (found as FakeComment[]).map((c) => commentJson(c, parts, format)),
        }),
      );
    }
    const parent = comments.find((c) => c.id === parentId && !c.parentId);
    if (!parent) return commentNotFound('The comment identified by the parentId parameter could not be found.');
    const max = maxResults(q, 20);
    if (max instanceof Response) return max;
    const replies = publishedReplies(parent);
    const start = pageStart(q);
    if (start instanceof Response) return start;
    const next = start + max < replies.length ? btoa(String(start + max)) : undefined;
    return json(
      answer<youtube_v3.Schema$CommentListResponse>({
        kind: 'youtube#commentListResponse',
        ...(next ? { nextPageToken: next } : {}),
        pageInfo: { totalResults: replies.length, resultsPerPage: max },
        items: replies.slice(start, start + max).map((c) => commentJson(c, parts, format)),
      }),
    );
  }

  /**
   * comments.insert: a reply as this channel, snippet.parentId naming a top-level comment (a
   * reply to a reply is refused here: YouTube's threads are one level deep, and its answer to
   * such a parentId is not documented). A parent YouTube does not have is 404
   * parentCommentNotFound.
   */
  async function insertReply(req: Request, url: URL): Promise<Response> {
    const bad = unexpected(url.searchParams, new Set(['part']));
    if (bad) return bad;
    const parts = partsOf(url.searchParams, ['id', 'snippet']);
    if (parts instanceof Response) return parts;
    if (!parts.includes('snippet')) {
      return googleError(400, 'unexpectedPart', 'The part parameter must name snippet for this fake.', 'INVALID_ARGUMENT');
    }
    let body: Record<string, unknown>;
    try {
      body = (await req.json()) as Record<string, unknown>;
    } catch {
      return googleError(400, 'parseError', 'Parse Error', 'INVALID_ARGUMENT');
    }
    const broken = refuseShape(CommentInsertSchema, body, 'invalidCommentMetadata');
    if (broken) return broken;
    const snippet = (body.snippet ?? {}) as Record<string, unknown>;
    const text = snippet.textOriginal;
    if (typeof snippet.parentId !== 'string' || typeof text !== 'string' || !text.trim()) {
      return googleError(400, 'invalidCommentMetadata', 'The request metadata is invalid.', 'INVALID_ARGUMENT');
    }
    if (Array.from(text).length > MAX_COMMENT) {
      return googleError(
        400,
        'commentTextTooLong',
        'The comment resource that is being inserted contains too many characters in the <code>snippet.textOriginal</code> property.',
        'INVALID_ARGUMENT',
      );
    }
    const parent = comments.find((c) => c.id === snippet.parentId);
    if (!parent || !videos.some((v) => v.id === parent.videoId)) {
      return googleError(
        404,
        'parentCommentNotFound',
        'The specified parent comment could not be found. Check the value of the <code>snippet.parentId</code> property in the request body to ensure that it is correct.',
        'NOT_FOUND',
      );
    }
    if (parent.parentId)
      return googleError(400, 'operationNotSupported', 'A reply answers a top-level comment in this fake.', 'INVALID_ARGUMENT');
    const made = addReply(parent, text, { authorChannelId: channelId });
    return json(commentJson(made, ['id', 'snippet'], 'html'));
  }

  /**
   * comments.setModerationStatus: for the owner of the comments' video only (403 forbidden);
   * banAuthor only with rejected; a rejected comment cannot be published again (YouTube states the
   * rule, not its error: processingFailure here). 204.
   */
  function moderate(url: URL): Response {
    const q = url.searchParams;
    const bad = unexpected(q, new Set(['id', 'moderationStatus', 'banAuthor']));
    if (bad) return bad;
    const ids = (q.get('id') ?? '').split(',').filter(Boolean);
    const status = q.get('moderationStatus');
    if (!ids.length || !status) {
      return googleError(400, 'missingRequiredParameter', `No ${ids.length ? 'moderationStatus' : 'id'} given.`, 'INVALID_ARGUMENT');
    }
    if (ids.length > 50) return googleError(400, 'invalidValue', 'At most 50 comment ids.', 'INVALID_ARGUMENT');
    if (status !== 'heldForReview' && status !== 'published' && status !== 'rejected') {
      return invalidValue(status, ['heldForReview', 'published', 'rejected']);
    }
    if (q.get('banAuthor') === 'true' && status !== 'rejected') {
      return googleError(
        400,
        'banWithoutReject',
        'The <code>banAuthor</code> parameter can only be used if the <code>moderationStatus</code> parameter value is <code>rejected</code>.',
        'INVALID_ARGUMENT',
      );
    }
    const found = ids.map((id) => comments.find((c) => c.id === id));
    if (found.some((c) => !c)) return commentNotFound('One or more of the comments that the request is trying to update cannot be found.');
    const targets = found as FakeComment[];
    if (targets.some((c) => videos.find((v) => v.id === c.videoId)?.channelId !== channelId)) {
      return forbidden('The moderation status of one or more comments cannot be set due to insufficient permissions.');
    }
    if (status === 'published' && targets.some((c) => c.moderationStatus === 'rejected')) {
      return googleError(
        400,
        'processingFailure',
        "A rejected comment's moderation status cannot be changed to published.",
        'INVALID_ARGUMENT',
      );
    }
    for (const c of targets) c.moderationStatus = status;
    return new Response(null, { status: 204 });
  }

  /** comments.delete: the comment's author only (403 forbidden); its replies go with it. 204. */
  function deleteComment(url: URL): Response {
    const q = url.searchParams;
    const bad = unexpected(q, new Set(['id']));
    if (bad) return bad;
    const id = q.get('id');
    if (!id) return googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: id', 'INVALID_ARGUMENT');
    const c = comments.find((x) => x.id === id);
    if (!c)
      return commentNotFound('The specified comment could not be found. Check the value of the id parameter to ensure that it is correct.');
    if (c.authorChannelId !== channelId) {
      return forbidden(
        'The comment could not be deleted because of insufficient permissions. The request might not be properly authorized.',
      );
    }
    for (let i = comments.length - 1; i >= 0; i--) if (comments[i]!.id === id || comments[i]!.parentId === id) comments.splice(i, 1);
    return new Response(null, { status: 204 });
  }

  const publishedReplies = (parent: FakeComment) => comments.filter((c) => c.parentId === parent.id && c.moderationStatus === 'published');

  function videoNotFound(method: 'insert' | 'list'): Response {
    return googleError(
      404,
      'videoNotFound',
      `The video identified by the <code><a href="/youtube/v3/docs/commentThreads/${method}#videoId">videoId</a></code> parameter could not be found.`,
      'NOT_FOUND',
    );
  }

  function addComment(c: Partial<FakeComment> & { videoId: string; text: string }): FakeComment {
    const author = c.authorChannelId ?? 'UCsomeoneelse00000000000';
    const comment: FakeComment = {
      id: `Ugz${String(++counter).padStart(8, '0')}AaABAg`,
      parentId: null,
      authorChannelId: author,
      authorDisplayName: author === channelId ? '@fakechannel' : '@someone',
      publishedAt: new Date().toISOString(),
      moderationStatus: 'published',
      ...c,
    };
    comments.push(comment);
    const video = videos.find((v) => v.id === c.videoId);
    if (video) video.statistics.commentCount++;
    return comment;
  }

  /** A reply's id is its thread's id, a dot and a part of its own, as YouTube's are. */
  function addReply(parent: FakeComment, text: string, over: Partial<FakeComment> = {}): FakeComment {
    return addComment({
      id: `${parent.id}.${String(++counter).padStart(6, '0')}AbCdEf`,
      videoId: parent.videoId,
      text,
      ...over,
      parentId: parent.id,
    });
  }

  /** videoCategories.list: part=snippet with regionCode (an ISO 3166-1 alpha-2 code) or id. */
  function categoryList(url: URL): Response {
    if (url.searchParams.get('part') !== 'snippet') {
      return googleError(400, 'required', "No filter selected. Expected one of: part 'snippet'.", 'INVALID_ARGUMENT');
    }
    const region = url.searchParams.get('regionCode');
    const ids = url.searchParams.get('id')?.split(',');
    if (!region && !ids)
      return googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: id, regionCode', 'INVALID_ARGUMENT');
    if (region && !/^[A-Za-z]{2}$/.test(region)) {
      return googleError(
        400,
        'invalidRegionCode',
        'The <code>regionCode</code> parameter specifies an invalid region code.',
        'INVALID_ARGUMENT',
      );
    }
    const items = VIDEO_CATEGORIES.filter((c) => !ids || ids.includes(c.id)).map((c) => ({
      kind: 'youtube#videoCategory',
      etag: `etag-cat-${c.id}`,
      id: c.id,
      snippet: { title: c.title, assignable: c.assignable, channelId: 'UCBR8-60-B28hp2BmDPdntcQ' },
    }));
    return json(
      answer<youtube_v3.Schema$VideoCategoryListResponse>({ kind: 'youtube#videoCategoryListResponse', etag: 'etag-categories', items }),
    );
  }

  /** A commentThread resource with the parts asked for; the replies part holds the first REPLIES_INLINE replies. */
  function threadJson(c: FakeComment, parts: string[], format: TextFormat): youtube_v3.Schema$CommentThread {
    const replies = publishedReplies(c);
    const inline = replies.slice(0, REPLIES_INLINE);
    return {
      kind: 'youtube#commentThread',
      etag: `etag-${c.id}`,
      id: c.id,
      ...(parts.includes('snippet')
        ? {
            snippet: {
              channelId: ownerOf(c),
              videoId: c.videoId,
              topLevelComment: commentJson(c, ['id', 'snippet'], format),
              canReply: true,
              totalReplyCount: replies.length,
              isPublic: true,
            },
          }
        : {}),
      ...(parts.includes('replies') && inline.length
        ? { replies: { comments: inline.map((r) => commentJson(r, ['id', 'snippet'], format)) } }
        : {}),
    };
  }

  /** A comment resource; textOriginal only for its author (this fake's viewer is always our channel). */
  function commentJson(c: FakeComment, parts: string[], format: TextFormat): youtube_v3.Schema$Comment {
    const handle = c.authorDisplayName.startsWith('@') ? c.authorDisplayName : null;
    return {
      kind: 'youtube#comment',
      etag: `etag-c-${c.id}`,
      id: c.id,
      ...(parts.includes('snippet')
        ? {
            snippet: {
              channelId: ownerOf(c),
              videoId: c.videoId,
              textDisplay: format === 'html' ? htmlOf(c.text) : c.text,
              ...(c.authorChannelId === channelId ? { textOriginal: c.text } : {}),
              ...(c.parentId ? { parentId: c.parentId } : {}),
              authorDisplayName: c.authorDisplayName,
              authorProfileImageUrl: `https://yt3.ggpht.example/${c.authorChannelId}=s48`,
              authorChannelUrl: handle ? `http://www.youtube.com/${handle}` : `http://www.youtube.com/channel/${c.authorChannelId}`,
              authorChannelId: { value: c.authorChannelId },
              canRate: true,
              viewerRating: 'none',
              likeCount: 0,
              publishedAt: c.publishedAt,
              updatedAt: c.publishedAt,
            },
          }
        : {}),
    };
  }

  const ownerOf = (c: FakeComment) => videos.find((v) => v.id === c.videoId)?.channelId ?? channelId;

  function channels(url: URL): Response {
    if (url.searchParams.get('mine') !== 'true') {
      return googleError(400, 'invalidCriteria', 'Exactly one of the filter parameters must be specified.', 'INVALID_ARGUMENT');
    }
    const parts = (url.searchParams.get('part') ?? '').split(',');
    return json(
      answer<youtube_v3.Schema$ChannelListResponse>({
        kind: 'youtube#channelListResponse',
        pageInfo: { totalResults: 1, resultsPerPage: 5 },
        items: [
          {
            kind: 'youtube#channel',
            id: channelId,
            ...(parts.includes('contentDetails') ? { contentDetails: { relatedPlaylists: { likes: '', uploads: uploadsPlaylist } } } : {}),
          },
        ],
      }),
    );
  }

  function playlistItems(url: URL): Response {
    const q = url.searchParams;
    if (q.get('playlistId') !== uploadsPlaylist) {
      return googleError(
        404,
        'playlistNotFound',
        "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
        'NOT_FOUND',
      );
    }
    const max = Number(q.get('maxResults') ?? '5');
    if (!Number.isInteger(max) || max < 0 || max > 50) {
      return googleError(
        400,
        'invalidValue',
        `Invalid value '${q.get('maxResults')}'. Values must be within the range: [0, 50]`,
        'INVALID_ARGUMENT',
      );
    }
    const newestFirst = [...videos].sort((a, b) => b.publishedAt.localeCompare(a.publishedAt));
    const start = q.get('pageToken') ? Number(atob(q.get('pageToken')!)) : 0;
    const page = newestFirst.slice(start, start + max);
    const next = start + max < newestFirst.length ? btoa(String(start + max)) : undefined;
    return json(
      answer<youtube_v3.Schema$PlaylistItemListResponse>({
        kind: 'youtube#playlistItemListResponse',
        ...(next ? { nextPageToken: next } : {}),
        pageInfo: { totalResults: newestFirst.length, resultsPerPage: max },
        items: page.map((v, i) => ({
          kind: 'youtube#playlistItem',
          id: `PLI${start + i}`,
          snippet: {
            publishedAt: v.publishedAt,
            channelId,
            title: v.title,
            description: v.description,
            channelTitle: 'Fake channel',
            playlistId: uploadsPlaylist,
            position: start + i,
            resourceId: { kind: 'youtube#video', videoId: v.id },
          },
        })),
      }),
    );
  }

  async function token(req: Request): Promise<Response> {
    if (!(req.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
      return json({ error: 'invalid_request', error_description: 'Bad Request' }, 400);
    }
    const form = new URLSearchParams(await req.text());
    if (form.get('client_id') !== FAKE_CLIENT.clientId || form.get('client_secret') !== FAKE_CLIENT.clientSecret) {
      return json({ error: 'invalid_client', error_description: 'The OAuth client was not found.' }, 401);
    }
    if (form.get('grant_type') !== 'refresh_token') {
      return json({ error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${form.get('grant_type')}` }, 400);
    }
    if (!refreshTokens.has(form.get('refresh_token') ?? '')) {
      return json({ error: 'invalid_grant', error_description: 'Token has been expired or revoked.' }, 400);
    }
    const access = `ya29.fresh-${issuedTokens.length + 1}`;
    issuedTokens.push(access);
    validTokens.add(access);
    // Google does not rotate refresh tokens: no refresh_token in the answer.
    return json({
      access_token: access,
      expires_in: 3599,
      scope: 'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly',
      token_type: 'Bearer',
    });
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
    channelId,
    videos,
    comments,
    sessions,
    requests,
    validTokens,
    uploadOnlyTokens,
    noCommentTokens,
    refreshTokens,
    issuedTokens,
    failNext(n, response, route = 'insert') {
      for (let i = 0; i < n; i++) canned[route].push(response);
    },
    expireToken(t) {
      validTokens.delete(t);
      uploadOnlyTokens.delete(t);
    },
    expireSession(uploadId) {
      const s = sessions.find((x) => x.uploadId === uploadId);
      if (s) s.expired = true;
    },
    addVideo(v) {
      const video: FakeVideo = {
        id: `yt${String(++counter).padStart(9, '0')}`,
        categoryId: null,
        tags: [],
        privacyStatus: 'public',
        selfDeclaredMadeForKids: false,
        mimeType: 'video/mp4',
        size: 1,
        statistics: { viewCount: 0, likeCount: 0, commentCount: 0, favoriteCount: 0 },
        token: 'good-token',
        publishedAt: new Date().toISOString(),
        channelId,
        ...v,
      };
      videos.push(video);
      return video;
    },
    addComment,
    addReply,
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/**
 * YouTube's keyword rules: strings without < >, at most 500 characters in all, where a tag with
 * a space counts its quotes and tags count the commas between them.
 */
function validTags(tags: unknown): boolean {
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string' || !t.trim() || /[<>]/.test(t))) return false;
  const length = (tags as string[]).reduce((n, t) => n + Array.from(t).length + (t.includes(' ') ? 2 : 0), 0);
  return length + Math.max(0, tags.length - 1) <= 500;
}

function videoJson(v: FakeVideo): youtube_v3.Schema$Video {
  return {
    kind: 'youtube#video',
    etag: `etag-${v.id}`,
    id: v.id,
    snippet: {
      publishedAt: v.publishedAt,
      channelId: 'UCfakechannel0000000000a',
      title: v.title,
      description: v.description,
      categoryId: v.categoryId ?? '22',
      ...(v.tags.length ? { tags: v.tags } : {}),
      liveBroadcastContent: 'none',
    },
    status: {
      uploadStatus: 'uploaded',
      privacyStatus: v.privacyStatus,
      license: 'youtube',
      embeddable: true,
      publicStatsViewable: true,
      ...(v.selfDeclaredMadeForKids === null ? {} : { selfDeclaredMadeForKids: v.selfDeclaredMadeForKids }),
    },
  };
}

type TextFormat = 'html' | 'plainText';
/** Replies a commentThread carries in its replies part; the rest are read with comments.list. */
const REPLIES_INLINE = 5;
const THREAD_LIST_PARAMS = new Set([
  'part',
  'videoId',
  'allThreadsRelatedToChannelId',
  'id',
  'maxResults',
  'moderationStatus',
  'order',
  'pageToken',
  'searchTerms',
  'textFormat',
]);
const COMMENT_LIST_PARAMS = new Set(['part', 'id', 'parentId', 'maxResults', 'pageToken', 'textFormat']);

/** A parameter the method does not document: 400 unexpectedParameter. */
function unexpected(q: URLSearchParams, allowed: Set<string>): Response | null {
  for (const k of q.keys()) {
    if (!allowed.has(k))
      return googleError(400, 'unexpectedParameter', `The request specifies an unexpected parameter: ${k}.`, 'INVALID_ARGUMENT');
  }
  return null;
}

/** The part parameter: required, each name one the method knows (400 unknownPart otherwise). */
function partsOf(q: URLSearchParams, known: string[]): string[] | Response {
  const raw = q.get('part');
  if (!raw) return googleError(400, 'missingRequiredParameter', 'No part parameter given.', 'INVALID_ARGUMENT');
  const parts = raw.split(',').map((p) => p.trim());
  const unknown = parts.find((p) => !known.includes(p));
  return unknown === undefined ? parts : googleError(400, 'unknownPart', `'${unknown}'`, 'INVALID_ARGUMENT');
}

function textFormat(q: URLSearchParams): TextFormat | Response {
  const f = q.get('textFormat') ?? 'html';
  return f === 'html' || f === 'plainText' ? f : invalidValue(f, ['html', 'plainText']);
}

function maxResults(q: URLSearchParams, fallback: number): number | Response {
  const max = Number(q.get('maxResults') ?? String(fallback));
  if (!Number.isInteger(max) || max < 1 || max > 100) {
    return googleError(
      400,
      'invalidValue',
      `Invalid value '${q.get('maxResults')}'. Values must be within the range: [1, 100]`,
      'INVALID_ARGUMENT',
    );
  }
  return max;
}

function pageStart(q: URLSearchParams): number | Response {
  const token = q.get('pageToken');
  if (!token) return 0;
  const n = Number(atob(token));
  return Number.isInteger(n) && n >= 0
    ? n
    : googleError(400, 'invalidPageToken', 'The request specifies an invalid page token.', 'INVALID_ARGUMENT');
}

function invalidValue(value: string, allowed: string[]): Response {
  return googleError(400, 'invalidValue', `Invalid value '${value}'. Values must be one of: ${allowed.join(', ')}`, 'INVALID_ARGUMENT');
}

function forbidden(message: string): Response {
  return googleError(403, 'forbidden', message, 'PERMISSION_DENIED');
}

function commentNotFound(message: string): Response {
  return googleError(404, 'commentNotFound', message, 'NOT_FOUND');
}

/** textDisplay as YouTube renders it by default (textFormat=html): escaped, line breaks as <br>. */
function htmlOf(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '<br>');
}

function reply(r: Exclude<FakeResponse, 'hang' | 'accept-then-hang'>): Response {
  if (r.status === 308 || r.body === undefined) return new Response(null, { status: r.status, headers: r.headers });
  return json(r.body, r.status, r.headers);
}

/** Google's JSON error body. */
export function googleError(
  status: number,
  reason: string,
  message: string,
  grpcStatus: string,
  headers: Record<string, string> = {},
  itemMessage = message,
): Response {
  const body = googleErrorBody(status, reason, message, grpcStatus);
  body.error.errors[0]!.message = itemMessage;
  return json(body, status, headers);
}

function unknownField(name: string, at: string): Response {
  return googleError(
    400,
    'badRequest',
    `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`,
    'INVALID_ARGUMENT',
  );
}

function badRange(range: string): Response {
  return googleError(400, 'badRequest', `Invalid Content-Range: ${range || '(none)'}`, 'INVALID_ARGUMENT');
}

/** An answer body held to the package's response type. */
const answer = <B>(body: B): B => body;

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=UTF-8', ...headers } });
}

/** The body of a Google API error, for scripting failures with failNext. */
export function googleErrorBody(code: number, reason: string, message: string, status = 'FAILED_PRECONDITION') {
  const domain =
    reason === 'quotaExceeded'
      ? 'youtube.quota'
      : reason.startsWith('upload') || /^invalid(VideoMetadata|Title|Description|Tags|CategoryId)$/.test(reason)
        ? 'youtube.video'
        : reason === 'invalidCommentMetadata' || reason === 'commentTextTooLong'
          ? 'youtube.comment'
          : 'global';
  return { error: { code, message, errors: [{ message, domain, reason }], status } };
}
