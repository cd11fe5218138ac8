// Opaque, sortable ids: a type prefix and a ULID in lower case (time-ordered, so ids sort by
// creation). The rules of the ULID part (https://github.com/ulid/spec):
//   - 26 characters of Crockford's base32 (0-9, a-z without i, l, o, u): 10 for the time in
//     milliseconds since the epoch, 16 for 80 random bits;
//   - monotonic within a process: an id made in the same millisecond as the one before (or while
//     the clock stands behind it) keeps that time and takes the random part plus one, so ids of
//     one process sort in the order they were made;
//   - the random part of a new millisecond comes from the system's secure random source.
// Every request makes at least one (its request id), so the work is a few array writes: the time's
// characters are kept for the millisecond, the random ones as digits that the increment carries.
import { createHash, randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'org'
  | 'key'
  | 'ch'
  | 'post'
  | 'pc'
  | 'med'
  | 'req'
  | 'wh'
  | 'evt'
  | 'whd'
  | 'ser'
  | 'pm'
  | 'pci'
  | 'mem'
  | 'inv'
  | 'aud'
  | 'plk'
  | 'feed'
  | 'cmt'
  | 'rpl'
  | 'tag'
  | 'drf'
  | 'usr';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/** Random bytes drawn in blocks (one system call per 256 new milliseconds). */
const pool = new Uint8Array(RANDOM_CHARS * 256);
let poolAt = pool.length;
/** The random part as base32 digits, most significant first. */
const digits = new Uint8Array(RANDOM_CHARS);
let lastMs = -1;
let timePart = '';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function freshRandom(): void {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = pool[poolAt++]! & 31;
}

/** The random part plus one; false when it was all ones (2^80 ids in one millisecond). */
function increment(): boolean {
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    if (digits[i] !== 31) {
      digits[i]!++;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}

/** A new ULID, lower case (rules above). */
export function ulid(): string {
  const now = Date.now();
  if (now > lastMs || !increment()) {
    lastMs = Math.max(now, lastMs + (now > lastMs ? 0 : 1));
    timePart = encodeTime(lastMs);
    freshRandom();
  }
  let out = timePart;
  for (let i = 0; i < RANDOM_CHARS; i++) out += ALPHABET[digits[i]!];
  return out;
}

/** What an id of this kind looks like, as a regular expression's source (anchored). */
export const idPattern = (prefix: IdPrefix): string => `^${prefix}_[${ALPHABET}]{${TIME_CHARS + RANDOM_CHARS}}$`;

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

/**
 * An id of the prefix's shape fixed by `seed` (the same seed, the same id): a retried request's
 * row meets the row its first attempt wrote. Its characters come from a SHA-256 of the seed, so
 * it does not sort by time.
 */
export function seededId(prefix: IdPrefix, seed: string): string {
  const hash = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < TIME_CHARS + RANDOM_CHARS; i++) out += ALPHABET[hash[i]! & 31];
  return `${prefix}_${out}`;
}
