// A local fake of the parts of Pinterest API v5 the connector uses: POST /v5/pins, the video media
// upload (POST /v5/media, the S3 form it points at, GET /v5/media/{id}), GET /v5/boards (the
// account's boards), GET /v5/boards/{id}/pins and POST /v5/oauth/token, with Pinterest's error body `{"code": n, "message": "..."}`, 201 on
// creation, and continuous refresh tokens (every refresh spends the old refresh token).
//
// Pinterest publishes no typed SDK: POST /v5/pins and POST /v5/media are checked against the
// TypeBox schemas of platforms/contracts/pinterest.ts, written from the API v5 reference; a body
// with a field, type, length or media_source variant the reference does not list is refused as
// Pinterest refuses it, 400 with `{"code": 1, "message": "..."}`. Every answer (a Pin, a board's
// Pins, the boards, a media registration and its state, analytics, tokens, errors) is built as
// that file's answer types.
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type Board,
  type BoardPinsList,
  type BoardsList,
  CreatePinBody,
  type ErrorAnswer,
  type Media,
  type MediaUpload,
  type Pin,
  type PinAnalytics,
  type RefreshTokenAnswer,
  RegisterMediaBody,
} from '../../platforms/contracts/pinterest.ts';

export interface FakePin {
  id: string;
  boardId: string;
  description: string | null;
  title: string | null;
  /** The Pin's destination link. */
  link?: string | null;
  altText: string | null;
  media: { type: 'image'; contentType: string; size: number } | { type: 'video'; mediaId: string; cover: Record<string, unknown> };
  createdAt: string;
  user: string;
  /** Lifetime figures the analytics answer sums (tests set them). */
  stats?: { impressions: number; saves: number; outboundClicks: number; pinClicks: number };
}

export type FakeBoardPrivacy = 'PUBLIC' | 'PROTECTED' | 'SECRET';

/** A board's own fields, as GET /v5/boards lists them (the owner is in `boards`). */
export interface FakeBoard {
  name: string;
  privacy: FakeBoardPrivacy;
  createdAt: string;
}

export interface FakeMediaUpload {
  mediaId: string;
  user: string;
  status: 'registered' | 'processing' | 'succeeded' | 'failed';
  size: number;
  contentType: string;
  fileName: string;
  fieldOrder: string[];
  pendingPolls: number;
}

export interface FakeRequest {
  method: string;
  path: string;
  authorization: string | null;
}

export type FakeResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';
export type FakeRoute = 'pins' | 'media' | 'mediaStatus' | 'upload' | 'boards' | 'boardPins' | 'analytics' | 'token';

export interface FakePinterest {
  url: string;
  pins: FakePin[];
  media: FakeMediaUpload[];
  requests: FakeRequest[];
  /** access token → user */
  tokens: Map<string, string>;
  refreshTokens: Map<string, string>;
  /** board id → owner */
  boards: Map<string, string>;
  /** board id → name, privacy and creation time */
  boardDetails: Map<string, FakeBoard>;
  failNext(n: number, response: FakeResponse, route?: FakeRoute): void;
  expireToken(token: string): void;
  addPin(p: Partial<FakePin> & Pick<FakePin, 'description'>): FakePin;
  /** A new board (owner 'poster' unless given), newer than every board before it; returns its id. */
  addBoard(b: { name: string; privacy?: FakeBoardPrivacy; owner?: string }): string;
  stop(): Promise<void>;
}

export interface FakePinterestOptions {
  /** GET /v5/media/{id} answers `processing` this many times after the upload (default 1). */
  mediaPendingPolls?: number;
  /** Processing ends in `failed`. */
  failMediaProcessing?: boolean;
  client?: { id: string; secret: string };
}

export const BOARD_ID = '1009213841234567890';
export const OTHER_BOARD_ID = '1009213849999999999';

