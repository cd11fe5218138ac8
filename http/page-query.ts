// The query parameters of a list (GET /v1/posts, /drafts, the webhook delivery log, the audit
// log): `limit` 1–100 (default 20), an opaque base64url `cursor` and the `tagId` filter, with the
// same messages everywhere.
import { t } from 'elysia';
import { Chars } from '../lib/chars.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { parseRangeBound } from '../lib/date-time.ts';

export const DEFAULT_PAGE_LIMIT = 20;

/** Read by parseLimit: t.Numeric reports range errors with an empty field path. */
export const LimitParam = () => t.Optional(t.String({ maxLength: 16 }));

/** Opaque: only a `nextCursor` this API returned (each list decodes its own). */
export const CursorParam = () => t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]{0,512}$', error: 'is not a cursor returned by this API' }));

/**
 * The tag a list narrows to (GET /v1/posts, /drafts, /series, /feeds, /analytics): any id the
 * organization's tags may have; one that names none of them matches nothing (an empty list, not a
 * refusal, as an unknown `channelId`), so no list tells one organization's tag ids from another's.
 */
export const TagIdParam = () => t.Optional(Chars(64, { min: 1 }));

/** The page size; a value outside 1–100 adds its field error and gives the default. */
export function parseLimit(value: string | undefined, fields: FieldError[]): number {
  if (value === undefined) return DEFAULT_PAGE_LIMIT;
  const n = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 100)) {
    fields.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
    return DEFAULT_PAGE_LIMIT;
  }
  return n;
}

/** A list's time bounds (`from`, `to`) and page size, each checked; every problem in one 422. */
export function parseTimePage(query: { from?: string; to?: string; limit?: string }): { from?: Date; to?: Date; limit: number } {
  const fields: FieldError[] = [];
  const from = parseRangeBound(query.from, 'from', fields);
  const to = parseRangeBound(query.to, 'to', fields);
  const limit = parseLimit(query.limit, fields);
  if (fields.length) throw errors.validation(fields);
  return { from, to, limit };
}
