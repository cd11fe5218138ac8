// When a series' occurrences fall, pure (no database). The rule repeats the first occurrence's
// local wall time in the series' IANA zone: every `interval` days, weeks or months. So a daily
// 09:00 stays 09:00 local across daylight-saving changes (a wall time in a skipped hour moves
// forward by the gap, one in a repeated hour is its earlier instant: lib/zoned-time.ts).
// Months: the day of the month is the first occurrence's, clamped to the month's last day —
// a series started on January 31 falls on Feb 28 (29), Mar 31, Apr 30, … (never drifting to
// the 28th for good).
import { resolveWallTime, zonedParts, type WallTime } from '../../lib/zoned-time.ts';

export type Frequency = 'day' | 'week' | 'month';

export interface SeriesRule {
  /** The first occurrence (occurrence 0). */
  startAt: Date;
  timeZone: string;
  every: Frequency;
  /** ≥ 1. */
  interval: number;
  /** No occurrence after this instant; null = no end. */
  until: Date | null;
  /** At most this many occurrences; null = no limit. */
  count: number | null;
}

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The rule's k-th time (k = 0 is startAt), before `until`/`count` are applied. */
export function ruleTime(rule: SeriesRule, k: number): Date {
  if (k === 0) return rule.startAt;
  const w: WallTime = zonedParts(rule.startAt, rule.timeZone);
  let { year, month, day } = w;
  if (rule.every === 'month') {
    const m = month - 1 + k * rule.interval;
    year += Math.floor(m / 12);
    month = (m % 12) + 1;
    day = Math.min(w.day, daysInMonth(year, month));
  } else {
    const d = new Date(Date.UTC(year, month - 1, day) + k * rule.interval * (rule.every === 'week' ? 7 : 1) * DAY_MS);
    year = d.getUTCFullYear();
    month = d.getUTCMonth() + 1;
    day = d.getUTCDate();
  }
  return resolveWallTime({ year, month, day, hour: w.hour, minute: w.minute, second: w.second }, rule.timeZone).instant;
}

/**
 * The next occurrence's time, given how many were created and the rule time of the last one:
 * the rule's first time after it (occurrence 0 when none was created), or null when the rule has
 * ended (count reached, or past until). After an edit of the rule, the series continues with the
 * new rule's first time after the last occurrence created.
 */
export function nextOccurrence(rule: SeriesRule, created: number, lastAt: Date | null): Date | null {
  if (rule.count !== null && created >= rule.count) return null;
  let at: Date | null = null;
  if (lastAt === null) at = rule.startAt;
  else {
    // Rule times grow with k: estimate k from the elapsed time, then step to the first one after lastAt.
    const stepMs = rule.interval * (rule.every === 'day' ? DAY_MS : rule.every === 'week' ? 7 * DAY_MS : 28 * DAY_MS);
    let k = Math.max(0, Math.floor((lastAt.getTime() - rule.startAt.getTime()) / stepMs) - 2);
    while (ruleTime(rule, k) <= lastAt) k++;
    at = ruleTime(rule, k);
  }
  if (rule.until !== null && at > rule.until) return null;
  return at;
}

/**
 * The occurrences still to create whose times are in [from, to), at most `limit`, continuing from
 * the last one created (the calendar's marks). `index`: the occurrence's number (0 = the first);
 * null when a jump over earlier ones left it unknown (a rule without a count).
 */
export function occurrencesBetween(
  rule: SeriesRule,
  created: number,
  lastAt: Date | null,
  from: Date,
  to: Date,
  limit = 500,
): { index: number | null; at: Date }[] {
  const out: { index: number | null; at: Date }[] = [];
  let jumped = false;
  let n = created;
  let last = lastAt;
  // Without a count, the occurrences before `from` need not be walked one by one.
  if (rule.count === null && from.getTime() - 1 > (last ?? rule.startAt).getTime() && from > rule.startAt) {
    last = new Date(from.getTime() - 1);
    jumped = true;
  }
  for (;;) {
    const at = nextOccurrence(rule, n, last);
    if (!at || at >= to || out.length >= limit) return out;
    if (at >= from) out.push({ index: jumped ? null : n, at });
    n++;
    last = at;
  }
}
