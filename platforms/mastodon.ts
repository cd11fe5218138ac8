// Mastodon connector: the REST API of whichever instance the account lives on (credentials.instanceUrl).
// It answers comments as it publishes a thread (a status with in_reply_to_id) and deletes its own
// replies (DELETE /api/v1/statuses/:id); it hides nothing, as Mastodon lets an author delete their
// own statuses but not hide another account's reply (filters and mutes act for one viewer only).
// The instance is the tenant's choice, so every call goes through lib/outbound.ts, and error text
// copied into a post's `error` is only Mastodon's own error fields, never the answer's body.
import type { mastodon } from 'masto';
import { createOutboundFetch, DEFAULT_OUTBOUND, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../lib/outbound.ts';
import { blobOf, createHttp, isOk, sleep, trimSlash, type Reply, type SendOptions } from './http.ts';
import { type Answer, counts, dig, str } from './json.ts';
import {
  PlatformError,
  parseRetryAfter,
  type AccountLimits,
  type CommentsRead,
  type CommentTarget,
  type Connector,
  type MediaRef,
  type Metric,
  type PlatformComment,
  type PlatformMetrics,
  type PublishRequest,
  type PublishResult,
} from './types.ts';

export interface MastodonConnectorOptions {
  /** The transport beneath the outbound guard. */
  fetch?: typeof fetch;
  /** Which instance addresses may be contacted (default: public ones only). */
  outbound?: OutboundPolicy & { resolve?: Resolver };
  /** Limit for each HTTP request (not for the whole publish). */
  timeoutMs?: number;
  mediaPollIntervalMs?: number;
  /** How long to wait for an uploaded attachment to finish processing. */
  mediaPollTimeoutMs?: number;
  /** How far back a retry looks for the status an earlier attempt created (default 24 h). */
  lookbackMs?: number;
}

interface Account {
  base: string;
  token?: string;
}

// The published shapes (masto 8.0.0, https://docs.joinmastodon.org/methods/). masto names fields
// in camelCase and converts them on the wire; Mastodon's own API is snake_case, so the wire shapes
// are derived from masto's types by Snake<T> rather than written out again: a field Mastodon does
// not have, or a wrong enum value, is a type error where a body is built or an answer read.

/** `inReplyToId` → `in_reply_to_id`. */
type SnakeKey<S extends string> = S extends `${infer H}${infer R}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeKey<R>}` : S;

/** masto's camelCase type as Mastodon's JSON (snake_case keys, every level; readonly dropped). */
export type Snake<T> = T extends Blob
  ? T
  : T extends readonly (infer U)[]
    ? Snake<U>[]
    : T extends object
      ? { -readonly [K in keyof T as K extends string ? SnakeKey<K> : K]: Snake<T[K]> }
      : T;

/** POST /api/v1/statuses (JSON). */
export type StatusParams = Snake<mastodon.rest.v1.CreateStatusParams>;
/** POST /api/v2/media (multipart). */
export type MediaParams = Snake<mastodon.rest.v2.CreateMediaAttachmentParams>;
/** GET /api/v1/accounts/:id/statuses. */
export type AccountStatusesQuery = Snake<mastodon.rest.v1.ListAccountStatusesParams>;
export type WireStatus = Snake<mastodon.v1.Status>;
export type WireMediaAttachment = Snake<mastodon.v1.MediaAttachment>;
export type WireContext = Snake<mastodon.v1.Context>;
export type WireAccount = Snake<mastodon.v1.Account>;
export type WireStatusSource = Snake<mastodon.v1.StatusSource>;
export type WireInstanceV1 = Snake<mastodon.v1.Instance>;
export type WireInstanceV2 = Snake<mastodon.v2.Instance>;
/**
 * Mastodon's Error entity (https://docs.joinmastodon.org/entities/Error/): `error`, and on OAuth
 * errors `error_description`. masto has no type for it (its client throws its own error class).
 */
export interface WireError {
  error: string;
  error_description?: string;
}

/** A query string from a typed query (booleans and numbers as text; arrays as `key[]`). */
function queryOf(q: Record<string, string | number | boolean | string[] | null | undefined>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v == null) continue;
    if (Array.isArray(v)) for (const x of v) out.append(`${k}[]`, x);
    else out.set(k, String(v));
  }
  return out;
}

