// The rewrite of a text's links into short links, and what a short link is made of.
//
// Rules:
// - A link is an `http://` or `https://` URL in the text, up to the first character a URL does
//   not hold unescaped (white space, quotes, angle brackets, anything outside ASCII), without the
//   punctuation that ends a sentence after it (`.,:;!?'`) or a closing bracket it did not open;
//   its host must parse. Links without a scheme (`example.com`) stay as they are.
// - A short link is `{SHORT_LINK_BASE_URL}/l/{code}` (default PUBLIC_BASE_URL): the base is the
//   process's setting (useShortLinkBase, from lib/config.ts at start: the API's and the worker's
//   processes must be given the same), the code SHORT_CODE_CHARS random base62 characters
//   (about 95 bits), so a short link cannot be guessed from another.
// - The rewrite replaces every occurrence of a link, and nothing else of the text; the same link
//   twice in one channel's texts is one short link. A link longer than MAX_LINK_CHARS stays as it
//   is (no platform shortens such a link either; its row would not fit the unique index).
// - UTM parameters are appended to the target's query, before its fragment, each only where the
//   target has no parameter of that name; the rest of the target is kept byte for byte.
import { randomFillSync } from 'node:crypto';
import { loadConfig } from '../../lib/config.ts';
import type { LinkChoice } from '../../db/entities/index.ts';

export const SHORT_CODE_CHARS = 16;
/** A code as the service makes them: anything else is no short link (404 without a look-up). */
export const SHORT_CODE = new RegExp(`^[0-9A-Za-z]{${SHORT_CODE_CHARS}}$`);
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The path of a short link's code, under the base. */
export const SHORT_LINK_PATH = '/l/';

let base = loadConfig({}).shortLinkBaseUrl;

/** The process's short-link base (lib/config.ts shortLinkBaseUrl), set by the entry points at start. */
export function useShortLinkBase(url: string): void {
  base = url.replace(/\/+$/, '');
}

/** The short link of a code, on the process's base. */
export const shortUrlOf = (code: string): string => `${base}${SHORT_LINK_PATH}${code}`;

/** A new code: uniform base62 characters (bytes from 248 up are drawn again, so none is likelier). */
export function newShortCode(): string {
  let out = '';
  const bytes = new Uint8Array(SHORT_CODE_CHARS * 2);
  while (out.length < SHORT_CODE_CHARS) {
    randomFillSync(bytes);
    for (const b of bytes) if (b < 248 && out.length < SHORT_CODE_CHARS) out += BASE62[b % 62];
  }
  return out;
}

export interface FoundLink {
  url: string;
  start: number;
  end: number;
}

// Characters a URL holds unescaped (RFC 3986) and `%`; the scheme not right after a letter or digit.
const CANDIDATE = /(?<![0-9A-Za-z])https?:\/\/[0-9A-Za-z\-._~:/?#[\]@!$&'()*+,;=%]+/gi;
const TRAILING = new Set(['.', ',', ':', ';', '!', '?', "'"]);
const CLOSING: Record<string, string> = { ')': '(', ']': '[' };

const count = (s: string, c: string) => s.split(c).length - 1;

/** The end of a candidate once the punctuation after it is left out. */
function trimmed(url: string): string {
  let u = url;
  for (;;) {
    const last = u.at(-1)!;
    if (TRAILING.has(last)) u = u.slice(0, -1);
    else if (CLOSING[last] && count(u, CLOSING[last]) < count(u, last)) u = u.slice(0, -1);
    else return u;
  }
}

function hasHost(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

/** The http(s) links of a text, in order (the rules above). */
export function httpLinks(text: string): FoundLink[] {
  if (!text.includes('://')) return [];
  const out: FoundLink[] = [];
  for (const m of text.matchAll(CANDIDATE)) {
    const url = trimmed(m[0]);
    if (hasHost(url)) out.push({ url, start: m.index, end: m.index + url.length });
  }
  return out;
}

/** The longest link that becomes a short link. */
export const MAX_LINK_CHARS = 2000;

/** The links of a text that become short links, in order. */
export const linksToShorten = (text: string): FoundLink[] => httpLinks(text).filter((l) => l.url.length <= MAX_LINK_CHARS);

/** The text cut at `links` (in order, as httpLinks finds them): its runs of plain text and the links between them. */
export function textAndLinks(text: string, links: FoundLink[]): (string | FoundLink)[] {
  const out: (string | FoundLink)[] = [];
  let at = 0;
  for (const l of links) {
    if (l.start > at) out.push(text.slice(at, l.start));
    out.push(l);
    at = l.end;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** The text with each of `links` replaced by what `shortOf` gives for it. */
export function replaceLinks(text: string, links: FoundLink[], shortOf: (url: string) => string): string {
  if (!links.length) return text;
  return textAndLinks(text, links)
    .map((part) => (typeof part === 'string' ? part : shortOf(part.url)))
    .join('');
}

/**
 * A short link before its code is drawn (a preview, a length check): a code's length is fixed, so
 * it is as long as any short link of the process's base.
 */
export const placeholderShortUrl = (): string => shortUrlOf('x'.repeat(SHORT_CODE_CHARS));

/** The links of a text that its links choice makes short links (none while it does not shorten). */
export const linksShortened = (text: string, choice: LinkChoice | undefined): FoundLink[] => (choice?.shorten ? linksToShorten(text) : []);

/** The text as it will be sent, for the length checks: each link as a short link of the process's base. */
export function asSent(text: string, choice: LinkChoice | undefined): string {
  const placeholder = placeholderShortUrl();
  return replaceLinks(text, linksShortened(text, choice), () => placeholder);
}

export interface Utm {
  source: string;
  medium: string;
  campaign: string | null;
}

/** The target with the UTM parameters it does not have yet, appended to its query before its fragment. */
export function withUtm(url: string, utm: Utm): string {
  const hash = url.indexOf('#');
  const head = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const q = head.indexOf('?');
  const have = new Set(q === -1 ? [] : new URLSearchParams(head.slice(q + 1)).keys());
  const add = (
    [
      ['utm_source', utm.source],
      ['utm_medium', utm.medium],
      ['utm_campaign', utm.campaign],
    ] as const
  ).filter(([name, value]) => value !== null && value !== '' && !have.has(name));
  if (!add.length) return url;
  const query = add.map(([name, value]) => `${name}=${encodeURIComponent(value!)}`).join('&');
  const sep = q === -1 ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return `${head}${sep}${query}${fragment}`;
}
