// Shared HTTP plumbing for connectors: one exchange with a per-request timeout, and the default
// mapping of HTTP failures to the error classes of DESIGN.md §4. Connectors override the mapping
// with their platform's documented error codes (e.g. Meta 190 → reauth).
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
  /** One exchange; throws a transient PlatformError only when no HTTP answer arrived. */
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
        const res = await doFetch(url, { method: o.method ?? "GET", headers, body: body as RequestInit["body"], signal });
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: parseJson(text), text };
      } catch (err) {
        if (timeout.aborted) throw new PlatformError('transient', `${platform} ${what} timed out after ${timeoutMs} ms`);
        if (o.signal?.aborted) throw new PlatformError('transient', `${platform} ${what} aborted`);
        throw new PlatformError('transient', `${platform} ${what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  };
}

export function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
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

/** Waits ms, or rejects (transient) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new PlatformError('transient', 'aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new PlatformError('transient', 'aborted'));
    }, { once: true });
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
  return new PlatformError('transient', `${err.message} (the access token expired during the publish; it is refreshed before the retry)`, err.opts);
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
