// The OpenAPI 3.1 document of /v1 (GET /v1/openapi.json) and its reference page (GET /v1/docs):
// built from the routes' own schemas, complete for SPEC.md §4, valid against the official
// OpenAPI 3.1 JSON Schema, and in agreement with what the API actually does.
import { describe, expect, test } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_STATUS } from '../lib/errors.ts';
import { MEDIA_RULES } from '../media/catalog.ts';
import { CHANNEL_ERROR_CODES } from '../workflows/publish-failure-types.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { SCOPES } from '../lib/scopes.ts';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { operationDoc, type OperationDoc } from '../api/openapi/operation.ts';
import { OPERATIONS as ENTRIES } from '../api/openapi/operations.ts';
import type { AppDeps } from '../http/deps.ts';

type Json = Record<string, any>;

/** SPEC.md §4 with DESIGN.md §3 / docs/decisions.md: scope, success status and error statuses. */
/** `schema: null`: a success without a body (204); `text/csv`: a CSV file. */
const OPERATIONS: { method: string; path: string; scope: string; success: number; errors: number[]; schema: string | null }[] = [
  { method: 'post', path: '/webhooks', scope: 'publish', success: 201, errors: [401, 403, 413, 422, 429], schema: 'WebhookSecretResponse' },
  // Queues and series.
  { method: 'get', path: '/channels/{id}/queue', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Queue' },
  { method: 'put', path: '/channels/{id}/queue', scope: 'publish', success: 200, errors: [401, 403, 404, 413, 422, 429], schema: 'Queue' },
  { method: 'post', path: '/series', scope: 'publish', success: 201, errors: [401, 403, 409, 413, 422, 429], schema: 'Series' },
  { method: 'get', path: '/series', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'SeriesList' },
  { method: 'get', path: '/series/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Series' },
  { method: 'patch', path: '/series/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Series' },
  { method: 'delete', path: '/series/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 413, 422, 429], schema: null },
  // Feeds.
  { method: 'post', path: '/feeds', scope: 'publish', success: 201, errors: [401, 403, 409, 413, 422, 429], schema: 'Feed' },
  { method: 'get', path: '/feeds', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'FeedList' },
  { method: 'get', path: '/feeds/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Feed' },
  { method: 'get', path: '/feeds/{id}/items', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'FeedItemList' },
  { method: 'patch', path: '/feeds/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Feed' },
  { method: 'delete', path: '/feeds/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 413, 422, 429], schema: null },
  { method: 'post', path: '/feeds/{id}/poll', scope: 'publish', success: 202, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Feed' },
  // Tags.
  { method: 'post', path: '/tags', scope: 'publish', success: 201, errors: [401, 403, 409, 413, 422, 429], schema: 'Tag' },
  { method: 'get', path: '/tags', scope: 'read', success: 200, errors: [401, 403, 429], schema: 'TagList' },
  { method: 'get', path: '/tags/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Tag' },
  { method: 'patch', path: '/tags/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Tag' },
  { method: 'delete', path: '/tags/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 413, 422, 429], schema: null },
  // Drafts.
  { method: 'post', path: '/drafts', scope: 'publish', success: 201, errors: [401, 403, 413, 422, 429], schema: 'Draft' },
  { method: 'get', path: '/drafts', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'DraftList' },
  { method: 'get', path: '/drafts/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Draft' },
  { method: 'patch', path: '/drafts/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Draft' },
  { method: 'delete', path: '/drafts/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 413, 422, 429], schema: null },
  {
    method: 'post',
    path: '/drafts/{id}/validate',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'PostValidation',
  },
  {
    method: 'post',
    path: '/drafts/{id}/schedule',
    scope: 'publish',
    success: 201,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Post',
  },
  // Comments.
  { method: 'get', path: '/posts/{id}/comments', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Conversation' },
  {
    method: 'post',
    path: '/posts/{id}/comments/refresh',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Conversation',
  },
  { method: 'get', path: '/inbox', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'CommentList' },
  { method: 'get', path: '/comments/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Comment' },
  { method: 'patch', path: '/comments/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 413, 422, 429], schema: 'Comment' },
  {
    method: 'post',
    path: '/comments/{id}/reply',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Reply',
  },
  { method: 'get', path: '/comments/{id}/replies', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'ReplyList' },
  {
    method: 'post',
    path: '/comments/{id}/hide',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Comment',
  },
  {
    method: 'post',
    path: '/comments/{id}/unhide',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Comment',
  },
  { method: 'get', path: '/replies/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Reply' },
  { method: 'delete', path: '/replies/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Reply' },
  {
    method: 'post',
    path: '/replies/{id}/approve',
    scope: 'approve',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Reply',
  },
  {
    method: 'post',
    path: '/replies/{id}/reject',
    scope: 'approve',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Reply',
  },
  { method: 'get', path: '/webhooks', scope: 'read', success: 200, errors: [401, 403, 429], schema: 'WebhookEndpointList' },
  { method: 'get', path: '/webhooks/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'WebhookEndpoint' },
  {
    method: 'patch',
    path: '/webhooks/{id}',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 413, 422, 429],
    schema: 'WebhookEndpoint',
  },
  { method: 'delete', path: '/webhooks/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 413, 422, 429], schema: null },
  {
    method: 'post',
    path: '/webhooks/{id}/rotate-secret',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 413, 422, 429],
    schema: 'WebhookSecretResponse',
  },
  {
    method: 'post',
    path: '/webhooks/{id}/test',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'WebhookTest',
  },
  {
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    scope: 'read',
    success: 200,
    errors: [401, 403, 404, 422, 429],
    schema: 'WebhookDeliveryList',
  },
  {
    method: 'post',
    path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'WebhookDelivery',
  },
  { method: 'get', path: '/me', scope: 'read', success: 200, errors: [401, 403, 429], schema: 'Me' },
  { method: 'get', path: '/channels', scope: 'read', success: 200, errors: [401, 403, 429], schema: 'ChannelList' },
  { method: 'post', path: '/posts', scope: 'publish', success: 201, errors: [401, 403, 409, 413, 422, 429], schema: 'Post' },
  { method: 'post', path: '/posts/import', scope: 'publish', success: 200, errors: [401, 403, 409, 413, 422, 429], schema: 'ImportResult' },
  { method: 'get', path: '/posts/export', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'text/csv' },
  { method: 'post', path: '/posts/bulk', scope: 'publish', success: 200, errors: [401, 403, 409, 413, 422, 429], schema: 'BulkResult' },
  {
    method: 'post',
    path: '/posts/validate',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 409, 413, 422, 429],
    schema: 'PostValidation',
  },
  { method: 'get', path: '/posts', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'PostList' },
  { method: 'get', path: '/posts/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'Post' },
  {
    method: 'get',
    path: '/posts/{id}/analytics',
    scope: 'read',
    success: 200,
    errors: [401, 403, 404, 422, 429],
    schema: 'PostAnalytics',
  },
  { method: 'get', path: '/analytics', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'AnalyticsSummary' },
  { method: 'get', path: '/me/member', scope: 'read', success: 200, errors: [401, 403, 429], schema: 'KeyMember' },
  { method: 'get', path: '/audit-events', scope: 'read', success: 200, errors: [401, 403, 422, 429], schema: 'AuditEventList' },
  { method: 'get', path: '/channels/{id}/best-times', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'BestTimes' },
  {
    method: 'get',
    path: '/channels/{id}/capabilities',
    scope: 'read',
    success: 200,
    errors: [401, 403, 404, 422, 429],
    schema: 'ChannelCapabilities',
  },
  {
    method: 'post',
    path: '/posts/{id}/analytics/refresh',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'PostAnalytics',
  },
  { method: 'patch', path: '/posts/{id}', scope: 'publish', success: 200, errors: [401, 403, 404, 409, 413, 422, 429], schema: 'Post' },
  { method: 'delete', path: '/posts/{id}', scope: 'publish', success: 204, errors: [401, 403, 404, 409, 413, 422, 429], schema: null },
  ...(['approve', 'reject'] as const).map((verb) => ({
    method: 'post',
    path: `/posts/{id}/${verb}`,
    scope: 'approve',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Post',
  })),
  {
    method: 'post',
    path: '/posts/{id}/retry',
    scope: 'publish',
    success: 202,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'Post',
  },
  {
    method: 'post',
    path: '/media/uploads',
    scope: 'publish',
    success: 201,
    errors: [401, 403, 409, 413, 422, 429],
    schema: 'UploadResponse',
  },
  {
    method: 'post',
    path: '/media/{id}/complete',
    scope: 'publish',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429],
    schema: 'MediaItem',
  },
  { method: 'get', path: '/media/{id}', scope: 'read', success: 200, errors: [401, 403, 404, 422, 429], schema: 'MediaItem' },
  // The generate scope: 501 when the operator has configured no model endpoint.
  {
    method: 'post',
    path: '/generate/post',
    scope: 'generate',
    success: 200,
    errors: [401, 403, 413, 422, 429, 501],
    schema: 'GeneratedDrafts',
  },
  {
    method: 'post',
    path: '/generate/alt-text',
    scope: 'generate',
    success: 200,
    errors: [401, 403, 404, 409, 413, 422, 429, 501],
    schema: 'GeneratedAltText',
  },
];

async function fetchDocument(): Promise<Json> {
  const app = await testApp();
  const r = await call(app, 'GET', '/v1/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toContain('application/json');
  return r.body;
}

/** Resolves a local `#/a/b` pointer in the document. */
function resolvePointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, key) => (node === undefined ? undefined : node[key]), doc);
}

function allRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => allRefs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else allRefs(v, out);
    }
  }
  return out;
}

const deref = (doc: Json, s: Json): Json => (s.$ref ? (resolvePointer(doc, s.$ref) as Json) : s);

type RouteLike = { method: string; path: string; hooks?: Record<string, unknown> | null };

/**
 * Each file of api/routes: its routes (each `…Routes` export, built alone with no deps: nothing is
 * served) with the entry each carries, and the entries of its own table (its `…_OPERATIONS`).
 */
async function routeFiles() {
  const dir = join(import.meta.dir, '..', 'api', 'routes');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  return Promise.all(
    files.map(async (file) => {
      const mod = (await import(join(dir, file))) as Record<string, unknown>;
      const tables = Object.entries(mod).filter(([name]) => name.endsWith('_OPERATIONS'));
      const own = tables.flatMap(([, table]) => Object.values(table as Record<string, unknown>).map((e) => operationDoc(e)!));
      const routes = Object.entries(mod)
        .filter(([name, value]) => name.endsWith('Routes') && typeof value === 'function')
        .flatMap(([, build]) => (build as (deps: AppDeps) => { routes: RouteLike[] })({} as AppDeps).routes)
        .map((r) => ({ route: `${r.method} ${r.path}`, op: operationDoc(r.hooks?.detail) }));
      return { file, tables: tables.length, own, routes };
    }),
  );
}

describe('OpenAPI document', () => {
  test('GET /v1/openapi.json needs no key and is OpenAPI 3.1 with paths and components', async () => {
    const doc = await fetchDocument();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: '1.0.0' });
    expect(doc.servers[0].url).toBe('/v1');
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    for (const path of Object.keys(doc.paths)) expect(path.startsWith('/')).toBe(true);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Error', 'Me', 'Channel', 'ChannelList', 'Post', 'PostChannel', 'PostList', 'MediaItem', 'UploadResponse']),
    );
  });

  test('is valid against the official OpenAPI 3.1 schema; every $ref resolves; operationIds are unique', async () => {
    const doc = await fetchDocument();
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const refs = allRefs(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect({ ref, resolved: resolvePointer(doc, ref) !== undefined }).toEqual({ ref, resolved: true });
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('every route of SPEC.md §4 is there with its scope, success schema and error responses', async () => {
    const doc = await fetchDocument();
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as Json).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(OPERATIONS.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort());

    for (const o of OPERATIONS) {
      const op = doc.paths[o.path]?.[o.method];
      const where = `${o.method.toUpperCase()} ${o.path}`;
      expect({ where, op: Boolean(op) }).toEqual({ where, op: true });
      expect({ where, scope: op['x-required-scope'], security: op.security }).toEqual({
        where,
        scope: o.scope,
        security: [{ bearerAuth: [o.scope] }],
      });
      expect(op.description).toContain(`\`${o.scope}\` scope`);
      // Success: status and the component it returns.
      expect({ where, status: Object.keys(op.responses).filter((s) => s.startsWith('2')) }).toEqual({ where, status: [String(o.success)] });
      if (o.schema === null) expect(op.responses[String(o.success)].content).toBeUndefined();
      else if (o.schema === 'text/csv') expect(op.responses[String(o.success)].content['text/csv'].schema.type).toBe('string');
      else expect(op.responses[String(o.success)].content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${o.schema}` });
      // Errors of DESIGN.md §3 that apply, each with the error body.
      for (const status of [...o.errors, 500, 503]) {
        const r = op.responses[String(status)];
        expect({ where, status, present: Boolean(r) }).toEqual({ where, status, present: true });
        expect(r.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
        expect(r.headers['X-Request-Id']).toBeDefined();
        for (const code of r['x-error-codes'] as string[]) {
          // The code really has that status (413 is validation_failed with its own status).
          // (413 is validation_failed and 503 internal_error, each with its own status.)
          if (status !== 413 && status !== 503 && status !== 501)
            expect({ where, code, status: ERROR_STATUS[code as keyof typeof ERROR_STATUS] as number }).toEqual({ where, code, status });
          expect(r.content['application/json'].examples[code].value.error.code).toBe(code);
        }
      }
      const codes = (status: number) => (op.responses[String(status)]?.['x-error-codes'] ?? []) as string[];
      expect(codes(401)).toEqual(['unauthorized']);
      expect(codes(403)).toEqual(expect.arrayContaining(['forbidden_scope', 'plan_required']));
      expect(codes(429)).toEqual(expect.arrayContaining(['rate_limited', 'quota_exceeded']));
      expect(op.responses['429'].headers['Retry-After']).toMatchObject({ required: true });
      // 503: Postgres (or Temporal) unreachable, internal_error with Retry-After.
      expect(codes(503)).toEqual(['internal_error']);
      expect(op.responses['503'].headers['Retry-After']).toMatchObject({ required: true });
      // No error status the route cannot produce (besides 500 and 503).
      const errorStatuses = Object.keys(op.responses)
        .filter((s) => !s.startsWith('2'))
        .map(Number)
        .sort((a, b) => a - b);
      expect({ where, errorStatuses }).toEqual({ where, errorStatuses: [...new Set([...o.errors, 500, 503])].sort((a, b) => a - b) });
    }

    // Route-specific codes of DESIGN.md §3.
    const codesOf = (path: string, method: string, status: number) => doc.paths[path][method].responses[String(status)]['x-error-codes'];
    expect(codesOf('/posts', 'post', 409)).toEqual(expect.arrayContaining(['reauth_required', 'duplicate_post', 'conflict']));
    expect(codesOf('/posts', 'post', 403)).toEqual(expect.arrayContaining(['limit_reached']));
    expect(codesOf('/posts/{id}', 'patch', 409)).toEqual(expect.arrayContaining(['conflict']));
    expect(codesOf('/posts/{id}', 'delete', 409)).toEqual(['conflict']);
    expect(codesOf('/posts/{id}/retry', 'post', 409)).toEqual(expect.arrayContaining(['conflict', 'reauth_required']));
    expect(codesOf('/media/{id}/complete', 'post', 409)).toEqual(['conflict']);
    // Location on creation, Idempotency-Key where honoured.
    for (const [path, method] of [
      ['/posts', 'post'],
      ['/media/uploads', 'post'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op.responses['201'].headers.Location).toBeDefined();
      expect(op.parameters.find((p: Json) => p.name === 'Idempotency-Key')).toMatchObject({ in: 'header', required: false });
    }
  });

  test('GET /posts query parameters are status, channelId, tagId, from, to, limit, cursor — all optional', async () => {
    const doc = await fetchDocument();
    const params = doc.paths['/posts'].get.parameters.filter((p: Json) => p.in === 'query');
    expect(params.map((p: Json) => p.name)).toEqual(['status', 'channelId', 'tagId', 'from', 'to', 'limit', 'cursor']);
    for (const p of params) expect(p.required).toBe(false);
    const byName = Object.fromEntries(params.map((p: Json) => [p.name, p.schema]));
    expect(byName.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(byName.from.format).toBe('date-time');
    expect(JSON.stringify(byName.status)).toContain('publishing');
    // Every list that narrows to a tag takes the same optional `tagId`: one schema, the same words.
    for (const path of ['/drafts', '/series', '/feeds', '/analytics']) {
      const tagId = doc.paths[path].get.parameters.find((p: Json) => p.name === 'tagId');
      expect({ path, in: tagId?.in, required: tagId?.required, schema: tagId?.schema }).toEqual({
        path,
        in: 'query',
        required: false,
        schema: byName.tagId,
      });
      expect(tagId.description).toMatch(
        /^Only .+ with this tag \(`tag_…`, GET \/tags\); an id that is not one of the organization’s tags matches none\.$/,
      );
    }
  });

  test('path parameters are declared and required; bodies come from the routes’ own schemas', async () => {
    const doc = await fetchDocument();
    for (const [path, item] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const op of Object.values(item as Json)) {
        const declared = ((op as Json).parameters ?? []).filter((p: Json) => p.in === 'path');
        expect(declared.map((p: Json) => p.name)).toEqual(names);
        for (const p of declared) expect(p.required).toBe(true);
      }
    }
    const create = deref(doc, doc.paths['/posts'].post.requestBody.content['application/json'].schema);
    expect(create.required).toEqual(['content', 'channelIds']);
    expect(Object.keys(create.properties)).toEqual([
      'content',
      'channelIds',
      'publishAt',
      'mediaIds',
      'contentByPlatform',
      'reddit',
      'thread',
      'threadByPlatform',
      'firstComment',
      'options',
      'links',
      'tagIds',
      'queue',
    ]);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.channelIds).toMatchObject({ type: 'array', minItems: 1, maxItems: 50 });
    expect(create.properties.publishAt.format).toBe('date-time');
    const upload = deref(doc, doc.paths['/media/uploads'].post.requestBody.content['application/json'].schema);
    expect(upload.required).toEqual(['fileName', 'mimeType', 'fileSize']);
    expect(upload.properties.fileSize).toMatchObject({ type: 'integer', minimum: 1 });
    const patch = deref(doc, doc.paths['/posts/{id}'].patch.requestBody.content['application/json'].schema);
    expect(Object.keys(patch.properties)).toEqual(expect.arrayContaining(['content', 'publishAt', 'contentByPlatform']));
    expect(patch.minProperties).toBe(1);
  });

  test('the rules the server enforces are keywords of the schemas (from the same tables)', async () => {
    const doc = await fetchDocument();
    const upload = deref(doc, doc.paths['/media/uploads'].post.requestBody.content['application/json'].schema);
    expect(upload.properties.mimeType.enum).toEqual(Object.keys(MEDIA_RULES));
    // One branch per size limit, each naming its types.
    const limits = Object.fromEntries(Object.entries(MEDIA_RULES).map(([m, r]) => [m, r.maxBytes]));
    const branches = upload.anyOf.flatMap((b: Json) => b.properties.mimeType.enum.map((m: string) => [m, b.properties.fileSize.maximum]));
    expect(Object.fromEntries(branches)).toEqual(limits);
    expect(upload.properties.fileName).toMatchObject({ minLength: 1, maxLength: 255, pattern: expect.any(String) });
    const create = deref(doc, doc.paths['/posts'].post.requestBody.content['application/json'].schema);
    expect(create.properties.content).toMatchObject({ maxLength: 100000, pattern: expect.any(String) });
    expect(create.properties.publishAt.pattern).toBeString();
    expect(create.properties.publishAt.description).toContain('at most 5 minutes in the past and before 9999-12-31T00:00:00Z');
    expect(Object.keys(create.properties.contentByPlatform.patternProperties)[0]).toContain('MASTODON');
    expect(create.properties.contentByPlatform.additionalProperties).toBe(false);
    // No keyword of the server's own leaks into the document.
    expect(JSON.stringify(doc)).not.toMatch(/"x-max-chars"|"error":"must/);
    const idem = doc.paths['/posts'].post.parameters.find((p: Json) => p.name === 'Idempotency-Key');
    expect(new RegExp(idem.schema.pattern).test('abc-123')).toBe(true);
    expect(new RegExp(idem.schema.pattern).test('a b')).toBe(false);
    const cursor = doc.paths['/posts'].get.parameters.find((p: Json) => p.name === 'cursor');
    expect(cursor.schema.pattern).toBe('^[A-Za-z0-9_-]{0,512}$');
    expect(cursor.description).toContain('only a `nextCursor`');
  });

  test('response schemas have the fields of SPEC.md §2 and the error codes of §7', async () => {
    const doc = await fetchDocument();
    const s = doc.components.schemas;
    expect(Object.keys(s.Post.properties).sort()).toEqual(
      [
        'id',
        'status',
        'content',
        'contentByPlatform',
        'scheduledAt',
        'publishedAt',
        'createdAt',
        'source',
        'channels',
        'media',
        'reddit',
        'seriesId',
        'thread',
        'threadByPlatform',
        'firstComment',
        'options',
        'links',
        'tagIds',
        'approval',
      ].sort(),
    );
    expect(s.Post.properties.channels.items).toEqual({ $ref: '#/components/schemas/PostChannel' });
    expect(Object.keys(s.PostChannel.properties).sort()).toEqual(
      [
        'channelId',
        'platform',
        'status',
        'content',
        'platformPostId',
        'url',
        'publishedAt',
        'error',
        'errorCode',
        'retryable',
        'items',
      ].sort(),
    );
    // The documented set of failure codes, nullable (null unless the channel failed).
    expect(s.PostChannel.properties.errorCode.anyOf).toEqual([
      expect.objectContaining({ type: 'string', enum: [...CHANNEL_ERROR_CODES] }),
      { type: 'null' },
    ]);
    expect(s.PostChannel.properties.retryable.anyOf).toEqual([{ type: 'boolean' }, { type: 'null' }]);
    expect(Object.keys(s.PostValidation.properties)).toEqual(['valid', 'publishAt', 'channels']);
    expect(Object.keys(s.PostValidation.properties.channels.items.properties)).toEqual([
      'channelId',
      'platform',
      'content',
      'characters',
      'maxChars',
      'items',
    ]);
    expect(s.PostList.properties.data.items).toEqual({ $ref: '#/components/schemas/Post' });
    expect(Object.keys(s.PostList.properties).sort()).toEqual(['data', 'nextCursor']);
    for (const f of [
      'id',
      'type',
      'status',
      'fileName',
      'mimeType',
      'sizeBytes',
      'url',
      'thumbnailUrl',
      'width',
      'height',
      'durationSeconds',
      'altText',
      'description',
      'createdAt',
    ]) {
      expect(s.MediaItem.properties[f]).toBeDefined();
    }
    expect(s.MediaItem.properties.type.enum).toEqual(['image', 'gif', 'video', 'document', 'audio']);
    expect(s.UploadResponse.properties.media).toEqual({ $ref: '#/components/schemas/MediaItem' });
    expect(s.UploadResponse.properties.upload).toEqual({ $ref: '#/components/schemas/UploadInstructions' });
    expect(s.UploadInstructions.properties.method.const).toBe('PUT');
    expect(s.ChannelList.properties.data.items).toEqual({ $ref: '#/components/schemas/Channel' });
    expect(Object.keys(s.Me.properties).sort()).toEqual(['key', 'organization', 'quota']);
    const codes = s.Error.properties.error.properties.code.anyOf.map((c: Json) => c.const).sort();
    expect(codes).toEqual(
      [
        'unauthorized',
        'forbidden_scope',
        'plan_required',
        'reauth_required',
        'not_found',
        'validation_failed',
        'limit_reached',
        'duplicate_post',
        'conflict',
        'rate_limited',
        'quota_exceeded',
        'internal_error',
      ].sort(),
    );
    expect(s.Error.properties.error.required).toEqual(['code', 'message']);
  });

  test('the documented scope is the one the API enforces (403 forbidden_scope names it)', async () => {
    const org = await makeOrg();
    const app = await testApp();
    const doc = await fetchDocument();
    const bodies: Record<string, unknown> = {
      'POST /posts': { content: 'hello', channelIds: ['ch_x'] },
      'POST /posts/validate': { content: 'hello', channelIds: ['ch_x'] },
      'POST /posts/bulk': { posts: [{ content: 'hello', channelIds: ['ch_x'] }] },
      'PATCH /posts/{id}': { content: 'hello' },
      'POST /media/uploads': { fileName: 'a.png', mimeType: 'image/png', fileSize: 10 },
    };
    const keys: Record<string, string> = {};
    for (const scope of SCOPES) {
      keys[scope] = (await makeKey(org.id, { scopes: SCOPES.filter((s) => s !== scope) })).key;
    }
    for (const o of OPERATIONS) {
      const op = doc.paths[o.path][o.method];
      const scope = op['x-required-scope'] as string;
      const path = `/v1${o.path.replace('{id}', 'x_1')}`;
      const r = await call(app, o.method.toUpperCase(), path, { key: keys[scope], body: bodies[`${o.method.toUpperCase()} ${o.path}`] });
      expect({ path, status: r.status, code: r.body?.error?.code, requiredScope: r.body?.error?.details?.requiredScope }).toEqual({
        path,
        status: 403,
        code: 'forbidden_scope',
        requiredScope: scope,
      });
    }
  });

  test('every /v1 route of the app is documented (a new route without doc() fails here)', async () => {
    const app = await testApp();
    const doc = await fetchDocument();
    const undocumented = app.routes
      .filter((r) => r.path.startsWith('/v1/') && !['/v1/openapi.json', '/v1/docs'].includes(r.path))
      .map((r) => `${r.method.toLowerCase()} ${r.path.slice(3).replace(/:(\w+)/g, '{$1}')}`)
      .filter((id) => {
        const [method, path] = id.split(' ');
        return !doc.paths[path!]?.[method!];
      });
    expect(undocumented).toEqual([]);
  });

  test('each route file attaches the entries of its own table: each entry to exactly one of its routes', async () => {
    const found = await routeFiles();
    expect(found.map((f) => f.file)).toContain('posts.ts');
    for (const { file, tables, own, routes } of found) {
      // One table in a file whose routes carry entries, none in another (api/routes/storage.ts).
      expect({ file, tables }).toEqual({ file, tables: routes.some((r) => r.op) ? 1 : 0 });
      // A route carrying another file's entry is named here.
      const strangers = routes.filter((r) => r.op && !own.includes(r.op)).map((r) => `${r.route}: ${r.op!.operationId}`);
      expect({ file, strangers }).toEqual({ file, strangers: [] });
      const uses = own.map((op) => ({ entry: op.operationId, routes: routes.filter((r) => r.op === op).map((r) => r.route) }));
      expect({ file, unattachedOrShared: uses.filter((u) => u.routes.length !== 1) }).toEqual({ file, unattachedOrShared: [] });
    }
  });

  test('OPERATIONS (api/openapi/operations.ts) is every file’s table, and every /v1 route carries exactly one of its entries', async () => {
    const own = (await routeFiles()).flatMap((f) => f.own);
    const entries = Object.entries(ENTRIES).map(([key, e]) => ({ key, op: operationDoc(e)! }));
    // No table left out, none shadowing another's key; each keyed by its operationId.
    expect(entries.length).toBe(own.length);
    expect(entries.filter((e) => !own.includes(e.op)).map((e) => e.key)).toEqual([]);
    expect(entries.filter((e) => e.key !== e.op.operationId).map((e) => e.key)).toEqual([]);
    const app = await testApp();
    const v1 = app.routes.filter((r) => r.path.startsWith('/v1/') && !['/v1/openapi.json', '/v1/docs'].includes(r.path));
    const opOf = (r: RouteLike) => operationDoc(r.hooks?.detail) as OperationDoc | undefined;
    const ops = new Set(entries.map((e) => e.op));
    expect(v1.filter((r) => !ops.has(opOf(r)!)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const uses = entries.map((e) => ({ entry: e.key, routes: v1.filter((r) => opOf(r) === e.op).length }));
    expect(uses.filter((u) => u.routes !== 1)).toEqual([]);
  });

  test('a literal path beside a template (`/posts/validate`, `/media/uploads`) answers with its own documented methods only', async () => {
    const app = await testApp();
    const doc = await fetchDocument();
    const fits = (template: string, path: string) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path);
    const paths = Object.keys(doc.paths);
    const literals = paths.filter((p) => !p.includes('{') && paths.some((t) => t !== p && t.includes('{') && fits(t, p)));
    expect(literals).toEqual(expect.arrayContaining(['/posts/validate', '/media/uploads']));
    const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'];
    for (const path of literals) {
      const documented = Object.keys(doc.paths[path]).map((m) => m.toUpperCase());
      const allow = [...documented, ...(documented.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ');
      for (const target of [`/v1${path}`, `/v1${path}/`]) {
        const options = await call(app, 'OPTIONS', target);
        expect({ target, status: options.status, allow: options.headers.get('allow') }).toEqual({ target, status: 204, allow });
        for (const method of METHODS.filter((m) => !allow.split(', ').includes(m))) {
          const r = await call(app, method, target);
          expect({ method, target, status: r.status, allow: r.headers.get('allow') }).toEqual({ method, target, status: 405, allow });
          if (method !== 'HEAD') expect(r.body.error).toMatchObject({ code: 'not_found', details: { method, allow: allow.split(', ') } });
        }
      }
    }
  });

  test('GET /v1/docs is a self-contained HTML page listing every operation with its scope', async () => {
    const app = await testApp();
    const r = await app.handle(new Request('http://localhost/v1/docs'));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/html');
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await r.text();
    if (!html.includes('id="schema-Post"')) throw new Error('the page has no schema section');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    // Nothing is loaded from anywhere: no script, no stylesheet link, no image, no external URL.
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|src=/i);
    expect(html).not.toMatch(/https?:\/\//);
    for (const o of OPERATIONS) {
      expect(html).toContain(`/v1${o.path}</code>`);
    }
    expect(html).toContain('scope <code class="scope">publish</code>');
    for (const name of ['status', 'channelId', 'from', 'to', 'limit', 'cursor', 'Idempotency-Key'])
      expect(html).toContain(`<code>${name}</code>`);
    for (const code of ['forbidden_scope', 'duplicate_post', 'quota_exceeded']) expect(html).toContain(`<code>${code}</code>`);
    expect(html).toContain('id="schema-Post"');
    const postChannel = html.slice(html.indexOf('id="schema-PostChannel"'));
    expect(postChannel).toContain('<code>platformPostId</code>');
    // Nested inline objects are listed with dotted paths.
    expect(html).toContain('<code>reddit.subreddit</code>');
  });
});
