// Channels in the web application: OAuth 2.0 connect flows against a local fake authorization
// server (test/fakes/oauth.ts: PKCE checked, state single use), the credentials form (Mastodon
// against its fake, reading the instance's character limit), reconnecting a channel that needs
// it, and other organizations' channels out of reach.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel, OAuthGrant } from '../db/entities/index.ts';
import { decryptJson } from '../lib/crypto.ts';
import { setChannelStatus } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeOAuth, type FakeOAuth } from './fakes/oauth.ts';
import { harness, type Harness } from './harness/index.ts';
import { makeChannel, testApp } from './harness/fixtures.ts';
import { signedInUser, type Browser } from './harness/web-browser.ts';

let h: Harness;
let app: Awaited<ReturnType<typeof testApp>>;
let x: FakeOAuth;
let linkedin: FakeOAuth;
let threads: FakeOAuth;
let tiktok: FakeOAuth;
let mastodon: FakeMastodon;

beforeAll(async () => {
  h = await harness();
  x = await startFakeOAuth({ clientId: 'x-app', clientSecret: 'x-secret' });
  linkedin = await startFakeOAuth({ clientId: 'li-app', clientSecret: 'li-secret' });
  threads = await startFakeOAuth({ clientId: 'meta-app', clientSecret: 'meta-secret', rawTokenMembers: '"user_id": 17841400000000001' });
  tiktok = await startFakeOAuth({
    clientId: 'tt-key',
    clientSecret: 'tt-secret',
    clientIdParam: 'client_key',
    tokenExtras: { open_id: 'open-123' },
  });
  mastodon = await startFakeMastodon({ maxCharacters: 1000 });
  app = await testApp({
    web: {
      publicBaseUrl: 'http://localhost',
      credentialsKey: h.credentialsKey,
      outbound: { allowPrivate: true }, // the fake Mastodon listens on 127.0.0.1
      platforms: {
        X_CLIENT_ID: 'x-app',
        X_CLIENT_SECRET: 'x-secret',
        X_AUTHORIZE_URL: x.authorizeUrl,
        X_TOKEN_URL: x.tokenUrl,
        LINKEDIN_CLIENT_ID: 'li-app',
        LINKEDIN_CLIENT_SECRET: 'li-secret',
        LINKEDIN_AUTHORIZE_URL: linkedin.authorizeUrl,
        LINKEDIN_TOKEN_URL: linkedin.tokenUrl,
        META_APP_ID: 'meta-app',
        META_APP_SECRET: 'meta-secret',
        THREADS_AUTHORIZE_URL: threads.authorizeUrl,
        THREADS_TOKEN_URL: threads.tokenUrl,
        // The long-lived token exchange goes to the Threads Graph host: unreachable here, so the first token is kept.
        THREADS_GRAPH_URL: 'http://127.0.0.1:9',
        TIKTOK_CLIENT_KEY: 'tt-key',
        TIKTOK_CLIENT_SECRET: 'tt-secret',
        TIKTOK_AUTHORIZE_URL: tiktok.authorizeUrl,
        TIKTOK_TOKEN_URL: tiktok.tokenUrl,
      },
    },
  });
});
afterAll(async () => {
  for (const f of [x, linkedin, threads, tiktok]) await f?.stop();
  await mastodon?.stop();
});

const creds = (c: { credentialsEncrypted: string }) => decryptJson<Record<string, unknown>>(h.credentialsKey, c.credentialsEncrypted);
const channelsOf = (orgId: string) => h.orm.em.fork().find(Channel, { organization: orgId }, { orderBy: { createdAt: 'asc' } });

/** Starts the flow in the app, lets the fake approve, returns the callback path (code + state). */
async function authorize(browser: Browser, platform: string, form: Record<string, string>) {
  const start = await browser.post(`/channels/oauth/${platform}/start`, form);
  expect(start.status).toBe(303);
  const authorizeUrl = new URL(start.location!);
  const approved = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(approved.status).toBe(302);
  const callback = new URL(approved.headers.get('location')!);
  return { authorizeUrl, callback: callback.pathname + callback.search };
}

