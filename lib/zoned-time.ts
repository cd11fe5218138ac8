// Wall time in an IANA time zone ↔ instants, with Intl only (no library), for everything that
// takes a local time: the web app's composer and calendar (a person's zone) and posting slots
// (a channel's zone). Daylight-saving changes are defined, as Temporal's "compatible" rule:
// - a wall time in a gap (the skipped hour) is moved forward by the gap's length
//   (02:30 on the spring-forward day in New York → 03:30 EDT);
// - a wall time in an overlap (the repeated hour) is the earlier of its two instants.
import type { FieldError } from './errors.ts';

/** The days of the week, Monday first (ISO 8601 numbers them 1–7 in this order). */
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The longest IANA time zone name taken, in characters (request schemas bound a zone's field with it). */
export const TIME_ZONE_CHARS = 64;

export function isTimeZone(tz: string | null | undefined): tz is string {
  if (!tz || tz.length > TIME_ZONE_CHARS || !/^[A-Za-z0-9_+\-/]+$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The zone's canonical spelling as Intl knows it ("america/new_york" → "America/New_York"). */
export function canonicalTimeZone(tz: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
}

/** What a zone that is not an IANA zone is told, wherever it was given (a queue, a series, a person's setting). */
export const TIME_ZONE_MESSAGE = 'must be an IANA time zone, e.g. Europe/Berlin';

/** The zone in its canonical spelling; undefined (and TIME_ZONE_MESSAGE at `path`) when `value` is not an IANA zone. */
export function checkTimeZone(value: unknown, path: string, fields: FieldError[]): string | undefined {
  if (typeof value === 'string' && isTimeZone(value)) return canonicalTimeZone(value);
  fields.push({ path, message: TIME_ZONE_MESSAGE });
  return undefined;
}

const partsFormatters = new Map<string, Intl.DateTimeFormat>();
function partsFormatter(tz: string): Intl.DateTimeFormat {
  let f = partsFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    partsFormatters.set(tz, f);
  }
  return f;
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export type WallTimeInput = Omit<WallTime, 'second'> & { second?: number };

/** The wall time (to the second) an instant shows in the zone. */
export function zonedParts(d: Date, tz: string): WallTime {
  const out: Record<string, number> = {};
  for (const p of partsFormatter(tz).formatToParts(d)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour! % 24, minute: out.minute!, second: out.second! };
}

/** The zone's offset from UTC at this instant, in ms (whole seconds). */
export function offsetMs(d: Date, tz: string): number {
  const p = zonedParts(d, tz);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - (d.getTime() - d.getUTCMilliseconds());
}

const DAY_MS = 86_400_000;

export interface ResolvedWallTime {
  /** The instant used for the wall time (the rules above). */
  instant: Date;
  /** exact: the wall time happens once; gap: it never happens (skipped); overlap: it happens twice. */
  kind: 'exact' | 'gap' | 'overlap';
  /** In an overlap: the second (later) instant. */
  later?: Date;
}

/** Every instant that shows this wall time in the zone, with the rules above for gaps and overlaps. */
export function resolveWallTime(w: WallTimeInput, tz: string): ResolvedWallTime {
  const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second ?? 0);
  // The offsets in force around the wall time (a day either side covers any one transition).
  const before = offsetMs(new Date(wall - DAY_MS), tz);
  const after = offsetMs(new Date(wall + DAY_MS), tz);
  const offsets = [...new Set([before, offsetMs(new Date(wall), tz), after])];
  const matches = offsets
    .map((o) => wall - o)
    .filter((t) => {
      const p = zonedParts(new Date(t), tz);
      return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) === wall;
    })
    .sort((a, b) => a - b);
  const unique = [...new Set(matches)];
  if (unique.length >= 2) return { instant: new Date(unique[0]!), kind: 'overlap', later: new Date(unique.at(-1)!) };
  if (unique.length === 1) return { instant: new Date(unique[0]!), kind: 'exact' };
  // Skipped: read the wall time with the offset from before the change, which lands after it,
  // moved forward by the gap's length.
  return { instant: new Date(wall - before), kind: 'gap' };
}

/** The instant a wall time names in a zone (in a gap: moved forward by the gap; in an overlap: the earlier). */
export function zonedToUtc(w: WallTimeInput, tz: string): Date {
  return resolveWallTime(w, tz).instant;
}
