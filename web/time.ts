// Time zones without a library: each person has a zone (users.time_zone; until set, the browser's
// from the pp_tz cookie); the server renders in it with Intl and converts local wall times
// (datetime-local inputs, calendar days) back to instants with lib/zoned-time.ts, whose rules for
// daylight-saving gaps and overlaps the posting slots share.
import { isTimeZone, WEEKDAYS, zonedParts, zonedToUtc, type WallTime, type Weekday } from '../lib/zoned-time.ts';

export { isTimeZone, WEEKDAYS, zonedParts, zonedToUtc, type WallTime, type Weekday };

export const DEFAULT_TZ = 'UTC';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD` of the instant in the zone. */
export function dayKey(d: Date, tz: string): string {
  const p = zonedParts(d, tz);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`;
}

/** The value of a datetime-local input: `YYYY-MM-DDTHH:mm`. */
export function localInputValue(d: Date, tz: string): string {
  const p = zonedParts(d, tz);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/** Parses a datetime-local value (`YYYY-MM-DDTHH:mm[:ss]`) in the zone; null when malformed. */
export function parseLocalInput(value: string, tz: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v))) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!) || hour! > 23 || minute! > 59 || second! > 59 || year! < 1)
    return null;
  return zonedToUtc({ year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: second! }, tz);
}

// Calendar days, as plain dates (no zone): `YYYY-MM-DD` strings and UTC-midnight arithmetic.
export interface CalendarDay {
  year: number;
  month: number;
  day: number;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function parseDayKey(key: string | null | undefined): CalendarDay | null {
  const m = key ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(key) : null;
  if (!m) return null;
  const [year, month, day] = m.slice(1).map(Number) as [number, number, number];
  if (year < 1970 || year > 9998 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

export const formatDayKey = (d: CalendarDay) => `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;

export function addDays(d: CalendarDay, n: number): CalendarDay {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** 0 = Monday … 6 = Sunday. */
export function weekday(d: CalendarDay): number {
  return (new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay() + 6) % 7;
}

export const startOfWeek = (d: CalendarDay) => addDays(d, -weekday(d));

/** Midnight at the start of the day in the zone. */
export const dayStart = (d: CalendarDay, tz: string) => zonedToUtc({ ...d, hour: 0, minute: 0 }, tz);

const asUtcDate = (d: CalendarDay) => new Date(Date.UTC(d.year, d.month - 1, d.day));

export const formatMonthTitle = (d: CalendarDay) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(asUtcDate(d));
export const formatDayTitle = (d: CalendarDay) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short' }).format(asUtcDate(d));
export const formatLongDay = (d: CalendarDay) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(
    asUtcDate(d),
  );

export const formatTime = (d: Date, tz: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d);
export const formatDateTime = (d: Date, tz: string) =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone: tz,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(d);

/** A weekday as the pages name it: "monday" → "Monday". */
export const weekdayLabel = (w: Weekday) => w[0]!.toUpperCase() + w.slice(1);
/** The calendar's column heads, Monday first. */
export const WEEKDAY_LABELS = WEEKDAYS.map(weekdayLabel);