describe('OAuth connect', () => {
  test('X: authorize redirect with state and an S256 code_challenge; the callback exchanges the code with the verifier and stores the channel', async () => {
    const { browser, org } = await signedInUser(app);
    const connect = await browser.get('/channels/connect/x');
    expect(connect.status).toBe(200);
    expect(await connect.query('[data-testid="oauth-start"]')).toHaveLength(1);
    const { authorizeUrl, callback } = await authorize(browser, 'x', { name: 'Brand on X' });
    const q = authorizeUrl.searchParams;
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe(x.authorizeUrl);
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe('x-app');
    expect(q.get('redirect_uri')).toBe('http://localhost/channels/oauth/x/callback');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('scope')).toContain('tweet.write');
    expect(q.get('scope')).toContain('offline.access');
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(43);
    // The state is stored only as a hash.
    expect(await h.orm.em.fork().count(OAuthGrant, { stateHash: q.get('state')! })).toBe(0);

    const done = await browser.get(callback);
    expect(done.status).toBe(303);
    expect(done.location).toBe('/channels?notice=connected');
    const exchange = x.exchanges.at(-1)!;
    expect(exchange).toMatchObject({ grantType: 'authorization_code', ok: true, pkceVerified: true, clientAuth: 'basic' });

    const [channel] = await channelsOf(org.id);
    expect(channel).toMatchObject({ platform: 'X', name: 'Brand on X', status: 'active' });
    const stored = creds(channel!);
    expect(x.validAccessTokens.has(stored.accessToken as string)).toBe(true);
    expect(x.validRefreshTokens.has(stored.refreshToken as string)).toBe(true);
    expect(Date.parse(stored.expiresAt as string)).toBeGreaterThan(Date.now() + 3600_000);
    const list = await browser.get('/channels?notice=connected');
    expect((await list.one('[data-testid="notice"]')).text).toBe('Channel connected.');
    expect((await list.one('[data-testid="channel-row"]')).attrs['data-status']).toBe('active');

    // The state works once: the same callback again changes nothing and does not reach the token endpoint.
    const exchanges = x.exchanges.length;
    const replay = await browser.get(callback);
    expect(replay.status).toBe(400);
    expect((await replay.one('[data-testid="error-message"]')).text).toContain('already used');
    expect(x.exchanges.length).toBe(exchanges);
    expect(await channelsOf(org.id)).toHaveLength(1);
    expect(await h.orm.em.fork().count(OAuthGrant, { organization: org.id })).toBe(0);
  });

  test('the fake refuses a wrong code_verifier (what PKCE protects against)', async () => {
    const { browser } = await signedInUser(app);
    const { callback } = await authorize(browser, 'x', { name: 'X' });
    const code = new URL(callback, 'http://localhost').searchParams.get('code')!;
    const r = await fetch(x.tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa('x-app:x-secret')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://localhost/channels/oauth/x/callback',
        code_verifier: 'a'.repeat(64),
      }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_grant');
    expect(x.exchanges.at(-1)!.pkceVerified).toBe(false);
    // The app's own callback now fails cleanly: the code was spent.
    const res = await browser.get(callback);
    expect(res.status).toBe(502);
  });

  test('a state started by another user is refused and stays usable by its owner', async () => {
    const a = await signedInUser(app);
    const b = await signedInUser(app);
    const { callback } = await authorize(a.browser, 'x', { name: 'A on X' });
    const stolen = await b.browser.get(callback);
    expect(stolen.status).toBe(400);
    expect(await channelsOf(b.org.id)).toHaveLength(0);
    expect((await a.browser.get(callback)).status).toBe(303);
    expect(await channelsOf(a.org.id)).toHaveLength(1);
  });

  test('LinkedIn without an id_token: a follow-up form asks for the author URN', async () => {
    const { browser, org } = await signedInUser(app);
    const { authorizeUrl, callback } = await authorize(browser, 'linkedin', { name: 'Me on LinkedIn' });
    expect(authorizeUrl.searchParams.get('code_challenge')).toBeNull();
    const done = await browser.get(callback);
    expect(done.status).toBe(303);
    expect(done.location).toMatch(/^\/channels\/oauth\/finish\/[A-Za-z0-9_-]{32}$/);
    expect(linkedin.exchanges.at(-1)).toMatchObject({ ok: true, clientAuth: 'body', pkceVerified: null });
    expect(await channelsOf(org.id)).toHaveLength(0);
    const form = await browser.get(done.location!);
    expect(form.status).toBe(200);
    expect(await form.query('[data-testid="oauth-account"]')).toHaveLength(1);
    const empty = await browser.post(done.location!, { account: '' });
    expect(empty.status).toBe(422);
    const finished = await browser.post(done.location!, { account: 'urn:li:person:abc123' });
    expect(finished.status).toBe(303);
    const [channel] = await channelsOf(org.id);
    expect(channel).toMatchObject({ platform: 'LINKEDIN', name: 'Me on LinkedIn', status: 'active' });
    expect(creds(channel!)).toMatchObject({ authorUrn: 'urn:li:person:abc123' });
    expect(linkedin.validAccessTokens.has(creds(channel!).accessToken as string)).toBe(true);
    // Finished once: a second submit creates nothing.
    expect((await browser.post(done.location!, { account: 'urn:li:person:abc123' })).status).toBe(404);
    expect(await channelsOf(org.id)).toHaveLength(1);
  });

  test('Threads: the user id comes with the token (a number past 2^53, kept exact), no follow-up; TikTok uses client_key', async () => {
    const { browser, org } = await signedInUser(app);
    const t = await authorize(browser, 'threads', { name: 'Threads' });
    expect((await browser.get(t.callback)).status).toBe(303);
    const tt = await authorize(browser, 'tiktok', { name: 'TikTok' });
    expect(tt.authorizeUrl.searchParams.get('client_key')).toBe('tt-key');
    expect(tt.authorizeUrl.searchParams.get('scope')).toContain(',');
    expect((await browser.get(tt.callback)).status).toBe(303);
    const [th, tk] = await channelsOf(org.id);
    expect(creds(th!)).toMatchObject({ threadsUserId: '17841400000000001' });
    expect(creds(tk!)).toMatchObject({ openId: 'open-123' });
    expect(tiktok.exchanges.at(-1)).toMatchObject({ ok: true, clientAuth: 'body' });
  });

  test('the user denies access at the platform: nothing is stored, the page says why', async () => {
    const { browser, org } = await signedInUser(app);
    x.denyNext();
    const { callback } = await authorize(browser, 'x', { name: 'X' });
    const r = await browser.get(callback);
    expect(r.status).toBe(400);
    expect((await r.one('[data-testid="error-message"]')).text).toContain('denied');
    expect(await channelsOf(org.id)).toHaveLength(0);
  });

  test('a platform without app credentials says what to set; starting it is refused', async () => {
    const { browser } = await signedInUser(app);
    const page = await browser.get('/channels/connect/pinterest');
    expect((await page.one('[data-testid="oauth-not-configured"]')).text).toContain('PINTEREST_CLIENT_ID');
    expect(await page.query('[data-testid="oauth-start"]')).toHaveLength(0);
    expect((await browser.post('/channels/oauth/pinterest/start', { name: 'P' })).status).toBe(409);
    // Tokens can still be entered by hand (JSON).
    expect(await page.query('[data-testid="credentials-json"]')).toHaveLength(1);
  });
});

