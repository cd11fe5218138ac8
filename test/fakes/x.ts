// A local fake of the X API v2 parts the connector uses: POST /2/tweets, the dedicated media
// upload endpoints, media metadata, the user timeline and the OAuth 2.0 token endpoint, with X's
// problem-details error bodies, rate-limit headers and rotating refresh tokens. Replies answer a
// post it has (`reply.in_reply_to_tweet_id`) and show as X shows them: `referenced_tweets`
// replied_to, the root's `conversation_id`, and a reply to another account's post with that
// account's handle before its text. Hiding a reply (PUT /2/tweets/:id/hidden) and deleting a post
// (DELETE /2/tweets/:id) follow X's rules: only replies by others in a conversation the account
// started can be hidden, only the account's own posts deleted, each with the scope it needs.
//
// What it receives and answers follows the published shapes the connector follows
// (twitter-api-v2 1.29.1's types). Each JSON body is checked against a TypeBox schema that
// test/shapes-x.test.ts holds to the package's type: POST /2/tweets against CreateTweetBody
// (equal to SendTweetV2Params, with reply_settings held to X's documented values), the media
// upload's initialize against MediaInitBody (MediaV2UploadInitParams, media_type held to X's
// documented types), POST /2/media/metadata against MediaMetadataBody (the media id and
// MediaV2MetadataCreateParams) and PUT /2/tweets/:id/hidden against HideReplyBody
// (`{"hidden": boolean}`). A body that breaks its schema is refused as X refuses one, 400 with
// the invalid-request problem details; unknown fields are refused too, as X's schemas allow no
// additional properties. Answers are typed by the package's result types.
import type { PublishRequest } from '../../platforms/types.ts';
import { type Static, Type } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { parseTweet } from 'twitter-text';
import type {
  AccessOAuth2TokenResult,
  InlineErrorV2,
  TweetV2,
  TweetV2DeleteTweetResult,
  TweetV2HideReplyResult,
  TweetV2LookupResult,
  TweetV2PostTweetResult,
  Tweetv2SearchResult,
  TweetV2UserTimelineResult,
  UserV2,
  UserV2Result,
} from 'twitter-api-v2';
import type {
  MediaV2MediaCategory,
  MediaV2MetadataCreateResult,
  MediaV2UploadResponse,
} from 'twitter-api-v2/dist/esm/types/v2/media.v2.types';
import type { XProblem, XReplySettings } from '../../platforms/x.ts';

/** A post, user or media id as X writes them. */
const Id = Type.String({ pattern: '^[0-9]{1,19}$' });
/** X's documented reply_settings (https://docs.x.com/x-api/posts/create-post). */
export const REPLY_SETTINGS = ['following', 'mentionedUsers', 'subscribers', 'verified'] as const satisfies readonly XReplySettings[];
/**
 * POST /2/tweets (https://docs.x.com/x-api/posts/create-post), as twitter-api-v2's
 * SendTweetV2Params has it: no other field, at any level, is allowed.
 */
