// Bounded text and ids in request schemas (the API's, the MCP tools', a post's content): lengths in characters.
import { t } from 'elysia';

/**
 * The document's `maxLength` of a `Chars` value. TypeBox counts a string's length in UTF-16
 * units and JSON Schema in code points: the pattern bounds the length in characters the same way
 * in both (a surrogate pair is one character either way), and the document shows it as maxLength.
 */
export const MAX_CHARS = 'x-max-chars';

/** One character: no NUL (Postgres text refuses it) and no unpaired surrogate (jsonb refuses it). */
const CHAR = '(?:[^\\u0000\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])';

/** Text of `min` (0 or 1) to `max` characters. */
export const Chars = (max: number, opts: { min?: 0 | 1; description?: string } = {}) =>
  t.String({
    pattern: `^${CHAR}{${opts.min ?? 0},${max}}$`,
    ...(opts.min ? { minLength: 1 } : {}),
    [MAX_CHARS]: max,
    error: `must be ${opts.min ? `1 to ${max}` : `at most ${max}`} characters, without NUL or unpaired surrogate characters`,
    ...(opts.description ? { description: opts.description } : {}),
  });

/** An id in a body (channels, media items): the ids the API hands out are letters, digits and `_`. */
export const BodyId = (description?: string) =>
  t.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_]+$',
    error: 'must be an id: 1 to 64 letters, digits or _',
    ...(description ? { description } : {}),
  });
