// The web application's sign-in, sessions, CSRF protection, error pages and escaping, through
// app.handle() with a cookie jar (test/harness/web-browser.ts).
import { beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { Session, User } from '../db/entities/index.ts';
import { COMMANDS } from '../cli/commands.ts';
import { createUser } from '../services/users.ts';
import { addChannel } from '../domain/channels.ts';
import { harness, type Harness } from './harness/index.ts';
import { makeOrg, testApp } from './harness/fixtures.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let h: Harness;
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  h = await harness();
  app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
});

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('sign-in', () => {
  test('pages need a session: / and /calendar redirect to the sign-in form, which carries a CSRF token', async () => {
    const b = new Browser(app);
    const root = await b.get('/');
    expect(root.status).toBe(303);
    expect(root.location).toBe('/sign-in');
    const cal = await b.get('/calendar?view=week');
    expect(cal.status).toBe(303);
    expect(cal.location).toBe(`/sign-in?next=${encodeURIComponent('/calendar?view=week')}`);
    const form = await b.get(cal.location!);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toContain('text/html');
    expect(form.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await form.query('[data-testid="sign-in-form"]')).toHaveLength(1);
    expect((await form.one('input[name="next"]')).attrs.value).toBe('/calendar?view=week');
    const pre = form.setCookies.find((c) => c.startsWith('pp_signin='))!;
    expect(pre).toContain('HttpOnly');
    expect(pre).toContain('SameSite=Lax');
    expect((await form.one('input[name="_csrf"]')).attrs.value).toBe(b.jar.get('pp_signin')!);
  });

  test('right password: a session cookie (HttpOnly, SameSite=Lax, not Secure on http) holding a token stored only as its hash', async () => {
    const org = await makeOrg();
    const email = `Alice.${crypto.randomUUID().slice(0, 6)}@Example.com`;
    await createUser(h.orm.em.fork(), { organizationId: org.id, email, password: 'correct horse battery' });
    const b = new Browser(app);
    const res = await b.signIn(email.toUpperCase(), 'correct horse battery', '/channels');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/channels');
    const cookie = res.setCookies.find((c) => c.startsWith('pp_session='))!;
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).toMatch(/Max-Age=\d{6,}/);
    expect(cookie).not.toContain('Secure');
    const token = b.jar.get('pp_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const session = await h.orm.em.fork().findOneOrFail(Session, { id: sha256(token) });
    expect(session.organization).toBe(org.id);
    expect(await h.orm.em.fork().count(Session, { id: token })).toBe(0);
    // The session works, and the page shows who is signed in.
    const page = await b.get('/channels');
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="current-user"]')).text).toBe(email.toLowerCase());
    // The stored password is an Argon2id hash.
    const user = await h.orm.em.fork().findOneOrFail(User, { email: email.toLowerCase() });
    expect(user.passwordHash).toStartWith('$argon2id$');
  });

  test('https public base URL: the session cookie is Secure', async () => {
    const secureApp = await testApp({ web: { publicBaseUrl: 'https://app.example.com', credentialsKey: h.credentialsKey, platforms: {} } });
    const b = new Browser(secureApp);
    const org = await makeOrg();
    const email = `sec-${crypto.randomUUID().slice(0, 6)}@example.com`;
    await createUser(h.orm.em.fork(), { organizationId: org.id, email, password: 'correct horse battery' });
    const res = await b.signIn(email, 'correct horse battery');
    expect(res.setCookies.find((c) => c.startsWith('pp_session='))).toContain('Secure');
  });

  test('wrong password or unknown email: 401 with one message for both, no session', async () => {
    const { email } = await signedInUser(app);
    for (const [who, pw] of [
      [email, 'wrong password!'],
      ['nobody@example.com', 'correct horse battery'],
    ] as const) {
      const b = new Browser(app);
      const res = await b.signIn(who, pw);
      expect(res.status).toBe(401);
      expect((await res.one('[data-testid="sign-in-error"]')).text).toBe('The email or password is not correct.');
      expect(b.jar.has('pp_session')).toBe(false);
      // The email is kept in the form, the password is not.
      expect((await res.one('[data-testid="sign-in-email"]')).attrs.value).toBe(who);
      expect((await res.one('[data-testid="sign-in-password"]')).attrs.value).toBeUndefined();
    }
  });

  test('sign-in without the form token (login CSRF) is refused', async () => {
    const { email, password } = await signedInUser(app);
    const b = new Browser(app);
    await b.get('/sign-in');
    const res = await b.post('/sign-in', { _csrf: 'forged', email, password }, { csrf: false });
    expect(res.status).toBe(403);
    expect(b.jar.has('pp_session')).toBe(false);
  });

  test('after 10 failures for an email, even the right password waits (429)', async () => {
    const { email, password } = await signedInUser(app);
    const b = new Browser(app);
    for (let i = 0; i < 10; i++) expect((await b.signIn(email, `nope-${i}-xxxx`)).status).toBe(401);
    const res = await b.signIn(email, password);
    expect(res.status).toBe(429);
    expect(b.jar.has('pp_session')).toBe(false);
  });

  test('next only ever points into the app', async () => {
    const { email, password } = await signedInUser(app);
    for (const next of ['https://evil.example/x', '//evil.example', '/\\evil.example']) {
      const b = new Browser(app);
      const res = await b.signIn(email, password, next);
      expect(res.location).toBe('/calendar');
    }
  });

  test('sign-out ends the session (the old cookie no longer works)', async () => {
    const { browser } = await signedInUser(app);
    const token = browser.jar.get('pp_session')!;
    const res = await browser.post('/sign-out');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/sign-in');
    expect(res.setCookies.find((c) => c.startsWith('pp_session='))).toContain('Max-Age=0');
    expect(await h.orm.em.fork().count(Session, { id: sha256(token) })).toBe(0);
    const replay = new Browser(app);
    replay.jar.set('pp_session', token);
    expect((await replay.get('/calendar')).status).toBe(303);
  });

  test('a session used in its second week is extended (the cookie is sent again)', async () => {
    const { browser } = await signedInUser(app);
    const id = sha256(browser.jar.get('pp_session')!);
    await h.orm.em.fork().nativeUpdate(Session, { id }, { expiresAt: new Date(Date.now() + 86_400_000) });
    const page = await browser.get('/channels');
    expect(page.status).toBe(200);
    expect(page.setCookies.find((c) => c.startsWith('pp_session='))).toMatch(/Max-Age=1209\d{3}/);
    const row = await h.orm.em.fork().findOneOrFail(Session, { id });
    expect(row.expiresAt.getTime()).toBeGreaterThan(Date.now() + 13 * 86_400_000);
  });

  test('an expired session is not accepted', async () => {
    const { browser } = await signedInUser(app);
    const id = sha256(browser.jar.get('pp_session')!);
    await h.orm.em.fork().nativeUpdate(Session, { id }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await browser.get('/calendar')).status).toBe(303);
    expect(await h.orm.em.fork().count(Session, { id })).toBe(0);
  });
});

