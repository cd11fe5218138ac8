// Reading a feed: a conditional GET (If-None-Match / If-Modified-Since from the last answer)
// through the private-address guard (the URL is the tenant's choice: lib/outbound.ts), within
// FEED_TIMEOUT_MS for the whole answer and FEED_MAX_BYTES of body, parsed by rss-parser (RSS
// 0.9–2.0 and Atom). Every way it can fail is a FeedReadError whose message says why in words a
// feed's owner can act on.
import Parser from 'rss-parser';
import { BodyTooLargeError, createOutboundFetch, OutboundRefusedError, readBodyUpTo, type OutboundPolicy } from '../../lib/outbound.ts';
import { entriesOf, type FeedEntry, type ParsedItem } from './items.ts';

export const FEED_MAX_BYTES = 5 * 1024 * 1024;
export const FEED_TIMEOUT_MS = 20_000;
const USER_AGENT = 'postpilot-feeds/0.1 (social post scheduler)';

export class FeedReadError extends Error {
  override name = 'FeedReadError';
}

export type FeedRead =
  | { status: 'not_modified' }
  | { status: 'ok'; title: string; entries: FeedEntry[]; etag: string | null; lastModified: string | null };

export interface FeedReadOptions {
  outbound: OutboundPolicy;
  /** The transport under the guard (tests); the global fetch otherwise. */
  transport?: typeof fetch;
  etag?: string | null;
  lastModified?: string | null;
  timeoutMs?: number;
  /** Aborts the read from outside (a cancelled activity). */
  signal?: AbortSignal;
}

// Atom's <category term=…> is not among rss-parser's item fields: read as elements.
/** The resolver's codes for a name that does not resolve (getaddrinfo's, as Bun and Node name them). */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_AGAIN', 'ENODATA', 'DNSException']);

const parser = new Parser({ customFields: { item: [['category', 'categoryElements', { keepArray: true }]] } });

export async function readFeed(url: string, o: FeedReadOptions): Promise<FeedRead> {
  const guarded = createOutboundFetch({ ...o.outbound, ...(o.transport ? { fetch: o.transport } : {}) });
  const timeoutMs = o.timeoutMs ?? FEED_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const headers: Record<string, string> = {
    accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1',
    'user-agent': USER_AGENT,
  };
  if (o.etag) headers['if-none-match'] = o.etag;
  if (o.lastModified) headers['if-modified-since'] = o.lastModified;
  const late = () => new FeedReadError(`the feed did not answer within ${timeoutMs / 1000} s`);
  let res: Response;
  try {
    res = await guarded(url, { headers, signal });
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new FeedReadError(err.message);
    if (timeout.aborted) throw late();
    if (signal.aborted) throw err;
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && UNRESOLVED.has(code))
      throw new FeedReadError('its host does not resolve (the feed could not be reached)');
    throw new FeedReadError('the feed could not be reached (the connection failed)');
  }
  if (res.status === 304) {
    await res.body?.cancel().catch(() => {});
    return { status: 'not_modified' };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new FeedReadError(`the feed answered HTTP ${res.status}`);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBodyUpTo(res, FEED_MAX_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw new FeedReadError(`the feed is larger than ${FEED_MAX_BYTES / (1024 * 1024)} MB`);
    if (timeout.aborted) throw late();
    if (signal.aborted) throw err;
    throw new FeedReadError('the feed could not be read (the connection broke)');
  }
  let parsed: { title?: string; items?: ParsedItem[] };
  try {
    parsed = await parser.parseString(new TextDecoder().decode(bytes));
  } catch (err) {
    const why = String((err as Error)?.message ?? err).split('\n')[0];
    throw new FeedReadError(`the answer is not an RSS or Atom feed (${why})`);
  }
  return {
    status: 'ok',
    title: typeof parsed.title === 'string' ? parsed.title.trim() : '',
    entries: entriesOf(parsed.items ?? []),
    etag: res.headers.get('etag'),
    lastModified: res.headers.get('last-modified'),
  };
}
