// The OpenAPI 3.1 document of /v1, built from the routes themselves: their TypeBox schemas
// (params, query, body, response — the very ones Elysia validates with) and their `doc()`
// metadata (scope, error codes). Nothing here is written by hand twice: a route that changes its
// schema changes the document.
import { ERROR_STATUS, type ApiErrorCode as ErrorCode } from '../../lib/errors.ts';
import { COMPONENT_SCHEMAS, MAX_CHARS } from '../schemas.ts';
import { KEY_PATTERN } from '../../services/idempotency.ts';
import { operationDoc, type OperationDoc, type SchemaPatch } from './operation.ts';
import { ACCESS, everyRoleMay, scopeOf, type Action } from '../../domain/access.ts';

/** Who may call an operation, in words (domain/access.ts). */
const accessNote = (action: Action) =>
  everyRoleMay(action)
    ? `Requires the \`${scopeOf(action)}\` scope.`
    : `Requires the \`${scopeOf(action)}\` scope; a key made by a member also needs that member's role to allow \`${action}\` (${ACCESS[action].roles.join(', ')}).`;

export interface RouteInfo {
  method: string;
  path: string;
  hooks?: Record<string, unknown> | null;
}

type Json = Record<string, any>;

export const API_PREFIX = '/v1';

/** Every authenticated request can be refused with these (SPEC.md §5, §7; DESIGN.md §3). */
export const AUTH_ERRORS: ErrorCode[] = [
  'unauthorized',
  'forbidden_scope',
  'plan_required',
  'rate_limited',
  'quota_exceeded',
  'internal_error',
];

/** When each error code happens, for the responses' descriptions (docs/decisions.md). */
export const ERROR_WHEN: Record<ErrorCode, string> = {
  unauthorized: 'missing, malformed, unknown, expired or revoked API key',
  forbidden_scope: 'the key lacks the required scope (`details.requiredScope`)',
  plan_required: 'the organization’s plan has no API access (FREE)',
  limit_reached: 'a plan limit, e.g. pending scheduled posts (`details.limit`, `details.used`)',
  not_found: 'unknown id, or an id of another organization',
  reauth_required: 'a target channel must be reconnected (`details.channelIds`)',
  duplicate_post: 'the same text to the same channel within 24 hours (`details.postId`, `details.channelId`)',
  conflict: 'the resource is not in a state that allows this (see the operation), or an Idempotency-Key reused with another body',
  validation_failed: 'invalid body, query or path (`details.fields: [{path, message}]`)',
  rate_limited: 'per-minute limit of the key reached (`details.resetsAt`, `Retry-After`)',
  quota_exceeded: 'monthly quota of the organization reached (`details.resetsAt`, `Retry-After`)',
  internal_error: 'unexpected failure on our side; quote the X-Request-Id',
};

const PAYLOAD_TOO_LARGE = 413;
const UNAVAILABLE = 503;
/** A generate route whose model endpoint the operator has not configured (services/generate.ts). */
const NOT_CONFIGURED = 501;

const TAGS = [
  { name: 'Account', description: 'The calling API key, its organization and quota.' },
  { name: 'Channels', description: 'Connected social accounts.' },
  { name: 'Posts', description: 'Scheduling, publishing now, editing while waiting, per-channel outcomes.' },
  {
    name: 'Tags',
    description: 'The organization’s tags: labels for posts, series and feeds, by which the lists and the analytics narrow.',
  },
  {
    name: 'Comments',
    description: 'What people answered under your published posts, collected from the platforms: the inbox and each post’s conversation.',
  },
  { name: 'Analytics', description: 'How published posts performed, across posts and over time.' },
  { name: 'Media', description: 'The media library: a three-step upload (create, PUT the bytes, complete).' },
  { name: 'Webhooks', description: 'Signed events (Standard Webhooks) pushed to your endpoints, and their delivery log.' },
  { name: 'Feeds', description: 'RSS and Atom feeds read on a schedule, each new item posted to your channels from a template.' },
  {
    name: 'Generate',
    description: 'Drafts and alt text from the operator’s model endpoint (scope `generate`); nothing is created.',
  },
  { name: 'Audit', description: 'Who changed what in the organization, when and from where: read only.' },
];

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys dropped). */
export function toJsonSchema(schema: unknown): Json {
  return simplify(JSON.parse(JSON.stringify(schema ?? {})));
}

