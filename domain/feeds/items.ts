// A feed's items and the text of their posts: pure rules, no I/O.
//
// Rules:
// - An item's identity is its RSS `guid` or Atom `id`; without one, its link; without either, its
//   title and summary. Its key is the sha256 of that identity (hex), so any length is stored.
// - An item is new when neither its key nor its link was seen before on this feed: a feed that
//   re-dates, reorders or edits its items, or changes its ids but keeps the links, posts nothing
//   again.
// - New items are posted oldest first (by date when every new item has one, else in the reverse
//   of the document's order, feeds listing the newest first), at most MAX_POSTS_PER_POLL a poll:
//   the rest wait for the next poll.
// - The template's placeholders: {title}, {link}, {summary}, {author}, {categories}, {feed}. Any
//   other `{word}` is refused when the feed is saved. Values are plain text on one line (HTML
//   tags dropped, whitespace collapsed); {summary} is cut at SUMMARY_MAX_CHARS with an ellipsis.
// - The filter: an item passes when it contains one of `include` (if given) and none of
//   `exclude`, in its title, summary or categories, in any letter case.
import { createHash } from 'node:crypto';
import type { FeedFilter } from '../../db/entities/index.ts';

export const MAX_POSTS_PER_POLL = 10;
export const SUMMARY_MAX_CHARS = 300;
export const PLACEHOLDERS = ['title', 'link', 'summary', 'author', 'categories', 'feed'] as const;
export const DEFAULT_TEMPLATE = '{title} {link}';

/** One item of a feed, as its posts use it. */
export interface FeedEntry {
  /** Its identity (see the rules above). */
  key: string;
  keyHash: string;
  link: string | null;
  title: string;
  summary: string;
  author: string;
  categories: string[];
  publishedAt: Date | null;
  /** Its place in the document (0 = first). */
  position: number;
}

/** What the feed parser gives for an item (rss-parser's item, loosely typed). */
export interface ParsedItem {
  guid?: unknown;
  id?: unknown;
  link?: unknown;
  title?: unknown;
  contentSnippet?: unknown;
  summary?: unknown;
  content?: unknown;
  creator?: unknown;
  author?: unknown;
  categories?: unknown;
  /** Every <category> element, RSS's and Atom's (whose name is its `term` attribute). */
  categoryElements?: unknown;
  isoDate?: unknown;
}

const text = (v: unknown): string => {
  if (typeof v === 'string') return v;
  // xml2js gives an element with attributes as { _: text, $: attributes }.
  if (v && typeof v === 'object' && typeof (v as { _?: unknown })._ === 'string') return (v as { _: string })._;
  return '';
};

/** Plain text on one line: tags dropped, whitespace collapsed. */
export const plain = (s: string): string =>
  s
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function entryOf(item: ParsedItem, position: number): FeedEntry {
  const link = plain(text(item.link)) || null;
  const title = plain(text(item.title));
  const summary = plain(text(item.contentSnippet) || text(item.summary) || text(item.content));
  const id = plain(text(item.guid) || text(item.id));
  const key = id || link || `${title}\n${summary}`;
  const date = typeof item.isoDate === 'string' ? new Date(item.isoDate) : null;
  return {
    key,
    keyHash: hashKey(key),
    link,
    title,
    summary,
    author: plain(text(item.creator) || text(item.author)),
    categories: categoriesOf(item),
    publishedAt: date && !Number.isNaN(date.getTime()) ? date : null,
    position,
  };
}

function categoriesOf(item: ParsedItem): string[] {
  const elements = Array.isArray(item.categoryElements) ? item.categoryElements : Array.isArray(item.categories) ? item.categories : [];
  const names = elements.map((c: unknown) => {
    const term = (c as { $?: { term?: unknown } } | null)?.$?.term;
    return plain(typeof term === 'string' ? term : text(c));
  });
  return [...new Set(names.filter(Boolean))];
}

/** The entries of a parsed feed; an item with no identity at all (no id, link, title or summary) is left out. */
export function entriesOf(items: ParsedItem[]): FeedEntry[] {
  const seen = new Set<string>();
  const out: FeedEntry[] = [];
  for (const [i, item] of items.entries()) {
    const e = entryOf(item, i);
    if (e.key.trim() === '' || seen.has(e.keyHash)) continue;
    seen.add(e.keyHash);
    out.push(e);
  }
  return out;
}

/** The entries not seen before (by key or by link), oldest first. */
export function newEntries(entries: FeedEntry[], seenKeys: Set<string>, seenLinks: Set<string>): FeedEntry[] {
  const fresh = entries.filter((e) => !seenKeys.has(e.keyHash) && !(e.link && seenLinks.has(e.link)));
  return oldestFirst(fresh);
}

export function oldestFirst(entries: FeedEntry[]): FeedEntry[] {
  const dated = entries.every((e) => e.publishedAt);
  return [...entries].sort((a, b) =>
    dated ? a.publishedAt!.getTime() - b.publishedAt!.getTime() || b.position - a.position : b.position - a.position,
  );
}

/** The `{word}` placeholders of a template that are not PLACEHOLDERS. */
export function unknownPlaceholders(template: string): string[] {
  const known = new Set<string>(PLACEHOLDERS);
  return [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((w) => !known.has(w));
}

const cut = (s: string, max: number) => {
  const chars = [...s];
  return chars.length <= max
    ? s
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
};

/** The template with the entry's values. */
export function render(template: string, e: FeedEntry, feedName: string): string {
  const values: Record<(typeof PLACEHOLDERS)[number], string> = {
    title: e.title,
    link: e.link ?? '',
    summary: cut(e.summary, SUMMARY_MAX_CHARS),
    author: e.author,
    categories: e.categories.join(', '),
    feed: feedName,
  };
  return template.replace(/\{(\w+)\}/g, (whole, word: string) => (word in values ? values[word as keyof typeof values] : whole)).trim();
}

export function passesFilter(filter: FeedFilter | null, e: FeedEntry): boolean {
  if (!filter) return true;
  const haystack = [e.title, e.summary, ...e.categories].join('\n').toLowerCase();
  const has = (word: string) => haystack.includes(word.toLowerCase());
  if (filter.include?.length && !filter.include.some(has)) return false;
  return !filter.exclude?.some(has);
}
