// The rules of domain/inbox/collection.ts: when a post's comments are read, and a conversation's tree.
import { describe, expect, test } from 'bun:test';
import { CADENCE, conversation, FOLLOW_FOR, nextReadAt, RETRY_AFTER } from '../domain/inbox/collection.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const published = new Date('2026-11-01T12:00:00Z');
const at = (ms: number) => new Date(published.getTime() + ms);

describe('comment reads', () => {
  test('more often while young: 5 min in the first hour, 15 min to 6 h, hourly to a day, 6-hourly to a week, daily to 30 days', () => {
    expect(CADENCE.map((b) => [b.until, b.every])).toEqual([
      [HOUR, 5 * MINUTE],
      [6 * HOUR, 15 * MINUTE],
      [DAY, HOUR],
      [7 * DAY, 6 * HOUR],
      [30 * DAY, DAY],
    ]);
    expect(nextReadAt(published, at(MINUTE), true)).toEqual(at(6 * MINUTE));
    expect(nextReadAt(published, at(30 * MINUTE), true)).toEqual(at(35 * MINUTE));
    expect(nextReadAt(published, at(2 * HOUR), true)).toEqual(at(2 * HOUR + 15 * MINUTE));
    expect(nextReadAt(published, at(10 * HOUR), true)).toEqual(at(11 * HOUR));
    expect(nextReadAt(published, at(3 * DAY), true)).toEqual(at(3 * DAY + 6 * HOUR));
    expect(nextReadAt(published, at(10 * DAY), true)).toEqual(at(11 * DAY));
  });

  test('the whole life of a post: reads until the last one at 30 days, then none', () => {
    // Found by the sweep a minute after it was published.
    let t: Date | null = at(MINUTE);
    const reads: Date[] = [];
    while (t && reads.length < 10_000) {
      reads.push(t);
      t = nextReadAt(published, t, true);
    }
    expect(reads.at(-1)).toEqual(at(FOLLOW_FOR));
    // 12 in the first hour (at 1, 6, …, 56 min), 20 to 6 h, 18 to a day, 24 to a week, 23 to 30 days, and the last at 30 days.
    expect(reads.filter((r) => r < at(HOUR))).toHaveLength(12);
    expect(reads).toHaveLength(12 + 20 + 18 + 24 + 23 + 1);
    expect(nextReadAt(published, at(FOLLOW_FOR), true)).toBeNull();
  });

  test('a failed read is tried again after 15 minutes, or sooner when the cadence says so; never past 30 days', () => {
    expect(RETRY_AFTER).toBe(15 * MINUTE);
    expect(nextReadAt(published, at(10 * DAY), false)).toEqual(at(10 * DAY + 15 * MINUTE));
    expect(nextReadAt(published, at(10 * MINUTE), false)).toEqual(at(15 * MINUTE));
    expect(nextReadAt(published, at(FOLLOW_FOR - MINUTE), false)).toEqual(at(FOLLOW_FOR));
    expect(nextReadAt(published, at(FOLLOW_FOR + DAY), false)).toBeNull();
  });
});

describe('a conversation', () => {
  const c = (id: string, parent: string, minute: number) => ({
    platformCommentId: id,
    parentPlatformId: parent,
    createdAt: at(minute * MINUTE).toISOString(),
  });
  const shape = (nodes: ReturnType<typeof conversation>): unknown => nodes.map((n) => [n.platformCommentId, shape(n.replies)]);

  test('each comment under what it answers, each level in the order written; answers to the post or to what is not shown at the top', () => {
    const tree = conversation([
      c('d', 'b', 4),
      c('b', 'post', 2),
      c('a', 'post', 1),
      c('e', 'item-2', 5),
      c('c', 'a', 3),
      c('f', 'gone', 0),
    ]);
    expect(shape(tree)).toEqual([
      ['f', []],
      ['a', [['c', []]]],
      ['b', [['d', []]]],
      ['e', []],
    ]);
  });

  test('comments answering themselves or each other are put at the top, not lost in a loop', () => {
    const tree = conversation([c('x', 'x', 1), c('y', 'z', 2), c('z', 'y', 3)]);
    expect(shape(tree)).toEqual([
      ['x', []],
      ['y', []],
      ['z', []],
    ]);
  });
});