/**
 * Elysia widens `t.Integer`/`t.Number` to "a number, or a string holding one" so it can coerce
 * query strings; in a JSON body the number is what a client sends, so the document says number.
 */
function simplify(node: any): any {
  if (Array.isArray(node)) return node.map(simplify);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = simplify(v);
  // A refusal's message is the server's business; a length in characters is JSON Schema's maxLength.
  if (typeof out.error === 'string') delete out.error;
  if (typeof out[MAX_CHARS] === 'number') {
    out.maxLength = out[MAX_CHARS];
    delete out[MAX_CHARS];
  }
  if (Array.isArray(out.anyOf) && out.anyOf.length === 2) {
    const numeric = out.anyOf.find((s: Json) => s.type === 'integer' || s.type === 'number');
    const stringy = out.anyOf.find((s: Json) => s.type === 'string' && (s.format === 'integer' || s.format === 'numeric'));
    if (numeric && stringy) {
      const { anyOf: _, default: _d, ...rest } = out;
      return { ...rest, ...numeric };
    }
  }
  return out;
}

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Replaces every sub-schema equal to a named component by a `$ref` to it. */
function refify(node: any, byShape: Map<string, string>, skipRoot = false): any {
  if (Array.isArray(node)) return node.map((n) => refify(n, byShape));
  if (!isPlainObject(node)) return node;
  if (!skipRoot) {
    const name = byShape.get(JSON.stringify(node));
    if (name) return { $ref: `#/components/schemas/${name}` };
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = refify(v, byShape);
  return out;
}

function patchOf(p: string | SchemaPatch | undefined): SchemaPatch {
  return p === undefined ? {} : typeof p === 'string' ? { description: p } : p;
}

/** `schema` with `patch`'s keywords; a keyword patched to undefined is removed. */
function patched(schema: Json, patch: SchemaPatch): Json {
  const out: Json = { ...schema, ...patch };
  for (const [k, v] of Object.entries(out)) if (v === undefined) delete out[k];
  return out;
}

function openApiPath(path: string): string {
  return path.slice(API_PREFIX.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}') || '/';
}

function errorExample(code: ErrorCode): Json {
  const details: Record<ErrorCode, Json | undefined> = {
    unauthorized: undefined,
    forbidden_scope: { requiredScope: 'publish' },
    plan_required: { plan: 'FREE' },
    limit_reached: { limit: 1000, used: 1000 },
    not_found: undefined,
    reauth_required: { channelIds: ['ch_01jd…'] },
    duplicate_post: { postId: 'post_01jd…', channelId: 'ch_01jd…' },
    conflict: undefined,
    validation_failed: { fields: [{ path: 'channelIds', message: 'must have at least 1 item' }] },
    rate_limited: { resetsAt: '2026-11-21T10:01:00.000Z', limit: 60 },
    quota_exceeded: { resetsAt: '2026-12-01T00:00:00.000Z', limit: 10000, used: 10000 },
    internal_error: undefined,
  };
  const d = details[code];
  return { error: { code, message: ERROR_WHEN[code].replace(/ \(`.*$/, ''), ...(d ? { details: d } : {}) } };
}

/** Response headers of the API, as components; a required one is written out in full (a $ref takes no `required`). */
const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'Id of this request (the client’s own when it sent a valid one). Quote it when reporting a problem.',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': { description: 'Requests a minute this key may make.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the current minute’s window resets.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  Location: { description: 'Path of the created resource.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key and body.',
    schema: { type: 'string', const: 'true' },
  },
};

const header = (name: string, required = false): Json =>
  required ? { ...HEADERS[name], required: true } : { $ref: `#/components/headers/${name}` };

/** Headers of an answer: who sends which (api/auth.ts, server/app.ts, services/idempotency.ts). */
function responseHeaders(status: number, op: OperationDoc): Json {
  const out: Json = { 'X-Request-Id': header('X-Request-Id', true) };
  // Set once the key is known and counted: every answer but a 401 (and a refusal before the count).
  if (status !== 401) {
    const counted = status < 300;
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) out[name] = header(name, counted);
  }
  if (status === 429 || status === UNAVAILABLE) out['Retry-After'] = header('Retry-After', true);
  if ((status === 201 || status === 202) && op.success?.location) out.Location = header('Location', true);
  // A replayed answer (the first one's status, 2xx or 4xx) says so.
  if (op.idempotent && status < 500 && status !== 401 && status !== 413 && status !== 429)
    out['Idempotent-Replayed'] = header('Idempotent-Replayed');
  return out;
}

function errorResponse(status: number, codes: ErrorCode[], op: OperationDoc): Json {
  const notes = op.errorNotes ?? {};
  const when = (c: ErrorCode) =>
    status === PAYLOAD_TOO_LARGE
      ? 'the request body is larger than 1 MB (refused before it is parsed)'
      : status === UNAVAILABLE
        ? `a service the API depends on is briefly unreachable (Postgres${op.temporal ? ', or Temporal, which schedules the work' : ''}${op.generator ? ', or the model endpoint, which failed or did not answer in time' : ''}); retry after \`Retry-After\` seconds${op.idempotent ? ' with the same Idempotency-Key' : ''}`
        : status === NOT_CONFIGURED
          ? `this server has no model endpoint configured for this operation; the operator sets ${op.generator?.settings.map((s) => `\`${s}\``).join(', ')} (\`details.settings\`)`
          : (notes[c] ?? ERROR_WHEN[c]);
  const example = (c: ErrorCode): Json =>
    status === PAYLOAD_TOO_LARGE
      ? { error: { code: c, message: 'The request body is larger than 1 MB.', details: { limitBytes: 1048576 } } }
      : status === UNAVAILABLE
        ? { error: { code: c, message: 'The service is briefly unavailable. Retry shortly.' } }
        : status === NOT_CONFIGURED
          ? {
              error: {
                code: c,
                message: `This operation is not configured on this server; the operator sets ${op.generator?.settings.join(', ')}.`,
                details: { settings: op.generator?.settings ?? [] },
              },
            }
          : errorExample(c);
  return {
    description: codes.map((c) => `- \`${c}\`: ${when(c)}`).join('\n'),
    headers: responseHeaders(status, op),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: Object.fromEntries(codes.map((c) => [c, { value: example(c) }])),
      },
    },
    'x-error-codes': codes,
  };
}

function parameters(
  where: 'path' | 'query',
  schema: unknown,
  patches: Record<string, string | SchemaPatch> | undefined,
  pathNames: string[],
): Json[] {
  const json = schema ? toJsonSchema(schema) : { properties: {}, required: [] as string[] };
  const props: Json = { ...(json.properties ?? {}) };
  // A path parameter the schema does not name is still a string.
  if (where === 'path') for (const n of pathNames) props[n] ??= { type: 'string' };
  const required = new Set<string>(where === 'path' ? Object.keys(props) : (json.required ?? []));
  return Object.entries(props).map(([name, s]) => {
    const { description, ...patch } = patchOf(patches?.[name]);
    const param: Json = { name, in: where, required: required.has(name), schema: patched(s as Json, patch) };
    const text = description ?? (s as Json).description;
    if (text) param.description = text;
    return param;
  });
}

export interface DocumentOptions {
  title?: string;
  version?: string;
  /** Base URL of /v1 (default: `/v1`, relative to where the document is served). */
  serverUrl?: string;
}

export function buildOpenApiDocument(routes: readonly RouteInfo[], opts: DocumentOptions = {}): Json {
  const components: Json = {
    schemas: {} as Json,
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key',
        description:
          'An API key of the organization: `Authorization: Bearer sk_live_…`. Keys carry scopes (read, generate, publish, approve) and may be limited to channels; the scope each operation needs is in its `security` entry and in `x-required-scope`.',
      },
    },
    headers: HEADERS,
  };
  const byShape = new Map<string, string>();
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) byShape.set(JSON.stringify(toJsonSchema(schema)), name);
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) components.schemas[name] = refify(toJsonSchema(schema), byShape, true);

  const paths: Json = {};
  const documented = routes
    .filter((r) => r.path.startsWith(`${API_PREFIX}/`) && operationDoc(r.hooks?.detail))
    .slice()
    .sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)));
  for (const route of documented) {
    const op = operationDoc(route.hooks!.detail)!;
    const hooks = route.hooks!;
    const path = openApiPath(route.path);
    const pathNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
    const operation: Json = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      description: [op.description, accessNote(op.action)].filter(Boolean).join('\n\n'),
      'x-required-scope': scopeOf(op.action),
      'x-action': op.action,
      'x-roles': ACCESS[op.action].roles,
      security: [{ bearerAuth: [scopeOf(op.action)] }],
      parameters: [
        ...parameters('path', hooks.params, op.params, pathNames),
        ...parameters('query', hooks.query, op.query, []),
        ...(op.idempotent
          ? [
              {
                name: 'Idempotency-Key',
                in: 'header',
                required: false,
                description:
                  '1–255 printable ASCII characters, no spaces. A retry with the same key and body within 24 hours returns the first answer (header `Idempotent-Replayed: true`) instead of doing the work again; the same key with another body is `409 conflict`. Keys are per API key.',
                schema: { type: 'string', minLength: 1, maxLength: 255, pattern: KEY_PATTERN.source },
              },
            ]
          : []),
      ],
      responses: {} as Json,
    };
    if (!operation.parameters.length) delete operation.parameters;

    if (hooks.body) {
      const body = { ...toJsonSchema(hooks.body), ...(op.body?.schema ?? {}) };
      for (const [field, patch] of Object.entries(op.body?.fields ?? {})) {
        if (body.properties?.[field]) body.properties[field] = patched(body.properties[field], patchOf(patch));
      }
      const name = op.body?.name ?? `${op.operationId[0]!.toUpperCase()}${op.operationId.slice(1)}Request`;
      components.schemas[name] = refify(body, byShape, true);
      operation.requestBody = {
        required: true,
        ...(op.body?.description ? { description: op.body.description } : {}),
        content: { [op.bodyMediaType ?? 'application/json']: { schema: { $ref: `#/components/schemas/${name}` } } },
      };
    }

    const successStatus = op.success?.status ?? 200;
    const responseSchemas = responseMap(hooks.response);
    const success = responseSchemas[successStatus];
    operation.responses[String(successStatus)] = {
      description: op.success?.description ?? 'OK',
      headers: responseHeaders(successStatus, op),
      ...(success ? { content: { [op.successMediaType ?? 'application/json']: { schema: refify(toJsonSchema(success), byShape) } } } : {}),
    };

    // Error responses, grouped by status: this route's own codes and those of every authenticated request.
    const codes = [...new Set<ErrorCode>([...AUTH_ERRORS, ...(op.errors ?? [])])];
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of codes) {
      const status = ERROR_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    // Any body over 1 MB is refused before it is parsed, on every route that reads one (all but GET).
    if (route.method !== 'GET') byStatus.set(PAYLOAD_TOO_LARGE, ['validation_failed']);
    // Postgres (or Temporal) unreachable: http/errors.ts.
    byStatus.set(UNAVAILABLE, ['internal_error']);
    if (op.generator) byStatus.set(NOT_CONFIGURED, ['internal_error']);
    for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
      operation.responses[String(status)] = errorResponse(status, byStatus.get(status)!, op);
    }

    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: opts.title ?? 'Postpilot API',
      version: opts.version ?? '1.0.0',
      summary: 'Schedule and publish social posts to connected channels, track each channel’s outcome, keep a media library.',
      description: [
        'JSON over HTTPS. Every request carries `Authorization: Bearer <API key>`; the scope each operation needs is listed with it.',
        'Errors are always `{"error": {"code", "message", "details?"}}`; every response has an `X-Request-Id`, every authenticated one `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
        'Timestamps are ISO 8601; requests may give an offset. Ids are opaque strings.',
        'A path answers a method it does not list with `405` and an `Allow` header (code `not_found`: there is no such operation), and `OPTIONS` with `204` and `Allow`, without a key. Unknown paths are `404`.',
        'Request values are checked as their schemas say (lengths count characters, as JSON Schema does); the few rules no schema can state — ids that must name existing resources, a channel’s own limits, times relative to now, opaque cursors — are stated in words with the field, and refused with `422 validation_failed` naming the field.',
        'Outside this document: `GET /health` (liveness) and `GET /ready` (readiness: Postgres and Temporal) at the server root, without a key.',
      ].join('\n\n'),
    },
    servers: [{ url: opts.serverUrl ?? API_PREFIX, description: 'This server' }],
    security: [{ bearerAuth: [] }],
    tags: TAGS,
    paths,
    components,
  };
}

function responseMap(response: unknown): Record<number, unknown> {
  if (!response || typeof response !== 'object') return {};
  // `response: Schema` (one schema for 200) or `response: { 200: Schema, 201: … }`.
  if ('type' in response || 'anyOf' in response || '$ref' in response) return { 200: response };
  return response as Record<number, unknown>;
}

export type { OperationDoc };
