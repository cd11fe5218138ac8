// Shared plumbing for Meta's Graph-style APIs (Facebook Pages, Instagram, Threads): one request
// with the access token, the Graph error body mapped to the error classes of DESIGN.md §4, the
// usage headers turned into a retry delay, container polling, long-lived token refresh and the
// "did an earlier attempt already publish this?" lookup.
import { API_VERSION_RETIRED, API_VERSIONS, apiVersionRetired } from '../api-versions.ts';
import type { Platform } from '../catalog.ts';
import { createHttp, isOk, reasonOf, sleep, trimSlash, type Reply } from '../http.ts';
import type { DeleteParams, GraphError, GraphErrorDetail, GraphList, GraphSuccess, RefreshedToken } from '../contracts/meta.ts';
import { type Answer, dig, strOrNumber } from '../json.ts';
import { PlatformError, parseRetryAfter, type MediaRef, type PublishResult } from '../types.ts';

/** Graph API version for graph.facebook.com and graph.instagram.com (platforms/api-versions.ts). */
export const GRAPH_API_VERSION = API_VERSIONS.FACEBOOK.version;

/** The platforms behind the connectors' display names, for the version table. */
const PLATFORM_OF: Record<string, Platform> = { Facebook: 'FACEBOOK', Instagram: 'INSTAGRAM', Threads: 'THREADS' };

/** Graph's error (platforms/contracts/meta.ts GraphErrorDetail), as read. */
export type GraphErrorBody = Answer<GraphErrorDetail>;

export type GraphObject = Record<string, unknown>;

export interface GraphClient {
  get(path: string, params: Record<string, string>, token: string, signal?: AbortSignal): Promise<GraphObject>;
  /** Form-encoded, or multipart when `params` is a FormData (file uploads). */
  post(path: string, params: Record<string, string> | FormData, token: string, signal?: AbortSignal): Promise<GraphObject>;
  /** The parameters and the token in the query: a DELETE carries no body. */
  delete(path: string, params: Record<string, string>, token: string, signal?: AbortSignal): Promise<GraphObject>;
}

/**
 * A client for one Graph host and version. The token travels as the `access_token` parameter,
 * which all three hosts document (the Threads and Instagram Login docs show nothing else).
 */
export function createGraphClient(
  platform: string,
  opts: {
    baseUrl: string;
    fetch?: typeof fetch;
    timeoutMs?: number /** The version in baseUrl, named when Graph retires it. */;
    apiVersion?: string;
  },
): GraphClient {
  const http = createHttp(platform, opts);
  const base = trimSlash(opts.baseUrl);

  async function ok(reply: Promise<Reply>): Promise<GraphObject> {
    const r = await reply;
    if (!isOk(r)) throw classifyGraph(platform, r, opts.apiVersion);
    if (!r.body || typeof r.body !== 'object' || Array.isArray(r.body)) {
      throw new PlatformError('transient', `${platform} ${r.status}: unexpected response ${r.text.slice(0, 200)}`, { status: r.status });
    }
    return r.body as GraphObject;
  }

  return {
    get(path, params, token, signal) {
      const query = new URLSearchParams({ ...params, access_token: token });
      return ok(http.send(`${base}${path}?${query}`, { signal }));
    },
    post(path, params, token, signal) {
      if (params instanceof FormData) {
        params.set('access_token', token);
        return ok(http.send(`${base}${path}`, { method: 'POST', multipart: params, signal }));
      }
      return ok(http.send(`${base}${path}`, { method: 'POST', form: { ...params, access_token: token }, signal }));
    },
    delete(path, params, token, signal) {
      const query = new URLSearchParams({ ...params, access_token: token });
      return ok(http.send(`${base}${path}?${query}`, { method: 'DELETE', signal }));
    },
  };
}

export function graphErrorOf(r: Reply): GraphErrorBody | null {
  const e = (r.body as Answer<GraphError> | null)?.error;
  return e && typeof e === 'object' ? e : null;
}

