// fast-check arbitraries from the JSON Schemas of an OpenAPI 3.1 document: values the document
// calls valid, and nothing more is assumed about the server. Covers the keywords the document of
// /v1 uses (type, enum, const, anyOf/oneOf, properties/required/additionalProperties,
// patternProperties, min/maxProperties, items, min/maxItems, uniqueItems, min/maxLength,
// pattern, format date-time, format uri with a pattern, minimum/maximum); any other keyword fails loudly, so a document
// that grows one grows this too. Lengths are code points, as JSON Schema counts them.
import fc from 'fast-check';

type Json = Record<string, any>;

/**
 * Values the caller supplies instead of (or besides) generated ones, by location
 * (`path.id`, `query.cursor`, `body.channelIds[]`); `generated` is what would have been used.
 */
export type Hints = (at: string, generated: () => fc.Arbitrary<unknown>) => fc.Arbitrary<unknown> | undefined;

export interface GenOptions {
  doc: Json;
  /** The server's clock: most generated date-times lie ahead of it, some anywhere in years 1–9999. */
  now: () => number;
  hints?: Hints;
}

const KNOWN = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'minProperties',
  'maxProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'default',
  'description',
  'title',
  'examples',
  '$ref',
]);

export function resolve(doc: Json, schema: Json): Json {
  let s = schema;
  for (let i = 0; s?.$ref && i < 20; i++) {
    s = s.$ref
      .slice(2)
      .split('/')
      .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((n: any, k: string) => n?.[k], doc);
  }
  if (!s) throw new Error(`unresolvable $ref ${schema.$ref}`);
  return s;
}

const codePoints = (s: string) => [...s].length;

/** fast-check's stringMatching knows no lookarounds: generate without them, then filter with the full pattern. */
const withoutLookarounds = (pattern: string) => pattern.replace(/\(\?<?[!=](?:[^()\\]|\\.)*\)/g, '');

/** A merged copy: `branch`'s keywords narrow `base`'s (an object branch narrows each property). */
function narrow(base: Json, branch: Json): Json {
  const out: Json = { ...base, ...branch };
  if (base.properties && branch.properties) {
    out.properties = { ...base.properties };
    for (const [k, v] of Object.entries(branch.properties as Json)) out.properties[k] = { ...(base.properties[k] ?? {}), ...v };
  }
  return out;
}

export function arbitraryFor(schema: Json, at: string, opts: GenOptions): fc.Arbitrary<unknown> {
  const hinted = opts.hints?.(at, () => arbitraryFor(schema, at, { ...opts, hints: undefined }));
  if (hinted) return hinted;
  const s = resolve(opts.doc, schema);
  for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`${at}: keyword ${k} is not supported by the generator`);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches)) {
    const { anyOf: _a, oneOf: _o, ...rest } = s;
    return fc.oneof(...branches.map((b: Json) => arbitraryFor(narrow(rest, resolve(opts.doc, b)), at, opts)));
  }
  const type = Array.isArray(s.type) ? s.type : [s.type];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => arbitraryFor({ ...s, type: t }, at, opts)));
  switch (type[0]) {
    case 'string':
      return stringArbitrary(s, at, opts);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -(2 ** 31), max: s.maximum ?? 2 ** 31 - 1 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const item = arbitraryFor(s.items ?? {}, `${at}[]`, opts);
      const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, 5) };
      return s.uniqueItems ? fc.uniqueArray(item, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(item, constraints);
    }
    case 'object':
      return objectArbitrary(s, at, opts);
    default:
      throw new Error(`${at}: schema without a supported type: ${JSON.stringify(s).slice(0, 200)}`);
  }
}

function objectArbitrary(s: Json, at: string, opts: GenOptions): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Json;
  const required = new Set<string>(s.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) model[k] = arbitraryFor(v as Json, `${at ? `${at}.` : ''}${k}`, opts);
  let arb: fc.Arbitrary<Json> = fc.record(model, { requiredKeys: [...required] }) as fc.Arbitrary<Json>;
  const patterns = Object.entries((s.patternProperties ?? {}) as Json);
  if (patterns.length) {
    const entries = fc.oneof(
      ...patterns.map(([p, v]) =>
        fc.tuple(
          stringArbitrary({ type: 'string', pattern: p }, `${at}{key}`, opts) as fc.Arbitrary<string>,
          arbitraryFor(v as Json, `${at}.*`, opts),
        ),
      ),
    );
    const extra = fc.uniqueArray(entries, { maxLength: Math.min(s.maxProperties ?? 4, 4), selector: (e) => e[0] });
    arb = fc.tuple(arb, extra).map(([o, e]) => ({ ...Object.fromEntries(e), ...o }));
  }
  // An object that allows other members would need them generated too: the document closes its own.
  if (s.additionalProperties !== false)
    throw new Error(`${at}: open objects (no additionalProperties: false) are not supported by the generator`);
  const min = s.minProperties ?? 0;
  const max = s.maxProperties ?? Infinity;
  return arb.filter((o) => Object.keys(o).length >= min && Object.keys(o).length <= max);
}