describe('credentials form', () => {
  test("Mastodon: instance URL + token; the instance's character limit is read; secrets are stored encrypted", async () => {
    const { browser, org } = await signedInUser(app);
    const page = await browser.get('/channels/connect/mastodon');
    expect(await page.query('[data-testid="credential-instanceUrl"]')).toHaveLength(1);
    expect((await page.one('[data-testid="credential-accessToken"]')).attrs.type).toBe('password');
    const r = await browser.post('/channels/connect/mastodon', {
      name: 'Our Mastodon',
      cred_instanceUrl: `${mastodon.url}/`,
      cred_accessToken: 'good-token',
    });
    expect(r.status).toBe(303);
    const [c] = await channelsOf(org.id);
    expect(c).toMatchObject({ platform: 'MASTODON', name: 'Our Mastodon', status: 'active', maxChars: 1000 });
    expect(c!.credentialsEncrypted).not.toContain('good-token');
    expect(creds(c!)).toEqual({ instanceUrl: mastodon.url, accessToken: 'good-token' });
  });

  test('missing or malformed values: 422 with the form again (secrets not echoed), nothing stored', async () => {
    const { browser, org } = await signedInUser(app);
    const r = await browser.post('/channels/connect/mastodon', { name: 'M', cred_instanceUrl: 'not a url', cred_accessToken: 'tok' });
    expect(r.status).toBe(422);
    expect((await r.one('[data-testid="form-errors"]')).text).toContain('instanceUrl');
    expect((await r.one('[data-testid="credential-accessToken"]')).attrs.value).toBe('');
    const r2 = await browser.post('/channels/connect/telegram', { name: 'T', cred_botToken: '', cred_chatId: '@chan' });
    expect(r2.status).toBe(422);
    expect((await r2.one('[data-testid="form-errors"]')).text).toContain('botToken');
    const json = await browser.post('/channels/connect/reddit', { name: 'R', credentialsJson: '[1,2]' });
    expect(json.status).toBe(422);
    expect(await channelsOf(org.id)).toHaveLength(0);
  });

  test('an instance on a loopback or private address: 422 naming the field, nothing stored or sent (new and reconnect)', async () => {
    // Production's policy: public addresses only.
    const strict = await testApp({
      web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {}, outbound: { allowPrivate: false } },
    });
    const { browser, org } = await signedInUser(strict);
    const before = mastodon.requests.length;
    const r = await browser.post('/channels/connect/mastodon', {
      name: 'Internal',
      cred_instanceUrl: mastodon.url,
      cred_accessToken: 'good-token',
    });
    expect(r.status).toBe(422);
    const errs = (await r.one('[data-testid="form-errors"]')).text;
    expect(errs).toContain(
      `credentials.instanceUrl: ${new URL(mastodon.url).host} is a loopback address; this service does not connect there`,
    );
    expect((await r.one('[data-testid="credential-instanceUrl"]')).attrs.value).toBe(mastodon.url);
    const b = await browser.post('/channels/connect/bluesky', {
      name: 'B',
      cred_service: 'http://10.0.0.7:2583',
      cred_identifier: 'a.test',
      cred_appPassword: 'x',
    });
    expect(b.status).toBe(422);
    expect((await b.one('[data-testid="form-errors"]')).text).toContain('credentials.service: 10.0.0.7:2583 is a private-network address');
    expect(await channelsOf(org.id)).toHaveLength(0);

    const ch = await makeChannel(org.id, 'MASTODON', { name: 'Keep me' });
    const again = await browser.post('/channels/connect/mastodon', {
      channelId: ch.id,
      cred_instanceUrl: 'http://169.254.169.254',
      cred_accessToken: 'x',
    });
    expect(again.status).toBe(422);
    expect((await again.one('[data-testid="form-errors"]')).text).toContain(
      'credentials.instanceUrl: 169.254.169.254 is a link-local address',
    );
    expect(creds((await channelsOf(org.id))[0]!)).toMatchObject({ instanceUrl: 'https://mastodon.example' });
    expect(mastodon.requests.length).toBe(before);
  });

  test('Bluesky, Telegram, Discord forms, and JSON by hand for an OAuth platform', async () => {
    const { browser, org } = await signedInUser(app);
    expect(
      (
        await browser.post('/channels/connect/bluesky', {
          name: 'B',
          cred_service: 'https://bsky.social',
          cred_identifier: 'alice.bsky.social',
          cred_appPassword: 'abcd-efgh',
        })
      ).status,
    ).toBe(303);
    expect((await browser.post('/channels/connect/telegram', { name: 'T', cred_botToken: '123:abc', cred_chatId: '@chan' })).status).toBe(
      303,
    );
    expect(
      (await browser.post('/channels/connect/discord', { name: 'D', cred_webhookUrl: 'https://discord.com/api/webhooks/1/x' })).status,
    ).toBe(303);
    expect(
      (
        await browser.post('/channels/connect/pinterest', {
          name: 'P',
          credentialsJson: JSON.stringify({ accessToken: 'tok', boardId: '99' }),
        })
      ).status,
    ).toBe(303);
    const all = await channelsOf(org.id);
    expect(all.map((c) => c.platform)).toEqual(['BLUESKY', 'TELEGRAM', 'DISCORD', 'PINTEREST']);
    expect(creds(all[3]!)).toEqual({ accessToken: 'tok', boardId: '99' });
  });
});