// https://developers.facebook.com/docs/graph-api/guides/error-handling: 190 (token expired or
// invalid) and 102 (API session) mean a new token; 10 and 200-299 a permission that was never
// granted or was removed, which only reconnecting (granting it again) fixes.
const REAUTH_CODES = new Set([102, 190, 10]);
// Authentication subcodes: app not installed, checkpoint, password changed, expired, unconfirmed
// user, invalid token, invalid session (no longer a Page admin).
const REAUTH_SUBCODES = new Set([458, 459, 460, 463, 464, 467, 492]);
// 1/2 temporary outage; 4, 17, 32, 613 throttling; 341 application limit; 9 Instagram publishing
// limit (2207042, "try again the following day"); 9007 container not ready yet (2207027); -1/-2
// Instagram server error or media download timeout ("try again"); 80000-80014 Business Use Case
// rate limits (80001 Pages, 80002 Instagram, ...).
const TRANSIENT_CODES = new Set([1, 2, 4, 9, 17, 32, 341, 613, 9007, -1, -2]);
// Instagram subcodes documented as "try again" / "generate a new container": server error,
// download timeout, expired media, create failed, media fetch failed (9004), unknown upload error.
export const RETRYABLE_IG_SUBCODES = new Set([2207001, 2207003, 2207020, 2207032, 2207052, 2207053]);
// 506 duplicate post, 368 blocked for policy violations; 2207051 is code 4 (throttling) but means
// "suspected spam: we restrict certain activity", which retrying does not lift.
const PERMANENT_CODES = new Set([506, 368]);
const PERMANENT_SUBCODES = new Set([2207051]);
// "You are calling a deprecated version of the API": the version in the path is one Graph no
// longer serves.
const RETIRED_VERSION_CODE = 2635;

/** Maps a Graph error reply to reauth / transient / permanent, keeping Meta's own message. */
export function classifyGraph(platform: string, r: Reply, apiVersion?: string): PlatformError {
  const e = graphErrorOf(r);
  const status = r.status;
  const code = typeof e?.code === 'number' ? e.code : undefined;
  const sub = typeof e?.error_subcode === 'number' ? e.error_subcode : undefined;
  const message = `${platform} ${status}: ${describe(e, r)}`;
  const platformCode = code === undefined ? undefined : sub === undefined ? String(code) : `${code}/${sub}`;
  const transient = () => new PlatformError('transient', message, { status, platformCode, retryAfterMs: graphRetryAfterMs(r.headers) });

  if (code === RETIRED_VERSION_CODE && PLATFORM_OF[platform]) {
    return apiVersionRetired(PLATFORM_OF[platform], platform, apiVersion ?? 'in use', message, status);
  }
  if (code !== undefined) {
    if (REAUTH_CODES.has(code) || (code >= 200 && code <= 299) || (sub !== undefined && REAUTH_SUBCODES.has(sub))) {
      return new PlatformError('reauth', message, { status, platformCode });
    }
    if (PERMANENT_CODES.has(code) || (sub !== undefined && PERMANENT_SUBCODES.has(sub))) {
      return new PlatformError('permanent', message, { status, platformCode });
    }
    if (TRANSIENT_CODES.has(code) || (code >= 80000 && code <= 80014) || e?.is_transient === true) return transient();
    if (sub !== undefined && RETRYABLE_IG_SUBCODES.has(sub)) return transient();
  }
  if (status === 401) return new PlatformError('reauth', message, { status, platformCode });
  if (status === 408 || status === 429 || status >= 500) return transient();
  return new PlatformError('permanent', message, { status, platformCode });
}

function describe(e: GraphErrorBody | null, r: Reply): string {
  const msg = typeof e?.message === 'string' && e.message ? e.message : reasonOf(r);
  const user = typeof e?.error_user_msg === 'string' ? e.error_user_msg.trim() : '';
  return user && user !== msg ? `${msg} (${user})` : msg;
}

/**
 * Retry-After if present, else the longest `estimated_time_to_regain_access` (minutes) in the
 * usage headers Meta sends while throttling (X-Business-Use-Case-Usage, X-App-Usage, X-Page-Usage).
 */
export function graphRetryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'), now);
  if (ra !== undefined) return ra;
  let minutes: number | undefined;
  for (const name of ['x-business-use-case-usage', 'x-app-usage', 'x-page-usage']) {
    const raw = headers.get(name);
    if (!raw) continue;
    try {
      for (const m of regainMinutes(JSON.parse(raw))) minutes = Math.max(minutes ?? 0, m);
    } catch {
      // a malformed usage header says nothing about when to retry
    }
  }
  return minutes ? minutes * 60_000 : undefined;
}

function* regainMinutes(v: unknown): Generator<number> {
  if (Array.isArray(v)) {
    for (const x of v) yield* regainMinutes(x);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'estimated_time_to_regain_access' && typeof x === 'number' && x > 0) yield x;
      else yield* regainMinutes(x);
    }
  }
}

