// One request to the API, as every method of the client makes it:
// - the key as `Authorization: Bearer …`, JSON bodies (a CSV one for the import), query values
//   as strings (arrays repeated), path values escaped;
// - an `Idempotency-Key` on every operation that takes one, generated unless given, so a retry
//   (the client's or the caller's with the same key) never does the work twice;
// - `429` retried always (the API refused it before doing anything), `503` and a lost connection
//   only where a retry cannot do the work twice (GET, PUT, DELETE, or a request with its
//   Idempotency-Key); at most `maxRetries` times, after `Retry-After` (seconds or a date) when
//   the API gives it, else after 0.5 s, 1 s, 2 s…, never longer than `maxRetryWaitMs`;
// - errors as the classes of errors.ts.
import { ConnectionError, errorOf, PostpilotError } from './errors.ts';

/** An operation as the generated table states it (generated/operations.ts). */
export interface OperationSpec {
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path below `/v1`, with `{name}` for each path value. */
  path: string;
  /** The operation takes an Idempotency-Key. */
  idempotent: boolean;
  /** The body's media type, when it takes one. */
  body?: 'application/json' | 'text/csv';
  /** The success answer's media type; none: 204. */
  answer?: 'application/json' | 'text/csv';
}

export interface ClientOptions {
  /** An API key (`sk_live_…`). */
  apiKey: string;
  /** The service's address, without `/v1`; default `http://localhost:3000`. */
  baseUrl?: string;
  /** Retries of a `429` or `503` (and of a lost connection where safe); default 2. */
  maxRetries?: number;
  /** The longest wait before a retry, whatever `Retry-After` says; default 60 s. */
  maxRetryWaitMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Sent as `User-Agent` where the runtime allows. */
  userAgent?: string;
}

export interface RequestOptions {
  /** The Idempotency-Key of a create (generated when not given). */
  idempotencyKey?: string;
  /** Headers added to the request. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface CallArgs {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const FIRST_BACKOFF_MS = 500;

/** `Retry-After` as milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #maxWaitMs: number;
  readonly #userAgent: string | undefined;

  constructor(o: ClientOptions) {
    if (!o.apiKey) throw new TypeError('apiKey is required');
    this.#apiKey = o.apiKey;
    this.baseUrl = (o.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.#fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
    this.#maxRetries = o.maxRetries ?? 2;
    this.#maxWaitMs = o.maxRetryWaitMs ?? 60_000;
    this.#userAgent = o.userAgent;
  }

  url(op: OperationSpec, args: CallArgs): string {
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = args.path?.[name];
      if (value === undefined || value === '') throw new TypeError(`${op.id}: ${name} is required`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(args.query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) query.append(name, v instanceof Date ? v.toISOString() : String(v));
    }
    const qs = query.toString();
    return `${this.baseUrl}/v1${path}${qs ? `?${qs}` : ''}`;
  }

  /** The operation's answer: its JSON (or CSV text), undefined for a 204; an error class otherwise. */
  async call<T>(op: OperationSpec, args: CallArgs = {}, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: op.answer ?? 'application/json' };
    if (this.#userAgent) headers['user-agent'] = this.#userAgent;
    let body: string | undefined;
    if (op.body && args.body !== undefined) {
      headers['content-type'] = op.body;
      body = op.body === 'text/csv' ? String(args.body) : JSON.stringify(args.body);
    }
    if (op.idempotent) headers['idempotency-key'] = options.idempotencyKey ?? crypto.randomUUID();
    Object.assign(headers, options.headers);
    const retriable = SAFE_METHODS.has(op.method) || 'idempotency-key' in headers;
    const url = this.url(op, args);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(url, { method: op.method, headers, body, signal: options.signal });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        if (retriable && attempt < this.#maxRetries) {
          await sleep(Math.min(FIRST_BACKOFF_MS * 2 ** attempt, this.#maxWaitMs), options.signal);
          continue;
        }
        throw new ConnectionError(`${op.method} ${url}: ${(err as Error).message}`, 0, 'connection_failed', undefined, undefined);
      }
      const requestId = res.headers.get('x-request-id') ?? undefined;
      if (res.ok) {
        if (res.status === 204 || !op.answer) return undefined as T;
        return (op.answer === 'text/csv' ? await res.text() : await res.json()) as T;
      }
      const wait = retryAfterMs(res.headers.get('retry-after'));
      const again = res.status === 429 || (res.status === 503 && retriable);
      if (again && attempt < this.#maxRetries) {
        await res.body?.cancel();
        await sleep(Math.min(wait ?? FIRST_BACKOFF_MS * 2 ** attempt, this.#maxWaitMs), options.signal);
        continue;
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      throw errorOf(res.status, parsed, requestId, wait);
    }
  }

  /** Every item of a listing, page after page (its `nextCursor`), as one iteration. */
  async *pages<T>(op: OperationSpec, args: CallArgs = {}, options: RequestOptions = {}): AsyncGenerator<T> {
    let cursor = args.query?.cursor as string | undefined;
    for (;;) {
      const page = await this.call<{ data: T[]; nextCursor: string | null }>(op, { ...args, query: { ...args.query, cursor } }, options);
      yield* page.data;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }
}

export { PostpilotError };
