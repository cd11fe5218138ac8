// Reading platform answers of unknown shape: the parse that never throws, a path into nested
// objects, the "a usable string or nothing" readers every connector needs, and the type an
// answer is read as.
import type { Metric, PlatformMetrics } from './types.ts';

/**
 * An answer as read: its platform's published (or documented) shape, any part of which may be
 * missing or null, so each value is still checked before use.
 */
export type Answer<T> = T extends readonly (infer U)[] ? Answer<U>[] : T extends object ? { [K in keyof T]?: Answer<T[K]> | null } : T;

/** Parsed JSON, or null when the text is empty or not JSON. */
export function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The value at keys[0].keys[1]…, or undefined where a step is not an object. */
export function dig(v: unknown, ...keys: string[]): unknown {
  for (const k of keys) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A non-empty string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/** Like str, and a number as its decimal text (Graph APIs send some ids as numbers). */
export function strOrNumber(v: unknown): string | undefined {
  return typeof v === 'number' ? String(v) : str(v);
}

/** The platform's counters under our metric names: each a non-negative number where the answer has one. */
export function counts(obj: Record<string, unknown>, names: Partial<Record<Metric, string>>): PlatformMetrics {
  const out: PlatformMetrics = {};
  for (const [metric, field] of Object.entries(names) as [Metric, string][]) {
    const v = obj[field];
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
    if (n !== undefined && Number.isFinite(n) && n >= 0) out[metric] = n;
  }
  return out;
}
