// A feed that changes over time, served as a blog serves its RSS or Atom feed: conditional GET
// (ETag / If-None-Match and Last-Modified / If-Modified-Since answered 304 when nothing changed),
// and on demand an HTTP error, an answer that is not a feed, a huge body, or a body held back
// until the test lets it go.

export interface FeedItemFixture {
  guid?: string;
  title: string;
  link?: string;
  description?: string;
  pubDate?: Date;
  categories?: string[];
}

/** Item `n` of a test feed: dated the n-th of January 2026, its guid `urn:item:n`. */
export const feedItem = (n: number, extra: Partial<FeedItemFixture> = {}): FeedItemFixture => ({
  guid: `urn:item:${n}`,
  title: `Item ${n}`,
  link: `https://blog.example/${n}`,
  description: `<p>About item ${n}</p>`,
  pubDate: new Date(Date.UTC(2026, 0, n)),
  ...extra,
});

export type FeedMisbehaviour =
  | { kind: 'status'; status: number }
  | { kind: 'html' }
  | { kind: 'huge'; bytes: number }
  /** The first bytes, then nothing until `release` resolves. */
  | { kind: 'hold'; release: Promise<void> };

export interface FeedServer {
  url: string;
  /** Newest first, as feeds list them. */
  items: FeedItemFixture[];
  format: 'rss' | 'atom';
  /** Applies to the next requests until cleared. */
  misbehave: FeedMisbehaviour | null;
  requests: { ifNoneMatch: string | null; ifModifiedSince: string | null; status: number }[];
  /** Resolves at the next request that arrives. */
  nextRequest(): Promise<void>;
  stop(): void;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function rss(items: FeedItemFixture[]): string {
  const body = items
    .map(
      (i) =>
        `<item><title>${esc(i.title)}</title>${i.link ? `<link>${esc(i.link)}</link>` : ''}${
          i.guid ? `<guid isPermaLink="false">${esc(i.guid)}</guid>` : ''
        }${i.description ? `<description>${esc(i.description)}</description>` : ''}${
          i.pubDate ? `<pubDate>${i.pubDate.toUTCString()}</pubDate>` : ''
        }${(i.categories ?? []).map((c) => `<category>${esc(c)}</category>`).join('')}</item>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Test blog</title><link>https://blog.example</link><description>d</description>\n${body}\n</channel></rss>`;
}

function atom(items: FeedItemFixture[]): string {
  const body = items
    .map(
      (i) =>
        `<entry><title>${esc(i.title)}</title>${i.guid ? `<id>${esc(i.guid)}</id>` : ''}${
          i.link ? `<link href="${esc(i.link)}"/>` : ''
        }<updated>${(i.pubDate ?? new Date(0)).toISOString()}</updated>${(i.categories ?? []).map((c) => `<category term="${esc(c)}"/>`).join('')}${
          i.description ? `<summary>${esc(i.description)}</summary>` : ''
        }</entry>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"><title>Test atom</title><id>urn:test</id><updated>2026-01-01T00:00:00Z</updated>\n${body}\n</feed>`;
}

/**
 * As a server answers a conditional GET (RFC 9110 13.2.2): If-None-Match decides when sent;
 * otherwise If-Modified-Since, when the feed has not changed since that date (a date not
 * understood is ignored).
 */
function notModified(req: Request, etag: string, lastModified: string): boolean {
  const ifNoneMatch = req.headers.get('if-none-match');
  if (ifNoneMatch !== null) return ifNoneMatch === etag;
  const since = Date.parse(req.headers.get('if-modified-since') ?? '');
  return !Number.isNaN(since) && Date.parse(lastModified) <= since;
}

export function startFeedServer(initial: FeedItemFixture[] = [], format: 'rss' | 'atom' = 'rss'): FeedServer {
  let waiters: (() => void)[] = [];
  const state: FeedServer = {
    url: '',
    items: initial,
    format,
    misbehave: null,
    requests: [],
    nextRequest: () => new Promise<void>((resolve) => waiters.push(resolve)),
    stop: () => server.stop(true),
  };
  const answer = (req: Request): Response => {
    const m = state.misbehave;
    if (m?.kind === 'status') return new Response('oops', { status: m.status });
    if (m?.kind === 'html') return new Response('<html><body>Not a feed</body></html>', { headers: { 'content-type': 'text/html' } });
    if (m?.kind === 'huge') {
      const chunk = new TextEncoder().encode(`<!-- ${'x'.repeat(65_000)} -->\n`);
      let sent = 0;
      return new Response(
        new ReadableStream({
          pull(c) {
            if (sent >= m.bytes) return c.close();
            sent += chunk.byteLength;
            c.enqueue(chunk);
          },
        }),
        { headers: { 'content-type': 'application/rss+xml' } },
      );
    }
    const xml = state.format === 'rss' ? rss(state.items) : atom(state.items);
    const etag = `"${Bun.hash(xml).toString(16)}"`;
    const lastModified = new Date(Math.max(0, ...state.items.map((i) => i.pubDate?.getTime() ?? 0))).toUTCString();
    if (notModified(req, etag, lastModified)) return new Response(null, { status: 304, headers: { etag, 'last-modified': lastModified } });
    const headers = {
      'content-type': state.format === 'rss' ? 'application/rss+xml' : 'application/atom+xml',
      etag,
      'last-modified': lastModified,
    };
    if (m?.kind === 'hold') {
      const bytes = new TextEncoder().encode(xml);
      return new Response(
        new ReadableStream({
          async start(c) {
            c.enqueue(bytes.subarray(0, 100));
            await m.release;
            try {
              c.enqueue(bytes.subarray(100));
              c.close();
            } catch {
              // the reader went away
            }
          },
        }),
        { headers },
      );
    }
    return new Response(xml, { headers });
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const res = answer(req);
      state.requests.push({
        ifNoneMatch: req.headers.get('if-none-match'),
        ifModifiedSince: req.headers.get('if-modified-since'),
        status: res.status,
      });
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve();
      return res;
    },
  });
  state.url = `http://127.0.0.1:${server.port}/feed.xml`;
  return state;
}
