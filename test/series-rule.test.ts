// When a series' occurrences fall (domain/series/rule.ts), pure: local time of day kept across
// daylight-saving changes, months clamped to their last day, until and count, rule edits.
import { describe, expect, test } from 'bun:test';
import { nextOccurrence, occurrencesBetween, ruleTime, type SeriesRule } from '../domain/series/rule.ts';

const rule = (r: Omit<Partial<SeriesRule>, 'startAt'> & { startAt: string }): SeriesRule => ({
  timeZone: 'UTC',
  every: 'day',
  interval: 1,
  until: null,
  count: null,
  ...r,
  startAt: new Date(r.startAt),
});
const times = (r: SeriesRule, n: number) => Array.from({ length: n }, (_, k) => ruleTime(r, k).toISOString());
/** Every occurrence the series would create, walking nextOccurrence as the workflow does. */
function walk(r: SeriesRule, max = 50): string[] {
  const out: string[] = [];
  let last: Date | null = null;
  for (let n = 0; n < max; n++) {
    const at = nextOccurrence(r, n, last);
    if (!at) break;
    out.push(at.toISOString());
    last = at;
  }
  return out;
}

describe('monthly', () => {
  test('on the 31st: the month’s last day when it is shorter, back to the 31st when it is not', () => {
    expect(times(rule({ startAt: '2027-01-31T09:00:00Z', every: 'month' }), 5)).toEqual([
      '2027-01-31T09:00:00.000Z',
      '2027-02-28T09:00:00.000Z',
      '2027-03-31T09:00:00.000Z',
      '2027-04-30T09:00:00.000Z',
      '2027-05-31T09:00:00.000Z',
    ]);
  });

  test('on the 29th across a leap February, and every 3 months over a year end', () => {
    expect(times(rule({ startAt: '2028-01-29T12:00:00Z', every: 'month' }), 3)).toEqual([
      '2028-01-29T12:00:00.000Z',
      '2028-02-29T12:00:00.000Z',
      '2028-03-29T12:00:00.000Z',
    ]);
    expect(times(rule({ startAt: '2026-11-30T08:00:00Z', every: 'month', interval: 3 }), 3)).toEqual([
      '2026-11-30T08:00:00.000Z',
      '2027-02-28T08:00:00.000Z',
      '2027-05-30T08:00:00.000Z',
    ]);
  });

  test('monthly at 09:00 in New York keeps 09:00 local across the March change', () => {
    expect(times(rule({ startAt: '2026-02-15T14:00:00Z', every: 'month', timeZone: 'America/New_York' }), 2)).toEqual([
      '2026-02-15T14:00:00.000Z',
      '2026-03-15T13:00:00.000Z',
    ]);
  });
});

describe('daily and weekly in a zone with daylight saving', () => {
  test('daily 09:00 Berlin across 2026-03-29', () => {
    expect(times(rule({ startAt: '2026-03-28T08:00:00Z', timeZone: 'Europe/Berlin' }), 3)).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
  });

  test('daily at 02:30 New York: the skipped hour moves to 03:30 that day only', () => {
    // 2026-03-07 02:30 EST = 07:30Z.
    expect(times(rule({ startAt: '2026-03-07T07:30:00Z', timeZone: 'America/New_York' }), 3)).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:30:00.000Z', // 03:30 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  test('every 2 weeks', () => {
    expect(times(rule({ startAt: '2026-12-01T10:00:00Z', every: 'week', interval: 2 }), 3)).toEqual([
      '2026-12-01T10:00:00.000Z',
      '2026-12-15T10:00:00.000Z',
      '2026-12-29T10:00:00.000Z',
    ]);
  });
});

describe('ends and edits', () => {
  test('count and until end the series, whichever comes first', () => {
    expect(walk(rule({ startAt: '2026-12-01T10:00:00Z', count: 3 }))).toHaveLength(3);
    expect(walk(rule({ startAt: '2026-12-01T10:00:00Z', until: new Date('2026-12-04T10:00:00Z') }))).toEqual([
      '2026-12-01T10:00:00.000Z',
      '2026-12-02T10:00:00.000Z',
      '2026-12-03T10:00:00.000Z',
      '2026-12-04T10:00:00.000Z',
    ]);
    expect(walk(rule({ startAt: '2026-12-01T10:00:00Z', until: new Date('2026-12-10T00:00:00Z'), count: 2 }))).toHaveLength(2);
  });

  test('a changed rule continues with its first time after the last occurrence created', () => {
    const weekly = rule({ startAt: '2026-12-01T10:00:00Z', every: 'week' });
    // Three daily occurrences were created (Dec 1–3); now weekly from the same anchor: next is Dec 8.
    expect(nextOccurrence(weekly, 3, new Date('2026-12-03T10:00:00Z'))?.toISOString()).toBe('2026-12-08T10:00:00.000Z');
    // The count includes what was created before the edit.
    expect(nextOccurrence({ ...weekly, count: 3 }, 3, new Date('2026-12-03T10:00:00Z'))).toBeNull();
  });

  test('occurrencesBetween lists the ones still to create in a window (the calendar)', () => {
    const daily = rule({ startAt: '2026-12-01T10:00:00Z' });
    expect(
      occurrencesBetween(
        daily,
        2,
        new Date('2026-12-02T10:00:00Z'),
        new Date('2026-12-01T00:00:00Z'),
        new Date('2026-12-05T00:00:00Z'),
      ).map((o) => [o.index, o.at.toISOString()]),
    ).toEqual([
      [2, '2026-12-03T10:00:00.000Z'],
      [3, '2026-12-04T10:00:00.000Z'],
    ]);
    // Far ahead without a count: found without walking every day in between.
    const far = occurrencesBetween(daily, 0, null, new Date('2036-12-01T00:00:00Z'), new Date('2036-12-03T00:00:00Z'));
    expect(far.map((o) => o.at.toISOString())).toEqual(['2036-12-01T10:00:00.000Z', '2036-12-02T10:00:00.000Z']);
  });
});
