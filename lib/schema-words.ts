// What a schema allows, in words, read from the schema itself (its type, bounds, choices, format
// and pattern): the message of a refused value names the rule it broke, never only TypeBox's
// "Expected union value".
//
// Rules:
// - A missing required property "is required".
// - A property the schema does not know "is not a field of this body" (one per property).
// - A schema's own `error` (api/schemas.ts) comes next: it says the rule as its field's people read it.
// - Otherwise the words of the schema: choices ("one of a, b, c"), integer and number ranges,
//   string lengths, formats and patterns, list lengths, `null` where it is allowed.
import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { FieldError } from '../lib/errors.ts';
import { MAX_CHARS } from './chars.ts';

type Schema = TSchema & Record<string, unknown>;

const FORMATS: Record<string, string> = {
  'date-time': 'a date-time with an offset (ISO 8601, e.g. 2026-12-01T09:00:00Z)',
  date: 'a date (YYYY-MM-DD)',
  uri: 'an absolute URL',
  email: 'an e-mail address',
};

const range = (what: string, min?: unknown, max?: unknown) =>
  typeof min === 'number' && typeof max === 'number'
    ? `${what} from ${min} to ${max}`
    : typeof min === 'number'
      ? `${what} of at least ${min}`
      : typeof max === 'number'
        ? `${what} of at most ${max}`
        : what;

const quoted = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The values a union of constants (or an enum) allows; null when the schema is not one. */
function choices(s: Schema): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum as unknown[];
  if ('const' in s) return [s.const];
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!branches?.every((b) => 'const' in b || Array.isArray(b.enum))) return null;
  return branches.flatMap((b) => choices(b) ?? []);
}

