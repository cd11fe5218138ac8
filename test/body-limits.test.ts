// Request bodies (docs/decisions.md "Request bodies"): the key (or the web session) is checked
// before a body is read, and a body is cut off as soon as it passes its limit, chunked or not.
// The flood tests run against a separate process serving the app with the production server
// options (test/harness/production-server.ts) and watch that process's memory.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { User } from '../db/entities/index.ts';
import { createSession, createUser } from '../services/users.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { sendRaw, type RawAnswer } from './harness/raw-http.ts';
import { signedInUser } from './harness/web-browser.ts';

const ROOT = resolve(import.meta.dir, '..');
const MB = 1024 * 1024;
const FLOOD = 300 * MB;

function expectErrorBody(a: { status: number; body: string }, status: number, code: string) {
  expect(a.status).toBe(status);
  expect(JSON.parse(a.body)).toMatchObject({ error: { code, message: expect.any(String) } });
}

describe('/v1: the key before the body', () => {
  test('no key, a bad key, a garbage body: 401, never 422', async () => {
    const app = await testApp();
    expect((await call(app, 'POST', '/v1/posts', { body: {} })).status).toBe(401);
    expect((await call(app, 'POST', '/v1/posts', { rawBody: '{"content": [1, 2' })).status).toBe(401);
    expect((await call(app, 'POST', '/v1/posts', { rawBody: '\u0000garbage', headers: { 'content-type': 'text/plain' } })).status).toBe(
      401,
    );
    expect((await call(app, 'POST', '/v1/posts', { key: `sk_live_${'A'.repeat(40)}`, body: {} })).status).toBe(401);
    expect((await call(app, 'PATCH', '/v1/posts/post_x', { headers: { authorization: 'Basic abc' }, rawBody: 'nope' })).status).toBe(401);
    expect((await call(app, 'POST', '/v1/media/uploads', { body: { fileName: 1 } })).status).toBe(401);
    // A declared length over the limit is still a 401 first.
    const big = JSON.stringify({ content: 'x'.repeat(MB + 10) });
    expect((await call(app, 'POST', '/v1/posts', { rawBody: big, headers: { 'content-length': String(big.length) } })).status).toBe(401);
    // Params and query are validated after the key too (a path id longer than 64 characters).
    expect((await call(app, 'GET', `/v1/media/${'m'.repeat(70)}`)).status).toBe(401);
    expect((await call(app, 'POST', `/v1/media/${'m'.repeat(70)}/complete`)).status).toBe(401);
  });

  test('order of refusals: 401 → plan 403 → scope 403 → the body (422 / 413)', async () => {
    const app = await testApp();
    const free = await makeOrg('FREE');
    const freeKey = (await makeKey(free.id)).key;
    const org = await makeOrg('PRO');
    const readOnly = (await makeKey(org.id, { scopes: ['read'] })).key;
    const publish = (await makeKey(org.id)).key;
    const garbage = { rawBody: '{"content": [1, 2' };
    const tooBig = { rawBody: JSON.stringify({ content: 'x'.repeat(MB) }) };
    expect((await call(app, 'POST', '/v1/posts', { key: freeKey, ...garbage })).body.error.code).toBe('plan_required');
    expect((await call(app, 'POST', '/v1/posts', { key: readOnly, ...garbage })).body.error.code).toBe('forbidden_scope');
    expect((await call(app, 'POST', '/v1/posts', { key: readOnly, ...tooBig })).body.error.code).toBe('forbidden_scope');
    const malformed = await call(app, 'POST', '/v1/posts', { key: publish, ...garbage });
    expect(malformed.status).toBe(422);
    expect(malformed.body.error.details.fields).toEqual([{ path: '', message: 'malformed JSON' }]);
    const over = await call(app, 'POST', '/v1/posts', { key: publish, ...tooBig });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: 'validation_failed', details: { limitBytes: MB } });
    // Errors after authentication keep the RateLimit headers.
    expect(over.headers.get('ratelimit-limit')).toBe('60');
  });

  test('a request with a body is counted once: rate limit and monthly quota', async () => {
    const app = await testApp();
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const first = await call(app, 'GET', '/v1/me', { key });
    const remaining = Number(first.headers.get('ratelimit-remaining'));
    const used = first.body.quota.usedThisMonth;
    const posted = await call(app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: ['ch_nope'], bogus: 1 } });
    expect(posted.status).toBe(422);
    expect(Number(posted.headers.get('ratelimit-remaining'))).toBe(remaining - 1);
    const patched = await call(app, 'PATCH', '/v1/posts/post_nope', { key, body: { content: 'y' } });
    expect(Number(patched.headers.get('ratelimit-remaining'))).toBe(remaining - 2);
    const after = await call(app, 'GET', '/v1/me', { key });
    expect(Number(after.headers.get('ratelimit-remaining'))).toBe(remaining - 3);
    expect(after.body.quota.usedThisMonth).toBe(used + 3);
  });
});

