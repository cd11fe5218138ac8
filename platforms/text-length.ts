// How long a text is on each platform, counted the way the platform counts it (DESIGN.md §4):
//   - X: the weighted length of the official twitter-text library (parseTweet): most CJK
//     characters and emoji count 2, every URL 23 (t.co), the rest 1.
//   - Mastodon: grapheme clusters after StatusLengthValidator's rewrite: every http(s) URL counts
//     as the instance's `characters_reserved_per_url` (23), a mention `@user@domain` as `@user`.
//   - Everyone else: grapheme clusters (Bluesky's documented unit; the others' closest one).
// Used by post validation and the composer's counters, so both say the same number.
import { extractUrlsWithIndices, parseTweet, regexen } from 'twitter-text';
import type { Platform } from './catalog.ts';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/** What a Mastodon instance counts a URL as when it does not say (Mastodon's URL_PLACEHOLDER_CHARS). */
export const MASTODON_URL_CHARS = 23;

/** Per-channel inputs of the count (from the channel's settings, read from the account). */
export interface LengthOptions {
  /** Mastodon: the instance's `characters_reserved_per_url`. */
  charactersReservedPerUrl?: number;
}

export interface Measured {
  length: number;
  /** false: the text is so long that only a lower bound was worked out (it is over `max` anyway). */
  exact: boolean;
}

/**
 * The length of `text` on `platform`. With `max`, a text that is certainly longer than `max` is
 * not measured exactly: twitter-text's URL pattern backtracks badly on long inputs (below).
 */
export function measureText(platform: Platform, text: string, opts: LengthOptions & { max?: number } = {}): Measured {
  if (platform === 'X') {
    // A URL (≤ 4096 UTF-16 units) weighs 23, anything else ≥ 1 per 2 units (an emoji ≥ 2 per 15):
    // so every 179 units weigh at least 1.
    const atLeast = Math.floor(text.length / 179);
    if (opts.max !== undefined && atLeast > opts.max) return { length: atLeast, exact: false };
    return { length: xLength(text), exact: true };
  }
  if (platform === 'MASTODON') {
    const urlChars = opts.charactersReservedPerUrl ?? MASTODON_URL_CHARS;
    if (opts.max !== undefined) {
      // A URL (≤ 4096 units, ≥ 1 grapheme) counts urlChars; a mention loses at most its
      // 253-character domain; every other grapheme counts 1.
      const atLeast = Math.floor(graphemeLength(text) / Math.max(4096 / urlChars, 256));
      if (atLeast > opts.max) return { length: atLeast, exact: false };
    }
    return { length: mastodonLength(text, urlChars), exact: true };
  }
  return { length: graphemeLength(text), exact: true };
}

/** X's weighted length (280 allowed), measured exactly. */
export function xLength(text: string): number {
  return parseTweet(tameLabelRuns(text)).weightedLength;
}

export function textLength(platform: Platform, text: string, opts: LengthOptions = {}): number {
  return measureText(platform, text, opts).length;
}

/** The LengthOptions stored on a channel (`settings.charactersReservedPerUrl`). */
export function lengthOptions(settings: Record<string, unknown> | null | undefined): LengthOptions {
  const n = settings?.charactersReservedPerUrl;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? { charactersReservedPerUrl: n } : {};
}

type ChannelLike = { platform: Platform; settings?: Record<string, unknown> | null };

/** The length of `text` on a channel, as its platform counts it. */
export function measureChannelText(c: ChannelLike, text: string, max?: number): Measured {
  return measureText(c.platform, text, { ...lengthOptions(c.settings), max });
}

/** How the platform counts, for messages (empty for plain graphemes). */
export function countingNote(platform: Platform): string {
  if (platform === 'X') return ' (X counts most CJK characters and emoji as 2 and every URL as 23)';
  if (platform === 'MASTODON') return ' (Mastodon counts every URL as 23 and @user@domain as @user)';
  return '';
}

/**
 * twitter-text's URL pattern backtracks over a long run of dot-separated labels ("a.a.a.…": 10 KB
 * cost seconds). No real URL has 16 dots without a space, so in such a run every dot is read as
 * a space: the same weight (1) and the same grapheme count, but no URL.
 */
const DOTS_IN_A_RUN = 16;
function tameLabelRuns(text: string): string {
  if (!text.includes('.')) return text;
  return text
    .split(/(\s+)/)
    .map((run) => (countDots(run) >= DOTS_IN_A_RUN ? run.replaceAll('.', ' ') : run))
    .join('');
}

function countDots(s: string): number {
  let n = 0;
  for (let i = s.indexOf('.'); i !== -1 && n < DOTS_IN_A_RUN; i = s.indexOf('.', i + 1)) n++;
  return n;
}

// Mastodon's Account::MENTION_RE (4.x): `@user` or `@user@domain`, not after a word character,
// `=` or `/`. [[:word:]] is Ruby's Unicode word class: letters, marks, decimal digits, connectors.
const MENTION =
  /(?<![=/\p{L}\p{M}\p{Nd}\p{Pc}])@(([a-z0-9_]+(?:[a-z0-9_.-]+[a-z0-9_]+)?)(?:@[\p{L}\p{M}\p{Nd}\p{Pc}.-]+[\p{L}\p{M}\p{Nd}\p{Pc}]+)?)/giu;
/** twitter-text's end_mention_match, which Mastodon's extractor applies too: no `@`, accent or `://` right after. */
const END_MENTION = (regexen as { endMentionMatch: RegExp }).endMentionMatch;
/** Mastodon's Extractor::MAX_DOMAIN_LENGTH: a longer domain is no mention. */
const MAX_DOMAIN_LENGTH = 253;

interface Span {
  start: number;
  end: number;
  replacement: string;
}

/** Mastodon's StatusLengthValidator#countable_length of a status text. */
export function mastodonLength(text: string, urlChars = MASTODON_URL_CHARS): number {
  const tamed = tameLabelRuns(text);
  const spans: Span[] = [];
  // Only URLs with a scheme get the concession (extract_url_without_protocol: false).
  for (const u of extractUrlsWithIndices(tamed, { extractUrlsWithoutProtocol: false })) {
    spans.push({ start: u.indices[0], end: u.indices[1], replacement: 'x'.repeat(urlChars) });
  }
  if (text.includes('@')) {
    for (const m of text.matchAll(MENTION)) {
      const end = m.index + m[0].length;
      const [user, domain] = m[1]!.split('@') as [string, string?];
      if (END_MENTION.test(text.slice(end, end + 3))) continue;
      if (domain && domain.length > MAX_DOMAIN_LENGTH) continue;
      spans.push({ start: m.index, end, replacement: `@${user}` });
    }
  }
  if (!spans.length) return graphemeLength(text);
  // Extractor.remove_overlapping_entities: by start, dropping any that overlaps the one kept before.
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    out += text.slice(at, s.start) + s.replacement;
    at = s.end;
  }
  return graphemeLength(out + text.slice(at));
}

/** Platforms whose count the composer's script asks the server for (twitter-text's URL rules). */
export function countedOnServer(platform: Platform): boolean {
  return platform === 'X' || platform === 'MASTODON';
}
