// The auth matrix of SPEC.md §5 / DESIGN.md §3.
import { describe, expect, test } from 'bun:test';
import { ApiKey } from '../db/entities/index.ts';
import { hashApiKey } from '../lib/crypto.ts';
import { revokeApiKey } from '../services/api-keys.ts';
import { setOrganizationPlan } from '../domain/organizations.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

function expectError(r: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.body).toEqual({
    error: { code, message: expect.any(String), ...(r.body?.error?.details ? { details: expect.anything() } : {}) },
  });
  expect(r.headers.get('x-request-id')).toBeTruthy();
  expect(r.headers.get('content-type')).toContain('application/json');
}

describe('authentication', () => {
  test('missing, malformed, unknown keys → 401 unauthorized', async () => {
    const app = await testApp();
    expectError(await call(app, 'GET', '/v1/me'), 401, 'unauthorized');
    expectError(await call(app, 'GET', '/v1/me', { headers: { authorization: 'Basic abc' } }), 401, 'unauthorized');
    expectError(await call(app, 'GET', '/v1/me', { headers: { authorization: 'Bearer' } }), 401, 'unauthorized');
    expectError(await call(app, 'GET', '/v1/me', { key: 'sk_live_short' }), 401, 'unauthorized');
    expectError(await call(app, 'GET', '/v1/me', { key: `sk_test_${'a'.repeat(40)}` }), 401, 'unauthorized');
    // Well-formed but never issued.
    expectError(await call(app, 'GET', '/v1/me', { key: `sk_live_${'A'.repeat(40)}` }), 401, 'unauthorized');
    expectError(await call(app, 'GET', '/v1/channels', { key: `sk_live_${'B'.repeat(40)}` }), 401, 'unauthorized');
  });

  test('a valid key works; the bearer scheme is case-insensitive', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const app = await testApp();
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/me', { headers: { authorization: `bearer ${key}` } })).status).toBe(200);
  });

  test('a key that differs in one character is rejected', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const last = key.at(-1) === 'a' ? 'b' : 'a';
    const app = await testApp();
    expectError(await call(app, 'GET', '/v1/me', { key: key.slice(0, -1) + last }), 401, 'unauthorized');
  });

  test('expired key → 401; not yet expired → 200', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id, { expiresAt: new Date('2030-01-01T00:00:00Z') });
    const before = await testApp({ now: () => new Date('2029-12-31T23:59:59Z') });
    expect((await call(before, 'GET', '/v1/me', { key })).status).toBe(200);
    const after = await testApp({ now: () => new Date('2030-01-01T00:00:00Z') });
    const r = await call(after, 'GET', '/v1/me', { key });
    expectError(r, 401, 'unauthorized');
    expect(r.body.error.message).toMatch(/expired/);
  });

  test('revoked key → 401', async () => {
    const h = await harness();
    const org = await makeOrg();
    const k = await makeKey(org.id);
    const app = await testApp();
    expect((await call(app, 'GET', '/v1/me', { key: k.key })).status).toBe(200);
    await revokeApiKey(h.orm.em.fork(), k.id);
    const r = await call(app, 'GET', '/v1/me', { key: k.key });
    expectError(r, 401, 'unauthorized');
    expect(r.body.error.message).toMatch(/revoked/);
  });

  test('FREE plan → 403 plan_required, on every endpoint', async () => {
    const h = await harness();
    const org = await makeOrg('FREE');
    const { key } = await makeKey(org.id);
    const app = await testApp();
    expectError(await call(app, 'GET', '/v1/me', { key }), 403, 'plan_required');
    expectError(await call(app, 'GET', '/v1/channels', { key }), 403, 'plan_required');
    await setOrganizationPlan(h.orm.em.fork(), org.id, 'TEAM');
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
  });

  test('each scope: read is needed for /me and /channels; generate or publish alone are not enough', async () => {
    const org = await makeOrg();
    const app = await testApp();
    for (const scopes of [['publish'], ['generate'], ['generate', 'publish']]) {
      const { key } = await makeKey(org.id, { scopes });
      const me = await call(app, 'GET', '/v1/me', { key });
      expectError(me, 403, 'forbidden_scope');
      expect(me.body.error.details).toEqual({ requiredScope: 'read' });
      expectError(await call(app, 'GET', '/v1/channels', { key }), 403, 'forbidden_scope');
    }
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/channels', { key })).status).toBe(200);
  });

  test('only a hash of the key is stored, and lastUsedAt is updated on use', async () => {
    const h = await harness();
    const org = await makeOrg();
    const k = await makeKey(org.id);
    const row0 = await h.orm.em.fork().findOneOrFail(ApiKey, { id: k.id });
    expect(row0.hash).toBe(hashApiKey(k.key));
    expect(JSON.stringify(row0)).not.toContain(k.key);
    expect(row0.lastUsedAt).toBeNull();
    const at = new Date('2026-11-21T10:00:00Z');
    const app = await testApp({ now: () => at });
    await call(app, 'GET', '/v1/me', { key: k.key });
    const row1 = await h.orm.em.fork().findOneOrFail(ApiKey, { id: k.id });
    expect(row1.lastUsedAt?.toISOString()).toBe(at.toISOString());
  });

  test('a channel-limited key sees only its channels', async () => {
    const org = await makeOrg();
    const a = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'BLUESKY');
    await makeChannel(org.id, 'DISCORD');
    const { key } = await makeKey(org.id, { channels: [a.id, b.id] });
    const app = await testApp();
    const r = await call(app, 'GET', '/v1/channels', { key });
    expect(r.status).toBe(200);
    expect(r.body.data.map((c: { id: string }) => c.id).sort()).toEqual([a.id, b.id].sort());
    const me = await call(app, 'GET', '/v1/me', { key });
    expect([...me.body.key.channels].sort()).toEqual([a.id, b.id].sort());
  });
});