describe('web: the session before the body, each body with its limit', () => {
  test('/web/api without a session: 401 unread, even for a body its schema refuses', async () => {
    const app = await testApp({ web: { publicBaseUrl: 'http://localhost', platforms: {} } });
    const r = await call(app, 'PATCH', '/web/api/posts/post_x', { rawBody: '{"date": [', headers: { 'x-csrf-token': 'x' } });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
  });

  test('pages: signed out, a form is refused by the redirect to sign-in; signed in, a form past 1 MB → 413 page', async () => {
    const app = await testApp({ web: { publicBaseUrl: 'http://localhost', platforms: {} } });
    const anonymous = await app.handle(
      new Request('http://localhost/posts', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: `content=${'x'.repeat(100_000)}`,
      }),
    );
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toStartWith('/sign-in');
    const { browser } = await signedInUser(app);
    const long = await browser.post('/posts', { content: 'x'.repeat(MB), channelIds: [] });
    expect(long.status).toBe(413);
    expect(long.headers.get('content-type')).toContain('text/html');
    expect(long.html).toContain('larger than 1 MB');
    // Under the limit the form is handled as usual (here: refused for its content, with the form).
    const fine = await browser.post('/posts', { content: 'x'.repeat(200_000), channelIds: [] });
    expect(fine.status).toBe(422);
  });

  test('the sign-in form is read up to 16 KB', async () => {
    const app = await testApp({ web: { publicBaseUrl: 'http://localhost', platforms: {} } });
    const form = (extra: number) =>
      new Request('http://localhost/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: `email=a%40example.com&password=${'p'.repeat(extra)}`,
      });
    const big = await app.handle(form(17 * 1024));
    expect(big.status).toBe(413);
    expect(await big.text()).toContain('larger than 16 KB');
    // A form of ordinary size reaches the sign-in checks (no CSRF cookie here: 403).
    expect((await app.handle(form(100))).status).toBe(403);
  });
});

// ---------------------------------------------------------------------------------------------
// Real sockets, the production server options, memory of the serving process.

let server: Subprocess<'ignore', 'pipe', 'inherit'>;
let port: number;
let apiKey: string;
let session: { cookie: string; csrf: string };

function kb(field: string): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
  return Number(m![1]);
}

/** How far the server's resident memory rose above where it was while `work` ran (peak, MB). */
async function peakGrowthMb<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const before = kb('VmRSS');
  writeFileSync(`/proc/${server.pid}/clear_refs`, '5'); // resets VmHWM (peak RSS) to the current RSS
  const result = await work();
  return { result, growthMb: (kb('VmHWM') - before) / 1024 };
}

async function flood(req: Parameters<typeof sendRaw>[1]): Promise<{ answer: RawAnswer; growthMb: number }> {
  const { result, growthMb } = await peakGrowthMb(() => sendRaw(port, req));
  return { answer: result, growthMb };
}

/**
 * The serving process held no more than a little of the body: read whole, a 300 MB body grows it
 * by about 550 MB. (How much the client got to send before the answer says little: Bun reads what
 * follows a refused body and drops it.)
 */
function expectCutOff(f: { answer: RawAnswer; growthMb: number }) {
  expect(f.growthMb).toBeLessThan(50);
  // The bound: an answer within 5 s (a busy machine, another test file running beside this one);
  // the real time is a few milliseconds (one key look-up, at most 1 MB read), while the whole
  // 300 MB through the socket takes longer.
  expect(f.answer.msToAnswer).toBeLessThan(5000);
}