export const CreateTweetBody = Type.Object(
  {
    text: Type.Optional(Type.String()),
    media: Type.Optional(
      Type.Object(
        {
          media_ids: Type.Optional(
            Type.Union([Type.Tuple([Id]), Type.Tuple([Id, Id]), Type.Tuple([Id, Id, Id]), Type.Tuple([Id, Id, Id, Id])]),
          ),
          tagged_user_ids: Type.Optional(Type.Array(Id)),
        },
        { additionalProperties: false },
      ),
    ),
    reply: Type.Optional(
      Type.Object({ in_reply_to_tweet_id: Id, exclude_reply_user_ids: Type.Optional(Type.Array(Id)) }, { additionalProperties: false }),
    ),
    quote_tweet_id: Type.Optional(Id),
    reply_settings: Type.Optional(Type.Union(REPLY_SETTINGS.map((v) => Type.Literal(v)))),
    poll: Type.Optional(
      Type.Object(
        {
          options: Type.Array(Type.String({ minLength: 1, maxLength: 25 }), { minItems: 2, maxItems: 4 }),
          duration_minutes: Type.Integer({ minimum: 5, maximum: 10080 }),
        },
        { additionalProperties: false },
      ),
    ),
    for_super_followers_only: Type.Optional(Type.Union([Type.Literal('True'), Type.Literal('False')])),
    geo: Type.Optional(Type.Object({ place_id: Type.String() }, { additionalProperties: false })),
    direct_message_deep_link: Type.Optional(Type.String()),
    community_id: Type.Optional(Id),
    share_with_followers: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateTweetBody = Static<typeof CreateTweetBody>;

/**
 * X's documented media types for the media upload
 * (https://docs.x.com/x-api/media/initialize-media-upload). The package types media_type as any
 * string; X's schema takes only these.
 */
export const MEDIA_TYPES = [
  'video/mp4',
  'video/webm',
  'video/mp2t',
  'video/quicktime',
  'text/srt',
  'text/vtt',
  'image/jpeg',
  'image/gif',
  'image/bmp',
  'image/png',
  'image/webp',
  'image/pjpeg',
  'image/tiff',
  'model/gltf-binary',
  'model/vnd.usdz+zip',
] as const;
/** X's media categories, the package's MediaV2MediaCategory. */
export const MEDIA_CATEGORIES = [
  'amplify_video',
  'tweet_gif',
  'tweet_image',
  'tweet_video',
  'dm_gif',
  'dm_image',
  'dm_video',
  'subtitles',
] as const satisfies readonly MediaV2MediaCategory[];
/** X's largest upload, 16 GiB (total_bytes: 0 <= x <= 17179869184). */
const MAX_TOTAL_BYTES = 17_179_869_184;
/**
 * POST /2/media/upload/initialize, as the package's MediaV2UploadInitParams has it, with
 * media_type held to X's list. X's own schema also has `shared`, which the package lacks: a body
 * with it is refused here, as a field the connector's type cannot send.
 */
export const MediaInitBody = Type.Object(
  {
    additional_owners: Type.Optional(Type.Array(Id)),
    media_category: Type.Optional(Type.Union(MEDIA_CATEGORIES.map((v) => Type.Literal(v)))),
    media_type: Type.Union(MEDIA_TYPES.map((v) => Type.Literal(v))),
    total_bytes: Type.Integer({ minimum: 0, maximum: MAX_TOTAL_BYTES }),
  },
  { additionalProperties: false },
);
export type MediaInitBody = Static<typeof MediaInitBody>;
/** X's documented limit for alt text. */
const MAX_ALT = 1000;
/**
 * POST /2/media/metadata (https://docs.x.com/x-api/media/create-media-metadata): the media id
 * and the package's MediaV2MetadataCreateParams (alt text only; X's other metadata, such as
 * sensitive_media_warning, is not in the package and is refused here).
 */
export const MediaMetadataBody = Type.Object(
  {
    id: Id,
    metadata: Type.Object(
      {
        alt_text: Type.Optional(Type.Object({ text: Type.String({ maxLength: MAX_ALT }) }, { additionalProperties: false })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type MediaMetadataBody = Static<typeof MediaMetadataBody>;
/** PUT /2/tweets/:id/hidden (https://docs.x.com/x-api/posts/hide-replies): `{"hidden": boolean}` and nothing else. */
export const HideReplyBody = Type.Object({ hidden: Type.Boolean() }, { additionalProperties: false });
export type HideReplyBody = Static<typeof HideReplyBody>;

/** X's words (its JSON schema validator's) for the first way a body breaks the schema. */
function schemaMessage(e: ValueError): string {
  const path = `$${e.path.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}`;
  const v = e.value;
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return `${path}: is not defined in the schema and the schema does not allow additional properties`;
    case ValueErrorType.ObjectRequiredProperty:
      return `${path}: is missing but it is required`;
    case ValueErrorType.ArrayMinItems:
    case ValueErrorType.ArrayMaxItems:
      return `${path}: must have between ${e.schema.minItems} and ${e.schema.maxItems} items`;
    case ValueErrorType.StringPattern:
      return `${path}: does not match the pattern ${e.schema.pattern}`;
    case ValueErrorType.StringMaxLength:
      return `${path}: may only be ${e.schema.maxLength} characters long`;
    case ValueErrorType.IntegerMinimum:
      return `${path}: must have a minimum value of ${e.schema.minimum}`;
    case ValueErrorType.IntegerMaximum:
      return `${path}: must have a maximum value of ${e.schema.maximum}`;
    case ValueErrorType.Integer:
    case ValueErrorType.Boolean:
    case ValueErrorType.String:
    case ValueErrorType.Object:
    case ValueErrorType.Array:
      return `${path}: ${jsonType(v)} found, ${e.schema.type} expected`;
    case ValueErrorType.Union: {
      const literals = (e.schema.anyOf as { const?: unknown }[]).map((s) => s.const);
      if (literals.every((l) => typeof l === 'string')) return `${path}: does not have a value in the enumeration [${literals.join(', ')}]`;
      // media_ids: a tuple of 1 to 4 ids.
      if (Array.isArray(v) && (v.length < 1 || v.length > 4)) return `${path}: must have between 1 and 4 items`;
      const bad = Array.isArray(v) ? v.findIndex((x) => typeof x !== 'string' || !/^[0-9]{1,19}$/.test(x)) : -1;
      if (bad >= 0) return `${path}[${bad}]: does not match the pattern ^[0-9]{1,19}$`;
      return `${path}: ${e.message}`;
    }
    default:
      return `${path}: ${e.message}`;
  }
}

/** A value's JSON type, as X's validator names it. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

export interface FakeTweet {
  id: string;
  text: string;
  mediaIds: string[];
  userId: string;
  createdAt: string;
  /** The post this one answers (reply.in_reply_to_tweet_id); null for a post that answers nothing. */
  inReplyTo: string | null;
  /** The id of the post that started the conversation (its own id when it answers nothing). */
  conversationId: string;
  /** Who may reply (reply_settings), and the poll, as sent; absent on posts the fake did not create. */
  replySettings?: string | null;
  poll?: { options: string[]; durationMinutes: number } | null;
  /**
   * The handles X writes before the text of a reply to another account (the parent's author and
   * the handles the parent itself answered), without the account's own; absent when none.
   */
  mentions?: string[];
  /** Hidden by the conversation's author (PUT /2/tweets/:id/hidden). */
  hidden?: boolean;
  /** public_metrics as X returns them (tests set what other accounts did). */
  metrics: {
    retweet_count: number;
    reply_count: number;
    like_count: number;
    quote_count: number;
    bookmark_count: number;
    impression_count: number;
  };
}

const NO_METRICS = () => ({ retweet_count: 0, reply_count: 0, like_count: 0, quote_count: 0, bookmark_count: 0, impression_count: 0 });

export interface FakeXMedia {
  id: string;
  mediaKey: string;
  userId: string;
  mediaType: string;
  category: string;
  totalBytes: number;
  /** Bytes received per segment_index. */
  segments: Map<number, number>;
  finalized: boolean;
  state: 'uploading' | 'pending' | 'in_progress' | 'succeeded' | 'failed';
  /** STATUS answers in_progress this many more times before succeeded. */
  pendingPolls: number;
  altText: string | null;
}

/** An account of X as GET /2/users shows it (user.fields name, username, profile_image_url). */
export interface FakeXUser {
  id: string;
  username: string;
  name: string;
  profile_image_url?: string;
}

export interface FakeXRequest {
  method: string;
  path: string;
  search: string;
  authorization: string | null;
}

/** A POST /2/tweets that reached X with a JSON body, refused as a duplicate or not. */
export interface FakeXSend {
  text: string;
  at: number;
}

export type FakeXRoute =
  | 'tweets'
  | 'lookup'
  | 'search'
  | 'initialize'
  | 'append'
  | 'finalize'
  | 'status'
  | 'metadata'
  | 'me'
  | 'timeline'
  | 'hide'
  | 'delete'
  | 'token';

/**
 * 'accept-then-hang' (tweets only): create the post, then never answer. `waitFor`: answer as
 * usual once the promise settles (a test holds the request while it arranges a race).
 */
export type FakeXResponse =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { waitFor: Promise<unknown> }
  | 'hang'
  | 'accept-then-hang';

export interface FakeXOptions {
  /** null: a public client (no secret, no Basic auth at the token endpoint). */
  clientSecret?: string | null;
  /** STATUS polls answering in_progress before a video or GIF succeeds (default 1). */
  processingPolls?: number;
  /** Videos fail processing with this message. */
  failProcessing?: string;
}

export interface FakeX {
  url: string;
  user: { id: string; username: string; name: string };
  clientId: string;
  clientSecret: string | null;
  tweets: FakeTweet[];
  media: FakeXMedia[];
  requests: FakeXRequest[];
  /** Every publish request received, in order: a re-send shows here even when X refuses it as a duplicate. */
  sends: FakeXSend[];
  validTokens: Set<string>;
  /**
   * The OAuth 2.0 scopes a token was granted; a valid token not listed here has every scope the
   * fake checks (tweet.read, tweet.write, users.read, tweet.moderate.write).
   */
  scopes: Map<string, Set<string>>;
  validRefreshTokens: Set<string>;
  /** The next n requests to `route` (default POST /2/tweets) answer this instead. */
  failNext(n: number, response: FakeXResponse, route?: FakeXRoute): void;
  /** A post made outside the connector (another client, or long ago). */
  addTweet(text: string, opts?: { createdAt?: Date; mediaCount?: number; inReplyTo?: FakeTweet }): FakeTweet;
  /** Another account replies to a post of the fake (what people do under a published post). */
  reply(parent: FakeTweet, from: FakeXUser, text: string, createdAt?: Date): FakeTweet;
  count(route: FakeXRoute): number;
  stop(): Promise<void>;
}

/** The tweet.fields the search answers with (others are refused). */
const SEARCH_TWEET_FIELDS = new Set([
  'author_id',
  'created_at',
  'conversation_id',
  'in_reply_to_user_id',
  'referenced_tweets',
  'public_metrics',
  'lang',
  'entities',
  'attachments',
  'edit_history_tweet_ids',
  'reply_settings',
  'source',
]);
const MAX_TEXT = 280;
/** X's documented scopes per endpoint: the hide replies and delete post API references. */
const HIDE_SCOPES = ['tweet.read', 'users.read', 'tweet.moderate.write'];
const DELETE_SCOPES = ['tweet.read', 'tweet.write', 'users.read'];
const MAX_SEGMENT = 5 * 1024 * 1024;

export async function startFakeX(opts: FakeXOptions = {}): Promise<FakeX> {
  const user = { id: '1849213049261234176', username: 'postpilot_test', name: 'Postpilot Test' };
  const clientId = 'fake-client-id';
  const clientSecret = opts.clientSecret === undefined ? 'fake-client-secret' : opts.clientSecret;
  const tweets: FakeTweet[] = [];
  const users = new Map<string, FakeXUser>();
  const media: FakeXMedia[] = [];
  const requests: FakeXRequest[] = [];
  const sends: FakeXSend[] = [];
  const validTokens = new Set(['good-token']);
  const scopes = new Map<string, Set<string>>();
  const validRefreshTokens = new Set(['refresh-1']);
  const canned = new Map<FakeXRoute, FakeXResponse[]>();
  const counts = new Map<FakeXRoute, number>();
  const hanging = new Set<() => void>();
  let nextId = 1_990_000_000_000_000_000n;
  const newId = () => String(nextId++);
  let tokenSerial = 1;
  let rateRemaining = 100;

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const u = new URL(req.url);
    const path = u.pathname;
    const method = req.method;
    requests.push({ method, path, search: u.search, authorization: req.headers.get('authorization') });

    const route = routeOf(method, path, u.searchParams);
    if (!route)
      return problem(404, 'Not Found Error', 'Sorry, that page does not exist.', 'https://api.twitter.com/2/problems/resource-not-found');
    counts.set(route, (counts.get(route) ?? 0) + 1);

    let acceptThenHang = false;
    const next = canned.get(route)?.shift();
    if (next === 'hang') return hang(req);
    if (next === 'accept-then-hang') acceptThenHang = true;
    else if (next && 'waitFor' in next) await next.waitFor.catch(() => {});
    else if (next) return json(next.body ?? { title: `HTTP ${next.status}`, status: next.status }, next.status, next.headers);

    if (route === 'token') return token(req);

    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
    if (!bearer || !validTokens.has(bearer)) return problem(401, 'Unauthorized', 'Unauthorized');
    rateRemaining = Math.max(0, rateRemaining - 1);

    const id = /^\/2\/media\/upload\/(\d+)\/(append|finalize)$/.exec(path)?.[1];
    switch (route) {
      case 'hide':
        return hide(req, bearer, decodeURIComponent(path.split('/')[3]!));
      case 'delete':
        return remove(bearer, decodeURIComponent(path.split('/')[3]!));
      case 'me':
        return json({ data: user } satisfies UserV2Result);
      case 'timeline':
        return timeline(path, u.searchParams);
      case 'lookup':
        return lookup(u.searchParams);
      case 'search':
        return search(u.searchParams);
      case 'initialize':
        return initialize(req);
      case 'append':
        return append(req, id!);
      case 'finalize':
        return finalize(id!);
      case 'status':
        return status(u.searchParams);
      case 'metadata':
        return metadata(req);
      case 'tweets': {
        if (!acceptThenHang) return createTweet(req);
        await createTweet(req);
        return hang(req);
      }
    }
  }

  function routeOf(method: string, path: string, q: URLSearchParams): FakeXRoute | null {
    if (method === 'POST' && path === '/2/tweets') return 'tweets';
    if (method === 'GET' && path === '/2/tweets') return 'lookup';
    if (method === 'PUT' && /^\/2\/tweets\/[^/]+\/hidden$/.test(path)) return 'hide';
    if (method === 'DELETE' && /^\/2\/tweets\/[^/]+$/.test(path)) return 'delete';
    if (method === 'GET' && path === '/2/tweets/search/recent') return 'search';
    if (method === 'POST' && path === '/2/oauth2/token') return 'token';
    if (method === 'GET' && path === '/2/users/me') return 'me';
    if (method === 'GET' && /^\/2\/users\/\d+\/tweets$/.test(path)) return 'timeline';
    if (method === 'POST' && path === '/2/media/upload/initialize') return 'initialize';
    if (method === 'POST' && /^\/2\/media\/upload\/\d+\/append$/.test(path)) return 'append';
    if (method === 'POST' && /^\/2\/media\/upload\/\d+\/finalize$/.test(path)) return 'finalize';
    if (method === 'GET' && path === '/2/media/upload' && q.get('command') === 'STATUS') return 'status';
    if (method === 'POST' && path === '/2/media/metadata') return 'metadata';
    return null;
  }

  async function initialize(req: Request): Promise<Response> {
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) return invalid('Content-Type must be application/json');
    const body = await readJson(req);
    if (!body) return invalid('Request body is not valid JSON');
    const wrong = Value.Errors(MediaInitBody, body).First();
    if (wrong) return invalid(schemaMessage(wrong));
    const { media_type: mediaType, media_category: category, total_bytes: total } = body as MediaInitBody;
    const gif = mediaType === 'image/gif';
    const fits =
      category === undefined ||
      (category === 'tweet_image' && mediaType.startsWith('image/') && !gif) ||
      (category === 'tweet_gif' && gif) ||
      ((category === 'tweet_video' || category === 'amplify_video') && mediaType.startsWith('video/'));
    if (!fits) return invalid(`media_category ${String(category)} does not accept ${mediaType}`);
    const id = newId();
    const m: FakeXMedia = {
      id,
      mediaKey: `${category === 'tweet_image' ? 3 : category === 'tweet_gif' ? 16 : 7}_${id}`,
      userId: user.id,
      mediaType,
      category: String(category ?? 'tweet_image'),
      totalBytes: total,
      segments: new Map(),
      finalized: false,
      state: 'uploading',
      pendingPolls: opts.processingPolls ?? 1,
      altText: null,
    };
    media.push(m);
    return json({ data: { id, media_key: m.mediaKey, expires_after_secs: 86_400 } } satisfies MediaV2UploadResponse);
  }

  async function append(req: Request, id: string): Promise<Response> {
    const m = media.find((x) => x.id === id && x.userId === user.id);
    if (!m) return problem(404, 'Not Found Error', `Could not find media with id: [${id}].`);
    if (m.finalized) return invalid('Media upload has already been finalized');
    if (!(req.headers.get('content-type') ?? '').includes('multipart/form-data')) return invalid('Request must be multipart/form-data');
    const form = await req.formData().catch(() => null);
    const file = form?.get('media');
    const index = Number(form?.get('segment_index'));
    if (!(file instanceof Blob)) return invalid('$.media: is missing but it is required');
    if (!Number.isInteger(index) || index < 0 || index > 999) return invalid('$.segment_index: must be between 0 and 999');
    if (file.size > MAX_SEGMENT) return invalid('Segment is larger than 5 MB');
    m.segments.set(index, file.size);
    return json({ data: { expires_at: Math.floor(Date.now() / 1000) + 86_400 } });
  }

  function finalize(id: string): Response {
    const m = media.find((x) => x.id === id && x.userId === user.id);
    if (!m) return problem(404, 'Not Found Error', `Could not find media with id: [${id}].`);
    const received = [...m.segments.values()].reduce((a, b) => a + b, 0);
    const ordered = [...m.segments.keys()].sort((a, b) => a - b).every((k, i) => k === i);
    if (received !== m.totalBytes || !ordered) {
      return invalid(`File size mismatch: expected ${m.totalBytes} bytes, received ${received} in segments ${[...m.segments.keys()]}`);
    }
    m.finalized = true;
    if (m.category === 'tweet_image') {
      m.state = 'succeeded';
      return json({ data: { id, media_key: m.mediaKey, size: m.totalBytes, expires_after_secs: 86_400 } } satisfies MediaV2UploadResponse);
    }
    m.state = 'pending';
    return json({
      data: {
        id,
        media_key: m.mediaKey,
        size: m.totalBytes,
        expires_after_secs: 86_400,
        processing_info: { state: 'pending', check_after_secs: 1 },
      },
    } satisfies MediaV2UploadResponse);
  }

  function status(q: URLSearchParams): Response {
    const m = media.find((x) => x.id === q.get('media_id') && x.userId === user.id);
    if (!m) return problem(404, 'Not Found Error', `Could not find media with id: [${q.get('media_id')}].`);
    if (m.state === 'pending' || m.state === 'in_progress') {
      if (opts.failProcessing && m.category !== 'tweet_image') m.state = 'failed';
      else if (m.pendingPolls > 0) {
        m.pendingPolls--;
        m.state = 'in_progress';
      } else m.state = 'succeeded';
    }
    if (m.state === 'uploading') return invalid(`Media ${m.id} has not been finalized`);
    // X's processing_info also has progress_percent and the error's name, which the package leaves out.
    type Info = NonNullable<MediaV2UploadResponse['data']['processing_info']>;
    const info: Info & { progress_percent?: number; error?: Info['error'] & { name: string } } = { state: m.state };
    if (m.state === 'in_progress') Object.assign(info, { check_after_secs: 1, progress_percent: 50 });
    if (m.state === 'failed') info.error = { code: 1, name: 'InvalidMedia', message: opts.failProcessing ?? 'failed' };
    return json({
      data: { id: m.id, media_key: m.mediaKey, expires_after_secs: 86_000, processing_info: info },
    } satisfies MediaV2UploadResponse);
  }

  async function metadata(req: Request): Promise<Response> {
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) return invalid('Content-Type must be application/json');
    const body = await readJson(req);
    if (!body) return invalid('Request body is not valid JSON');
    const wrong = Value.Errors(MediaMetadataBody, body).First();
    if (wrong) return invalid(schemaMessage(wrong));
    const { id, metadata: meta } = body as MediaMetadataBody;
    const text = meta.alt_text?.text ?? null;
    const m = media.find((x) => x.id === id && x.userId === user.id);
    if (!m) return problem(404, 'Not Found Error', `Could not find media with id: [${id}].`);
    if (text !== null) m.altText = text;
    // X answers with the metadata the media has; the package's result type always lists alt_text.
    type Associated = MediaV2MetadataCreateResult['data']['associated_metadata'];
    const associated: Partial<Associated> = m.altText === null ? {} : { alt_text: { text: m.altText } };
    return json({ data: { id, associated_metadata: associated } });
  }

  async function createTweet(req: Request): Promise<Response> {
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) return invalid('Content-Type must be application/json');
    const body = await readJson(req);
    if (!body) return invalid('Request body is not valid JSON');
    sends.push({ text: typeof body.text === 'string' ? body.text : '', at: Date.now() });
    const wrong = Value.Errors(CreateTweetBody, body).First();
    if (wrong) return invalid(schemaMessage(wrong));
    const sent = body as CreateTweetBody;
    const text = sent.text;
    const ids: string[] = sent.media?.media_ids ?? [];
    if (sent.media !== undefined && !ids.length) return invalid('$.media.media_ids: is missing but it is required');
    if (!text && !ids.length) return invalid('$.text: is missing but it is required');
    const parentId = sent.reply?.in_reply_to_tweet_id;
    const replySettings = sent.reply_settings;
    const poll = sent.poll && { options: sent.poll.options, durationMinutes: sent.poll.duration_minutes };
    // X's schema allows only one of media, a poll, a quote or a card in a post.
    if (poll && sent.media !== undefined) {
      return json(
        {
          errors: [
            {
              parameters: { 'media.media_ids': ids, 'poll.options': poll.options },
              message: 'Your request can only contain one of media.media_ids, poll.options, quote_tweet_id, card_uri.',
            },
          ],
          title: 'Invalid Request',
          detail: 'One or more parameters to your request was invalid.',
          type: 'https://api.twitter.com/2/problems/invalid-request',
        },
        400,
      );
    }
    // X counts weighted (twitter-text, X's own library): CJK and emoji 2, any URL 23.
    if (typeof text === 'string' && parseTweet(text).weightedLength > MAX_TEXT) {
      return problem(403, 'Forbidden', 'You are not permitted to perform this action.');
    }
    const attached = ids.map((id) => media.find((m) => m.id === id && m.userId === user.id));
    if (attached.some((m) => m?.state !== 'succeeded')) {
      return json(
        {
          errors: [{ parameters: { 'media.media_ids': ids }, message: 'Your media IDs are invalid.' }],
          title: 'Invalid Request',
          detail: 'One or more parameters to your request was invalid.',
          type: 'https://api.twitter.com/2/problems/invalid-request',
        },
        400,
      );
    }
    const videos = attached.filter((m) => m!.category !== 'tweet_image').length;
    if (videos && attached.length > 1) return invalid('Media of type video or gif must be the only media in a post');
    // X's answer (formerly error code 385) for a parent that is gone, or was never there.
    const parent = typeof parentId === 'string' ? tweets.find((t) => t.id === parentId) : undefined;
    if (typeof parentId === 'string' && !parent) {
      return problem(403, 'Forbidden', 'You attempted to reply to a Tweet that is deleted or not visible to you.');
    }
    const mentions = parent ? replyMentions(parent) : [];
    const full = fullText(mentions, typeof text === 'string' ? text : '');
    if (typeof text === 'string' && text && tweets.some((t) => t.userId === user.id && fullText(t.mentions ?? [], t.text) === full)) {
      return problem(403, 'Forbidden', 'You are not allowed to create a Tweet with duplicate content.');
    }
    const id = newId();
    const t: FakeTweet = {
      id,
      text: typeof text === 'string' ? text : '',
      mediaIds: ids,
      userId: user.id,
      createdAt: new Date().toISOString(),
      inReplyTo: parent?.id ?? null,
      conversationId: parent?.conversationId ?? id,
      replySettings: replySettings ?? null,
      poll: poll ?? null,
      ...(mentions.length ? { mentions } : {}),
      metrics: NO_METRICS(),
    };
    tweets.push(t);
    if (parent) parent.metrics.reply_count++;
    // X's answer also lists edit_history_tweet_ids, which the package's result type leaves out.
    const answer: TweetV2PostTweetResult & { data: Pick<TweetV2, 'edit_history_tweet_ids'> } = {
      data: { id: t.id, text: full, edit_history_tweet_ids: [t.id] },
    };
    return json(answer, 201);
  }

  /** The handles X puts before a reply to `parent`: its author's and those it answered, not the account's own. */
  function replyMentions(parent: FakeTweet): string[] {
    const author = parent.userId === user.id ? user.username : users.get(parent.userId)?.username;
    return [...new Set([author, ...(parent.mentions ?? [])])].filter((h): h is string => !!h && h !== user.username);
  }

  function missingScope(token: string, needed: string[]): boolean {
    const granted = scopes.get(token);
    return !!granted && needed.some((s) => !granted.has(s));
  }

  /**
   * PUT /2/tweets/:id/hidden: `{"hidden": boolean}` and nothing else. The reply must be in a
   * conversation the account started and not be one of the account's own posts (X: "the Tweet
   * must belong to a conversation initiated by the authenticating user"; an app cannot hide the
   * author's own posts). Already so is success. The words of the 403 are the fake's: X documents
   * the rule, not its refusal text.
   */
  async function hide(req: Request, token: string, id: string): Promise<Response> {
    if (missingScope(token, HIDE_SCOPES)) return problem(403, 'Forbidden', 'Forbidden');
    if (!/^\d{1,19}$/.test(id)) return invalid(`The \`id\` query parameter value [${id}] does not match ^[0-9]{1,19}$`);
    if (!(req.headers.get('content-type') ?? '').includes('application/json')) return invalid('Content-Type must be application/json');
    const body = await readJson(req);
    if (!body) return invalid('Request body is not valid JSON');
    const wrong = Value.Errors(HideReplyBody, body).First();
    if (wrong) return invalid(schemaMessage(wrong));
    const { hidden } = body as HideReplyBody;
    const t = tweets.find((x) => x.id === id);
    if (!t) return notFound(id);
    const root = tweets.find((x) => x.id === t.conversationId);
    if (t.userId === user.id || root?.userId !== user.id) {
      return problem(403, 'Forbidden', 'You can only hide replies by others in a conversation you started.');
    }
    t.hidden = hidden;
    return json({ data: { hidden: t.hidden } } satisfies TweetV2HideReplyResult);
  }

  /** DELETE /2/tweets/:id: the account's own posts only; a post it does not have is 404. */
  function remove(token: string, id: string): Response {
    if (missingScope(token, DELETE_SCOPES)) return problem(403, 'Forbidden', 'Forbidden');
    if (!/^\d{1,19}$/.test(id)) return invalid(`The \`id\` query parameter value [${id}] does not match ^[0-9]{1,19}$`);
    const i = tweets.findIndex((x) => x.id === id);
    if (i < 0) return notFound(id);
    const t = tweets[i]!;
    if (t.userId !== user.id) return problem(403, 'Forbidden', 'You are not allowed to delete a Tweet that is not yours.');
    tweets.splice(i, 1);
    const parent = t.inReplyTo ? tweets.find((x) => x.id === t.inReplyTo) : undefined;
    if (parent) parent.metrics.reply_count--;
    return json({ data: { deleted: true } } satisfies TweetV2DeleteTweetResult);
  }

  function notFound(id: string): Response {
    return json(
      {
        title: 'Not Found Error',
        detail: `Could not find tweet with id: [${id}].`,
        type: 'https://api.twitter.com/2/problems/resource-not-found',
        resource_type: 'tweet',
        parameter: 'id',
        value: id,
        resource_id: id,
        status: 404,
      } satisfies InlineErrorV2 & { status: number },
      404,
    );
  }

  /**
   * GET /2/tweets?ids=: 1 to 100 numeric ids; found posts in data[] (public_metrics only when
   * asked in tweet.fields), the others as resource-not-found entries of errors[].
   */
  function lookup(q: URLSearchParams): Response {
    const raw = q.get('ids');
    const ids = raw === null ? [] : raw.split(',');
    if (raw === null || !ids.length || ids.length > 100 || ids.some((id) => !/^\d{1,19}$/.test(id))) {
      return invalid(`The \`ids\` query parameter value [${raw ?? ''}] is not valid: 1 to 100 comma-separated numeric ids`);
    }
    const fields = new Set((q.get('tweet.fields') ?? '').split(',').filter(Boolean));
    const data: TweetV2[] = [];
    const errors: InlineErrorV2[] = [];
    for (const id of ids) {
      const t = tweets.find((x) => x.id === id);
      if (!t) {
        errors.push({
          value: id,
          detail: `Could not find tweet with ids: [${id}].`,
          title: 'Not Found Error',
          resource_type: 'tweet',
          parameter: 'ids',
          resource_id: id,
          type: 'https://api.twitter.com/2/problems/resource-not-found',
        });
        continue;
      }
      data.push({
        id: t.id,
        text: t.text,
        edit_history_tweet_ids: [t.id],
        ...replyFields(t, fields),
        ...(fields.has('public_metrics') ? { public_metrics: { ...t.metrics } } : {}),
      });
    }
    // X leaves `data` out when it found none of the ids.
    const answer: Omit<TweetV2LookupResult, 'data'> & Partial<Pick<TweetV2LookupResult, 'data'>> = {
      ...(data.length ? { data } : {}),
      ...(errors.length ? { errors } : {}),
    };
    return json(answer);
  }

  /**
   * GET /2/tweets/search/recent, for the one operator the fake knows, `conversation_id:<id>`:
   * the posts of the last 7 days in that conversation but its first, newest first; `max_results`
   * 10 to 100, paged by `next_token`; `expansions=author_id` adds the authors in includes.users
   * (with the user.fields asked). Any other query is refused as X refuses a malformed one.
   */
  function search(q: URLSearchParams): Response {
    const query = q.get('query');
    const conversation = /^conversation_id:(\d{1,19})$/.exec(query ?? '')?.[1];
    if (!conversation) return invalid(`There were errors processing your request: the query [${query ?? ''}] is not supported here`);
    const max = Number(q.get('max_results') ?? '10');
    if (!Number.isInteger(max) || max < 10 || max > 100)
      return invalid(`The \`max_results\` query parameter value [${q.get('max_results')}] is not between 10 and 100`);
    const fields = new Set((q.get('tweet.fields') ?? '').split(',').filter(Boolean));
    const unknown = [...fields].find((f) => !SEARCH_TWEET_FIELDS.has(f));
    if (unknown) return invalid(`The query parameter [tweet.fields] contains an invalid value [${unknown}]`);
    const expansions = (q.get('expansions') ?? '').split(',').filter(Boolean);
    if (expansions.some((e) => e !== 'author_id'))
      return invalid(`The query parameter [expansions] is not supported here: [${q.get('expansions')}]`);
    const userFields = new Set((q.get('user.fields') ?? '').split(',').filter(Boolean));
    const week = Date.now() - 7 * 86_400_000;
    const all = tweets
      .filter((t) => t.conversationId === conversation && t.id !== conversation && Date.parse(t.createdAt) >= week)
      .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
    const start = q.get('next_token') ? Number(atob(q.get('next_token')!)) : 0;
    const page = all.slice(start, start + max);
    if (!page.length) return json({ meta: { result_count: 0 } });
    const data = page.map((t): TweetV2 => {
      const out: TweetV2 = { id: t.id, text: renderText(t), edit_history_tweet_ids: [t.id] };
      if (fields.has('created_at')) out.created_at = t.createdAt;
      if (fields.has('author_id')) out.author_id = t.userId;
      return Object.assign(out, replyFields(t, fields));
    });
    const authors = [...new Set(page.map((t) => t.userId))].map((id): UserV2 => {
      const u = users.get(id) ?? { ...user };
      return {
        id: u.id,
        name: u.name,
        username: u.username,
        ...(userFields.has('profile_image_url') && u.profile_image_url ? { profile_image_url: u.profile_image_url } : {}),
      };
    });
    const end = start + page.length;
    return json({
      data,
      ...(expansions.includes('author_id') ? { includes: { users: authors } } : {}),
      meta: {
        result_count: page.length,
        newest_id: page[0]!.id,
        oldest_id: page.at(-1)!.id,
        ...(end < all.length ? { next_token: btoa(String(end)) } : {}),
      },
    } satisfies Tweetv2SearchResult);
  }

  function timeline(path: string, q: URLSearchParams): Response {
    const uid = path.split('/')[3];
    const max = Number(q.get('max_results') ?? '10');
    if (!Number.isInteger(max) || max < 5 || max > 100)
      return invalid(`The \`max_results\` query parameter value [${q.get('max_results')}] is not between 5 and 100`);
    const exclude = (q.get('exclude') ?? '').split(',').filter(Boolean);
    if (exclude.some((e) => e !== 'retweets' && e !== 'replies'))
      return invalid(`The \`exclude\` query parameter value [${q.get('exclude')}] is not one of [retweets,replies]`);
    const start = q.get('start_time');
    if (start !== null && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(start)) {
      return invalid(`Invalid 'start_time':'${start}'. 'start_time' must be a valid RFC3339 date-time`);
    }
    const fields = new Set((q.get('tweet.fields') ?? '').split(',').filter(Boolean));
    const since = start ? Date.parse(start) : 0;
    // exclude=replies leaves out every reply, the account's answers to its own posts too.
    const list = tweets
      .filter((t) => t.userId === uid && Date.parse(t.createdAt) >= since)
      .filter((t) => !(exclude.includes('replies') && t.inReplyTo))
      .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
      .slice(0, max);
    if (!list.length) return json({ meta: { result_count: 0 } });
    const data = list.map((t): TweetV2 => {
      const out: TweetV2 = { id: t.id, text: renderText(t), edit_history_tweet_ids: [t.id] };
      if (fields.has('created_at')) out.created_at = t.createdAt;
      if (fields.has('attachments') && t.mediaIds.length) {
        out.attachments = { media_keys: t.mediaIds.map((id) => media.find((m) => m.id === id)?.mediaKey ?? `3_${id}`) };
      }
      return Object.assign(out, replyFields(t, fields));
    });
    return json({
      data,
      meta: { result_count: data.length, newest_id: list[0]!.id, oldest_id: list.at(-1)!.id },
    } satisfies TweetV2UserTimelineResult);
  }

  /**
   * What X shows of a reply when asked: `conversation_id` on every post, `referenced_tweets`
   * and `in_reply_to_user_id` only on a post that answers another.
   */
  function replyFields(t: FakeTweet, fields: Set<string>): Pick<TweetV2, 'conversation_id' | 'referenced_tweets' | 'in_reply_to_user_id'> {
    const out: Pick<TweetV2, 'conversation_id' | 'referenced_tweets' | 'in_reply_to_user_id'> = {};
    if (fields.has('conversation_id')) out.conversation_id = t.conversationId;
    const parent = t.inReplyTo ? tweets.find((x) => x.id === t.inReplyTo) : undefined;
    if (t.inReplyTo && fields.has('referenced_tweets')) out.referenced_tweets = [{ type: 'replied_to', id: t.inReplyTo }];
    if (t.inReplyTo && fields.has('in_reply_to_user_id') && parent) out.in_reply_to_user_id = parent.userId;
    return out;
  }

  /** As X renders it: &, <, > escaped, links as t.co, a t.co link to the media appended. */
  function renderText(t: FakeTweet): string {
    const escaped = fullText(t.mentions ?? [], t.text)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;');
    const linked = escaped.replace(/https?:\/\/\S+/g, () => `https://t.co/${shortCode()}`);
    return t.mediaIds.length ? `${linked} https://t.co/${shortCode()}`.trim() : linked;
  }

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    if (clientSecret !== null) {
      const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
      if (req.headers.get('authorization') !== expected) {
        return json({ error: 'unauthorized_client', error_description: 'Missing valid authorization header' }, 401);
      }
    } else if (form.get('client_id') !== clientId) {
      return json({ error: 'invalid_request', error_description: 'Missing required parameter [client_id].' }, 400);
    }
    if (form.get('grant_type') !== 'refresh_token') {
      return json({ error: 'invalid_request', error_description: 'Missing required parameter [grant_type].' }, 400);
    }
    const old = form.get('refresh_token') ?? '';
    if (!validRefreshTokens.delete(old)) {
      return json({ error: 'invalid_request', error_description: 'Value passed for the token was invalid.' }, 400);
    }
    tokenSerial++;
    const access = `access-${tokenSerial}`;
    const refresh = `refresh-${tokenSerial}`;
    validTokens.add(access);
    validRefreshTokens.add(refresh);
    return json({
      token_type: 'bearer',
      expires_in: 7200,
      access_token: access,
      scope: 'tweet.read tweet.write users.read media.write offline.access',
      refresh_token: refresh,
    } satisfies AccessOAuth2TokenResult);
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(problem(503, 'Service Unavailable', 'gave up'));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
    return new Response(JSON.stringify(body), {
      status,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'x-rate-limit-limit': '100',
        'x-rate-limit-remaining': String(rateRemaining),
        'x-rate-limit-reset': String(Math.floor(Date.now() / 1000) + 900),
        ...headers,
      },
    });
  }

  /** Problem details without errors[] (https://docs.x.com/x-api/fundamentals/response-codes-and-errors). */
  function problem(status: number, title: string, detail: string, type = 'about:blank'): Response {
    return json({ title, detail, type, status } satisfies Omit<XProblem, 'errors'>, status);
  }

  function invalid(message: string): Response {
    return json(
      {
        errors: [{ parameters: {}, message }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      } satisfies XProblem,
      400,
    );
  }

  return {
    url: base,
    user,
    clientId,
    clientSecret,
    tweets,
    media,
    requests,
    sends,
    validTokens,
    scopes,
    validRefreshTokens,
    failNext(n, response, route = 'tweets') {
      const list = canned.get(route) ?? [];
      for (let i = 0; i < n; i++) list.push(response);
      canned.set(route, list);
    },
    reply(parent, from, text, createdAt = new Date()) {
      users.set(from.id, from);
      const t: FakeTweet = {
        id: newId(),
        text,
        mediaIds: [],
        userId: from.id,
        createdAt: createdAt.toISOString(),
        inReplyTo: parent.id,
        conversationId: parent.conversationId,
        metrics: NO_METRICS(),
      };
      tweets.push(t);
      parent.metrics.reply_count++;
      return t;
    },
    addTweet(text, o = {}) {
      const ids = Array.from({ length: o.mediaCount ?? 0 }, () => {
        const id = newId();
        media.push({
          id,
          mediaKey: `3_${id}`,
          userId: user.id,
          mediaType: 'image/png',
          category: 'tweet_image',
          totalBytes: 1,
          segments: new Map([[0, 1]]),
          finalized: true,
          state: 'succeeded',
          pendingPolls: 0,
          altText: null,
        });
        return id;
      });
      const id = newId();
      const t: FakeTweet = {
        id,
        text,
        mediaIds: ids,
        userId: user.id,
        createdAt: (o.createdAt ?? new Date()).toISOString(),
        inReplyTo: o.inReplyTo?.id ?? null,
        conversationId: o.inReplyTo?.conversationId ?? id,
        metrics: NO_METRICS(),
      };
      tweets.push(t);
      return t;
    },
    count: (route) => counts.get(route) ?? 0,
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

async function readJson(req: Request): Promise<Record<string, unknown> | null> {
  try {
    const v: unknown = await req.json();
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A post's text as X stores it: the reply's handles, then what was written. */
function fullText(mentions: string[], text: string): string {
  return mentions.map((h) => `@${h} `).join('') + text;
}

function shortCode(): string {
  return Math.random().toString(36).slice(2, 12);
}

/** A publish of a text post, as the activity hands it to the connector; `over` changes any part. */
export function xRequest(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello from Postpilot',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token' },
    ...over,
  };
}