describe('reconnect', () => {
  test('a reauth_required Mastodon channel: new credentials replace the old, the channel is active again (same id)', async () => {
    const { browser, org } = await signedInUser(app);
    const ch = await makeChannel(org.id, 'MASTODON', { name: 'Needs love' });
    await setChannelStatus(h.orm.em.fork(), ch.id, 'reauth_required');
    const list = await browser.get('/channels');
    const row = await list.one(`[data-testid="channel-row"][data-channel-id="${ch.id}"]`);
    expect(row.attrs['data-status']).toBe('reauth_required');
    expect((await list.one('[data-testid="channel-status"]')).text).toBe('Needs reconnecting');
    const link = (await list.one('[data-testid="channel-reconnect"]')).attrs.href!;
    expect(link).toBe(`/channels/connect/mastodon?channel=${ch.id}`);
    const form = await browser.get(link);
    expect(await form.query('[data-testid="reauth-notice"]')).toHaveLength(1);
    expect((await form.one('input[name="channelId"]')).attrs.value).toBe(ch.id);
    const r = await browser.post('/channels/connect/mastodon', {
      channelId: ch.id,
      cred_instanceUrl: mastodon.url,
      cred_accessToken: 'good-token',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/channels?notice=reconnected');
    const all = await channelsOf(org.id);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: ch.id, status: 'active', maxChars: 1000, name: 'Needs love' });
    expect(creds(all[0]!)).toEqual({ instanceUrl: mastodon.url, accessToken: 'good-token' });
  });

  test('a reauth_required X channel through OAuth: same channel, new tokens, active', async () => {
    const { browser, org } = await signedInUser(app);
    const ch = await makeChannel(org.id, 'X', { name: 'Old X' });
    await setChannelStatus(h.orm.em.fork(), ch.id, 'reauth_required');
    const form = await browser.get(`/channels/connect/x?channel=${ch.id}`);
    expect((await form.one('[data-testid="oauth-start-form"] input[name="channelId"]')).attrs.value).toBe(ch.id);
    const { callback } = await authorize(browser, 'x', { channelId: ch.id });
    expect((await browser.get(callback)).location).toBe('/channels?notice=reconnected');
    const all = await channelsOf(org.id);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: ch.id, status: 'active', name: 'Old X' });
    expect(x.validAccessTokens.has(creds(all[0]!).accessToken as string)).toBe(true);
  });

  test('a LinkedIn reconnect keeps the account it posts as (no follow-up form)', async () => {
    const { browser, org } = await signedInUser(app);
    const ch = await makeChannel(org.id, 'LINKEDIN');
    const { callback } = await authorize(browser, 'linkedin', { channelId: ch.id });
    expect((await browser.get(callback)).location).toBe('/channels?notice=reconnected');
    const [c] = await channelsOf(org.id);
    expect(creds(c!)).toMatchObject({ authorUrn: 'tok' });
    expect(linkedin.validAccessTokens.has(creds(c!).accessToken as string)).toBe(true);
  });

  test("another organization's channel cannot be reconnected or even shown", async () => {
    const a = await signedInUser(app);
    const b = await signedInUser(app);
    const ch = await makeChannel(a.org.id, 'MASTODON');
    expect((await b.browser.get(`/channels/connect/mastodon?channel=${ch.id}`)).status).toBe(404);
    const r = await b.browser.post('/channels/connect/mastodon', {
      channelId: ch.id,
      cred_instanceUrl: mastodon.url,
      cred_accessToken: 'evil',
    });
    expect(r.status).toBe(404);
    expect((await b.browser.post('/channels/oauth/x/start', { channelId: ch.id })).status).toBe(404);
    expect(creds((await channelsOf(a.org.id))[0]!)).toMatchObject({ accessToken: 'tok' });
    expect((await b.browser.get('/channels')).html).not.toContain(ch.id);
  });
});
