// Webhook endpoints through the API: the secret shown once and stored encrypted,
// scopes, the plan's limit, URL checks through the outbound guard, and tenant isolation.
import { describe, expect, test } from 'bun:test';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { WebhookEndpoint } from '../db/entities/index.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

const URL_OK = 'http://127.0.0.1:9/hook';

async function setup(plan = 'PRO') {
  const app = await testApp();
  const org = await makeOrg(plan);
  const { key } = await makeKey(org.id);
  return { app, org, key };
}

describe('webhook endpoints', () => {
  test('create answers 201 with a whsec_ secret shown once and stored encrypted', async () => {
    const { app, key } = await setup();
    const res = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: ['post.published'], description: 'ci' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/webhooks/${res.body.endpoint.id}`);
    const { secret, endpoint } = res.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(endpoint).toMatchObject({ url: URL_OK, events: ['post.published'], enabled: true, description: 'ci', disabledReason: null });
    const got = await call(app, 'GET', `/v1/webhooks/${endpoint.id}`, { key });
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(secret.slice(6));
    const list = await call(app, 'GET', '/v1/webhooks', { key });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const row = await (await harness()).orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
    expect(row.secretEncrypted).toStartWith('v1:');
    expect(row.secretEncrypted).not.toContain(secret.slice(6));
  });

  test('PATCH changes url, events, enabled and description; DELETE removes it', async () => {
    const { app, key } = await setup();
    const { body } = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    const id = body.endpoint.id;
    expect(body.endpoint.events).toBe('all');
    const patched = await call(app, 'PATCH', `/v1/webhooks/${id}`, {
      key,
      body: { url: 'http://127.0.0.1:10/other', events: ['media.ready', 'media.failed'], enabled: false, description: 'x' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'http://127.0.0.1:10/other',
      events: ['media.ready', 'media.failed'],
      enabled: false,
      description: 'x',
    });
    expect((await call(app, 'PATCH', `/v1/webhooks/${id}`, { key, body: {} })).status).toBe(422);
    expect((await call(app, 'DELETE', `/v1/webhooks/${id}`, { key })).status).toBe(204);
    expect((await call(app, 'GET', `/v1/webhooks/${id}`, { key })).status).toBe(404);
  });

  test('rotate-secret shows a new secret and when the old one stops signing', async () => {
    const { app, key } = await setup();
    const { body } = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    const rotated = await call(app, 'POST', `/v1/webhooks/${body.endpoint.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(body.secret);
    const until = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(until).toBeGreaterThan(23 * 3_600_000);
    expect(until).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);
  });

  test('read may list and view; changing needs publish', async () => {
    const { app, org, key } = await setup();
    const { body } = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    const { key: reader } = await makeKey(org.id, { scopes: ['read'] });
    expect((await call(app, 'GET', '/v1/webhooks', { key: reader })).status).toBe(200);
    expect((await call(app, 'GET', `/v1/webhooks/${body.endpoint.id}/deliveries`, { key: reader })).status).toBe(200);
    for (const [method, path, payload] of [
      ['POST', '/v1/webhooks', { url: URL_OK, events: 'all' }],
      ['PATCH', `/v1/webhooks/${body.endpoint.id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${body.endpoint.id}`, undefined],
      ['POST', `/v1/webhooks/${body.endpoint.id}/rotate-secret`, undefined],
      ['POST', `/v1/webhooks/${body.endpoint.id}/test`, undefined],
    ] as const) {
      const res = await call(app, method, path, { key: reader, body: payload });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden_scope');
    }
  });

  test('the plan limits the number of endpoints (PRO 5)', async () => {
    const { app, key } = await setup('PRO');
    for (let i = 0; i < 5; i++)
      expect((await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } })).status).toBe(201);
    const sixth = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    expect(sixth.status).toBe(403);
    expect(sixth.body.error.code).toBe('limit_reached');
    expect(sixth.body.error.details).toMatchObject({ limit: 5, used: 5 });
  });

  test('refuses bad URLs and event names with 422 naming the field', async () => {
    const { app, key } = await setup();
    const field = async (body: unknown) => {
      const res = await call(app, 'POST', '/v1/webhooks', { key, body });
      expect(res.status).toBe(422);
      return res.body.error.details.fields.map((f: { path: string }) => f.path);
    };
    expect(await field({ url: 'ftp://example.com/x', events: 'all' })).toContain('url');
    expect(await field({ url: 'not a url', events: 'all' })).toContain('url');
    // Link-local (cloud metadata) stays refused even where private addresses are allowed.
    expect(await field({ url: 'http://169.254.169.254/latest', events: 'all' })).toContain('url');
    expect((await field({ url: URL_OK, events: ['post.exploded'] })).join()).toContain('events');
    // Production's policy: loopback refused.
    const strict = await testApp({ webhooks: { credentialsKey: (await harness()).credentialsKey, outbound: { allowPrivate: false } } });
    const res = await call(strict, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].path).toBe('url');
    expect(res.body.error.details.fields[0].message).toContain('loopback');
  });

  test('the document says which URLs are accepted, and one it refuses ("0") is a 422 at url', async () => {
    const { app, key } = await setup();
    const doc = (await call(app, 'GET', '/v1/openapi.json')).body;
    // JSON Schema 2020-12 with formats, as test/openapi-property.test.ts validates the document.
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
    addFormats(ajv);
    const { id } = (await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } })).body.endpoint;
    for (const [name, method, path] of [
      ['CreateWebhookRequest', 'POST', '/v1/webhooks'],
      ['UpdateWebhookRequest', 'PATCH', `/v1/webhooks/${id}`],
    ] as const) {
      const schema = doc.components.schemas[name].properties.url;
      const valid = ajv.compile(schema);
      for (const url of [
        '0',
        'not a url',
        'ftp://example.com/x',
        'http://user:pw@example.com/',
        'http://a:99999/',
        'http://1.2.3.4.5/',
        'http://a.1/',
      ]) {
        expect({ url, valid: valid(url) }).toEqual({ url, valid: false });
        const res = await call(app, method, path, { key, body: { url, events: 'all' } });
        expect({ url, status: res.status }).toEqual({ url, status: 422 });
        expect(res.body).toEqual({
          error: {
            code: 'validation_failed',
            message: expect.any(String),
            details: { fields: [{ path: 'url', message: expect.stringContaining('http(s) URL') }] },
          },
        });
      }
      for (const url of [URL_OK, 'https://hooks.example.com:8443/in?x=1#f', 'http://[2001:db8::1]/hook', 'http://xn--bcher-kva.example/'])
        expect({ url, valid: valid(url) }).toEqual({ url, valid: true });
      expect(valid(`http://a.example/${'x'.repeat(2048)}`)).toBe(false);
      expect({ format: schema.format, maxLength: schema.maxLength }).toEqual({ format: 'uri', maxLength: 2048 });
      expect(schema.pattern).toStartWith('^https?://');
    }
  });

  test('every URL the document accepts parses as an http(s) URL without user name or password', async () => {
    const { app } = await setup();
    const schema = (await call(app, 'GET', '/v1/openapi.json')).body.components.schemas.CreateWebhookRequest.properties.url;
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    addFormats(ajv);
    const valid = ajv.compile(schema);
    // An `xn--` label must also be valid Punycode: a rule the description states, no pattern can.
    const punycode = /(^|\.)xn--/i;
    fc.assert(
      fc.property(
        fc.stringMatching(new RegExp(schema.pattern)).filter((u) => valid(u)),
        (u) => {
          const host = u.slice(u.indexOf('//') + 2).split(/[/?#]/)[0]!;
          if (punycode.test(host)) return;
          const parsed = new URL(u);
          expect({ u, protocol: parsed.protocol, username: parsed.username, password: parsed.password }).toEqual({
            u,
            protocol: u.slice(0, u.indexOf(':') + 1),
            username: '',
            password: '',
          });
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("another organization's endpoints and deliveries are 404", async () => {
    const { app, key } = await setup();
    const { body } = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    const id = body.endpoint.id;
    const other = await makeOrg('PRO');
    const { key: otherKey } = await makeKey(other.id);
    for (const [method, path, payload] of [
      ['GET', `/v1/webhooks/${id}`, undefined],
      ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${id}`, undefined],
      ['POST', `/v1/webhooks/${id}/rotate-secret`, undefined],
      ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
      ['POST', `/v1/webhooks/${id}/deliveries/whd_01jz0000000000000000000000/redeliver`, undefined],
    ] as const) {
      const res = await call(app, method, path, { key: otherKey, body: payload });
      expect(res.status).toBe(404);
    }
    expect((await call(app, 'GET', '/v1/webhooks', { key: otherKey })).body.data).toEqual([]);
    // Still there and unchanged for its owner.
    expect((await call(app, 'GET', `/v1/webhooks/${id}`, { key })).body.enabled).toBe(true);
  });

  test('deliveries: a cursor the API did not return is 422', async () => {
    const { app, key } = await setup();
    const { body } = await call(app, 'POST', '/v1/webhooks', { key, body: { url: URL_OK, events: 'all' } });
    const res = await call(app, 'GET', `/v1/webhooks/${body.endpoint.id}/deliveries?cursor=abc`, { key });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].path).toBe('cursor');
    expect((await call(app, 'GET', `/v1/webhooks/${body.endpoint.id}/deliveries?limit=0`, { key })).status).toBe(422);
  });
});
