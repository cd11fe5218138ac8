// Posting-queue slot times (domain/queues/slots.ts), pure: weekly local slots → instants, with
// daylight-saving changes in two zones that have them and one that does not.
import { describe, expect, test } from 'bun:test';
import { commonSlotInstants, normalizeSlots, slotInstants, type QueueSlotInput } from '../domain/queues/slots.ts';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());
const between = (slots: QueueSlotInput[], tz: string, after: string, until: string) =>
  iso(slotInstants(slots, tz, new Date(after), new Date(until)));

describe('America/New_York', () => {
  test('a 09:00 slot stays 09:00 local across spring forward (2026-03-08) and fall back (2026-11-01)', () => {
    const slots: QueueSlotInput[] = [{ weekday: 'sunday', time: '09:00' }];
    expect(between(slots, 'America/New_York', '2026-02-28T00:00:00Z', '2026-03-16T00:00:00Z')).toEqual([
      '2026-03-01T14:00:00.000Z', // EST (-5)
      '2026-03-08T13:00:00.000Z', // EDT (-4), the day of the change
      '2026-03-15T13:00:00.000Z',
    ]);
    expect(between(slots, 'America/New_York', '2026-10-24T00:00:00Z', '2026-11-09T00:00:00Z')).toEqual([
      '2026-10-25T13:00:00.000Z', // EDT
      '2026-11-01T14:00:00.000Z', // EST, the day of the change
      '2026-11-08T14:00:00.000Z',
    ]);
  });

  test('a slot in the skipped hour moves forward by the gap; one that lands on another slot counts once', () => {
    const slots: QueueSlotInput[] = [
      { weekday: 'sunday', time: '02:30' },
      { weekday: 'sunday', time: '03:30' },
    ];
    expect(between(slots, 'America/New_York', '2026-03-07T00:00:00Z', '2026-03-09T00:00:00Z')).toEqual([
      // 02:30 does not exist on 2026-03-08: → 03:30 EDT, the same instant as the 03:30 slot.
      '2026-03-08T07:30:00.000Z',
    ]);
    expect(between([slots[0]!], 'America/New_York', '2026-02-28T00:00:00Z', '2026-03-16T00:00:00Z')).toEqual([
      '2026-03-01T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:30:00.000Z', // 03:30 EDT (moved)
      '2026-03-15T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  test('a slot in the repeated hour is used once, at its first instant', () => {
    // 01:30 happens twice on 2026-11-01: 05:30Z (EDT) and 06:30Z (EST).
    expect(between([{ weekday: 'sunday', time: '01:30' }], 'America/New_York', '2026-10-31T12:00:00Z', '2026-11-02T00:00:00Z')).toEqual([
      '2026-11-01T05:30:00.000Z',
    ]);
  });
});

describe('Europe/Berlin', () => {
  test('a 09:00 slot stays 09:00 local across 2026-03-29 and 2026-10-25', () => {
    const slots: QueueSlotInput[] = [{ weekday: 'sunday', time: '09:00' }];
    expect(between(slots, 'Europe/Berlin', '2026-03-21T00:00:00Z', '2026-03-30T00:00:00Z')).toEqual([
      '2026-03-22T08:00:00.000Z', // CET (+1)
      '2026-03-29T07:00:00.000Z', // CEST (+2)
    ]);
    expect(between(slots, 'Europe/Berlin', '2026-10-17T00:00:00Z', '2026-10-26T00:00:00Z')).toEqual([
      '2026-10-18T07:00:00.000Z', // CEST
      '2026-10-25T08:00:00.000Z', // CET
    ]);
  });

  test('skipped hour (02:30 on 2026-03-29 → 03:30 CEST) and repeated hour (02:30 on 2026-10-25, once)', () => {
    const slots: QueueSlotInput[] = [{ weekday: 'sunday', time: '02:30' }];
    expect(between(slots, 'Europe/Berlin', '2026-03-28T12:00:00Z', '2026-03-30T00:00:00Z')).toEqual(['2026-03-29T01:30:00.000Z']);
    expect(between(slots, 'Europe/Berlin', '2026-10-24T12:00:00Z', '2026-10-26T00:00:00Z')).toEqual(['2026-10-25T00:30:00.000Z']);
  });
});

describe('Asia/Tokyo (no daylight saving)', () => {
  test('09:00 is always 00:00Z, on the local weekday', () => {
    // 2026-03-09 is a Monday; 09:00 Monday in Tokyo is 00:00Z the same date.
    expect(between([{ weekday: 'monday', time: '09:00' }], 'Asia/Tokyo', '2026-03-01T00:00:00Z', '2026-03-24T00:00:00Z')).toEqual([
      '2026-03-02T00:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
      '2026-03-16T00:00:00.000Z',
      '2026-03-23T00:00:00.000Z',
    ]);
    // 07:00 Monday in Tokyo is Sunday 22:00Z: the local weekday decides.
    expect(between([{ weekday: 'monday', time: '07:00' }], 'Asia/Tokyo', '2026-03-01T00:00:00Z', '2026-03-03T00:00:00Z')).toEqual([
      '2026-03-01T22:00:00.000Z',
    ]);
  });
});

describe('slot lists', () => {
  test('only instants strictly after `after` and at most `until`, ascending', () => {
    const slots: QueueSlotInput[] = [
      { weekday: 'wednesday', time: '18:00' },
      { weekday: 'wednesday', time: '08:00' },
    ];
    // 2026-03-04 is a Wednesday.
    expect(between(slots, 'UTC', '2026-03-04T08:00:00Z', '2026-03-11T08:00:00Z')).toEqual([
      '2026-03-04T18:00:00.000Z',
      '2026-03-11T08:00:00.000Z',
    ]);
  });

  test('common instants of channels in different zones', () => {
    const ny = { slots: [{ weekday: 'monday', time: '09:00' }] as QueueSlotInput[], timeZone: 'America/New_York' };
    const berlin = { slots: [{ weekday: 'monday', time: '15:00' }] as QueueSlotInput[], timeZone: 'Europe/Berlin' };
    // 09:00 New York = 15:00 Berlin except in the weeks the two zones change on different dates
    // (2026-03-09 … 03-28: New York already on EDT, Berlin still on CET: 09:00 NY = 14:00 Berlin).
    expect(iso(commonSlotInstants([ny, berlin], new Date('2026-03-01T00:00:00Z'), new Date('2026-04-07T00:00:00Z')))).toEqual([
      '2026-03-02T14:00:00.000Z',
      '2026-03-30T13:00:00.000Z',
      '2026-04-06T13:00:00.000Z',
    ]);
  });

  test('normalizeSlots sorts (Monday first, then time) and drops repeats', () => {
    expect(
      normalizeSlots([
        { weekday: 'sunday', time: '08:00' },
        { weekday: 'monday', time: '10:00' },
        { weekday: 'monday', time: '09:00' },
        { weekday: 'monday', time: '10:00' },
      ]),
    ).toEqual([
      { weekday: 'monday', time: '09:00' },
      { weekday: 'monday', time: '10:00' },
      { weekday: 'sunday', time: '08:00' },
    ]);
  });
});