/** What a value of this schema must be, without "must be". */
export function allowed(s: Schema): string {
  const listed = choices(s);
  if (listed) return listed.length === 1 ? quoted(listed[0]) : `one of ${listed.map(quoted).join(', ')}`;
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    // A number that may also come as its text (Elysia's t.Numeric in a query) is told as the number.
    const numeric = branches.some((b) => b.type === 'integer' || b.type === 'number');
    const told = branches.filter((b) => !(numeric && b.type === 'string' && (b.format === 'numeric' || b.format === 'integer')));
    return [...new Set(told.map(allowed))].join(', or ');
  }
  switch (s.type) {
    case 'null':
      return 'null';
    case 'boolean':
      return 'true or false';
    case 'integer':
      return range('an integer', s.minimum, s.maximum);
    case 'number':
      return range('a number', s.minimum ?? s.exclusiveMinimum, s.maximum);
    case 'string': {
      if (typeof s.format === 'string' && FORMATS[s.format]) return FORMATS[s.format]!;
      const { minLength: min, maxLength: max } = s;
      const sized =
        typeof min === 'number' && typeof max === 'number'
          ? `a text of ${min} to ${max} characters`
          : typeof max === 'number'
            ? `a text of at most ${max} characters`
            : typeof min === 'number'
              ? `a text of at least ${min} characters`
              : 'a text';
      return typeof s.pattern === 'string' ? `${sized} matching ${s.pattern}` : sized;
    }
    case 'array': {
      const items = s.items ? ` of ${allowed(s.items as Schema)}` : '';
      const count = range('a list', s.minItems, s.maxItems);
      return count === 'a list' ? `a list${items}` : `${count} items${items}`;
    }
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

/** A value error (TypeBox's, as Elysia hands it over) in words. */
export function errorWords(e: { type?: number; schema?: Schema; message?: string; summary?: string }): string {
  if (e.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return 'is not a field of this body';
  // A list of the wrong length: its count, not what each item must be (the items have their own errors).
  if (e.type === ValueErrorType.ArrayMaxItems || e.type === ValueErrorType.ArrayMinItems) {
    const { minItems: min, maxItems: max } = (e.schema ?? {}) as Schema;
    const count =
      typeof min === 'number' && typeof max === 'number'
        ? `${min} to ${max}`
        : typeof max === 'number'
          ? `at most ${max}`
          : `at least ${min}`;
    return `must be a list of ${count} items`;
  }
  if (typeof e.schema?.error === 'string') return e.schema.error;
  if (e.schema && (e.schema.type || e.schema.anyOf || e.schema.oneOf || e.schema.enum || 'const' in e.schema)) {
    return `must be ${allowed(e.schema)}`;
  }
  return e.message ?? e.summary ?? 'invalid value';
}

/** A value error as TypeBox yields it (and Elysia's ValidationError lists it in `all`). */
export interface ValueProblem {
  type?: number;
  schema?: Schema;
  path?: string;
  value?: unknown;
  message?: string;
  summary?: string;
  /** A union's: each branch's errors, in the order of its `anyOf`. */
  errors?: Iterable<ValueProblem>[];
}

/**
 * A value given for a field that may also be null is checked as its non-null branch: its own
 * errors, at their own paths (`reddit.title`), not the union's "an object, or null" at `reddit`.
 */
function expandNullable(e: ValueProblem): ValueProblem[] {
  const other = e.schema ? valueBranch(e.schema) : undefined;
  if (e.type !== ValueErrorType.Union || e.value === null || other === undefined || !e.errors) return [e];
  const inner = [...(e.errors[other] ?? [])];
  return inner.length ? inner.flatMap(expandNullable) : [e];
}

/** Of a value that may be null (a union of one schema and null): the index of that one schema's branch. */
function valueBranch(s: Schema): number | undefined {
  const branches = s.anyOf as Schema[] | undefined;
  const others = branches?.flatMap((b, i) => (b.type === 'null' ? [] : [i])) ?? [];
  return others.length === 1 && others.length < branches!.length ? others[0] : undefined;
}

/** The schema of a value given for a field that may be null (its branch that is not null); any other schema as it is. */
function unlessNull(s: Schema | undefined): Schema | undefined {
  const other = s ? valueBranch(s) : undefined;
  return other === undefined ? s : (s!.anyOf as Schema[])[other];
}

/**
 * Value errors as `details.fields`: paths as the API writes them (`channelIds.0`, after `prefix`),
 * one message per path, in words (errorWords), at most 50.
 */
export function fieldErrors(problems: Iterable<ValueProblem>, prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of [...problems].flatMap(expandNullable)) {
    const dotted = (e.path ?? '').replace(/^\//, '').replace(/\//g, '.');
    const path = prefix && dotted ? `${prefix}.${dotted}` : prefix || dotted;
    if (seen.has(path)) continue;
    seen.add(path);
    out.push({ path, message: errorWords(e) });
    if (out.length === 50) break;
  }
  return out;
}

/**
 * The schema at a dotted path of an object schema, through its properties (and a field that may
 * be null: its object, as `reddit.title`); undefined when none.
 */
export function schemaAt(root: TSchema, path: string): Schema | undefined {
  let at: Schema | undefined = root as Schema;
  for (const key of path.split('.')) {
    const props = unlessNull(at)?.properties as Record<string, Schema> | undefined;
    at = props?.[key];
  }
  return at;
}

/** The value schema of a record (`t.Record`): its one pattern property's. */
export function recordValues(s: Schema | undefined): Schema | undefined {
  const patterns = s?.patternProperties as Record<string, Schema> | undefined;
  return patterns ? Object.values(patterns)[0] : undefined;
}

/** What a form's input takes of a schema's rules (boundsOf). */
export interface Bounds {
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  values?: string[];
}

/**
 * A schema's bounds, for a form's attributes: what the API checks, said once. A value that may be
 * null has the bounds of its schema; a text in characters (lib/chars.ts Chars) its `x-max-chars`
 * as maxLength (a browser counts UTF-16 units: stricter only for characters beyond the BMP).
 */
export function boundsOf(schema: Schema | undefined): Bounds {
  const s = unlessNull(schema);
  if (!s) return {};
  const listed = choices(s);
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : s[MAX_CHARS];
  return {
    ...(typeof maxLength === 'number' ? { maxLength } : {}),
    ...(typeof s.minimum === 'number' ? { minimum: s.minimum } : {}),
    ...(typeof s.maximum === 'number' ? { maximum: s.maximum } : {}),
    ...(typeof s.pattern === 'string' ? { pattern: s.pattern } : {}),
    ...(listed ? { values: listed.map(String) } : {}),
  };
}