/** A multipart body from typed params: a Blob goes as a file with the given name. */
function multipartOf(p: MediaParams, fileName: string): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(p) as [string, Blob | string | null | undefined][]) {
    if (v == null) continue;
    if (typeof v === 'string') form.append(k, v);
    else form.append(k, v, fileName);
  }
  return form;
}

export function createMastodonConnector(opts: MastodonConnectorOptions = {}): Connector {
  const guarded = createOutboundFetch({ ...(opts.outbound ?? DEFAULT_OUTBOUND), fetch: opts.fetch });
  // Transient even for POST /statuses when no answer came: the retry carries the same
  // Idempotency-Key, so an unknown outcome (timeout after sending) cannot become a second post.
  const http = createHttp('Mastodon', { fetch: refusalsArePermanent(guarded), timeoutMs: opts.timeoutMs });
  const pollIntervalMs = opts.mediaPollIntervalMs ?? 1_000;
  const pollTimeoutMs = opts.mediaPollTimeoutMs ?? 120_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 60 * 60 * 1000;

  /** One exchange with the account's instance; throws only when no HTTP answer arrived. */
  function send(acct: Account, method: string, path: string, o: Omit<SendOptions, 'method'> = {}): Promise<Reply> {
    const headers = acct.token ? { ...o.headers, Authorization: `Bearer ${acct.token}` } : o.headers;
    return http.send(`${acct.base}${path}`, { ...o, method, headers });
  }

  /** send, with any non-2xx answer thrown as its error class. */
  async function call(acct: Account, method: string, path: string, o: Omit<SendOptions, 'method'> = {}): Promise<Reply> {
    const r = await send(acct, method, path, o);
    if (isOk(r)) return r;
    throw httpError(r);
  }

  async function uploadMedia(acct: Account, item: MediaRef, signal?: AbortSignal): Promise<string> {
    const bytes = await item.read();
    const params: MediaParams = { file: blobOf(bytes, item.mimeType), description: item.altText || undefined };
    // v2 answers 202 with url null while the full-size file is still being processed.
    const r = await call(acct, 'POST', '/api/v2/media', { multipart: multipartOf(params, item.fileName), signal });
    const att = r.body as Answer<WireMediaAttachment> | null;
    if (att?.id == null) throw new PlatformError('transient', 'Mastodon media upload returned no id', { status: r.status });
    const id = String(att.id);
    if (r.status === 200 && att.url != null) return id;
    await waitUntilProcessed(acct, id, signal);
    return id;
  }

  /**
   * Polls GET /api/v1/media/:id, which answers 206 while processing and 200 when done. A
   * cancelled publish (signal) ends the wait at once: sleep rejects with a transient error.
   */
  async function waitUntilProcessed(acct: Account, id: string, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + pollTimeoutMs;
    for (;;) {
      await sleep(pollIntervalMs, signal);
      const r = await call(acct, 'GET', `/api/v1/media/${encodeURIComponent(id)}`, { signal });
      if (r.status === 200 && (r.body as Answer<WireMediaAttachment> | null)?.url != null) return;
      if (Date.now() >= deadline) {
        throw new PlatformError('transient', `Mastodon media ${id} still processing after ${pollTimeoutMs} ms`);
      }
    }
  }

  return {
    platform: 'MASTODON',
    // GET /api/v1/statuses/:id, one at a time: the batch form (id[]=) exists only from Mastodon 4.3.
    metricsBatch: 1,

    /** A status's favourites, boosts, replies and (from 4.5) quotes; Mastodon reports no impressions. */
    async readMetrics(credentials, ids, signal) {
      const acct = account(credentials, true);
      const out: Record<string, PlatformMetrics> = {};
      for (const id of ids) {
        const r = await send(acct, 'GET', `/api/v1/statuses/${encodeURIComponent(id)}`, { signal });
        if (r.status === 404) continue; // deleted on the instance
        if (!isOk(r)) throw httpError(r);
        if (!r.body || typeof r.body !== 'object') continue;
        out[id] = counts(r.body as Record<string, unknown>, STATUS_COUNTS);
      }
      return out;
    },

    /**
     * GET /api/v1/statuses/:id/context: the statuses under the post, the whole tree at once
     * (Mastodon shows a signed-in client up to 4,096). The account's own are those by the account
     * the direct replies answer (their `in_reply_to_account_id`: the post's author), so no other
     * request is needed.
     */
    async readComments(credentials, post, signal): Promise<CommentsRead> {
      const acct = account(credentials, true);
      const r = await send(acct, 'GET', `/api/v1/statuses/${encodeURIComponent(post.platformPostId)}/context`, { signal });
      if (r.status === 404) return { comments: [], gone: true };
      if (!isOk(r)) throw httpError(r);
      const listed = (r.body as Answer<WireContext> | null)?.descendants;
      const descendants = (Array.isArray(listed) ? listed : []).filter((d): d is Answer<WireStatus> => !!d && typeof d === 'object');
      const ownId = idOf(descendants.find((d) => idOf(d.in_reply_to_id) === post.platformPostId)?.in_reply_to_account_id);
      const comments: PlatformComment[] = [];
      for (const d of descendants) {
        const id = idOf(d.id);
        const parent = idOf(d.in_reply_to_id);
        const author = d.account && typeof d.account === 'object' ? d.account : undefined;
        const handle = str(author?.acct);
        const createdAt = str(d.created_at);
        if (!id || !parent || !handle || !createdAt) continue;
        comments.push({
          platformCommentId: id,
          parentPlatformId: parent,
          author: {
            name: str(author?.display_name) || null,
            handle,
            avatarUrl: str(author?.avatar) ?? null,
            profileUrl: str(author?.url) ?? null,
          },
          text: htmlText(String(d.content ?? '')),
          createdAt,
          url: str(d.url) ?? str(d.uri) ?? null,
          ours: ownId !== undefined && idOf(author?.id) === ownId,
        });
      }
      return { comments };
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const acct = account(req.credentials, true);
      // Sequential: keeps the attachment order and stays gentle on the media rate limit (30 / 30 min).
      // A retried publish uploads again; the orphans are cleaned up by the instance.
      const mediaIds: string[] = [];
      for (const item of req.media) mediaIds.push(await uploadMedia(acct, item, req.signal));

      // No `visibility`: the account's default posting visibility applies. A thread item answers
      // the item before it; Mastodon refuses (404) a reply to a status it does not have.
      const inReplyTo = req.replyTo?.parent.platformPostId;
      const json: StatusParams = mediaIds.length
        ? { status: req.text, media_ids: mediaIds, in_reply_to_id: inReplyTo }
        : { status: req.text, in_reply_to_id: inReplyTo };
      const r = await call(acct, 'POST', '/api/v1/statuses', {
        json,
        headers: { 'Idempotency-Key': req.idempotencyKey },
        signal: req.signal,
      });
      const status = r.body as Answer<WireStatus> | null;
      const url = str(status?.url) ?? str(status?.uri);
      if (status?.id == null || !url) {
        // Retrying is safe: the same Idempotency-Key returns the status if it was created.
        throw new PlatformError('transient', `Mastodon answered ${r.status} without a status id and URL`, {
          status: r.status,
        });
      }
      return { platformPostId: String(status.id), url, publishedAt: str(status.created_at) };
    },

    /**
     * Mastodon honours an Idempotency-Key for an hour only (PostStatusService keeps it in Redis
     * for 3600 s): a retry later than that (the activity's backoff, POST /retry of a failed post)
     * would make a second status. So before a retry the account's own recent statuses are read,
     * and one created within lookbackMs with the same number of attachments, answering the same
     * status (`in_reply_to_id`: the parent for a reply, none for the post), whose source text is
     * this text is taken as the one an earlier attempt created. The listing carries rendered HTML
     * only, so it narrows the candidates and GET /statuses/:id/source confirms the exact text.
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      // Within the key's hour the re-send itself is exact (Mastodon answers with the first status);
      // the look-up, which matches by text, could take another channel's status on the same account.
      if (req.firstAttemptAt && Date.now() - req.firstAttemptAt.getTime() < KEY_TRUSTED_MS) return null;
      const acct = account(req.credentials, true);
      const me = await call(acct, 'GET', '/api/v1/accounts/verify_credentials', { signal: req.signal });
      const accountId = idOf((me.body as Answer<WireAccount> | null)?.id);
      if (!accountId) throw new PlatformError('transient', 'Mastodon verify_credentials returned no account id', { status: me.status });
      const parent = req.replyTo?.parent.platformPostId;
      // Mastodon's exclude_replies keeps an account's answers to itself, but forks (Pleroma,
      // Akkoma) drop every reply: a reply is looked for with replies listed.
      const q: AccountStatusesQuery = { limit: 40, exclude_reblogs: true, exclude_replies: parent ? undefined : true };
      const path = `/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?${queryOf(q)}`;
      const r = await call(acct, 'GET', path, { signal: req.signal });
      const since = Date.now() - lookbackMs;
      const want = loose(req.text.replace(REMOTE_MENTION, '$1'));
      for (const s of (Array.isArray(r.body) ? r.body : []) as Answer<WireStatus>[]) {
        if (!s || typeof s !== 'object') continue;
        const id = idOf(s.id);
        const url = str(s.url) ?? str(s.uri);
        const created = Date.parse(String(s.created_at));
        if (!id || !url || !(created >= since)) continue;
        if ((Array.isArray(s.media_attachments) ? s.media_attachments.length : 0) !== req.media.length) continue;
        if (idOf(s.in_reply_to_id) !== parent) continue;
        if (loose(htmlText(String(s.content ?? ''))) !== want) continue;
        const source = await call(acct, 'GET', `/api/v1/statuses/${encodeURIComponent(id)}/source`, { signal: req.signal });
        if (str((source.body as Answer<WireStatusSource> | null)?.text) === req.text)
          return { platformPostId: id, url, publishedAt: str(s.created_at) };
      }
      return null;
    },

    /**
     * DELETE /api/v1/statuses/:id (scope write:statuses). Mastodon answers 404 "Record not found"
     * both for a status that is gone and for one the account does not own; a 404 is therefore
     * followed by GET /api/v1/statuses/:id: a status still shown is another account's (refused,
     * permanent), one not shown is gone (success, as deleting it again asks for nothing).
     */
    async deletePublished(credentials, target: CommentTarget, signal) {
      const acct = account(credentials, true);
      const path = `/api/v1/statuses/${encodeURIComponent(target.platformCommentId)}`;
      const r = await send(acct, 'DELETE', path, { signal });
      if (isOk(r)) return;
      if (r.status !== 404) throw httpError(r);
      const shown = await send(acct, 'GET', path, { signal });
      if (shown.status === 404) return;
      if (!isOk(shown)) throw httpError(shown);
      const why = `Mastodon: status ${target.platformCommentId} is another account's; only the account's own can be deleted`;
      throw new PlatformError('permanent', why, { status: r.status });
    },

    async accountLimits(credentials: Record<string, unknown>): Promise<AccountLimits> {
      const acct = account(credentials, false);
      const v2 = await send(acct, 'GET', '/api/v2/instance');
      if (isOk(v2)) {
        const statuses = (v2.body as Answer<WireInstanceV2> | null)?.configuration?.statuses;
        const n = positive(statuses?.max_characters);
        if (n) return statusLimits(n, statuses?.characters_reserved_per_url);
      } else if (v2.status === 429 || v2.status >= 500) {
        throw httpError(v2);
      }
      // Before Mastodon 4.0 (and on some forks) there is no v2; forks such as Pleroma and
      // glitch-soc report `max_toot_chars` on v1.
      const v1 = await call(acct, 'GET', '/api/v1/instance');
      const statuses = (v1.body as Answer<WireInstanceV1> | null)?.configuration?.statuses;
      // `max_toot_chars` is the forks' field, not in Mastodon's entity.
      const n = positive(statuses?.max_characters) ?? positive(dig(v1.body, 'max_toot_chars'));
      return n ? statusLimits(n, statuses?.characters_reserved_per_url) : {};
    },
  };
}

