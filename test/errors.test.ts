// Error bodies and headers everywhere (DESIGN.md §3).
import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { mapError } from '../http/errors.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

describe('errors', () => {
  test('unknown routes → 404 not_found with the error body', async () => {
    const app = await testApp();
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v1/nope'],
      ['TRACE', '/v1/nope'],
      ['GET', '/v2/me'],
    ]) {
      const r = await call(app, method!, path!);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
      expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });

  test('a known /v1 path with another method → 405 with Allow and the error body; OPTIONS → 204 with Allow', async () => {
    const app = await testApp();
    const cases: [string, string, string][] = [
      ['POST', '/v1/me', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/v1/channels', 'GET, HEAD, OPTIONS'],
      ['PUT', '/v1/posts', 'GET, HEAD, OPTIONS, POST'],
      ['TRACE', '/v1/posts/post_x', 'DELETE, GET, HEAD, OPTIONS, PATCH'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await call(app, method, path);
      expect({ method, path, status: r.status, allow: r.headers.get('allow') }).toEqual({ method, path, status: 405, allow });
      expect(r.body).toEqual({
        error: {
          code: 'not_found',
          message: expect.stringContaining(`${method} is not allowed`),
          details: { method, allow: allow.split(', ') },
        },
      });
      expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    }
    // A literal path takes only its own methods, not those of `/v1/media/{id}` beside it.
    const options = await call(app, 'OPTIONS', '/v1/media/uploads');
    expect({ status: options.status, allow: options.headers.get('allow'), body: options.body }).toEqual({
      status: 204,
      allow: 'OPTIONS, POST',
      body: null,
    });
  });

  test('malformed JSON → 422 validation_failed (mapping of the framework’s parse error)', async () => {
    // A probe route of its own: the same onError path, whatever the real endpoints' schemas accept.
    const app = (await testApp()).use(new Elysia().post('/v1/__probe', ({ body }) => ({ ok: body })));
    const r = await call(app, 'POST', '/v1/__probe', { rawBody: '{"content": "hi",', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.details.fields[0]).toEqual({ path: '', message: 'malformed JSON' });
  });

  test('X-Request-Id is on every response; a sane client-sent id is echoed', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const app = await testApp();
    const ok = await call(app, 'GET', '/v1/me', { key });
    expect(ok.headers.get('x-request-id')).toMatch(/^req_[0-9a-z]{26}$/);
    const echoed = await call(app, 'GET', '/v1/me', { key, headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await call(app, 'GET', '/v1/me', { key, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
    const unauth = await call(app, 'GET', '/v1/me');
    expect(unauth.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('an unexpected failure → 500 internal_error, logged with the request id, no stack trace in the body', async () => {
    const logged: Record<string, unknown>[] = [];
    const app = (await testApp({ log: (e) => logged.push(e) })).use(
      new Elysia().get('/v1/__boom', () => {
        throw new Error('secret internal detail');
      }),
    );
    const r = await call(app, 'GET', '/v1/__boom');
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: { code: 'internal_error', message: expect.any(String) } });
    expect(JSON.stringify(r.body)).not.toContain('secret internal detail');
    expect(JSON.stringify(r.body)).not.toContain('at ');
    // Besides the request line (test/ops.test.ts), exactly one entry: the error.
    const errorLines = logged.filter((e) => e.msg !== 'request');
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]!.requestId).toBe(r.headers.get('x-request-id'));
  });

  test('a JSON body over 1 MB → 413 with the error body, before any parsing', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const app = await testApp();
    const big = JSON.stringify({ content: 'x'.repeat(1024 * 1024 + 10), channelIds: ['ch_x'] });
    const r = await call(app, 'POST', '/v1/posts', { key, rawBody: big, headers: { 'content-length': String(big.length) } });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('schema validation failures map to details.fields', () => {
    const mapped = mapError('VALIDATION', { all: [{ path: '/channelIds/0', message: 'Expected string' }] });
    expect(mapped.status).toBe(422);
    expect(mapped.body.error.details).toEqual({ fields: [{ path: 'channelIds.0', message: 'Expected string' }] });
  });
});