/**
 * Polls a media container until it is ready to publish. `check` returns true when ready, false
 * while processing, and throws (permanent) when the platform reports ERROR / EXPIRED.
 */
export async function waitForContainer(
  platform: string,
  id: string,
  check: () => Promise<boolean>,
  o: { intervalMs: number; timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) {
      throw new PlatformError('transient', `${platform} media container ${id} still processing after ${o.timeoutMs} ms`);
    }
    await sleep(o.intervalMs, o.signal);
  }
}

/** The public URL Meta will fetch for a media item (Instagram and Threads take no bytes). */
export type MediaUrlResolver = (item: MediaRef) => Promise<string>;

export async function publicUrl(platform: string, resolve: MediaUrlResolver | undefined, item: MediaRef): Promise<string> {
  if (!resolve) {
    throw new PlatformError('permanent', `${platform} fetches media from a public URL, and no mediaUrl resolver is configured`);
  }
  return resolve(item);
}

/**
 * Refreshes a long-lived Instagram (ig_refresh_token) or Threads (th_refresh_token) user token.
 * These platforms have no separate refresh token: the access token itself is extended for 60
 * days, and the answer may carry a new token string.
 */
export async function refreshLongLivedToken(
  client: GraphClient,
  grantType: 'ig_refresh_token' | 'th_refresh_token',
  token: string,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<Record<string, unknown>> {
  const body = (await client.get('/refresh_access_token', { grant_type: grantType }, token, signal)) as Answer<RefreshedToken>;
  const accessToken = typeof body.access_token === 'string' && body.access_token ? body.access_token : undefined;
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
  if (!accessToken || !Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new PlatformError('transient', `token refresh returned an unexpected body: ${JSON.stringify(body).slice(0, 200)}`);
  }
  return { accessToken, expiresAt: new Date(now + expiresIn * 1000).toISOString() };
}

/**
 * How far back findPublished looks. The API refuses the same text on the same channel within
 * 24 hours (DESIGN.md §3 duplicate_post), so a post of ours with this text in that window can
 * only be the one an earlier attempt created.
 */
export const FIND_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface RecentPost {
  id: string;
  text: string;
  time?: string;
  kind?: string;
  url?: string;
}

/**
 * The newest recent post with the same text (and, for posts without text, the same kind of
 * media, the only other thing the listing tells apart).
 */
export function matchRecent(
  posts: RecentPost[],
  text: string,
  kind: string | undefined,
  now = Date.now(),
  notBefore = Number.NEGATIVE_INFINITY,
): RecentPost | null {
  const want = normalize(text);
  const since = Math.max(now - FIND_WINDOW_MS, notBefore);
  const hits = posts.filter((p) => {
    if (normalize(p.text) !== want) return false;
    if (!want && kind && p.kind && p.kind !== kind) return false;
    const t = p.time ? parseGraphTime(p.time) : undefined;
    return t === undefined || t >= since;
  });
  hits.sort((a, b) => (parseGraphTime(b.time ?? '') ?? 0) - (parseGraphTime(a.time ?? '') ?? 0));
  return hits[0] ?? null;
}

/**
 * Where an account lists its own recent posts, and which fields of its items (`T`, the node's
 * answer schema in platforms/contracts/meta.ts) hold what.
 */
export interface RecentListing<T> {
  path: string;
  fields: { text: keyof T & string; time: keyof T & string; url: keyof T & string; kind: keyof T & string };
  limit: number;
  /** Send `since` (the window's start): the listing supports it. */
  since?: boolean;
  /** URL when the listing gives none. */
  fallbackUrl: (id: string) => string;
  /**
   * Only items that answer this id: a reply's parent, named by `field` as an `{id}` object
   * (Threads `replied_to`). A listing of replies holds the account's answers to anyone.
   */
  answering?: { field: keyof T & string; id: string };
  /** Items older than this (ms since the epoch) are not it: see notBeforeOf. */
  notBefore?: number;
}

/**
 * Slack for the clocks of this service and Meta when a platform timestamp (whole seconds) is
 * compared with the first attempt's time.
 */
export const CLOCK_SLACK_MS = 60_000;

/**
 * The oldest a follow-up an earlier attempt made can be: the first attempt's time less
 * CLOCK_SLACK_MS, or unbounded when that time is unknown. An inbox may answer one comment twice
 * with the same words; the older answer is not this one.
 */
export function notBeforeOf(req: { firstAttemptAt?: Date }): number | undefined {
  return req.firstAttemptAt ? req.firstAttemptAt.getTime() - CLOCK_SLACK_MS : undefined;
}

/**
 * findPublished for Graph-style APIs (no idempotency key): the account's own posts of the last
 * 24 hours, matched by text (and media kind for posts without text).
 */
export async function findRecentPost<T>(
  graph: GraphClient,
  token: string,
  l: RecentListing<T>,
  text: string,
  kind: string | undefined,
  signal?: AbortSignal,
): Promise<PublishResult | null> {
  const f = l.fields;
  const fields = ['id', f.text, f.time, f.url, f.kind, ...(l.answering ? [l.answering.field] : [])];
  const query: Record<string, string> = { fields: fields.join(','), limit: String(l.limit) };
  if (l.since) query.since = String(Math.floor((Date.now() - FIND_WINDOW_MS) / 1000));
  const body = (await graph.get(l.path, query, token, signal)) as Answer<GraphList<T>>;
  const posts = listData<T>(body).flatMap((p) => {
    const id = strOrNumber(dig(p, 'id'));
    if (l.answering && strOrNumber(dig(p, l.answering.field, 'id')) !== l.answering.id) return [];
    return id
      ? [
          {
            id,
            text: strOrNumber(dig(p, f.text)) ?? '',
            time: strOrNumber(dig(p, f.time)),
            url: strOrNumber(dig(p, f.url)),
            kind: strOrNumber(dig(p, f.kind)),
          },
        ]
      : [];
  });
  const hit = matchRecent(posts, text, kind, Date.now(), l.notBefore);
  return hit ? { platformPostId: hit.id, url: hit.url ?? l.fallbackUrl(hit.id), publishedAt: isoTime(hit.time) } : null;
}

/**
 * Where a post's comments are listed (items of `T`, the comment's answer schema in
 * platforms/contracts/meta.ts), and how to tell the account's own among them.
 */
export interface CommentListing<T> {
  /** The post's comments edge, /{post-id}/comments. */
  path: string;
  /** Parameters of the listing besides fields, limit and the cursor (e.g. order). */
  query?: Record<string, string>;
  fields: { text: keyof T & string; time: keyof T & string; extra: (keyof T & string)[] };
  /** False for a comment the listing names as another author's. */
  mine: (c: Answer<T>) => boolean;
  url: (c: Answer<T>, id: string) => string;
  /** Pages of `limit` comments read at most. */
  pages: number;
  limit: number;
  /** Comments older than this (ms since the epoch) are not it: see notBeforeOf. */
  notBefore?: number;
}

/**
 * findPublished for a comment (no idempotency key): the post's comments (or a comment's replies),
 * paged with the `after` cursor, for one of the account's own with this text. The workflow
 * comments once under a post, so such a comment, of any age (or since `notBefore`, where the
 * first attempt's time is known), is the one an earlier attempt created.
 */
export async function findComment<T>(
  graph: GraphClient,
  token: string,
  l: CommentListing<T>,
  text: string,
  signal?: AbortSignal,
): Promise<PublishResult | null> {
  const want = normalize(text);
  const fields = ['id', l.fields.text, l.fields.time, ...l.fields.extra].join(',');
  let after: string | undefined;
  for (let page = 0; page < l.pages; page++) {
    const query: Record<string, string> = { ...l.query, fields, limit: String(l.limit), ...(after ? { after } : {}) };
    const body = (await graph.get(l.path, query, token, signal)) as Answer<GraphList<T>>;
    for (const c of listData<T>(body)) {
      const id = strOrNumber(dig(c, 'id'));
      if (!id || normalize(strOrNumber(dig(c, l.fields.text)) ?? '') !== want || !l.mine(c)) continue;
      const at = parseGraphTime(strOrNumber(dig(c, l.fields.time)) ?? '');
      if (l.notBefore !== undefined && at !== undefined && at < l.notBefore) continue;
      return { platformPostId: id, url: l.url(c, id), publishedAt: isoTime(dig(c, l.fields.time)) };
    }
    // Graph leaves `next` out on the last page.
    after = body.paging?.next ? strOrNumber(body.paging.cursors?.after) : undefined;
    if (!after) return null;
  }
  return null;
}

function normalize(s: string): string {
  return s.replace(/\r\n?/g, '\n').trim();
}

/** Graph timestamps look like 2026-11-02T10:00:00+0000 (no colon in the offset). */
export function parseGraphTime(s: string): number | undefined {
  if (!s) return undefined;
  const fixed = s.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const t = Date.parse(fixed);
  return Number.isNaN(t) ? undefined : t;
}

/** ISO 8601 (with a colon in the offset) for publishedAt. */
export function isoTime(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  const t = parseGraphTime(s);
  return t === undefined ? undefined : new Date(t).toISOString();
}

/** The data array of a Graph list answer (GraphList): its items that are objects, each read as `Answer<T>`. */
export function listData<T = GraphObject>(body: { data?: unknown } | null | undefined): Answer<T>[] {
  const data = body?.data;
  return Array.isArray(data) ? (data.filter((x) => x && typeof x === 'object') as Answer<T>[]) : [];
}

/**
 * A read of one object, or null when Graph refuses it for good (a deleted post: "Object with ID
 * … does not exist", code 100): for metrics, a post no longer there is left out.
 */
export async function gone(read: Promise<GraphObject>): Promise<GraphObject | null> {
  try {
    return await read;
  } catch (err) {
    // A version Graph no longer serves refuses every read: that is the setting's failure, not the object's.
    if (err instanceof PlatformError && err.kind === 'permanent' && err.opts.platformCode !== API_VERSION_RETIRED) return null;
    throw err;
  }
}

/** Pages read of one listing at most: 50 pages of 100 comments cover any conversation worth an inbox. */
export const MAX_LIST_PAGES = 50;

/**
 * Every item of a Graph listing, page after page by the `after` cursor (at most MAX_LIST_PAGES
 * pages), or null when Graph refuses the first page for good (the object is gone).
 */
export async function listAll<T = GraphObject>(
  graph: GraphClient,
  token: string,
  path: string,
  query: Record<string, string>,
  signal?: AbortSignal,
): Promise<Answer<T>[] | null> {
  const items: Answer<T>[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const read = graph.get(path, { ...query, ...(after ? { after } : {}) }, token, signal);
    const body = (page === 0 ? await gone(read) : await read) as Answer<GraphList<T>> | null;
    if (!body) return null;
    items.push(...listData<T>(body));
    // Graph leaves `next` out on the last page.
    after = body.paging?.next ? strOrNumber(body.paging.cursors?.after) : undefined;
    if (!after) break;
  }
  return items;
}

/**
 * Graph's answer about an object it does not have, or one this token may not load or act on:
 * code 100, subcode 33 ("Unsupported get/post/delete request. Object with ID … does not exist,
 * cannot be loaded due to missing permissions, or does not support this operation").
 */
export function isUnsupportedObject(err: unknown): err is PlatformError {
  return err instanceof PlatformError && err.opts.platformCode === '100/33';
}

/** A read of one object, or null when Graph answers 100/33 for it (gone, or out of this token's reach). */
export async function readIfThere(read: Promise<GraphObject>): Promise<GraphObject | null> {
  try {
    return await read;
  } catch (err) {
    if (isUnsupportedObject(err)) return null;
    throw err;
  }
}

/**
 * A write that Graph answers with `{"success": true}` (a node update, manage_reply, a delete).
 * Any other answer is not taken for done: transient, so the caller tries again.
 */
export function expectSuccess(platform: string, what: string, body: GraphObject): void {
  if ((body as Answer<GraphSuccess>).success !== true) {
    throw new PlatformError('transient', `${platform} ${what}: unexpected answer ${JSON.stringify(body).slice(0, 200)}`);
  }
}

/**
 * DELETE /{id}, idempotent. Graph answers the delete of an object it no longer has with 100/33,
 * in the words it also uses for a delete this token may not do; a read of the object tells the
 * two apart. Gone is success (an earlier attempt whose answer was lost, or someone else, deleted
 * it); still there is the platform's refusal, permanent.
 */
export async function deleteObject(platform: string, graph: GraphClient, id: string, token: string, signal?: AbortSignal): Promise<void> {
  try {
    const params: DeleteParams = {};
    expectSuccess(platform, `DELETE ${id}`, await graph.delete(`/${id}`, params, token, signal));
  } catch (err) {
    if (!isUnsupportedObject(err)) throw err;
    if (await readIfThere(graph.get(`/${id}`, { fields: 'id' }, token, signal))) {
      throw new PlatformError('permanent', `${err.message} (the object is still there: this account may not delete it)`, err.opts);
    }
  }
}