/** A Status's counters under our metric names (Mastodon reports no impressions). */
const STATUS_COUNTS = {
  likes: 'favourites_count',
  reposts: 'reblogs_count',
  replies: 'replies_count',
  quotes: 'quotes_count',
} as const satisfies Partial<Record<Metric, keyof WireStatus>>;

/** `@user@domain` as Mastodon renders it in a status's HTML: `@user`. */
const REMOTE_MENTION = /(@[\w.-]+)@[\w.-]+\w/g;
/** Mastodon keeps an Idempotency-Key for an hour; trusted for a little less, for clock skew. */
const KEY_TRUSTED_MS = 50 * 60 * 1000;

/** Mastodon ids are strings; a JSON number is taken too. */
function idOf(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : undefined;
}

/** A status's rendered HTML as text: tags dropped (a link's hidden parts are kept), entities decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<br\s*\/?>|<\/p>\s*<p>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(Number.parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Only letters, marks and digits: rendering moves whitespace and punctuation, never these. */
function loose(text: string): string {
  return text.normalize('NFC').replace(/[^\p{L}\p{M}\p{N}]/gu, '');
}

function account(credentials: Record<string, unknown>, needToken: boolean): Account {
  const raw = credentials.instanceUrl;
  if (typeof raw !== 'string' || !raw.trim()) throw new PlatformError('permanent', 'Mastodon credentials lack instanceUrl');
  let base: string;
  try {
    const u = new URL(/^https?:\/\//i.test(raw.trim()) ? raw.trim() : `https://${raw.trim()}`);
    base = trimSlash(`${u.origin}${u.pathname}`);
  } catch {
    throw new PlatformError('permanent', `Mastodon instanceUrl is not a URL: ${raw}`);
  }
  const token = typeof credentials.accessToken === 'string' && credentials.accessToken ? credentials.accessToken : undefined;
  if (needToken && !token) throw new PlatformError('reauth', 'Mastodon credentials lack accessToken');
  return { base, token };
}

/** The guard's refusal is not retried: the address stays refused until the channel is reconnected with another one. */
function refusalsArePermanent(guarded: typeof fetch): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    try {
      return await guarded(input, init);
    } catch (err) {
      if (!(err instanceof OutboundRefusedError)) throw err;
      throw new PlatformError('permanent', `Mastodon instanceUrl refused: ${err.message}`, { platformCode: err.code });
    }
  }) as typeof fetch;
}

