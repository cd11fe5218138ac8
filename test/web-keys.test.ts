// Settings → API keys in the web application: the full key is shown once, then only its prefix;
// a revoked key is refused by the API; another organization's keys are never visible.
import { beforeAll, describe, expect, test } from 'bun:test';
import { listApiKeys } from '../services/api-keys.ts';
import { harness, type Harness } from './harness/index.ts';
import { call, makeChannel, makeKey, testApp } from './harness/fixtures.ts';
import { signedInUser } from './harness/web-browser.ts';

let h: Harness;
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  h = await harness();
  app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
});

describe('API keys page', () => {
  test('create: the full key once (POST → 303 → the page, no-store) with a copy button; afterwards only its prefix; it works on /v1/me', async () => {
    const { browser, org } = await signedInUser(app);
    const posted = await browser.post('/settings/api-keys', {
      name: 'Zapier',
      scopes: ['read', 'publish'],
      channels: 'all',
      expiry: 'never',
    });
    // POST-redirect-GET: reloading the page cannot send the form (and create a key) again.
    expect(posted.status).toBe(303);
    expect(posted.location).toBe('/settings/api-keys?notice=created');
    expect(posted.html).not.toMatch(/sk_live_/);
    const created = await browser.get(posted.location!);
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const key = (await created.one('[data-testid="new-api-key"]')).attrs.value!;
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect((await created.one('[data-testid="copy-api-key"]')).attrs['data-copy']).toBe('new-api-key');
    // Exactly once on that page: the list shows the prefix only.
    expect(created.html.split(key).length - 1).toBe(1);
    const row = await created.one('[data-testid="key-row"]');
    expect(row.attrs['data-status']).toBe('active');
    expect((await created.one('[data-testid="key-prefix"]')).text).toBe(`${key.slice(0, 12)}…`);

    const later = await browser.get('/settings/api-keys');
    expect(later.html).not.toContain(key);
    expect(later.html).not.toContain(key.slice(12));
    expect(await later.query('[data-testid="new-api-key"]')).toHaveLength(0);
    expect((await later.one('[data-testid="key-prefix"]')).text).toBe(`${key.slice(0, 12)}…`);
    expect((await later.one('[data-testid="key-scopes"]')).text).toBe('read, publish');
    expect((await later.one('[data-testid="key-channels"]')).text).toBe('All');
    expect((await later.one('[data-testid="key-last-used"]')).text).toBe('Never');

    const me = await call(app, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.organization.id).toBe(org.id);
    expect(me.body.key).toMatchObject({ name: 'Zapier', scopes: ['read', 'publish'], channels: 'all', expiresAt: null });
    // Last use shows up in the list.
    expect((await (await browser.get('/settings/api-keys')).one('[data-testid="key-last-used"]')).text).not.toBe('Never');
  });

  test("channel-limited key with an expiry date (end of that day in the viewer's zone)", async () => {
    const { browser, org } = await signedInUser(app);
    const a = await makeChannel(org.id, 'MASTODON', { name: 'Team Mastodon' });
    await makeChannel(org.id, 'DISCORD');
    const year = new Date().getUTCFullYear() + 1;
    const r = await browser.post('/settings/api-keys', {
      name: 'limited',
      scopes: ['read'],
      channels: 'some',
      channelIds: [a.id],
      expiry: 'custom',
      expiresOn: `${year}-03-10`,
      tz: 'Europe/Berlin',
    });
    expect(r.status).toBe(303);
    const [k] = await listApiKeys(h.orm.em.fork(), org.id);
    expect(k!.channels).toEqual([a.id]);
    expect(k!.expiresAt).toBe(`${year}-03-10T23:00:00.000Z`); // midnight after 10 March in Berlin (UTC+1)
    expect((await (await browser.get('/settings/api-keys')).one('[data-testid="key-channels"]')).text).toBe('Team Mastodon');
    const relative = await browser.post('/settings/api-keys', { name: 'ninety', scopes: ['read'], channels: 'all', expiry: '90' });
    expect(relative.status).toBe(303);
    const ninety = (await listApiKeys(h.orm.em.fork(), org.id)).find((x) => x.name === 'ninety')!;
    expect(Date.parse(ninety.expiresAt!) - Date.now()).toBeGreaterThan(89 * 86_400_000);
  });

  test('invalid input: 422 with the reasons, the form kept, nothing created', async () => {
    const { browser, org } = await signedInUser(app);
    const r = await browser.post('/settings/api-keys', { name: '  ', channels: 'some', expiry: 'custom', expiresOn: '' });
    expect(r.status).toBe(422);
    expect(await r.query('[data-testid="new-api-key"]')).toHaveLength(0);
    const errors = (await r.one('[data-testid="form-errors"]')).text;
    expect(errors).toContain('expiresAt');
    const r2 = await browser.post('/settings/api-keys', { name: 'x', channels: 'some', expiry: 'never' });
    expect(r2.status).toBe(422);
    expect((await r2.one('[data-testid="form-errors"]')).text).toMatch(/scopes|channels/);
    expect(await listApiKeys(h.orm.em.fork(), org.id)).toHaveLength(0);
  });

  test('revoke: the key is refused by GET /v1/me (401), the list says revoked', async () => {
    const { browser } = await signedInUser(app);
    const posted = await browser.post('/settings/api-keys', { name: 'to revoke', scopes: ['read'], channels: 'all', expiry: 'never' });
    const created = await browser.get(posted.location!);
    const key = (await created.one('[data-testid="new-api-key"]')).attrs.value!;
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
    const id = (await created.one('[data-testid="key-row"]')).attrs['data-key-id']!;
    const revoked = await browser.post(`/settings/api-keys/${id}/revoke`);
    expect(revoked.status).toBe(303);
    const me = await call(app, 'GET', '/v1/me', { key });
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('unauthorized');
    const page = await browser.get(revoked.location!);
    expect((await page.one('[data-testid="key-row"]')).attrs['data-status']).toBe('revoked');
    expect(await page.query('[data-testid="key-revoke"]')).toHaveLength(0);
    expect((await page.one('[data-testid="notice"]')).text).toBe('Key revoked.');
  });

  test("another organization's keys are neither listed nor revocable", async () => {
    const a = await signedInUser(app);
    const b = await signedInUser(app);
    const { id, key } = await makeKey(a.org.id, { name: 'secret-a' });
    const page = await b.browser.get('/settings/api-keys');
    expect(page.html).not.toContain('secret-a');
    expect(page.html).not.toContain(id);
    const r = await b.browser.post(`/settings/api-keys/${id}/revoke`);
    expect(r.status).toBe(404);
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
  });

  test('a FREE organization is told its keys will be refused', async () => {
    const { browser } = await signedInUser(app, { plan: 'FREE' });
    const page = await browser.get('/settings/api-keys');
    expect(await page.query('[data-testid="plan-notice"]')).toHaveLength(1);
  });
});
