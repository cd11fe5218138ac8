// GET /v1/posts's pages kept in the API process, answered as fresh as a read. Rules:
//
// 1. A page is the answer's JSON text for one (organization, the key's channels, the query), kept
//    at most PAGE_TTL_MS (its media URLs are signed for an hour) and within MAX_BYTES of pages
//    (the least recently used go first).
// 2. Announced changes. Triggers on posts, post_channels, post_channel_items, post_tags and
//    media_items NOTIFY `postpilot_posts` with the organization's id whenever what a page shows
//    changes (db/migrations/Migration20261129020000_post_pages_notify.ts; post_tags':
//    Migration20261129100000_tags.ts), whoever writes: the API, the worker, the web app, an
//    operator in psql. The change feed (db/change-feed.ts) drops the organization's pages; a
//    reset of the feed drops all.
// 3. Every request first waits for the feed's barrier: every change committed before it is then
//    known, so a kept page holds everything a read would (a post created or published a moment
//    before, by this process or another), and a page read right after a change can be kept.
// 4. A page read while a change to its organization was announced is not kept: what it read may
//    be older than the change.
// 5. While the feed is down nothing is kept and every page is read.
import type { ChangeFeed, Subscription } from '../../db/change-feed.ts';

const POST_PAGES_CHANNEL = 'postpilot_posts';
const PAGE_TTL_MS = 60_000;
const MAX_BYTES = 32 * 1024 * 1024;
/** Organizations whose changes are counted at once (rule 4); more start the count again. */
const MAX_TRACKED = 10_000;

interface Page {
  organizationId: string;
  /**
   * UTF-8, as sent, in a Blob: a Response shares a Blob's bytes, so answering a kept page neither
   * encodes nor copies it (a copy per answer is garbage that a large heap pays for in collections).
   */
  body: Blob;
  expires: number;
}

export interface PostPageCache {
  /** The page's JSON text: kept (rule 3), or read and kept when rule 4 allows. */
  page(organizationId: string, key: string, read: () => Promise<unknown>): Promise<Blob>;
  /** Whether pages are kept now (the feed is up). */
  listening(): boolean;
  ready: Promise<void>;
  close(): void;
}

export function createPostPageCache(feed: ChangeFeed, o: { maxBytes?: number; ttlMs?: number; maxTracked?: number } = {}): PostPageCache {
  const maxBytes = o.maxBytes ?? MAX_BYTES;
  const maxTracked = o.maxTracked ?? MAX_TRACKED;
  const ttlMs = o.ttlMs ?? PAGE_TTL_MS;
  // Map order is use order: a hit moves its page to the end, the first ones go when over budget.
  const pages = new Map<string, Page>();
  /** Each organization's kept pages: a change costs its own pages' count, not every page's. */
  const pagesOf = new Map<string, Set<string>>();
  let bytes = 0;
  /** Moves on every change of the organization; `epoch` on every reset. */
  const changes = new Map<string, number>();
  let epoch = 0;

  const drop = (k: string, p: Page) => {
    pages.delete(k);
    bytes -= p.body.size;
    const keys = pagesOf.get(p.organizationId);
    keys?.delete(k);
    if (keys?.size === 0) pagesOf.delete(p.organizationId);
  };
  const keep = (k: string, p: Page) => {
    pages.set(k, p);
    bytes += p.body.size;
    const keys = pagesOf.get(p.organizationId);
    if (keys) keys.add(k);
    else pagesOf.set(p.organizationId, new Set([k]));
  };
  const forget = (organizationId: string) => {
    // Bounded: past MAX_TRACKED organizations the counts start again, and the reads under way are not kept.
    if (changes.size >= maxTracked && !changes.has(organizationId)) {
      epoch++;
      changes.clear();
    }
    changes.set(organizationId, (changes.get(organizationId) ?? 0) + 1);
    for (const k of pagesOf.get(organizationId) ?? []) drop(k, pages.get(k)!);
  };
  const forgetAll = () => {
    epoch++;
    changes.clear();
    pages.clear();
    pagesOf.clear();
    bytes = 0;
  };
  const sub: Subscription = feed.listen(POST_PAGES_CHANNEL, {
    change: (payload) => (payload ? forget(payload) : forgetAll()),
    reset: forgetAll,
  });

  const fresh = (k: string): Page | undefined => {
    const p = pages.get(k);
    if (!p) return undefined;
    if (p.expires <= Date.now()) {
      drop(k, p);
      return undefined;
    }
    return p;
  };

  return {
    async page(organizationId, pageKey, read) {
      const k = `${organizationId}\n${pageKey}`;
      // After the barrier every earlier change has been heard: a kept page is current, and a page
      // read now is kept unless a later change is heard while it is read.
      if (await sub.sync()) {
        const kept = fresh(k);
        if (kept) {
          pages.delete(k); // to the end of the use order
          pages.set(k, kept);
          return kept.body;
        }
      }
      const seen = { epoch, changes: changes.get(organizationId) ?? 0 };
      const body = new Blob([JSON.stringify(await read())]);
      if (sub.up() && seen.epoch === epoch && seen.changes === (changes.get(organizationId) ?? 0) && body.size <= maxBytes) {
        const before = pages.get(k);
        if (before) drop(k, before);
        keep(k, { organizationId, body, expires: Date.now() + ttlMs });
        for (const [old, p] of pages) {
          if (bytes <= maxBytes) break;
          drop(old, p);
        }
      }
      return body;
    },
    listening: sub.up,
    ready: sub.ready,
    close: sub.close,
  };
}