describe('floods over a real socket', () => {
  beforeAll(async () => {
    const h = await harness();
    const org = await makeOrg('ENTERPRISE');
    apiKey = (await makeKey(org.id)).key;
    const email = `flood-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const view = await createUser(h.orm.em.fork(), { organizationId: org.id, email, password: 'correct horse battery' });
    const em = h.orm.em.fork();
    const s = await createSession(em, await em.findOneOrFail(User, { id: view.id }));
    session = { cookie: `pp_session=${s.token}`, csrf: s.csrfToken };
    server = Bun.spawn([process.execPath, 'run', 'test/harness/production-server.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: h.databaseUrl },
      stdout: 'pipe',
      stderr: 'inherit',
    });
    const reader = server.stdout.getReader();
    let out = '';
    while (!/ready (\d+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server process exited: ${out}`);
      out += new TextDecoder().decode(value);
    }
    port = Number(/ready (\d+)/.exec(out)![1]);
    reader.releaseLock();
    // Warm up every route used below, so compiling them is not counted as growth.
    const json = { 'content-type': 'application/json' };
    await sendRaw(port, { method: 'POST', path: '/v1/posts', headers: { ...json, authorization: `Bearer ${apiKey}` }, prefix: '{}' });
    await sendRaw(port, { method: 'POST', path: '/v1/posts', headers: json, prefix: '{}' });
    await sendRaw(port, {
      method: 'POST',
      path: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      prefix: 'email=x',
    });
    await sendRaw(port, {
      method: 'PATCH',
      path: '/web/api/posts/post_x',
      headers: { ...json, cookie: session.cookie, 'x-csrf-token': session.csrf },
      prefix: '{}',
    });
  });

  afterAll(async () => {
    server?.kill('SIGTERM');
    await server?.exited;
  });

  const v1 = (auth: boolean) => ({
    'content-type': 'application/json',
    ...(auth ? { authorization: `Bearer ${apiKey}` } : {}),
  });

  test('POST /v1/posts, 300 MB chunked with a valid key → 413 error body, cut off at 1 MB', async () => {
    const f = await flood({ method: 'POST', path: '/v1/posts', headers: v1(true), prefix: '{"content":"', totalBytes: FLOOD });
    expectErrorBody(f.answer, 413, 'validation_failed');
    expect(f.answer.headers.get('x-request-id')).toMatch(/^req_/);
    expectCutOff(f);
  });

  test('POST /v1/posts, 300 MB chunked without a key → 401, nothing read', async () => {
    const f = await flood({ method: 'POST', path: '/v1/posts', headers: v1(false), prefix: '{"content":"', totalBytes: FLOOD });
    expectErrorBody(f.answer, 401, 'unauthorized');
    expectCutOff(f);
  });

  test('a declared Content-Length of 300 MB: 413 with a key, 401 without, the body unread', async () => {
    for (const [auth, status] of [
      [true, 413],
      [false, 401],
    ] as const) {
      const f = await flood({
        method: 'POST',
        path: '/v1/posts',
        headers: v1(auth),
        prefix: '{"content":"',
        totalBytes: FLOOD,
        contentLength: FLOOD,
      });
      expect(f.answer.status).toBe(status);
      expectCutOff(f);
    }
  });

  test('a route without a body, or no route at all, never reads one: GET /v1/me → 200, unknown → 404', async () => {
    const me = await flood({ method: 'GET', path: '/v1/me', headers: v1(true), totalBytes: FLOOD });
    expect(me.answer.status).toBe(200);
    expectCutOff(me);
    const unknown = await flood({ method: 'POST', path: '/v1/nothing-here', headers: v1(false), totalBytes: FLOOD });
    expectErrorBody(unknown.answer, 404, 'not_found');
    expectCutOff(unknown);
  });

  test('chunked: just over 1 MB → 413; exactly 1 MB → read whole and handled as usual', async () => {
    const body = (size: number) => {
      const shell = '{"content":"","bogus":1}';
      return `{"content":"${'x'.repeat(size - shell.length)}","bogus":1}`;
    };
    const over = await sendRaw(port, { method: 'POST', path: '/v1/posts', headers: v1(true), prefix: body(MB + 1) });
    expectErrorBody(over, 413, 'validation_failed');
    const at = await sendRaw(port, { method: 'POST', path: '/v1/posts', headers: v1(true), prefix: body(MB) });
    expectErrorBody(at, 422, 'validation_failed');
    // The field at the very end of the body was seen: the whole body was parsed.
    expect(JSON.parse(at.body).error.details.fields).toContainEqual(expect.objectContaining({ path: 'bogus' }));
  });

  test('web: 300 MB chunked to /sign-in → 413 page; to /web/api → 413 with a session, 401 without', async () => {
    const signIn = await flood({
      method: 'POST',
      path: '/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      prefix: 'email=',
      totalBytes: FLOOD,
    });
    expect(signIn.answer.status).toBe(413);
    expectCutOff(signIn);
    const webApi = (headers: Record<string, string>) =>
      flood({
        method: 'PATCH',
        path: '/web/api/posts/post_x',
        headers: { 'content-type': 'application/json', ...headers },
        prefix: '{"content":"',
        totalBytes: FLOOD,
      });
    const withSession = await webApi({ cookie: session.cookie, 'x-csrf-token': session.csrf });
    expectErrorBody(withSession.answer, 413, 'validation_failed');
    expectCutOff(withSession);
    const without = await webApi({});
    expectErrorBody(without.answer, 401, 'unauthorized');
    expectCutOff(without);
    // A signed-in page form.
    const page = await flood({
      method: 'POST',
      path: '/posts',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      prefix: 'content=',
      totalBytes: FLOOD,
    });
    expect(page.answer.status).toBe(413);
    expectCutOff(page);
  });
});
