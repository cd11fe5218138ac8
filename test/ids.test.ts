// lib/ids.ts: the ULID rules stated at its top, checked against ulidx's reading of a ULID.
import { describe, expect, test } from 'bun:test';
import { decodeTime, isValid } from 'ulidx';
import { newId, ulid } from '../lib/ids.ts';

describe('ids', () => {
  test('a prefix, then 26 characters of lower-case Crockford base32 that carry the time of their making', () => {
    const before = Date.now();
    const id = newId('post');
    const after = Date.now();
    expect(id).toMatch(/^post_[0-9a-hjkmnp-tv-z]{26}$/);
    const part = id.slice('post_'.length);
    expect(isValid(part.toUpperCase())).toBe(true);
    const at = decodeTime(part.toUpperCase());
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
  });

  test('ids made one after another sort in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 50_000 }, () => ulid());
    const sameMs = ids.filter((id, i) => i > 0 && id.slice(0, 10) === ids[i - 1]!.slice(0, 10)).length;
    expect(sameMs).toBeGreaterThan(1000);
    for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) throw new Error(`${ids[i - 1]} then ${ids[i]}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('within one millisecond the random part goes up by one; a new millisecond draws a new one', () => {
    const value = (id: string) =>
      BigInt(`0b${[...id.slice(10)].map((c) => '0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c).toString(2).padStart(5, '0')).join('')}`);
    let steps = 0;
    let fresh = 0;
    let prev = ulid();
    for (let i = 0; i < 20_000; i++) {
      const id = ulid();
      if (id.slice(0, 10) === prev.slice(0, 10)) {
        expect(value(id) - value(prev)).toBe(1n);
        steps++;
      } else if (value(id) !== value(prev) + 1n) fresh++;
      prev = id;
    }
    expect(steps).toBeGreaterThan(100);
    expect(fresh).toBeGreaterThan(0);
  });

  test('a clock that steps back keeps the order: the last time is kept and the random part goes on', () => {
    const real = Date.now;
    try {
      const first = ulid();
      const t = decodeTime(first.toUpperCase());
      Date.now = () => t - 5_000;
      const second = ulid();
      expect(second > first).toBe(true);
      expect(decodeTime(second.toUpperCase())).toBe(t);
    } finally {
      Date.now = real;
    }
  });
});
