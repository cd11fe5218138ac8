// A local fake Mastodon instance speaking the parts of the REST API the connector uses, with
// Mastodon's status codes and error bodies (`{"error": "..."}`). A reply (`in_reply_to_id`) answers
// a status the instance has and shows `in_reply_to_id` / `in_reply_to_account_id` as the Status
// entity does. DELETE /api/v1/statuses/:id removes only the token's own statuses: another
// account's, like one that is gone, is 404 "Record not found" (StatusesController#destroy looks the
// status up among the account's own).
//
// What it receives and answers follows the published shapes the connector follows (masto 8.0.0's
// types, as Mastodon's snake_case JSON: platforms/mastodon.ts Snake<T>), each held to masto's type
// by test/shapes-mastodon.test.ts. POST /api/v1/statuses is checked against CreateStatusBody
// (masto's CreateStatusParams) and POST /api/v2/media against CreateMediaBody (masto's
// CreateMediaAttachmentParams), and a body that breaks them is refused as Mastodon refuses it,
// 422 `{"error": "Validation failed: …"}`; fields Mastodon does not know are ignored, as its
// strong parameters drop them. The account statuses query is read by ListStatusesQuery (masto's
// ListAccountStatusesParams) as Mastodon reads a query: each value cast, none refused, unknown
// parameters ignored. Every answer is typed by masto's entity (Status, MediaAttachment, Context,
// Account, Instance, Error).
import type { PublishRequest } from '../../platforms/types.ts';
import { Kind, type Static, type TObject, type TSchema, Type, TypeRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { mastodon } from 'masto';
import type { Answer } from '../../platforms/json.ts';
import type {
  Snake,
  WireAccount,
  WireContext,
  WireError,
  WireInstanceV1,
  WireInstanceV2,
  WireMediaAttachment,
  WireStatus,
  WireStatusSource,
} from '../../platforms/mastodon.ts';

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
/** Mastodon's visibilities (masto's StatusVisibility). */
export const VISIBILITIES = ['public', 'unlisted', 'private', 'direct'] as const satisfies readonly mastodon.v1.StatusVisibility[];
/**
 * POST /api/v1/statuses as far as the fake reads it: the text, attachments, the status answered
 * and the presentation fields (https://docs.joinmastodon.org/methods/statuses/#create).
 */
export const CreateStatusBody = Type.Object({
  status: Type.Optional(Nullable(Type.String())),
  media_ids: Type.Optional(Type.Array(Type.String())),
  in_reply_to_id: Type.Optional(Nullable(Type.String())),
  visibility: Type.Optional(Nullable(Type.Union(VISIBILITIES.map((v) => Type.Literal(v))))),
  sensitive: Type.Optional(Nullable(Type.Boolean())),
  spoiler_text: Type.Optional(Nullable(Type.String())),
  language: Type.Optional(Nullable(Type.String())),
});
export type CreateStatusBody = Static<typeof CreateStatusBody>;
/** The fields of masto's CreateStatusParams the schema covers, as the wire has them. */
export type CreateStatusFields = Partial<
  Pick<
    Snake<mastodon.rest.v1.CreateStatusParamsWithMediaIds>,
    'status' | 'media_ids' | 'in_reply_to_id' | 'visibility' | 'sensitive' | 'spoiler_text' | 'language'
  >
>;

// A file part of a multipart body: TypeBox has no Blob type, so the fake registers one.
if (!TypeRegistry.Has('Blob')) TypeRegistry.Set('Blob', (_schema, value) => value instanceof Blob);
const FilePart = Type.Unsafe<Blob>({ [Kind]: 'Blob' });
/**
 * POST /api/v2/media (https://docs.joinmastodon.org/methods/media/#v2), multipart, as masto's
 * CreateMediaAttachmentParams has it: `file` (a file part, or text: Mastodon's Paperclip reads a
 * `data:` URI as the file), `description`, `focus` ("x,y") and `thumbnail` (a file or text).
 */
export const CreateMediaBody = Type.Object({
  file: Type.Union([FilePart, Type.String()]),
  description: Type.Optional(Nullable(Type.String())),
  focus: Type.Optional(Nullable(Type.String())),
  thumbnail: Type.Optional(Nullable(Type.Union([FilePart, Type.String()]))),
});
export type CreateMediaBody = Static<typeof CreateMediaBody>;
/**
 * GET /api/v1/accounts/:id/statuses (https://docs.joinmastodon.org/methods/accounts/#statuses),
 * as masto's ListAccountStatusesParams has it: the pagination ids and limit, and the filters.
 */
export const ListStatusesQuery = Type.Object({
  max_id: Type.Optional(Nullable(Type.String())),
  since_id: Type.Optional(Nullable(Type.String())),
  min_id: Type.Optional(Nullable(Type.String())),
  limit: Type.Optional(Nullable(Type.Number())),
  only_media: Type.Optional(Nullable(Type.Boolean())),
  pinned: Type.Optional(Nullable(Type.Boolean())),
  exclude_replies: Type.Optional(Nullable(Type.Boolean())),
  exclude_reblogs: Type.Optional(Nullable(Type.Boolean())),
  tagged: Type.Optional(Nullable(Type.String())),
  exclude_direct: Type.Optional(Nullable(Type.Boolean())),
});
export type ListStatusesQuery = Static<typeof ListStatusesQuery>;

export interface FakeStatus {
  id: string;
  text: string;
  media_ids: string[];
  visibility: mastodon.v1.StatusVisibility;
  idempotencyKey: string | null;
  token: string;
  created_at: string;
  url: string;
  uri: string;
  /** The status this one answers; null or absent for a status that answers nothing. */
  in_reply_to_id?: string | null;
  /** Who wrote it, when another account did (FakeMastodon.reply); absent: the token's own account. */
  account?: FakeAccount;
  /** The counters Mastodon shows on every status (tests set them to what other accounts did). */
  favourites_count: number;
  reblogs_count: number;
  replies_count: number;
}

/** Another account of the fediverse, as Mastodon's Account entity shows it. */
export interface FakeAccount {
  id: string;
  username: string;
  /** `user` for a local account, `user@domain` for a remote one. */
  acct: string;
  display_name: string;
  avatar: string;
  url: string;
}

export interface FakeMedia {
  id: string;
  token: string;
  fileName: string;
  mimeType: string;
  size: number;
  /** Hex SHA-256 of the bytes received (which file was published, not only how big). */
  sha256: string;
  description: string | null;
  /** The focal point sent (`focus`), as meta.focus shows it; null when none was sent. */
  focus: { x: number; y: number } | null;
  /** GET /api/v1/media/:id answers 206 (still processing) this many more times, then 200. */
  pendingPolls: number;
  processed: boolean;
  statusId: string | null;
}

/** A POST /api/v1/statuses that reached the instance (past its token check), answered from an Idempotency-Key or not. */
export interface FakeSend {
  text: string;
  idempotencyKey: string | null;
  at: number;
}

export interface FakeRequest {
  method: string;
  path: string;
  /** The query string, with its `?` ('' when none). */
  search: string;
  idempotencyKey: string | null;
}

/**
 * 'hang': never answer. 'accept-then-hang': create the status, then never answer — what a
 * client sees when the platform accepted a post but the connection (or the worker) died.
 */
export type FakeResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';

export interface FakeMastodon {
  url: string;
  statuses: FakeStatus[];
  media: FakeMedia[];
  requests: FakeRequest[];
  /** Every publish request received, in order: a re-send shows here even when it creates no second status. */
  sends: FakeSend[];
  /** The statuses DELETE /api/v1/statuses/:id removed, in order. */
  deleted: FakeStatus[];
  validTokens: Set<string>;
  /** Moves the fake's clock (Idempotency-Key lifetimes, created_at) by ms. */
  advance(ms: number): void;
  /** The next n POST /api/v1/statuses answer this instead (or never answer, for 'hang'). */
  failNext(n: number, response: FakeResponse): void;
  /** The next n GET /api/v1/statuses/:id of this status answer this instead (a rate limit, an outage). */
  failNextShow(statusId: string, n: number, response: { status: number; body?: unknown; headers?: Record<string, string> }): void;
  /** Another account answers a status of the instance (what people do under a published post). */
  reply(parentId: string, from: FakeAccount, text: string): FakeStatus;
  /** Removes a status, as its author deleting it would (it and what answers it are no longer shown). */
  remove(statusId: string): void;
  stop(): Promise<void>;
}

export interface FakeMastodonOptions {
  maxCharacters?: number;
  /** What every URL counts as (`characters_reserved_per_url`; Mastodon's is 23). */
  charactersReservedPerUrl?: number;
  /** false: GET /api/v2/instance is 404, as before Mastodon 4.0. */
  v2Instance?: boolean;
  /** v1 instance reports only `max_toot_chars` (Pleroma, glitch-soc) instead of `configuration`. */
  v1MaxTootChars?: boolean;
  /** Polls answering 206 before an upload is processed (default 1). */
  mediaPendingPolls?: number;
  /** Uploads are processed at once: POST /api/v2/media answers 200 with `url` set. */
  syncMedia?: boolean;
  /**
   * The `url` a new status answers, from its id and text (what a hostile instance may send, e.g.
   * `javascript:…`); undefined: the default, `<instance>/@user/<id>`.
   */
  statusUrl?: (status: { id: string; text: string }) => string | undefined;
}

/** Mastodon's answer (statuses.errors.in_reply_not_found) to a reply whose parent it does not have or does not show. */
export const REPLY_NOT_FOUND = 'The post you are trying to reply to does not appear to exist.';

/** How long Mastodon honours an Idempotency-Key: PostStatusService keeps it in Redis for 3600 s. */
export const IDEMPOTENCY_KEY_TTL_MS = 3_600_000;

const MAX_MEDIA = 4;
// Mastodon's StatusesController: a signed-in client gets up to CONTEXT_LIMIT statuses of a
// conversation, an anonymous one up to DESCENDANTS_LIMIT, DESCENDANTS_DEPTH_LIMIT levels deep.
const CONTEXT_LIMIT = 4_096;
const DESCENDANTS_LIMIT = 60;
const DESCENDANTS_DEPTH_LIMIT = 20;
const ACCOUNT = { id: '1', username: 'user', acct: 'user' };
/** A Status as the fake's Mastodon (4.3) shows it: without 4.5's quote fields, so no quotes count is reported. */
type StatusAnswer = Omit<WireStatus, 'quotes_count' | 'quote_approval' | 'quote'>;
const MAX_DESCRIPTION = 1500;

export async function startFakeMastodon(opts: FakeMastodonOptions = {}): Promise<FakeMastodon> {
  const maxCharacters = opts.maxCharacters ?? 500;
  const perUrl = opts.charactersReservedPerUrl ?? 23;
  const statuses: FakeStatus[] = [];
  const media: FakeMedia[] = [];
  const requests: FakeRequest[] = [];
  const validTokens = new Set(['good-token']);
  const canned: FakeResponse[] = [];
  const cannedShow = new Map<string, { status: number; body?: unknown; headers?: Record<string, string> }[]>();
  const sends: FakeSend[] = [];
  const deleted: FakeStatus[] = [];
  // `${token}:${key}`, as Mastodon keys it per account, with the time it stops being honoured.
  const idempotency = new Map<string, { status: FakeStatus; expiresAt: number }>();
  let skew = 0;
  const now = () => Date.now() + skew;
  const hanging = new Set<() => void>();
  let nextId = 113_000_000_000_000_000n; // Snowflake-sized ids, serialized as strings like Mastodon's
  const newId = () => String(nextId++);

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const { pathname: path, search } = new URL(req.url);
    const method = req.method;
    requests.push({ method, path, search, idempotencyKey: req.headers.get('idempotency-key') });

    if (method === 'GET' && path === '/api/v2/instance') {
      return opts.v2Instance === false ? error('Record not found', 404) : json(instanceV2());
    }
    if (method === 'GET' && path === '/api/v1/instance') return json(instanceV1());

    const mediaMatch = /^\/api\/v1\/media\/([^/]+)$/.exec(path);
    const sourceMatch = /^\/api\/v1\/statuses\/([^/]+)\/source$/.exec(path);
    const listMatch = /^\/api\/v1\/accounts\/([^/]+)\/statuses$/.exec(path);
    const showMatch = /^\/api\/v1\/statuses\/([^/]+)$/.exec(path);
    const contextMatch = /^\/api\/v1\/statuses\/([^/]+)\/context$/.exec(path);
    if (method === 'GET' && contextMatch) return context(req, decodeURIComponent(contextMatch[1]!));
    const route =
      method === 'POST' && path === '/api/v1/statuses'
        ? 'status'
        : method === 'POST' && path === '/api/v2/media'
          ? 'upload'
          : method === 'GET' && mediaMatch
            ? 'media'
            : method === 'GET' && path === '/api/v1/accounts/verify_credentials'
              ? 'me'
              : method === 'GET' && listMatch
                ? 'list'
                : method === 'GET' && sourceMatch
                  ? 'source'
                  : method === 'GET' && showMatch
                    ? 'show'
                    : method === 'DELETE' && showMatch
                      ? 'delete'
                      : null;
    if (!route) return error('Record not found', 404);

    let acceptThenHang = false;
    const shown = route === 'show' ? cannedShow.get(decodeURIComponent(showMatch![1]!))?.shift() : undefined;
    if (shown) return json(shown.body ?? { error: `HTTP ${shown.status}` }, shown.status, shown.headers);
    if (route === 'status') {
      const next = canned.shift();
      if (next === 'hang') return hang(req);
      if (next === 'accept-then-hang') acceptThenHang = true;
      else if (next) return json(next.body ?? { error: `HTTP ${next.status}` }, next.status, next.headers);
    }

    const token = /^Bearer\s+(.+)$/i.exec(req.headers.get('authorization') ?? '')?.[1]?.trim();
    if (!token || !validTokens.has(token)) {
      return error('The access token is invalid', 401, {
        'WWW-Authenticate': 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"',
      });
    }

    if (route === 'upload') return upload(req, token);
    if (route === 'media') return showMedia(decodeURIComponent(mediaMatch![1]!), token);
    if (route === 'me') return json(accountOf(undefined));
    if (route === 'list') return listStatuses(decodeURIComponent(listMatch![1]!), new URL(req.url).searchParams, token);
    if (route === 'show') {
      // A public status is visible to any token of the instance; a deleted one is 404.
      const s = statuses.find((x) => x.id === decodeURIComponent(showMatch![1]!));
      return s ? json(statusJson(s)) : error('Record not found', 404);
    }
    if (route === 'delete') return destroy(decodeURIComponent(showMatch![1]!), token);
    if (route === 'source') {
      const s = statuses.find((x) => x.id === decodeURIComponent(sourceMatch![1]!) && x.token === token);
      return s ? json({ id: s.id, text: s.text, spoiler_text: '' } satisfies WireStatusSource) : error('Record not found', 404);
    }
    if (acceptThenHang) {
      await createStatus(req, token);
      return hang(req);
    }
    return createStatus(req, token);
  }

  async function createStatus(req: Request, token: string): Promise<Response> {
    let raw: Record<string, unknown>;
    try {
      raw = await readParams(req);
    } catch {
      return error('Error occurred while parsing request parameters', 400);
    }
    const key = req.headers.get('idempotency-key');
    sends.push({ text: typeof raw.status === 'string' ? raw.status : '', idempotencyKey: key, at: now() });
    // Like PostStatusService: a known key returns the status it created, before any validation,
    // for an hour; after that the same key makes a new status.
    const known = key ? idempotency.get(`${token}:${key}`) : undefined;
    if (known && known.expiresAt > now()) return json(statusJson(known.status));
    const params = checkStatusParams(raw);
    if (typeof params === 'string') return error(params, 422);

    // Like StatusesController#set_thread: the parent is looked up before the status is built.
    const parentId = params.in_reply_to_id == null || params.in_reply_to_id === '' ? null : params.in_reply_to_id;
    const parent = parentId === null ? undefined : statuses.find((x) => x.id === parentId);
    if (parentId !== null && !parent) return error(REPLY_NOT_FOUND, 404);

    const text = params.status ?? '';
    const spoiler = params.spoiler_text ?? '';
    const mediaIds = params.media_ids ?? [];

    if (mediaIds.length > MAX_MEDIA) return error(`Cannot attach more than ${MAX_MEDIA} files`, 422);
    const attached = mediaIds.map((id) => media.find((m) => m.id === id && m.token === token && !m.statusId));
    const missing = mediaIds.filter((_, i) => !attached[i]);
    if (missing.length) {
      return error(`Media ${missing.join(', ')} not found or already attached to another post`, 422);
    }
    if (attached.some((m) => !m!.processed)) {
      return error('Cannot attach files that have not finished processing. Try again in a moment!', 422);
    }
    if (!text.trim() && !mediaIds.length) return error("Validation failed: Text can't be blank", 422);
    if (graphemes(countable(text, perUrl)) + graphemes(spoiler) > maxCharacters) {
      return error(`Validation failed: Text character limit of ${maxCharacters} exceeded`, 422);
    }

    const id = newId();
    const status: FakeStatus = {
      id,
      text,
      media_ids: mediaIds,
      visibility: params.visibility ?? 'public',
      idempotencyKey: key,
      token,
      created_at: new Date(now()).toISOString(),
      url: opts.statusUrl?.({ id, text }) ?? `${base}/@user/${id}`,
      uri: `${base}/users/user/statuses/${id}`,
      in_reply_to_id: parent?.id ?? null,
      favourites_count: 0,
      reblogs_count: 0,
      replies_count: 0,
    };
    for (const m of attached) m!.statusId = id;
    statuses.push(status);
    if (parent) parent.replies_count++;
    if (key) idempotency.set(`${token}:${key}`, { status, expiresAt: now() + IDEMPOTENCY_KEY_TTL_MS });
    return json(statusJson(status));
  }

  /**
   * DELETE /api/v1/statuses/:id: the token's own status, answered as the Status it was, with its
   * source `text` (for delete and redraft); its replies stay. Any other id is 404.
   */
  function destroy(id: string, token: string): Response {
    const i = statuses.findIndex((x) => x.id === id && x.token === token);
    if (i < 0) return error('Record not found', 404);
    const [s] = statuses.splice(i, 1);
    deleted.push(s!);
    const parent = statuses.find((x) => x.id === s!.in_reply_to_id);
    if (parent) parent.replies_count--;
    return json({ ...statusJson(s!), text: s!.text } satisfies StatusAnswer);
  }

  /**
   * POST /api/v2/media: the form checked against CreateMediaBody, refused in ActiveModel's words
   * (Mastodon's MediaAttachment validations). `focus` is not checked: Mastodon splits it at the
   * comma and reads each part with Ruby's to_f, so text that is not a number is 0.0, never a
   * refusal. A text `file` is read as a `data:` URI, as Mastodon's Paperclip reads it; other text
   * has no Paperclip adapter, which Mastodon answers 500 with its processing error.
   */
  async function upload(req: Request, token: string): Promise<Response> {
    const form = await req.formData().catch(() => null);
    if (!form) return error('Error occurred while parsing request parameters', 400);
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(CreateMediaBody.properties)) if (form.has(key)) fields[key] = form.get(key);
    const wrong = Value.Errors(CreateMediaBody, fields).First();
    if (wrong) {
      const field = wrong.path.split('/')[1] ?? '';
      const name = field.charAt(0).toUpperCase() + field.slice(1);
      return error(`Validation failed: ${name} ${field === 'file' && fields.file === undefined ? "can't be blank" : 'is invalid'}`, 422);
    }
    const params = fields as CreateMediaBody;
    const file = typeof params.file === 'string' ? dataUri(params.file) : params.file;
    if (file === 'blank') return error("Validation failed: File can't be blank", 422);
    if (!file) return error('Error processing thumbnail for uploaded media', 500);
    const description = params.description ?? null;
    if (description !== null && [...description].length > MAX_DESCRIPTION) {
      return error(`Validation failed: Description is too long (maximum is ${MAX_DESCRIPTION} characters)`, 422);
    }
    const m: FakeMedia = {
      id: newId(),
      token,
      fileName: file instanceof File && file.name ? file.name : 'file',
      mimeType: file.type,
      size: file.size,
      sha256: new Bun.CryptoHasher('sha256').update(await file.arrayBuffer()).digest('hex'),
      description,
      focus: params.focus ? focusOf(params.focus) : null,
      pendingPolls: opts.mediaPendingPolls ?? 1,
      processed: opts.syncMedia === true,
      statusId: null,
    };
    media.push(m);
    return json(mediaJson(m), m.processed ? 200 : 202);
  }

  /**
   * GET /api/v1/accounts/:id/statuses: the token's own statuses, newest first (one account per
   * token), the query read by ListStatusesQuery as Mastodon reads it (castQuery). `limit` is
   * Api::BaseController#limit_param: absent 20, else the number's absolute value, at most 40 (0
   * lists nothing). max_id, since_id and min_id compare as numbers; min_id lists the statuses
   * just after it. exclude_replies leaves out replies to other accounts only
   * (Status.without_replies keeps an account's answers to itself); only_media keeps statuses
   * with attachments; exclude_direct leaves out direct ones; `tagged` keeps those with the
   * hashtag; the fake has no pins and no boosts, so `pinned` lists nothing and exclude_reblogs
   * changes nothing.
   */
  function listStatuses(accountId: string, search: URLSearchParams, token: string): Response {
    if (accountId !== ACCOUNT.id) return error('Record not found', 404);
    const q = castQuery(ListStatusesQuery, search);
    const limit = q.limit == null ? 20 : Math.min(Math.abs(q.limit), 40);
    const idOf = (v: string | null | undefined) => (v?.trim() ? BigInt(rubyInteger(v)) : null);
    const [maxId, sinceId, minId] = [idOf(q.max_id), idOf(q.since_id), idOf(q.min_id)];
    const tag = q.tagged ? new RegExp(`(^|[^\\p{L}\\p{N}_])#${escapeRegExp(q.tagged)}(?![\\p{L}\\p{N}_])`, 'iu') : null;
    const listed = statuses
      .filter((s) => s.token === token)
      .filter((s) => !(q.exclude_replies && s.in_reply_to_id && inReplyToAccount(s) !== s.token))
      .filter((s) => !q.only_media || s.media_ids.length > 0)
      .filter((s) => !q.exclude_direct || s.visibility !== 'direct')
      .filter((s) => !q.pinned)
      .filter((s) => !tag || tag.test(s.text))
      .filter((s) => (maxId === null || BigInt(s.id) < maxId) && (sinceId === null || BigInt(s.id) > sinceId))
      .filter((s) => minId === null || BigInt(s.id) > minId);
    // Oldest first after min_id (the page just after it), newest first otherwise; shown newest first.
    const page = minId === null ? listed.toReversed().slice(0, limit) : listed.slice(0, limit).toReversed();
    return json(page.map(statusJson));
  }

  function showMedia(id: string, token: string): Response {
    const m = media.find((x) => x.id === id && x.token === token && !x.statusId);
    if (!m) return error('Record not found', 404);
    if (!m.processed) {
      if (m.pendingPolls > 0) {
        m.pendingPolls--;
        return json(mediaJson(m), 206);
      }
      m.processed = true;
    }
    return json(mediaJson(m), 200);
  }

  function hang(req: Request): Promise<Response> {
    // Answers only once the client gives up (or the fake stops), so nothing leaks.
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(error('gave up', 504));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * GET /api/v1/statuses/:id/context: a public status's conversation, readable without a token
   * (a token given must be valid). Descendants in depth-first order, each level by id, within
   * the limits a signed-in or anonymous client gets. The method takes no parameters (masto's
   * context.fetch() has none), so a query string is ignored, as Mastodon's controller reads none.
   */
  function context(req: Request, id: string): Response {
    const auth = req.headers.get('authorization');
    if (auth !== null) {
      const token = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
      if (!token || !validTokens.has(token)) return error('The access token is invalid', 401);
    }
    const root = statuses.find((x) => x.id === id);
    if (!root) return error('Record not found', 404);
    const signedIn = auth !== null;
    const limit = signedIn ? CONTEXT_LIMIT : DESCENDANTS_LIMIT;
    const descendants: FakeStatus[] = [];
    const walk = (parentId: string, depth: number) => {
      if (!signedIn && depth > DESCENDANTS_DEPTH_LIMIT) return;
      for (const child of statuses.filter((x) => x.in_reply_to_id === parentId).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))) {
        if (descendants.length >= limit) return;
        descendants.push(child);
        walk(child.id, depth + 1);
      }
    };
    walk(root.id, 1);
    const ancestors: FakeStatus[] = [];
    for (let p = statuses.find((x) => x.id === root.in_reply_to_id); p; p = statuses.find((x) => x.id === p!.in_reply_to_id))
      ancestors.unshift(p);
    const answer: Record<keyof WireContext, StatusAnswer[]> = {
      ancestors: ancestors.map(statusJson),
      descendants: descendants.map(statusJson),
    };
    return json(answer);
  }

  /** The account a reply answers, as the token that owns it (one account per token); null for none. */
  function inReplyToAccount(s: FakeStatus): string | null {
    return s.in_reply_to_id ? (statuses.find((x) => x.id === s.in_reply_to_id)?.token ?? null) : null;
  }

  function statusJson(s: FakeStatus): StatusAnswer {
    return {
      id: s.id,
      created_at: s.created_at,
      edited_at: null,
      in_reply_to_id: s.in_reply_to_id ?? null,
      in_reply_to_account_id: s.in_reply_to_id ? accountOf(statuses.find((x) => x.id === s.in_reply_to_id)).id : null,
      sensitive: false,
      spoiler_text: '',
      visibility: s.visibility,
      language: null,
      uri: s.uri,
      url: s.url,
      content: `<p>${escapeHtml(s.text)}</p>`,
      replies_count: s.replies_count,
      reblogs_count: s.reblogs_count,
      favourites_count: s.favourites_count,
      media_attachments: s.media_ids.map((id) => mediaJson(media.find((m) => m.id === id)!)),
      application: { name: 'Postpilot', website: null },
      mentions: [],
      tags: [],
      emojis: [],
      reblog: null,
      poll: null,
      card: null,
      account: accountOf(s),
    };
  }

  /** A status's author as the Account entity: the token's own account, or another one (FakeMastodon.reply). */
  function accountOf(s: FakeStatus | undefined): WireAccount {
    const a = s?.account ?? { ...ACCOUNT, display_name: 'User', avatar: `${base}/avatars/original/missing.png`, url: `${base}/@user` };
    return {
      ...a,
      note: '',
      avatar_static: a.avatar,
      header: `${base}/headers/original/missing.png`,
      header_static: `${base}/headers/original/missing.png`,
      locked: false,
      fields: [],
      emojis: [],
      bot: false,
      group: false,
      created_at: '2024-01-01T00:00:00.000Z',
      last_status_at: '2026-01-01',
      statuses_count: statuses.filter((x) => (x.account?.id ?? ACCOUNT.id) === a.id).length,
      followers_count: 0,
      following_count: 0,
      roles: [],
      feature_approval: { automatic: [], manual: [], current_user: 'denied' },
    };
  }

  function mediaJson(m: FakeMedia): WireMediaAttachment {
    const file = `${base}/system/media_attachments/files/${m.id}`;
    const name = encodeURIComponent(m.fileName);
    return {
      id: m.id,
      type: kindOf(m.mimeType),
      url: m.processed ? `${file}/original/${name}` : null,
      preview_url: `${file}/small/${name}`,
      remote_url: null,
      text_url: null,
      meta: m.focus ? { focus: m.focus } : {},
      description: m.description,
      blurhash: null,
    };
  }

  function statusesConfig(): WireInstanceV2['configuration']['statuses'] {
    return { max_characters: maxCharacters, max_media_attachments: MAX_MEDIA, characters_reserved_per_url: perUrl };
  }

  function instanceV2(): WireInstanceV2 {
    const contact = accountOf(undefined);
    return {
      domain: new URL(base).host,
      title: 'Fake Mastodon',
      version: '4.3.0',
      source_url: 'https://github.com/mastodon/mastodon',
      description: 'A local fake of a Mastodon instance.',
      usage: { users: { active_month: 1 } },
      thumbnail: {
        url: `${base}/packs/media/images/preview.png`,
        blurhash: 'UeKUpFxuo~R%0nW;WCnhF6RjaJt757oJodS$',
        versions: { '@1x': `${base}/packs/media/images/preview.png`, '@2x': `${base}/packs/media/images/preview.png` },
        description: '',
      },
      icon: [],
      languages: ['en'],
      configuration: {
        urls: { streaming: base.replace(/^http/, 'ws') },
        accounts: {
          max_featured_tags: 10,
          max_pinned_statuses: 5,
          max_display_name_length: 30,
          max_note_length: 500,
          max_avatar_description_length: 1500,
          max_header_description_length: 1500,
          max_profile_fields: 4,
          profile_field_name_limit: 255,
          profile_field_value_limit: 255,
        },
        statuses: statusesConfig(),
        media_attachments: {
          supported_mime_types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4'],
          image_size_limit: 16_777_216,
          image_matrix_limit: 33_177_600,
          video_size_limit: 103_809_024,
          video_frame_rate_limit: 120,
          video_matrix_limit: 8_294_400,
        },
        polls: { max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2_629_746 },
        translation: { enabled: false },
        vapid: { public_key: '' },
      },
      registrations: { enabled: false, approval_required: false, message: null },
      api_versions: { mastodon: '2' },
      contact: { email: '', account: contact },
      rules: [],
    };
  }

  /**
   * An older server's v1 instance (Mastodon 3.5; Pleroma and glitch-soc with `max_toot_chars`):
   * only the parts the connector reads, each named as masto's v1 Instance names it.
   */
  function instanceV1(): Answer<WireInstanceV1> & { max_toot_chars?: number } {
    const common = { uri: new URL(base).host, title: 'Fake Mastodon', version: '3.5.0' };
    return opts.v1MaxTootChars
      ? { ...common, max_toot_chars: maxCharacters }
      : { ...common, configuration: { statuses: statusesConfig() } };
  }

  return {
    url: base,
    statuses,
    media,
    requests,
    sends,
    deleted,
    validTokens,
    advance(ms) {
      skew += ms;
    },
    failNext(n, response) {
      for (let i = 0; i < n; i++) canned.push(response);
    },
    failNextShow(statusId, n, response) {
      const queue = cannedShow.get(statusId) ?? [];
      for (let i = 0; i < n; i++) queue.push(response);
      cannedShow.set(statusId, queue);
    },
    reply(parentId, from, text) {
      const parent = statuses.find((x) => x.id === parentId);
      if (!parent) throw new Error(`no status ${parentId}`);
      const id = newId();
      const status: FakeStatus = {
        id,
        text,
        media_ids: [],
        visibility: 'public',
        idempotencyKey: null,
        token: `account:${from.id}`,
        created_at: new Date(now()).toISOString(),
        url: `${from.url}/${id}`,
        uri: `${from.url.replace('/@', '/users/')}/statuses/${id}`,
        in_reply_to_id: parentId,
        account: from,
        favourites_count: 0,
        reblogs_count: 0,
        replies_count: 0,
      };
      statuses.push(status);
      parent.replies_count++;
      return status;
    },
    remove(statusId) {
      const i = statuses.findIndex((x) => x.id === statusId);
      if (i >= 0) statuses.splice(i, 1);
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/** JSON bodies, or form bodies (urlencoded or multipart) where `media_ids[]` repeats. */
async function readParams(req: Request): Promise<Record<string, unknown>> {
  const type = req.headers.get('content-type') ?? '';
  if (type.includes('application/json')) {
    const body: unknown = await req.json();
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    return body as Record<string, unknown>;
  }
  if (!type.includes('form')) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of await req.formData()) {
    if (k.endsWith('[]')) {
      const list = (out[k.slice(0, -2)] ??= []) as unknown[];
      list.push(v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

/**
 * The params as CreateStatusBody, or Mastodon's refusal text in ActiveModel's words: a value
 * outside the enum "is not included in the list", any other "is invalid". A form body (every
 * value text) is converted first, as Rails casts its parameters.
 */
function checkStatusParams(raw: Record<string, unknown>): CreateStatusBody | string {
  const params = Value.Convert(CreateStatusBody, raw);
  const first = Value.Errors(CreateStatusBody, params).First();
  if (!first) return params as CreateStatusBody;
  const field = first.path.split('/')[1] ?? '';
  const name = field.charAt(0).toUpperCase() + field.slice(1).replace(/_/g, ' ');
  return `Validation failed: ${name} ${field === 'visibility' ? 'is not included in the list' : 'is invalid'}`;
}

/**
 * A query string read as Mastodon reads one, by the schema's types: no value is refused. A
 * boolean is ActiveModel::Type::Boolean's cast (blank: not given; "0", "f", "F", "false",
 * "FALSE", "off", "OFF": false; any other text: true), a number Ruby's to_i (the leading
 * integer, else 0; blank is 0 too), text as it is. A parameter the schema lacks is ignored, as
 * Mastodon's controllers read only their own.
 */
export function castQuery<T extends TObject>(schema: T, search: URLSearchParams): Static<T> {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema.properties) as [string, TSchema][]) {
    const raw = search.get(key);
    if (raw === null) continue;
    const type = ((prop.anyOf as TSchema[] | undefined)?.find((x) => x.type !== 'null') ?? prop).type;
    if (type === 'boolean') {
      if (raw !== '') out[key] = !RAILS_FALSE.has(raw);
    } else if (type === 'number' || type === 'integer') out[key] = Number(rubyInteger(raw));
    else out[key] = raw;
  }
  // The cast is the fake's own: what it makes must be the schema's shape.
  if (!Value.Check(schema, out)) throw new Error(`castQuery: ${JSON.stringify(out)} does not match the schema`);
  return out as Static<T>;
}

/** ActiveModel::Type::Boolean::FALSE_VALUES as text. */
const RAILS_FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'off', 'OFF']);

/** Ruby's String#to_i: the leading integer (after whitespace), else 0; as text, so a Snowflake id keeps every digit. */
function rubyInteger(s: string): string {
  return /^\s*([+-]?\d+)/.exec(s)?.[1] ?? '0';
}

/** Ruby's String#to_f: the leading decimal number (after whitespace), else 0.0. */
function rubyFloat(s: string): number {
  const m = /^\s*[+-]?(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?/.exec(s);
  return m ? Number.parseFloat(m[0]) : 0;
}

/** MediaAttachment#focus=: "x,y", each part read with to_f (a missing part shows as 0 here). */
function focusOf(point: string): { x: number; y: number } {
  const [x = '', y = ''] = point.split(',');
  return { x: rubyFloat(x), y: rubyFloat(y) };
}

/**
 * A text `file` as Paperclip's DataUriAdapter reads it: a `data:` URI becomes the file; blank
 * text is no file; any other text is null (Paperclip has no adapter for it).
 */
function dataUri(text: string): Blob | 'blank' | null {
  if (text.trim() === '') return 'blank';
  const m = /^data:([-\w.+]+\/[-\w.+]+)?(;base64)?,(.*)$/s.exec(text);
  if (!m) return null;
  try {
    const bytes = m[2] ? Buffer.from(m[3]!, 'base64') : Buffer.from(decodeURIComponent(m[3]!));
    return new Blob([bytes], { type: m[1] ?? 'text/plain' });
  } catch {
    return null;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Mastodon's Error entity (https://docs.joinmastodon.org/entities/Error/). */
function error(message: string, status: number, headers: Record<string, string> = {}): Response {
  return json({ error: message } satisfies WireError, status, headers);
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  });
}

const segmenter = new Intl.Segmenter();
// Mastodon counts grapheme clusters of the text after StatusLengthValidator#countable_text: every
// URL with a scheme becomes `characters_reserved_per_url` x's, `@user@domain` becomes `@user`.
// (The fake's own, simpler patterns: written apart from platforms/text-length.ts on purpose.)
const URL_WITH_SCHEME =
  /(?<![\p{L}\p{N}@＠$#＃])https?:\/\/[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+(?::\d{1,5})?(?:[/?#][^\s]*[^\s.,;:!?'")\]])?/gu;
const REMOTE_MENTION =
  /(?<![=/\p{L}\p{M}\p{Nd}\p{Pc}])@([a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)@[\p{L}\p{M}\p{Nd}\p{Pc}.-]+[\p{L}\p{M}\p{Nd}\p{Pc}]+/giu;
function countable(text: string, perUrl: number): string {
  return text.replace(URL_WITH_SCHEME, 'x'.repeat(perUrl)).replace(REMOTE_MENTION, '@$1');
}
function graphemes(s: string): number {
  let n = 0;
  for (const _ of segmenter.segment(s)) n++;
  return n;
}

function kindOf(mime: string): WireMediaAttachment['type'] {
  if (mime === 'image/gif') return 'gifv';
  const top = mime.split('/')[0];
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'unknown';
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A publish to the instance at `instanceUrl`, as the activity hands it to the connector; `over` changes any part. */
export function mastodonRequest(instanceUrl: string, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello fediverse',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { instanceUrl, accessToken: 'good-token' },
    ...over,
  };
}
