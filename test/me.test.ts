// GET /v1/me: exactly the fields of SPEC.md §2.1, with real quota figures.
import { describe, expect, test } from 'bun:test';
import { PLAN_LIMITS } from '../lib/plans.ts';
import { setOrganizationPlan } from '../domain/organizations.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

describe('GET /v1/me', () => {
  test('has exactly the spec fields, all present', async () => {
    const org = await makeOrg('PRO', 'Acme');
    const expiresAt = new Date('2031-05-06T07:08:09.000Z');
    const k = await makeKey(org.id, { name: 'ci key', scopes: ['read', 'publish'], expiresAt });
    const app = await testApp({ now: () => new Date('2026-11-21T12:00:00Z') });
    const r = await call(app, 'GET', '/v1/me', { key: k.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      organization: { id: org.id, name: 'Acme', plan: 'PRO' },
      key: { name: 'ci key', prefix: k.key.slice(0, 12), scopes: ['read', 'publish'], channels: 'all', expiresAt: expiresAt.toISOString() },
      quota: { requestsPerMinute: 60, requestsPerMonth: 10000, usedThisMonth: 1, resetsAt: '2026-12-01T00:00:00.000Z' },
    });
    expect(Object.keys(r.body).sort()).toEqual(['key', 'organization', 'quota']);
    expect(Object.keys(r.body.key).sort()).toEqual(['channels', 'expiresAt', 'name', 'prefix', 'scopes']);
    expect(Object.keys(r.body.quota).sort()).toEqual(['requestsPerMinute', 'requestsPerMonth', 'resetsAt', 'usedThisMonth']);
    expect(r.body.key.prefix).toStartWith('sk_live_');
  });

  test('expiresAt is null for a key without expiry; channels lists a limited key', async () => {
    const org = await makeOrg();
    const ch = await makeChannel(org.id);
    const k = await makeKey(org.id, { channels: [ch.id] });
    const r = await call(await testApp(), 'GET', '/v1/me', { key: k.key });
    expect(r.body.key.expiresAt).toBeNull();
    expect(r.body.key.channels).toEqual([ch.id]);
  });

  test('usedThisMonth counts every authenticated request of the organization, per UTC month', async () => {
    const org = await makeOrg();
    const k1 = await makeKey(org.id);
    const k2 = await makeKey(org.id, { scopes: ['publish'] });
    let now = new Date('2026-11-30T23:59:00Z');
    const app = await testApp({ now: () => now });
    for (let i = 0; i < 3; i++) await call(app, 'GET', '/v1/channels', { key: k1.key });
    // A request refused for scope is still an authenticated request.
    expect((await call(app, 'GET', '/v1/me', { key: k2.key })).status).toBe(403);
    const me = await call(app, 'GET', '/v1/me', { key: k1.key });
    expect(me.body.quota.usedThisMonth).toBe(5);
    expect(me.body.quota.resetsAt).toBe('2026-12-01T00:00:00.000Z');
    // Unauthenticated requests do not count.
    await call(app, 'GET', '/v1/me', { key: `sk_live_${'Z'.repeat(40)}` });
    // The next UTC month starts from zero.
    now = new Date('2026-12-01T00:00:00Z');
    const dec = await call(app, 'GET', '/v1/me', { key: k1.key });
    expect(dec.body.quota.usedThisMonth).toBe(1);
    expect(dec.body.quota.resetsAt).toBe('2027-01-01T00:00:00.000Z');
  });

  test('concurrent requests are all counted', async () => {
    const org = await makeOrg();
    const k = await makeKey(org.id);
    const app = await testApp();
    await Promise.all(Array.from({ length: 25 }, () => call(app, 'GET', '/v1/channels', { key: k.key })));
    const me = await call(app, 'GET', '/v1/me', { key: k.key });
    expect(me.body.quota.usedThisMonth).toBe(26);
  });

  test('quota figures follow the plan; ENTERPRISE is unlimited (null)', async () => {
    const h = await harness();
    const org = await makeOrg('TEAM');
    const k = await makeKey(org.id);
    const app = await testApp();
    const team = await call(app, 'GET', '/v1/me', { key: k.key });
    expect(team.body.quota.requestsPerMinute).toBe(PLAN_LIMITS.TEAM.requestsPerMinute);
    expect(team.body.quota.requestsPerMonth).toBe(100000);
    await setOrganizationPlan(h.orm.em.fork(), org.id, 'ENTERPRISE');
    const ent = await call(app, 'GET', '/v1/me', { key: k.key });
    expect(ent.body.organization.plan).toBe('ENTERPRISE');
    expect(ent.body.quota.requestsPerMinute).toBe(1200);
    expect(ent.body.quota.requestsPerMonth).toBeNull();
  });
});
