// The web app's form inputs whose values an API operation takes: each input's maxlength is the
// bound the API states for that value in its OpenAPI document (GET /v1/openapi.json), and each
// select's choices are the values it lists, so a form never offers more (or less) than the API
// accepts.
import { beforeAll, describe, expect, test } from 'bun:test';
import { harness } from './harness/index.ts';
import { call, makeChannel, testApp } from './harness/fixtures.ts';
import { signedInUser } from './harness/web-browser.ts';

type Json = Record<string, any>;
let app: Awaited<ReturnType<typeof testApp>>;
let doc: Json;

beforeAll(async () => {
  const h = await harness();
  app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
  doc = (await call(app, 'GET', '/v1/openapi.json')).body;
});

/** A schema of the document with its `$ref` followed and, for a value that may be null, its other branch. */
function resolved(s: Json | undefined): Json | undefined {
  if (s?.$ref)
    return resolved(
      s.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: Json, key: string) => node?.[key], doc),
    );
  const branches = s?.anyOf as Json[] | undefined;
  const values = branches?.filter((b) => b.type !== 'null');
  return values?.length === 1 && values.length < branches!.length ? resolved(values[0]) : s;
}

/** The API's maxLength of a body field (`reddit.title`) of an operation, or of its query parameter. */
function apiMaxLength(method: string, path: string, field: string): number | undefined {
  const op = doc.paths[path]?.[method];
  const param = (op?.parameters as Json[] | undefined)?.find((p) => p.name === field && p.in === 'query');
  if (param) return resolved(param.schema)?.maxLength;
  let at = resolved(op?.requestBody?.content?.['application/json']?.schema);
  for (const key of field.split('.')) at = resolved(at?.properties?.[key]);
  return at?.maxLength;
}

/** Each input (by data-testid) of a page, and the operation and field of the API that takes its value. */
const INPUTS: { page: string; testId: string; api: [method: string, path: string, field: string] }[] = [
  { page: '/settings/webhooks', testId: 'webhook-url', api: ['post', '/webhooks', 'url'] },
  { page: '/settings/webhooks', testId: 'webhook-description', api: ['post', '/webhooks', 'description'] },
  { page: '/media', testId: 'media-alt-input', api: ['post', '/media/uploads', 'altText'] },
  { page: '/posts/new', testId: 'composer-upload-alt', api: ['post', '/media/uploads', 'altText'] },
  // The organization has a Reddit channel: the composer has the Reddit fields.
  { page: '/posts/new', testId: 'reddit-subreddit', api: ['post', '/posts', 'reddit.subreddit'] },
  { page: '/posts/new', testId: 'reddit-title', api: ['post', '/posts', 'reddit.title'] },
  { page: '/posts/new', testId: 'composer-links-campaign', api: ['post', '/posts', 'links.utm.campaign'] },
  { page: '/settings/links', testId: 'links-campaign', api: ['post', '/posts', 'links.utm.campaign'] },
  { page: '/settings/audit', testId: 'audit-filter-resource-id', api: ['get', '/audit-events', 'resourceId'] },
];

/** The values the API takes for a query parameter of an operation that lists its choices (an enum, or constants). */
function apiChoices(method: string, path: string, name: string): string[] | undefined {
  const param = (doc.paths[path]?.[method]?.parameters as Json[] | undefined)?.find((p) => p.name === name && p.in === 'query');
  const s = param?.schema as Json | undefined;
  return s?.enum ?? (s?.anyOf as Json[] | undefined)?.map((b) => b.const);
}

/** Each select (by data-testid) of a page, and the query parameter of the API whose choices it offers. */
const SELECTS: { page: string; testId: string; api: [method: string, path: string, name: string] }[] = [
  { page: '/analytics', testId: 'analytics-group-by', api: ['get', '/analytics', 'groupBy'] },
];

describe('form bounds', () => {
  test('each select offers the choices the API states for its value', async () => {
    const { browser } = await signedInUser(app);
    for (const { page, testId, api } of SELECTS) {
      const choices = apiChoices(...api) ?? [];
      expect({ testId, stated: choices.length > 0 }).toEqual({ testId, stated: true });
      const form = await browser.get(page);
      expect({ page, status: form.status }).toEqual({ page, status: 200 });
      const offered = (await form.query(`[data-testid="${testId}"] option`)).map((o) => o.attrs.value).filter(Boolean);
      expect({ testId, offered }).toEqual({ testId, offered: choices });
    }
  });

  test('each input has the maxlength the API states for its value', async () => {
    const { browser, org } = await signedInUser(app);
    await makeChannel(org.id, 'REDDIT', { name: 'Our Reddit' });
    for (const { page, testId, api } of INPUTS) {
      const max = apiMaxLength(...api);
      expect({ testId, stated: typeof max }).toEqual({ testId, stated: 'number' });
      const form = await browser.get(page);
      expect({ page, status: form.status }).toEqual({ page, status: 200 });
      const { maxlength } = (await form.one(`[data-testid="${testId}"]`)).attrs;
      expect({ testId, maxlength }).toEqual({ testId, maxlength: String(max) });
    }
  });
});
