// Shared HTTP plumbing for connectors: one exchange with a per-request timeout, and the default
// mapping of HTTP failures to the error classes of DESIGN.md §4. Connectors override the mapping
// with their platform's documented error codes (e.g. Meta 190 → reauth).
import { dig, parseJson, str } from './json.ts';
import { msUntilExpiry, PlatformError, parseRetryAfter, type Connector, type PublishRequest } from './types.ts';

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null when the body is not JSON. */
  body: unknown;
  text: string;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as application/json. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** Sent as multipart/form-data (fetch sets the boundary). */
  multipart?: FormData;
  /** Raw bytes (e.g. a video chunk). */
  body?: Uint8Array | string;
  signal?: AbortSignal;
}

export interface HttpClient {
  /**
   * One exchange; throws a transient PlatformError only when no HTTP answer arrived, or the
   * PlatformError the given fetch threw (a transport that classifies its own refusals).
   */
  send(url: string, o?: SendOptions): Promise<Reply>;
}

export function createHttp(platform: string, opts: { fetch?: typeof fetch; timeoutMs?: number } = {}): HttpClient {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return {
    async send(url, o = {}) {
      const headers: Record<string, string> = { Accept: 'application/json', ...o.headers };
      let body: string | FormData | Uint8Array | undefined;
      if (o.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(o.json);
      } else if (o.form) {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(o.form).toString();
      } else if (o.multipart) {
        body = o.multipart;
      } else if (o.body !== undefined) {
        body = o.body;
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
      const what = `${o.method ?? 'GET'} ${new URL(url).pathname}`;
      try {
        const res = await doFetch(url, { method: o.method ?? 'GET', headers, body: body as RequestInit['body'], signal });
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: parseJson(text), text };
      } catch (err) {
        if (err instanceof PlatformError) throw err;
        if (timeout.aborted) throw new PlatformError('transient', `${platform} ${what} timed out after ${timeoutMs} ms`);
        if (o.signal?.aborted) throw new PlatformError('transient', `${platform} ${what} aborted`);
        throw new PlatformError('transient', `${platform} ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  };
}

export const isOk = (r: Reply) => r.status >= 200 && r.status < 300;

/**
 * The default classification: 401 → reauth; 408, 429, 5xx → transient (with Retry-After);
 * any other status → permanent. `reason` is the platform's own message.
 */
export function classifyHttp(platform: string, r: Reply, reason: string): PlatformError {
  const message = `${platform} ${r.status}: ${reason}`;
  const status = r.status;
  if (status === 401) return new PlatformError('reauth', message, { status });
  if (status === 408 || status === 429 || status >= 500) {
    return new PlatformError('transient', message, { status, retryAfterMs: parseRetryAfter(r.headers.get('retry-after')) });
  }
  return new PlatformError('permanent', message, { status });
}

/** A readable reason from a body of unknown shape (JSON error fields, else short non-HTML text). */
export function reasonOf(r: Reply): string {
  const b = r.body as Record<string, unknown> | null;
  for (const k of ['error_description', 'message', 'detail', 'title', 'error_msg', 'description']) {
    const v = b?.[k];
    if (typeof v === 'string' && v) return v;
  }
  const e = b?.error;
  if (typeof e === 'string' && e) return e;
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  const text = r.text.trim();
  return text && !text.startsWith('<') ? text.slice(0, 300) : `HTTP ${r.status}`;
}

/**
 * An RFC 6749 token endpoint's refusal of a refresh: a bad grant is the user's to fix (reauth),
 * a bad client is this deployment's (permanent); 408, 429 and 5xx are transient.
 */
export function tokenError(platform: string, r: Reply, retryAfterMs = parseRetryAfter(r.headers.get('retry-after'))): PlatformError {
  const code = str(dig(r.body, 'error'));
  const message = `${platform} ${r.status}: ${reasonOf(r)}`;
  const status = r.status;
  if (status === 408 || status === 429 || status >= 500) {
    return new PlatformError('transient', message, { status, platformCode: code, retryAfterMs });
  }
  if (code === 'invalid_client' || code === 'unauthorized_client')
    return new PlatformError('permanent', message, { status, platformCode: code });
  return new PlatformError('reauth', message, { status, platformCode: code });
}

/**
 * An OAuth error body `{error, error_description}` (RFC 6749 section 5.2, which every platform's
 * token endpoint follows): the code, and "code: description" to show.
 */
export function oauthErrorOf(r: Reply): { code: string | undefined; reason: string } {
  const b = r.body as { error?: unknown; error_description?: unknown } | null;
  const code = typeof b?.error === 'string' ? b.error : undefined;
  const detail = typeof b?.error_description === 'string' && b.error_description ? b.error_description : undefined;
  return { code, reason: code ? (detail ? `${code}: ${detail}` : code) : reasonOf(r) };
}

/**
 * The refusal of an S3-style upload bucket (XML `<Error><Code>…</Code><Message>…</Message>`).
 * 403 is usually an expired upload policy or lease: transient, the retry asks for a new one.
 */
export function bucketError(what: string, r: Reply): PlatformError {
  const code = /<Code>([^<]*)<\/Code>/.exec(r.text)?.[1];
  const msg = /<Message>([^<]*)<\/Message>/.exec(r.text)?.[1];
  const message = `${what} ${r.status}: ${[code, msg].filter(Boolean).join(': ') || reasonOf(r)}`;
  const kind = r.status === 403 || r.status === 408 || r.status === 429 || r.status >= 500 ? 'transient' : 'permanent';
  return new PlatformError(kind, message, { status: r.status, platformCode: code });
}

/** Errors fetch raises before any byte of the request can have reached the server. */
const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ConnectionRefused',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'FailedToOpenSocket',
]);

export function isConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (CONNECT_ERRORS.has(code) || /CERT|TLS/i.test(code));
}

/**
 * A fetch that notes whether its failure came before the request could reach the server, for
 * connectors that must tell "not sent" from "outcome unknown" (platforms without idempotency).
 */
export function connectTracking(doFetch: typeof fetch): { fetch: typeof fetch; unreached: () => boolean } {
  let unreached = false;
  const tracked = (async (input: string | URL | Request, init?: RequestInit) => {
    try {
      return await doFetch(input, init);
    } catch (err) {
      unreached = isConnectError(err);
      throw err;
    }
  }) as typeof fetch;
  return { fetch: tracked, unreached: () => unreached };
}

/** Bytes as a Blob for a multipart upload. */
export function blobOf(bytes: Uint8Array, mimeType: string): Blob {
  return new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mimeType });
}

/** A base URL without its trailing slashes, so `${base}${path}` has exactly one. */
export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Waits ms, or rejects (transient) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new PlatformError('transient', 'aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new PlatformError('transient', 'aborted'));
      },
      { once: true },
    );
  });
}

/** Reads a string credential or fails the publish as needing reconnection. */
export function credential(platform: string, credentials: Record<string, unknown>, key: string): string {
  const v = credentials[key];
  if (typeof v !== 'string' || !v) throw new PlatformError('reauth', `${platform} credentials lack ${key}; reconnect the channel`);
  return v;
}

/**
 * A 401 while the stored access token has (nearly) run out during a long publish is not a
 * revoked grant: with a refresh token at hand it is transient, and the retry refreshes first.
 */
export function expiredMidway(err: unknown, credentials: Record<string, unknown>): unknown {
  if (!(err instanceof PlatformError) || err.kind !== 'reauth' || err.opts.status !== 401) return err;
  const left = msUntilExpiry(credentials);
  if (left === undefined || left > 60_000 || typeof credentials.refreshToken !== 'string' || !credentials.refreshToken) return err;
  return new PlatformError(
    'transient',
    `${err.message} (the access token expired during the publish; it is refreshed before the retry)`,
    err.opts,
  );
}

/** Wraps publish and findPublished so a token that expired mid-publish is retried, not reconnected. */
export function withMidwayExpiry(connector: Connector, refreshes: boolean): Connector {
  if (!refreshes) return connector;
  const midway = async <T>(req: PublishRequest, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw expiredMidway(err, req.credentials);
    }
  };
  const publish = connector.publish.bind(connector);
  const find = connector.findPublished?.bind(connector);
  return {
    ...connector,
    publish: (req) => midway(req, () => publish(req)),
    ...(find ? { findPublished: (req: PublishRequest) => midway(req, () => find(req)) } : {}),
  };
}