/** One character of any kind: ASCII, any code point (lone surrogates too: JSON can carry them), a grapheme cluster. */
const ANY_CHARACTER = fc.oneof(
  fc.constant('a'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);

function stringArbitrary(s: Json, at: string, opts: GenOptions): fc.Arbitrary<unknown> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Infinity;
  const regex = s.pattern === undefined ? undefined : new RegExp(s.pattern, 'u');
  const fits = (v: string) => codePoints(v) >= min && codePoints(v) <= max && (!regex || regex.test(v));
  // Strings of any characters (kept when they fit), and for a pattern also strings built from it:
  // fast-check's stringMatching draws a negated class (`[^\u0000]`) from ASCII only.
  const anyText = fc.string({
    unit: ANY_CHARACTER,
    minLength: Number.isFinite(max) ? Math.min(min, max) : min,
    maxLength: Math.min(max, 40),
  });
  const fromPattern = s.pattern === undefined ? undefined : fc.stringMatching(new RegExp(withoutLookarounds(s.pattern)));
  let base: fc.Arbitrary<string>;
  if (s.format === 'date-time') base = dateTime(opts.now);
  // A URI narrowed by a pattern: strings built from the pattern (the document check confirms the format).
  else if (s.format === 'uri' && fromPattern) base = fc.oneof(fromPattern, anyText);
  else if (s.format !== undefined) throw new Error(`${at}: format ${s.format} is not supported by the generator`);
  else base = fromPattern ? fc.oneof(fromPattern, anyText) : anyText;
  const variants: fc.Arbitrary<string>[] = [base];
  // The longest value allowed, of one repeated character (astral ones count once): where a server
  // counts UTF-16 units or bytes instead of characters, this is where it shows.
  if (Number.isFinite(max) && max > 1 && s.format === undefined) {
    const one = fc
      .oneof(ANY_CHARACTER, ...(fromPattern ? [fromPattern] : []))
      .map((v) => [...v][0] ?? '')
      .filter((c) => c !== '');
    variants.push(one.map((c) => c.repeat(max)));
  }
  return (variants.length > 1 ? fc.oneof({ weight: 9, arbitrary: variants[0]! }, { weight: 1, arbitrary: variants[1]! }) : base).filter(
    fits,
  );
}

const DAY = 86_400_000;
const YEAR_1 = Date.parse('0001-01-01T00:00:00Z');
const YEAR_9999_END = Date.parse('9999-12-31T23:59:59Z');

/**
 * RFC 3339 date-times (what `format: date-time` means), in every spelling the RFC allows: an
 * offset or Z, `T`/`t`, `z`, 0–9 fraction digits. Most lie ahead of the server's clock.
 */
export function dateTime(now: () => number): fc.Arbitrary<string> {
  const instant = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 10 * 60_000, max: 3 * 365 * DAY }).map((d) => now() + d) },
    { weight: 1, arbitrary: fc.integer({ min: -30 * DAY, max: 10 * 60_000 }).map((d) => now() + d) },
    { weight: 1, arbitrary: fc.integer({ min: YEAR_1, max: YEAR_9999_END }) },
  );
  const offset = fc.oneof(fc.constant(0), fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }));
  const spelled = fc
    .tuple(instant, offset, fc.nat(9), fc.nat(999_999), fc.constantFrom('T', 'T', 'T', 't'), fc.constantFrom('Z', 'Z', 'z', '+00:00'))
    .map(([ms, off, digits, extra, sep, zulu]) => {
      const local = new Date(ms + off * 60_000);
      const iso = local.toISOString(); // yyyy-mm-ddThh:mm:ss.sssZ, or ±yyyyyy… outside years 0–9999
      const fraction = digits === 0 ? '' : `.${(iso.slice(20, 23) + String(extra).padStart(6, '0')).slice(0, digits)}`;
      const sign = off < 0 ? '-' : '+';
      const abs = Math.abs(off);
      const tz = off === 0 ? zulu : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
      return `${iso.slice(0, 10)}${sep}${iso.slice(11, 19)}${fraction}${tz}`;
    });
  // A leap second (RFC 3339 §5.7): 23:59:60 UTC on some day.
  const leap = instant.map((ms) => `${new Date(ms).toISOString().slice(0, 10)}T23:59:60Z`);
  // The ends of the four-digit years, where an offset moves the instant past them.
  const edge = fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+14:00',
    '0001-01-01T00:30:00.5+23:59',
    '9999-12-31T23:59:59-14:00',
    '9999-12-31T23:59:59.999999999-23:59',
    '9999-12-31T00:00:00Z',
  );
  return fc
    .oneof({ weight: 17, arbitrary: spelled }, { weight: 1, arbitrary: leap }, { weight: 2, arbitrary: edge })
    .filter((v) => /^\d{4}-/.test(v));
}