describe('CSRF', () => {
  test('a state-changing form without the session token, with another token, or from another origin is refused (403), nothing changes', async () => {
    const { browser, org } = await signedInUser(app);
    const form = { name: 'k', scopes: ['read'], channels: 'all', expiry: 'never' };
    const none = await browser.post('/settings/api-keys', form, { csrf: false });
    expect(none.status).toBe(403);
    expect((await none.one('[data-testid="error-message"]')).text).toContain('CSRF');
    const other = await browser.post('/settings/api-keys', { ...form, _csrf: 'x'.repeat(43) });
    expect(other.status).toBe(403);
    const crossOrigin = await browser.post('/settings/api-keys', form, { headers: { origin: 'https://evil.example' } });
    expect(crossOrigin.status).toBe(403);
    const crossSite = await browser.post('/settings/api-keys', form, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const keys = await h.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>('select count(*)::int as n from api_keys where organization_id = ?', [org.id]);
    expect(keys[0]!.n).toBe(0);
    // Sign-out is state-changing too.
    expect((await browser.post('/sign-out', {}, { csrf: false })).status).toBe(403);
    expect((await browser.get('/calendar')).status).toBe(200);
    // With the token it works.
    expect((await browser.post('/settings/api-keys', form)).status).toBe(303); // created, then redirected to the page that shows it once
  });

  test('JSON endpoints need the X-CSRF-Token header on PATCH/POST (403 in the API error shape) and a session (401)', async () => {
    const { browser } = await signedInUser(app);
    const patch = await browser.json('PATCH', '/web/api/posts/post_x', { date: '2030-01-01' }, { csrf: false });
    expect(patch.status).toBe(403);
    expect(patch.json().error.details.reason).toBe('csrf');
    const upload = await browser.json(
      'POST',
      '/web/api/media/uploads',
      { fileName: 'a.png', mimeType: 'image/png', fileSize: 10 },
      { csrf: false },
    );
    expect(upload.status).toBe(403);
    const anon = await new Browser(app).get('/web/api/posts?from=2030-01-01T00:00:00Z&to=2030-01-08T00:00:00Z');
    expect(anon.status).toBe(401);
    expect(anon.json().error.code).toBe('unauthorized');
  });
});

describe('routing and pages', () => {
  test('unknown /v1 routes keep the API JSON 404; unknown pages get an HTML 404 in browsers, JSON otherwise', async () => {
    const b = new Browser(app);
    for (const path of ['/v1/nope', '/v1', '/v1/posts/x/y', '/web/api/nope', '/storage/nope']) {
      const r = await b.get(path);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(r.json().error.code).toBe('not_found');
    }
    const page = await b.get('/no/such/page');
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.query('[data-testid="error-page"]')).toHaveLength(1);
    // /v1 answers with the API's JSON, in any case.
    expect((await b.get('/v1/me')).json().error.code).toBe('unauthorized');
    expect((await b.get('/V1/NOPE')).json().error.code).toBe('not_found');
    // API clients (no Accept: text/html) get the API's JSON 404 everywhere, also at / and at paths that resolve to it.
    for (const path of ['/', '/nope', '/v1/posts/../..']) {
      const r = await app.handle(new Request(`http://localhost${path}`, { headers: { accept: '*/*' } }));
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  test("another organization's post is a 404 page", async () => {
    const { browser } = await signedInUser(app);
    const r = await browser.get('/posts/post_01jxxxxxxxxxxxxxxxxxxxxxxx');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toContain('text/html');
  });

  test("every page has landmarks, a skip link and the viewer's time zone (from ?tz=, else the pp_tz cookie)", async () => {
    const { browser } = await signedInUser(app);
    for (const path of ['/calendar', '/calendar?view=week', '/posts/new', '/channels', '/media', '/settings/api-keys']) {
      const r = await browser.get(path);
      expect(r.status).toBe(200);
      expect(await r.query('main#main')).toHaveLength(1);
      expect(await r.query('header')).toHaveLength(1);
      expect(await r.query('nav[aria-label="Main"]')).toHaveLength(1);
      expect(await r.query('a.skip-link[href="#main"]')).toHaveLength(1);
      expect(r.html).toContain('<html lang="en">');
      expect(r.html).toContain('name="viewport"');
    }
    browser.jar.set('pp_tz', 'Asia/Tokyo');
    expect((await (await browser.get('/calendar')).one('[data-testid="calendar-tz"]')).text).toBe('Asia/Tokyo');
    expect((await (await browser.get('/calendar?tz=America/New_York')).one('[data-testid="calendar-tz"]')).text).toBe('America/New_York');
    // An invalid zone falls back to UTC.
    browser.jar.set('pp_tz', 'Not/AZone');
    expect((await (await browser.get('/calendar')).one('[data-testid="calendar-tz"]')).text).toBe('UTC');
  });

  test('interpolated values are escaped', async () => {
    const { browser, org } = await signedInUser(app);
    await addChannel(h.orm.em.fork(), h.credentialsKey, {
      organizationId: org.id,
      platform: 'DISCORD',
      name: '<script>alert("x")</script>',
      credentials: { webhookUrl: 'https://discord.example/hook' },
    });
    const r = await browser.get('/channels');
    expect(r.html).not.toContain('<script>alert');
    expect(r.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect((await r.one('[data-testid="channel-name"]')).text).toBe('<script>alert("x")</script>');
  });

  test('static assets are served with their types and a versioned URL', async () => {
    const b = new Browser(app);
    const page = await b.get('/sign-in');
    const css = /href="(\/static\/app\.css\?v=[0-9a-f]+)"/.exec(page.html)![1]!;
    const r = await app.handle(new Request(`http://localhost${css}`));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/css');
    expect(r.headers.get('cache-control')).toContain('immutable');
    const js = await app.handle(new Request('http://localhost/static/calendar.js'));
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await app.handle(new Request('http://localhost/static/..%2Fapp.ts'))).status).toBe(404);
  });
});

describe('user create (CLI command)', () => {
  test('creates a member who can sign in; refuses a used email, a short password, an unknown org', async () => {
    const org = await makeOrg();
    const cmd = COMMANDS['user create']!;
    const email = `cli-${crypto.randomUUID().slice(0, 6)}@example.com`;
    const created = (await cmd.run(
      { em: h.orm.em.fork(), credentialsKey: () => h.credentialsKey },
      { org: org.id, email, password: 'a long password' },
    )) as { id: string; email: string };
    expect(created.id).toMatch(/^usr_[0-9a-z]{26}$/);
    expect(created).not.toHaveProperty('passwordHash');
    expect((await new Browser(app).signIn(email, 'a long password')).status).toBe(303);
    const run = (f: Record<string, string>) => cmd.run({ em: h.orm.em.fork(), credentialsKey: () => h.credentialsKey }, f);
    await expect(run({ org: org.id, email: email.toUpperCase(), password: 'a long password' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await expect(run({ org: org.id, email: 'x@example.com', password: 'short' })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(run({ org: org.id, email: 'not-an-email', password: 'a long password' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await expect(run({ org: 'org_nope', email: 'y@example.com', password: 'a long password' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
