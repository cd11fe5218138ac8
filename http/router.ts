// The Elysia instances of the API and the web app, and the body check both run on JSON bodies.
import { Elysia } from 'elysia';
import { errors } from '../lib/errors.ts';

/**
 * Every Elysia instance of the API and the web app. `normalize: false`: a body with a field the
 * schema does not name is refused (422), not silently stripped — a misspelt field must not be ignored.
 * `encodeSchema: false`: answers are checked against their schema by the compiled check, not
 * walked by TypeBox's Encode (the only transform in them, t.Integer, encodes as itself; the walk
 * costs a tenth of GET /v1/me's CPU, docs/decisions.md "Keys, admission, plans and quota").
 */
export const router = (name?: string) => new Elysia({ normalize: false, encodeSchema: false, ...(name ? { name } : {}) });

/** The deepest nesting a JSON body may have; no request schema goes past 3 levels. */
export const MAX_BODY_DEPTH = 32;

/**
 * A route's `transform`: it runs after parsing and before schema validation, and refuses (422)
 * JSON bodies that no schema of the API accepts but that would otherwise end in a 500:
 * - nested thousands of levels deep, or holding an object with its own `toString` member:
 *   Elysia's ValidationError turns the offending value into text while it is built (`${value}`,
 *   JSON.stringify), which overflows the stack or throws "No default value";
 * - a string (value or key) with NUL or an unpaired surrogate: Postgres jsonb refuses both
 *   (`reddit`, `contentByPlatform`, the stored Idempotency-Key response), text refuses NUL
 *   (`channelIds`) and silently turns an unpaired surrogate into U+FFFD.
 */
export function refuseUnstorableBody({ body }: { body: unknown }): void {
  const found = findUnstorable(body, 0);
  if (found) {
    // The path may hold such characters itself: show them as U+FFFD.
    const path = found.path.reverse().join('.').replace(UNSTORABLE_ALL, '\ufffd');
    throw errors.validation([{ path, message: found.message }]);
  }
}

const BAD_TEXT = 'must not contain NUL or unpaired surrogate characters';

/** The first offending place (its path in reverse), or undefined. Recursion stops at MAX_BODY_DEPTH. */
function findUnstorable(value: unknown, depth: number): { path: string[]; message: string } | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? { path: [], message: BAD_TEXT } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_BODY_DEPTH) return { path: [], message: `is nested more than ${MAX_BODY_DEPTH} levels deep` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === null || (typeof item !== 'object' && typeof item !== 'string')) continue;
      const found = findUnstorable(item, depth + 1);
      if (found) {
        found.path.push(String(i));
        return found;
      }
    }
    return undefined;
  }
  if (Object.hasOwn(value, 'toString')) return { path: ['toString'], message: 'is not a field of this request' };
  for (const [k, v] of Object.entries(value)) {
    if (UNSTORABLE.test(k)) return { path: [k], message: BAD_TEXT };
    const found = findUnstorable(v, depth + 1);
    if (found) {
      found.path.push(k);
      return found;
    }
  }
  return undefined;
}

/** NUL, or a high surrogate without its low half, or a low one without its high half. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');
