// Date-times with an offset, as every interface reads them (the API, the MCP tools, the web app's
// JSON routes): one pattern for the schemas (TypeBox, the OpenAPI document, the tools' JSON Schema)
// and one parser for the code, so a value one of them takes is a value all of them take, and a
// refused one gets the same message everywhere.
import type { FieldError } from './errors.ts';

/**
 * RFC 3339 (`format: date-time`) with an upper-case `T`, an offset (`Z` or ±hh:mm), seconds 00–59
 * and at most 9 fraction digits. One without seconds is taken too, which RFC 3339 does not allow.
 */
export const DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(?::[0-5]\\d(?:\\.\\d{1,9})?)?(?:Z|[+-]\\d{2}:\\d{2})$';
const DATE_TIME = new RegExp(DATE_TIME_PATTERN);

/** What a refused date-time is told, wherever it was given. */
export const DATE_TIME_MESSAGE = 'must be an ISO 8601 date-time with an offset, e.g. 2026-12-01T09:00:00Z';

/** The instant `value` names; undefined (and DATE_TIME_MESSAGE at `path`) when it is not a date-time with an offset. */
export function parseInstant(value: string, path: string, fields: FieldError[]): Date | undefined {
  const at = DATE_TIME.test(value) ? new Date(value) : undefined;
  if (at && !Number.isNaN(at.getTime())) return at;
  fields.push({ path, message: DATE_TIME_MESSAGE });
  return undefined;
}

/** The instants Postgres stores: years 1–9999. */
export const EARLIEST_STORABLE = new Date('0001-01-01T00:00:00Z');
export const LATEST_STORABLE = new Date('9999-12-31T23:59:59.999Z');

/**
 * A bound of a time-range filter (`from`, `to`). Postgres cannot take an instant outside the years
 * it stores (a 500), and a bound beyond them excludes nothing, so it becomes the nearest one it stores.
 */
export function parseRangeBound(value: string | undefined, path: string, fields: FieldError[]): Date | undefined {
  if (value === undefined) return undefined;
  const at = parseInstant(value, path, fields);
  if (!at) return undefined;
  return at < EARLIEST_STORABLE ? EARLIEST_STORABLE : at > LATEST_STORABLE ? LATEST_STORABLE : at;
}
