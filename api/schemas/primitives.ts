// The pieces every schema of the API is made of: shape helpers (exact objects, date-times,
// nullable values, fixed lists) and the request values whose rules the server enforces.
import { t } from 'elysia';
import type { TSchema } from '@sinclair/typebox';
import { DATE_TIME_MESSAGE, DATE_TIME_PATTERN } from '../../lib/date-time.ts';

export const strict = { additionalProperties: false } as const;
export const DateTime = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) });
export const NullableDateTime = (description: string) => t.Union([t.String({ format: 'date-time' }), t.Null()], { description });
export const NullableString = (description: string) => t.Union([t.String(), t.Null()], { description });
export const NullableInteger = (description: string) => t.Union([t.Integer(), t.Null()], { description });
/**
 * A string from a fixed list. The list is a documentation keyword here (TypeBox checks only that
 * it is a string): the values come from Postgres enum columns, and the views type them as string.
 */
export const oneOf = (values: readonly string[], description?: string) =>
  t.String({ enum: [...values], ...(description ? { description } : {}) });

// ---------------------------------------------------------------------------------------------
// Request values. Each rule the server enforces on a value is a keyword here, checked by TypeBox
// when the request is validated and shown by the OpenAPI document (api/openapi), so the two
// cannot differ (docs/decisions.md "The OpenAPI document"). `error` is the message a refusal
// gives (http/errors.ts); the document drops it.

import { BodyId, Chars, MAX_CHARS } from '../../lib/chars.ts';

export { BodyId, Chars, MAX_CHARS };
/** The same as a Chars character, NUL allowed (path ids: an unknown id is a 404 whatever it holds). */
const CHAR_OR_NUL = '(?:[^\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])';

/** A path id: 1–64 characters. Anything else of that length is a 404; `.` and `..` cannot be sent in a URL path. */
export const PathId = (description?: string) =>
  t.String({
    pattern: `^(?!\\.{1,2}$)${CHAR_OR_NUL}{1,64}$`,
    minLength: 1,
    [MAX_CHARS]: 64,
    error: 'must be 1 to 64 characters',
    ...(description ? { description } : {}),
  });

/** The date-times the API reads (lib/date-time.ts): RFC 3339 with an offset. */
export const DateTimeInput = (description?: string) =>
  t.String({
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
    error: DATE_TIME_MESSAGE,
    ...(description ? { description } : {}),
  });

/** The pieces of HTTP_URL_PATTERN (RFC 3986's grammar, narrowed to what the server parses). */
const HEX16 = '[0-9A-Fa-f]{1,4}';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
/** RFC 3986's IPv6address without its embedded-IPv4 forms, some of which Bun's URL parser refuses. */
const IPV6 = [
  `(?:${HEX16}:){7}${HEX16}`,
  `::(?:${HEX16}:){0,6}${HEX16}`,
  ...[1, 2, 3, 4, 5, 6].map((head) => `(?:${HEX16}:){0,${head - 1}}${HEX16}::(?:(?:${HEX16}:){0,${6 - head}}${HEX16})?`),
  `(?:${HEX16}:){0,6}${HEX16}::`,
  '::',
].join('|');
/** A label of letters, digits and inner hyphens; the last one starts with a letter (one ending in digits is read as an IPv4 address). */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const LAST_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const URL_CHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})";

/**
 * An http(s) URL as the server parses it (WHATWG URL, services/webhooks.ts): a lower-case scheme,
 * a host name, IPv4 or [IPv6] address, a port up to 65535, no user name or password, ASCII only
 * (anything else percent-encoded). Every string it matches parses as such a URL, except a host
 * label `xn--…` that is not valid Punycode, which no pattern can tell (stated in words).
 */
export const HTTP_URL_PATTERN =
  `^https?://(?:(?:${LABEL}\\.)*${LAST_LABEL}\\.?|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?` +
  `(?:/${URL_CHAR}*)*(?:\\?(?:${URL_CHAR}|[/?])*)?(?:#(?:${URL_CHAR}|[/?])*)?$`;

/** An http(s) URL of at most `max` characters (ASCII: UTF-16 units and code points agree, so maxLength is exact). */
export const HttpUrl = (max: number, description?: string) =>
  t.String({
    format: 'uri',
    pattern: HTTP_URL_PATTERN,
    minLength: 1,
    maxLength: max,
    error: `must be an http(s) URL of at most ${max} characters: a host name or IP address, an optional port, no user name or password, non-ASCII characters percent-encoded`,
    ...(description ? { description } : {}),
  });

/** An object of exactly these fields. */
export const Named = (fields: Record<string, TSchema>) => t.Object(fields, strict);
