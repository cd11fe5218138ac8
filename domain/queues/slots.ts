// Posting-queue slot times, pure (no database): a channel's weekly slots (weekday + local HH:MM)
// in its IANA zone → the instants they fall on. Daylight-saving rules (lib/zoned-time.ts):
// a 09:00 slot stays 09:00 local across a change; a slot in the skipped hour moves forward by the
// gap (02:30 on New York's spring-forward day → 03:30 EDT); a slot in the repeated hour is used
// once, at its first (earlier) instant. Two slots that land on one instant count once.
import { resolveWallTime, WEEKDAYS, zonedParts, type Weekday } from '../../lib/zoned-time.ts';

/** A weekly slot as the API shows it. */
export interface QueueSlotInput {
  weekday: Weekday;
  /** Local wall time, `HH:MM` (00:00–23:59). */
  time: string;
}

export const SLOT_TIME_PATTERN = '^([01]\\d|2[0-3]):[0-5]\\d$';
const SLOT_TIME = new RegExp(SLOT_TIME_PATTERN);

export function isSlotTime(time: string): boolean {
  return SLOT_TIME.test(time);
}

/** ISO weekday number (1 = Monday … 7 = Sunday) ↔ name. */
export const weekdayNumber = (w: Weekday): number => WEEKDAYS.indexOf(w) + 1;
export const weekdayName = (n: number): Weekday => WEEKDAYS[n - 1]!;

/** Slots sorted by weekday, then time; duplicates dropped. */
export function normalizeSlots(slots: QueueSlotInput[]): QueueSlotInput[] {
  const seen = new Set<string>();
  const out: QueueSlotInput[] = [];
  for (const s of slots) {
    const k = `${weekdayNumber(s.weekday)} ${s.time}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(s);
  }
  return out.sort((a, b) => weekdayNumber(a.weekday) - weekdayNumber(b.weekday) || (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

const DAY_MS = 86_400_000;

/**
 * Every slot instant strictly after `after` and at or before `until`, ascending, without repeats.
 * Walks the zone's local calendar days from the one `after` falls on; each day's slots are read as
 * wall times of that day (so they follow the day's offset, DST included).
 */
export function slotInstants(slots: QueueSlotInput[], timeZone: string, after: Date, until: Date): Date[] {
  if (!slots.length || until <= after) return [];
  const byDay = new Map<number, { hour: number; minute: number }[]>();
  for (const s of slots) {
    const [hour, minute] = s.time.split(':').map(Number) as [number, number];
    const n = weekdayNumber(s.weekday);
    byDay.set(n, [...(byDay.get(n) ?? []), { hour, minute }]);
  }
  const start = zonedParts(after, timeZone);
  // A local calendar day as a UTC midnight: stepping it by 24 h walks the zone's dates exactly.
  let day = Date.UTC(start.year, start.month - 1, start.day);
  const out = new Set<number>();
  // One day beyond the last: a slot early on the next local day may still fall before `until`.
  const lastDay = (() => {
    const e = zonedParts(until, timeZone);
    return Date.UTC(e.year, e.month - 1, e.day) + DAY_MS;
  })();
  for (; day <= lastDay; day += DAY_MS) {
    const d = new Date(day);
    const isoWeekday = ((d.getUTCDay() + 6) % 7) + 1;
    for (const { hour, minute } of byDay.get(isoWeekday) ?? []) {
      const t = resolveWallTime(
        { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour, minute },
        timeZone,
      ).instant;
      if (t > after && t <= until) out.add(t.getTime());
    }
  }
  return [...out].sort((a, b) => a - b).map((t) => new Date(t));
}

/** The instants that are a slot of every one of these channels (their schedules in their own zones), ascending. */
export function commonSlotInstants(schedules: { slots: QueueSlotInput[]; timeZone: string }[], after: Date, until: Date): Date[] {
  if (!schedules.length) return [];
  const [first, ...rest] = schedules.map((s) => slotInstants(s.slots, s.timeZone, after, until));
  const others = rest.map((list) => new Set(list.map((d) => d.getTime())));
  return first!.filter((d) => others.every((set) => set.has(d.getTime())));
}
