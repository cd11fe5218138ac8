// Small HTTP helpers of the web application: cookies, HTML/redirect/JSON responses, form bodies.
import { errors } from '../lib/errors.ts';
import type { SafeHtml } from './html.ts';

export function parseCookies(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      continue;
    }
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

export interface CookieOptions {
  maxAgeSeconds?: number;
  httpOnly?: boolean;
  secure?: boolean;
  path?: string;
}

/** Always SameSite=Lax: sent on top-level navigations (the OAuth callback), not on cross-site POSTs. */
export function serializeCookie(name: string, value: string, o: CookieOptions = {}): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path ?? '/'}`, 'SameSite=Lax'];
  if (o.maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(o.maxAgeSeconds))}`);
  if (o.httpOnly !== false) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}

/**
 * Headers of every HTML page: no inline script or style may run (all of it is under /static),
 * no framing. Images and uploads may go to the object store, which can be another origin (S3).
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https: http:; media-src 'self' blob: https: http:; " +
    "connect-src 'self' https: http:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

export interface ResponseOptions {
  status?: number;
  cookies?: string[];
  headers?: Record<string, string>;
}

function withCookies(headers: Headers, cookies: string[] | undefined): Headers {
  for (const c of cookies ?? []) headers.append('set-cookie', c);
  return headers;
}

export function htmlResponse(body: SafeHtml, o: ResponseOptions = {}): Response {
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    ...SECURITY_HEADERS,
    ...o.headers,
  });
  return new Response(body.value, { status: o.status ?? 200, headers: withCookies(headers, o.cookies) });
}

export function redirect(location: string, o: Omit<ResponseOptions, 'status'> & { status?: number } = {}): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store', ...o.headers });
  return new Response(null, { status: o.status ?? 303, headers: withCookies(headers, o.cookies) });
}

export function jsonResponse(body: unknown, o: ResponseOptions = {}): Response {
  const headers = new Headers({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...o.headers });
  return new Response(JSON.stringify(body), { status: o.status ?? 200, headers: withCookies(headers, o.cookies) });
}

export const MAX_FORM_BYTES = 1024 * 1024;

/**
 * An application/x-www-form-urlencoded body, or a multipart one already read (multipartForm).
 * NUL cannot be stored by Postgres (a 500 otherwise); URLSearchParams already turns broken UTF-8
 * into U+FFFD.
 */
export function parseForm(body: unknown): URLSearchParams {
  if (body instanceof URLSearchParams) return refuseNul(body);
  const text = typeof body === 'string' ? body : '';
  if (text.length > MAX_FORM_BYTES) throw errors.validation([{ path: '', message: 'the form is larger than 1 MB' }]);
  return refuseNul(new URLSearchParams(text));
}

function refuseNul(form: URLSearchParams): URLSearchParams {
  for (const [k, v] of form) {
    if (k.includes('\u0000') || v.includes('\u0000'))
      throw errors.validation([{ path: k.replace(/\u0000/g, '\ufffd'), message: 'must not contain NUL characters' }]);
  }
  return form;
}

export const isMultipart = (contentType: string | null) =>
  (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'multipart/form-data';

/**
 * A multipart/form-data body (a form with a file: the CSV import's upload) as a form's fields,
 * each file as its UTF-8 text; null when it cannot be read as multipart.
 */
export async function multipartForm(bytes: Uint8Array, contentType: string): Promise<URLSearchParams | null> {
  let data: Awaited<ReturnType<Response['formData']>>;
  try {
    data = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return null;
  }
  const form = new URLSearchParams();
  for (const [name, value] of data) form.append(name, typeof value === 'string' ? value : await value.text());
  return form;
}

/**
 * A same-site path to go to after sign-in; anything else (other hosts, `//evil`, `/\evil`) → fallback.
 * Every character outside printable ASCII is percent-encoded as UTF-8 (as a browser sends it): a
 * Location header holds bytes, and a character it cannot hold fails the response after the
 * action (the sign-in, the decision) took effect.
 */
export function safeNextPath(next: string | null | undefined, fallback = '/calendar'): string {
  if (!next?.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\u0000-\u001f]/.test(next)) return fallback;
  if (next.startsWith('/sign-in') || next.startsWith('/sign-out')) return fallback;
  return next.slice(0, 2000).replace(/[^\x21-\x7e]/gu, percentEncoded);
}

/** A lone surrogate (half of a pair, as the slice may leave) has no UTF-8: U+FFFD stands for it. */
const percentEncoded = (c: string) => (/^[\ud800-\udfff]$/.test(c) ? '%EF%BF%BD' : encodeURIComponent(c));