function httpError(r: Reply): PlatformError {
  const reason = errorReason(r);
  const message = `Mastodon ${r.status}: ${reason}`;
  const status = r.status;
  if (status === 401 || status === 403) return new PlatformError('reauth', message, { status });
  if (status === 429 || status === 408 || status >= 500) {
    return new PlatformError('transient', message, { status, retryAfterMs: retryAfter(r.headers) });
  }
  // Mastodon's own advice for an attachment that finished processing a moment too late.
  if (status === 422 && /not finished processing/i.test(reason)) return new PlatformError('transient', message, { status });
  return new PlatformError('permanent', message, { status });
}

/**
 * Mastodon's Error entity (`error`, and `error_description` on OAuth errors), and nothing else:
 * the instance is whatever host the tenant named, so a body that is not Mastodon's error shape
 * (another service's page, an internal API's answer) is never copied into text the tenant reads.
 */
function errorReason(r: Reply): string {
  const b = r.body as Answer<WireError> | null;
  if (typeof b?.error === 'string' && b.error) {
    const error = b.error.slice(0, 300);
    return typeof b.error_description === 'string' && b.error_description && b.error_description !== b.error
      ? `${error}: ${b.error_description.slice(0, 300)}`
      : error;
  }
  return `HTTP ${r.status}`;
}

/** Retry-After if present; else Mastodon's X-RateLimit-Reset (ISO 8601; some servers send epoch seconds). */
function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'), now);
  if (ra !== undefined) return ra;
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (!reset) return undefined;
  const at = /^\d+(\.\d+)?$/.test(reset) ? Number(reset) * 1000 : Date.parse(reset);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil(at - now));
}

/** max_characters, plus what every URL counts as when the instance says (23 on Mastodon itself). */
function statusLimits(maxChars: number, perUrl: unknown): AccountLimits {
  const urls = positive(perUrl);
  return urls ? { maxChars, charactersReservedPerUrl: urls } : { maxChars };
}

function positive(v: unknown): number | undefined {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
}