const PIN_KEYS = [
  'link',
  'title',
  'description',
  'dominant_color',
  'alt_text',
  'board_id',
  'board_section_id',
  'media_source',
  'parent_pin_id',
  'note',
];
const SOURCE_KEYS: Record<string, string[]> = {
  image_base64: ['source_type', 'content_type', 'data', 'is_standard'],
  image_url: ['source_type', 'url', 'is_standard'],
  video_id: [
    'source_type',
    'media_id',
    'cover_image_url',
    'cover_image_content_type',
    'cover_image_data',
    'cover_image_key_frame_time',
    'is_standard',
  ],
};
const MAGIC: Record<string, number[]> = { 'image/jpeg': [0xff, 0xd8, 0xff], 'image/png': [0x89, 0x50, 0x4e, 0x47] };

export async function startFakePinterest(opts: FakePinterestOptions = {}): Promise<FakePinterest> {
  const client = opts.client ?? { id: 'pin-client', secret: 'pin-secret' };
  const pins: FakePin[] = [];
  const media: FakeMediaUpload[] = [];
  const requests: FakeRequest[] = [];
  const tokens = new Map([['pina_good', 'poster']]);
  const refreshTokens = new Map([['pinr_1', 'poster']]);
  const boards = new Map([
    [BOARD_ID, 'poster'],
    [OTHER_BOARD_ID, 'someone-else'],
  ]);
  const boardDetails = new Map<string, FakeBoard>([
    [BOARD_ID, { name: 'Red squares', privacy: 'PUBLIC', createdAt: '2024-03-01T10:00:00.000Z' }],
    [OTHER_BOARD_ID, { name: 'Someone else’s board', privacy: 'PUBLIC', createdAt: '2024-03-02T10:00:00.000Z' }],
  ]);
  const uploadParams = new Map<string, Record<string, string>>();
  const canned = new Map<FakeRoute, FakeResponse[]>();
  const hanging = new Set<() => void>();
  let seq = 1009213841000000000n;
  const newId = () => String(seq++);
  let tokenSeq = 1;
  let clock = Date.now();
  const now = () => new Date((clock = Math.max(clock + 1000, Date.now()))).toISOString();

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const u = new URL(req.url);
    requests.push({ method: req.method, path: u.pathname, authorization: req.headers.get('authorization') });
    const route = routeOf(req.method, u.pathname);
    if (!route) return error(404, 404, 'Not found.');

    let acceptThenHang = false;
    const next = canned.get(route)?.shift();
    if (next === 'hang') return hang(req);
    if (next === 'accept-then-hang') acceptThenHang = true;
    else if (next && typeof next.body === 'string')
      return new Response(next.body, { status: next.status, headers: { 'Content-Type': 'application/xml', ...next.headers } });
    else if (next) return json(next.body ?? { code: next.status, message: `HTTP ${next.status}` }, next.status, next.headers);

    if (route === 'token') return token(req);
    if (route === 'upload') return upload(req);
    const user = tokens.get(/^bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim() ?? '');
    if (!user) return error(401, 2, 'Authentication failed.');

    let res: Response;
    if (route === 'pins') res = await createPin(req, user);
    else if (route === 'media') res = await registerMedia(req, user);
    else if (route === 'mediaStatus') res = mediaStatus(decodeURIComponent(u.pathname.split('/')[3]!), user);
    else if (route === 'analytics') res = pinAnalytics(decodeURIComponent(u.pathname.split('/')[3]!), user, u.searchParams);
    else if (route === 'boards') res = listBoards(user, u.searchParams);
    else res = boardPins(decodeURIComponent(u.pathname.split('/')[3]!), user, u.searchParams);
    return acceptThenHang ? hang(req) : res;
  }

  function routeOf(method: string, path: string): FakeRoute | null {
    if (method === 'POST' && path === '/v5/pins') return 'pins';
    if (method === 'POST' && path === '/v5/media') return 'media';
    if (method === 'GET' && /^\/v5\/media\/[^/]+$/.test(path)) return 'mediaStatus';
    if (method === 'GET' && path === '/v5/boards') return 'boards';
    if (method === 'GET' && /^\/v5\/boards\/[^/]+\/pins$/.test(path)) return 'boardPins';
    if (method === 'GET' && /^\/v5\/pins\/[^/]+\/analytics$/.test(path)) return 'analytics';
    if (method === 'POST' && path === '/v5/oauth/token') return 'token';
    if (method === 'POST' && path === '/pinterest-media-upload') return 'upload';
    return null;
  }

  /**
   * GET /v5/pins/{id}/analytics: start_date and end_date (YYYY-MM-DD, at most 90 days back) and
   * metric_types required; the owner's Pins only. summary_metrics over the range (the fake's
   * figures are lifetime ones).
   */
  function pinAnalytics(id: string, user: string, q: URLSearchParams): Response {
    const pin = pins.find((p) => p.id === id && p.user === user);
    if (!pin) return error(404, 50, 'Pin not found.');
    const start = q.get('start_date');
    const end = q.get('end_date');
    const types = (q.get('metric_types') ?? '').split(',').filter(Boolean);
    const date = /^\d{4}-\d{2}-\d{2}$/;
    if (!start || !end || !date.test(start) || !date.test(end) || !types.length) {
      return error(400, 1, 'Invalid parameters: start_date, end_date and metric_types are required.');
    }
    if (Date.parse(start) < Date.now() - 91 * 86_400_000) return error(400, 1, 'start_date cannot be more than 90 days back.');
    const st = pin.stats ?? { impressions: 0, saves: 0, outboundClicks: 0, pinClicks: 0 };
    const all: Record<string, number> = {
      IMPRESSION: st.impressions,
      SAVE: st.saves,
      OUTBOUND_CLICK: st.outboundClicks,
      PIN_CLICK: st.pinClicks,
    };
    const unknown = types.find((t) => !(t in all));
    if (unknown) return error(400, 1, `Invalid metric type ${unknown}.`);
    const summary = Object.fromEntries(types.map((t) => [t, all[t] ?? 0]));
    const answer: PinAnalytics = { all: { daily_metrics: [], summary_metrics: summary, lifetime_metrics: summary } };
    return json(answer);
  }

  async function createPin(req: Request, user: string): Promise<Response> {
    const body = await jsonBody(req);
    if (!body) return error(400, 1, 'Invalid request body: not a JSON object.');
    const unknown = Object.keys(body).filter((k) => !PIN_KEYS.includes(k));
    if (unknown.length) return error(400, 1, `Invalid request: unknown field(s) ${unknown.join(', ')}.`);
    const boardId = body.board_id;
    if (typeof boardId !== 'string' || !/^\d+$/.test(boardId)) return error(400, 1, "board_id: is required and must match '^\\d+$'.");
    const owner = boards.get(boardId);
    if (!owner) return error(404, 404, 'Board not found.');
    if (owner !== user) return error(403, 403, 'Not authorized to access board or Pin.');
    for (const [k, max] of [
      ['title', 100],
      ['description', 800],
      ['alt_text', 500],
      ['link', 2048],
    ] as const) {
      const v = body[k];
      if (v != null && (typeof v !== 'string' || v.length > max))
        return error(400, 1, `${k}: must be a string of at most ${max} characters.`);
    }
    // The reference's shape, checked before anything is fetched or stored.
    const broken = schemaError(CreatePinBody, body);
    if (broken) return broken;
    const source = await checkSource(body.media_source, user);
    if (source instanceof Response) return source;
    const pin: FakePin = {
      id: newId(),
      boardId,
      description: str(body.description),
      title: str(body.title),
      link: str(body.link),
      altText: str(body.alt_text),
      media: source,
      createdAt: now(),
      user,
    };
    pins.push(pin);
    return json(pinJson(pin), 201);
  }

  async function checkSource(src: unknown, user: string): Promise<FakePin['media'] | Response> {
    if (!src || typeof src !== 'object') return error(400, 1, 'media_source: is required.');
    const s = src as Record<string, unknown>;
    const allowed = SOURCE_KEYS[String(s.source_type)];
    if (!allowed) return error(400, 1, `media_source.source_type: '${String(s.source_type)}' is not one of the supported types.`);
    const extra = Object.keys(s).filter((k) => !allowed.includes(k));
    if (extra.length) return error(400, 1, `media_source: unknown field(s) ${extra.join(', ')} for ${String(s.source_type)}.`);
    if (s.source_type === 'image_base64') {
      const type = String(s.content_type);
      if (!MAGIC[type]) return error(400, 1, "media_source.content_type: must be one of 'image/jpeg', 'image/png'.");
      const bytes = typeof s.data === 'string' ? Buffer.from(s.data, 'base64') : Buffer.alloc(0);
      if (!bytes.length || !MAGIC[type]!.every((b, i) => bytes[i] === b))
        return error(403, 3, "The Pin's image is too small, too large or is broken.");
      return { type: 'image', contentType: type, size: bytes.length };
    }
    if (s.source_type === 'video_id') {
      const m = media.find((x) => x.mediaId === s.media_id && x.user === user);
      if (!m) return error(400, 1, `media_source.media_id: media ${String(s.media_id)} not found.`);
      if (m.status !== 'succeeded') return error(400, 1, `Media ${m.mediaId} is not ready (status ${m.status}).`);
      const frame = s.cover_image_key_frame_time;
      if (frame != null && (typeof frame !== 'number' || frame < 0))
        return error(400, 1, 'media_source.cover_image_key_frame_time: must be >= 0.');
      const { source_type: _t, media_id: _m, ...cover } = s;
      return { type: 'video', mediaId: m.mediaId, cover };
    }
    return error(400, 1, 'image_url is not supported by this fake.');
  }

  async function registerMedia(req: Request, user: string): Promise<Response> {
    const body = await jsonBody(req);
    if (!body) return error(400, 1, 'Invalid request body: not a JSON object.');
    if (body.media_type !== 'video') return error(400, 1, "media_type: must be 'video'.");
    const broken = schemaError(RegisterMediaBody, body);
    if (broken) return broken;
    const mediaId = newId();
    const params: Record<string, string> & NonNullable<MediaUpload['upload_parameters']> = {
      'x-amz-date': '20261121T000000Z',
      'x-amz-signature': `sig-${mediaId}`,
      'x-amz-security-token': 'fake-token',
      'x-amz-algorithm': 'AWS4-HMAC-SHA256',
      key: `uploads/${mediaId}`,
      policy: btoa(JSON.stringify({ key: `uploads/${mediaId}` })),
      'x-amz-credential': 'AKIAFAKE/20261121/us-east-1/s3/aws4_request',
      'Content-Type': 'multipart/form-data',
    };
    uploadParams.set(`uploads/${mediaId}`, params);
    media.push({
      mediaId,
      user,
      status: 'registered',
      size: 0,
      contentType: '',
      fileName: '',
      fieldOrder: [],
      pendingPolls: opts.mediaPendingPolls ?? 1,
    });
    const answer: MediaUpload = {
      media_id: mediaId,
      media_type: 'video',
      upload_url: `${base}/pinterest-media-upload`,
      upload_parameters: params,
    };
    return json(answer, 201);
  }

  async function upload(req: Request): Promise<Response> {
    if (req.headers.get('authorization')) return s3Error(400, 'InvalidArgument', 'Unsupported Authorization Type');
    const form = await req.formData().catch(() => null);
    const key = form?.get('key');
    const params = typeof key === 'string' ? uploadParams.get(key) : undefined;
    if (!form || !params) return s3Error(403, 'AccessDenied', 'Invalid according to Policy');
    const names = [...form.keys()];
    if (names.at(-1) !== 'file' || Object.entries(params).some(([k, v]) => form.get(k) !== v)) {
      return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed');
    }
    const file = form.get('file');
    if (!(file instanceof Blob) || !file.size)
      return s3Error(400, 'IncorrectNumberOfFilesInPostRequest', 'POST requires exactly one file upload per request.');
    uploadParams.delete(key as string);
    const m = media.find((x) => `uploads/${x.mediaId}` === key)!;
    Object.assign(m, {
      status: 'processing',
      size: file.size,
      contentType: file.type,
      fileName: file instanceof File ? file.name : '',
      fieldOrder: names,
    });
    return new Response(null, { status: 204 });
  }

  function mediaStatus(id: string, user: string): Response {
    const m = media.find((x) => x.mediaId === id && x.user === user);
    if (!m) return error(404, 404, 'Media upload not found.');
    if (m.status === 'processing') {
      if (m.pendingPolls > 0) m.pendingPolls--;
      else m.status = opts.failMediaProcessing ? 'failed' : 'succeeded';
    }
    const answer: Media = { media_id: m.mediaId, media_type: 'video', status: m.status };
    return json(answer);
  }

  /**
   * GET /v5/boards: the token's own boards, newest first, page_size 1–250 (default 25), an opaque
   * bookmark while more remain. `privacy` filters (PUBLIC_AND_SECRET is both); the fake grants
   * boards:read_secret, so secret boards are listed too.
   */
  function listBoards(user: string, q: URLSearchParams): Response {
    const size = Number(q.get('page_size') ?? 25);
    if (!Number.isInteger(size) || size < 1 || size > 250) return error(400, 1, 'page_size: must be between 1 and 250.');
    const privacy = q.get('privacy');
    const wanted: Record<string, FakeBoardPrivacy[]> = {
      PUBLIC: ['PUBLIC'],
      PROTECTED: ['PROTECTED'],
      SECRET: ['SECRET'],
      PUBLIC_AND_SECRET: ['PUBLIC', 'SECRET'],
      ALL: ['PUBLIC', 'PROTECTED', 'SECRET'],
    };
    if (privacy && !wanted[privacy])
      return error(400, 1, "privacy: must be one of 'ALL', 'PROTECTED', 'PUBLIC', 'SECRET', 'PUBLIC_AND_SECRET'.");
    const kinds = wanted[privacy ?? 'ALL']!;
    const all = [...boards]
      .filter(([id, owner]) => owner === user && kinds.includes(details(id).privacy))
      .map(([id]) => id)
      .sort((a, b) => details(b).createdAt.localeCompare(details(a).createdAt));
    const start = q.get('bookmark') ? Number(atob(q.get('bookmark')!)) : 0;
    const items = all.slice(start, start + size).map((id): Board => {
      const b = details(id);
      return {
        id,
        created_at: b.createdAt,
        board_pins_modified_at: b.createdAt,
        name: b.name,
        description: '',
        collaborator_count: 0,
        pin_count: pins.filter((p) => p.boardId === id).length,
        follower_count: 0,
        media: { image_cover_url: null, pin_thumbnail_urls: [] },
        owner: { username: user },
        privacy: b.privacy,
      };
    });
    const bookmark = start + size < all.length ? btoa(String(start + size)) : null;
    const answer: BoardsList = { items, bookmark };
    return json(answer);
  }

  function details(id: string): FakeBoard {
    return boardDetails.get(id) ?? { name: `Board ${id}`, privacy: 'PUBLIC', createdAt: '2024-01-01T00:00:00.000Z' };
  }

  function boardPins(boardId: string, user: string, q: URLSearchParams): Response {
    const owner = boards.get(boardId);
    if (!owner) return error(404, 404, 'Board not found.');
    if (owner !== user) return error(403, 403, 'Not authorized to access board or Pin.');
    const size = Number(q.get('page_size') ?? 25);
    if (!Number.isInteger(size) || size < 1 || size > 250) return error(400, 1, 'page_size: must be between 1 and 250.');
    const start = q.get('bookmark') ? Number(atob(q.get('bookmark')!)) : 0;
    const all = pins.filter((p) => p.boardId === boardId).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const items = all.slice(start, start + size);
    const bookmark = start + size < all.length ? btoa(String(start + size)) : null;
    const answer: BoardPinsList = { items: items.map(pinJson), bookmark };
    return json(answer);
  }

  async function token(req: Request): Promise<Response> {
    const basic = /^basic\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
    if (!basic || atob(basic) !== `${client.id}:${client.secret}`) return error(401, 2, 'Authentication failed.');
    const f = Object.fromEntries(new URLSearchParams(await req.text()));
    if (f.grant_type !== 'refresh_token')
      return error(400, 1, "grant_type: must be one of 'authorization_code', 'refresh_token', 'client_credentials'.");
    const user = f.refresh_token ? refreshTokens.get(f.refresh_token) : undefined;
    if (!user) return error(401, 283, 'The authorization grant is invalid');
    refreshTokens.delete(f.refresh_token!);
    const access = `pina_${tokenSeq++}`;
    const refresh = `pinr_${tokenSeq++}`;
    tokens.set(access, user);
    refreshTokens.set(refresh, user);
    const answer: RefreshTokenAnswer = {
      access_token: access,
      refresh_token: refresh,
      response_type: 'refresh_token',
      token_type: 'bearer',
      expires_in: 2_592_000,
      refresh_token_expires_in: 5_184_000,
      refresh_token_expires_at: Math.floor(Date.now() / 1000) + 5_184_000,
      scope: 'boards:read pins:read pins:write',
    };
    return json(answer);
  }

  function pinJson(p: FakePin): Pin {
    return {
      id: p.id,
      created_at: p.createdAt,
      link: p.link ?? null,
      title: p.title,
      description: p.description,
      dominant_color: '#ff0000',
      alt_text: p.altText,
      creative_type: p.media.type === 'video' ? 'VIDEO' : 'REGULAR',
      board_id: p.boardId,
      board_section_id: null,
      board_owner: { username: p.user },
      is_owner: true,
      media:
        p.media.type === 'video'
          ? { media_type: 'video', cover_image_url: `https://i.pinimg.com/videos/${p.id}.jpg`, duration: 1000, width: 16, height: 16 }
          : { media_type: 'image', images: { '150x150': { width: 150, height: 150, url: `https://i.pinimg.com/150x150/${p.id}.jpg` } } },
      parent_pin_id: null,
      is_standard: true,
      has_been_promoted: false,
      note: null,
    };
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(error(504, 504, 'gave up'));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    pins,
    media,
    requests,
    tokens,
    refreshTokens,
    boards,
    boardDetails,
    failNext(n, response, route = 'pins') {
      const list = canned.get(route) ?? [];
      for (let i = 0; i < n; i++) list.push(response);
      canned.set(route, list);
    },
    expireToken(t) {
      tokens.delete(t);
    },
    addPin(p) {
      const pin: FakePin = {
        id: newId(),
        boardId: BOARD_ID,
        title: null,
        altText: null,
        media: { type: 'image', contentType: 'image/png', size: 1 },
        createdAt: now(),
        user: 'poster',
        ...p,
      };
      pins.push(pin);
      return pin;
    },
    addBoard(b) {
      const id = newId();
      boards.set(id, b.owner ?? 'poster');
      boardDetails.set(id, { name: b.name, privacy: b.privacy ?? 'PUBLIC', createdAt: now() });
      return id;
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

async function jsonBody(req: Request): Promise<Record<string, unknown> | null> {
  if (!(req.headers.get('content-type') ?? '').includes('application/json')) return null;
  try {
    const b: unknown = await req.json();
    return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

function error(status: number, code: number, message: string): Response {
  const body: ErrorAnswer = { code, message };
  return json(body, status);
}

/** Pinterest's 400 for the first way a body breaks `schema` (the field's dotted path, then why), or null when it holds. */
function schemaError(schema: TSchema, body: unknown): Response | null {
  const broken = Value.Errors(schema, body).First();
  return broken ? error(400, 1, `${broken.path.replace(/^\//, '').replace(/\//g, '.') || 'body'}: ${broken.message}`) : null;
}

function s3Error(status: number, code: string, message: string): Response {
  const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  return new Response(xml, { status, headers: { 'Content-Type': 'application/xml' } });
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
