// Operations: GET /health and GET /ready, structured and redacted request logs, and graceful
// shutdown of the real API and worker entry points (api/main.ts, worker/main.ts) on SIGTERM and of
// the `npm start` launcher (scripts/dev.ts) on Ctrl-C.
import { afterAll, describe, expect, test } from 'bun:test';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Elysia, t } from 'elysia';
import { addChannel } from '../domain/channels.ts';
import { createOrm } from '../db/orm.ts';
import { parseCredentialsKey } from '../lib/config.ts';
import { embeddedDatabaseUrl, embeddedPaths, readEmbeddedCredentialsKey } from '../lib/embedded.ts';
import { startEmbeddedPostgres } from '../scripts/embedded/postgres.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { uploadWorkflowId } from '../workflows/media-types.ts';
import { createLogger, redact, REDACTED, type LogEntry } from '../lib/log.ts';
import type { Orm } from '../db/orm.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { freePort } from './harness/ports.ts';

const ROOT = resolve(import.meta.dir, '..');

async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Log entries handed to AppDeps.log; the request line arrives just after the response. */
function capture() {
  const entries: LogEntry[] = [];
  return {
    entries,
    log: (e: LogEntry) => void entries.push(e),
    requestLine: (requestId: string | null) =>
      waitFor(() => entries.find((e) => e.msg === 'request' && e.requestId === requestId), 2000, `the request line of ${requestId}`),
  };
}

async function temporalClient() {
  const env = await (await harness()).temporal();
  return new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
}

describe('health and readiness', () => {
  test('GET /health: 200 {status: ok} without a key, outside /v1', async () => {
    const app = await testApp();
    const r = await call(app, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await call(app, 'GET', '/v1/health')).body).not.toEqual({ status: 'ok' });
  });

  test('GET /ready: 200 when Postgres and Temporal both answer', async () => {
    const app = await testApp({ temporal: { client: await temporalClient(), taskQueue: 'unused' } });
    const r = await call(app, 'GET', '/ready');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'ready',
      checks: { postgres: { status: 'ok', latencyMs: expect.any(Number) }, temporal: { status: 'ok', latencyMs: expect.any(Number) } },
    });
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  test('GET /ready: 503 naming Temporal when its address is a closed port, within the check deadline', async () => {
    const port = await freePort(); // nothing listens there
    const connection = Connection.lazy({ address: `127.0.0.1:${port}` });
    // Closed only at the end of the file: the SDK may still have a retry timer pending, which
    // throws once its connection is closed.
    cleanups.push(() => connection.close().catch(() => {}));
    const logs = capture();
    const app = await testApp({ temporal: { client: new Client({ connection }), taskQueue: 'unused' }, log: logs.log });
    {
      const t0 = Date.now();
      const r = await call(app, 'GET', '/ready');
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('unavailable');
      expect(r.body.failed).toEqual(['temporal']);
      expect(r.body.checks.postgres.status).toBe('ok');
      expect(['unavailable', 'timeout']).toContain(r.body.checks.temporal.status);
      // The reason is logged, not answered to whoever asks.
      const warning = logs.entries.find((e) => e.msg === 'readiness check failed');
      expect(warning).toMatchObject({ level: 'warn', check: 'temporal' });
      expect(JSON.stringify(r.body)).not.toContain(String(port));
    }
  });

  test('GET /ready: 503 naming Postgres when it fails or hangs; no password reaches the log', async () => {
    const h = await harness();
    const failing = (execute: () => Promise<unknown>) => ({ em: { getConnection: () => ({ execute }) } }) as unknown as Orm;
    const temporal = { client: await temporalClient(), taskQueue: 'unused' };
    const logs = capture();
    const refused = await testApp({
      orm: failing(() => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.9:5432 (postgres://app:hunter2-secret@db:5432/postpilot)'))),
      temporal,
      log: logs.log,
    });
    const r = await call(refused, 'GET', '/ready');
    expect(r.status).toBe(503);
    expect(r.body.failed).toEqual(['postgres']);
    expect(r.body.checks).toMatchObject({ postgres: { status: 'unavailable' }, temporal: { status: 'ok' } });
    const logged = JSON.stringify(logs.entries);
    expect(logged).toContain('ECONNREFUSED');
    expect(logged).not.toContain('hunter2-secret');

    const hanging = await testApp({ orm: failing(() => new Promise(() => {})), temporal, log: () => {} });
    const t0 = Date.now();
    const slow = await call(hanging, 'GET', '/ready');
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(slow.status).toBe(503);
    expect(slow.body.checks.postgres.status).toBe('timeout');

    // Without Temporal configured the API cannot schedule posts: not ready.
    const noTemporal = await call(await testApp({ orm: h.orm }), 'GET', '/ready');
    expect(noTemporal.status).toBe(503);
    expect(noTemporal.body.failed).toEqual(['temporal']);
    expect(noTemporal.body.checks.temporal.status).toBe('not_configured');
  });
});

describe('structured logs', () => {
  test('one line per request: time, level, requestId, organizationId, method, route pattern, status, latencyMs', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const logs = capture();
    const app = await testApp({ log: logs.log });

    const me = await call(app, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    const line = await logs.requestLine(me.headers.get('x-request-id'));
    expect(line).toEqual({
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      level: 'info',
      msg: 'request',
      requestId: me.headers.get('x-request-id'),
      organizationId: org.id,
      keyId: expect.stringMatching(/^key_/),
      method: 'GET',
      route: '/v1/me',
      status: 200,
      latencyMs: expect.any(Number),
    });
    expect(line.latencyMs as number).toBeGreaterThanOrEqual(0);

    // The matched pattern, never the raw URL with its ids.
    const id = 'post_01jdzzzzzzzzzzzzzzzzzzzzzz';
    const missing = await call(app, 'GET', `/v1/posts/${id}`, { key, headers: { 'x-request-id': 'client-chosen-id' } });
    expect(missing.status).toBe(404);
    const missingLine = await logs.requestLine('client-chosen-id');
    expect(missingLine).toMatchObject({ route: '/v1/posts/:id', status: 404, organizationId: org.id, level: 'info' });
    expect(JSON.stringify(missingLine)).not.toContain(id);

    // Probes are logged at debug (dropped at the default level).
    const health = await call(app, 'GET', '/health');
    expect(await logs.requestLine(health.headers.get('x-request-id'))).toMatchObject({ level: 'debug', route: '/health', status: 200 });
  });

  test('no key, token, password or credential ever appears in a log line', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const badKey = `sk_live_${'Zx9'.repeat(13)}Q`;
    const bearer = `eyJhbGciOiJIUzI1NiJ9.${randomBytes(24).toString('base64url')}.${randomBytes(16).toString('base64url')}`;
    const password = `pw-${randomUUID()}`;
    const bodySecret = `sk_live_${randomBytes(20).toString('hex')}`;
    const logs = capture();
    // A careless handler that puts the request's secrets into its error message (caught by onError).
    const app = (await testApp({ log: logs.log })).use(
      new Elysia().post('/v1/__careless', ({ headers, body }) => {
        throw new Error(`could not handle ${headers.authorization} with ${JSON.stringify(body)} at postgres://app:${password}@db/x`);
      }),
    );

    const ok = await call(app, 'GET', '/v1/me', { key });
    const bad = await call(app, 'GET', '/v1/me', { key: badKey });
    const other = await call(app, 'GET', '/v1/channels', { headers: { authorization: `Bearer ${bearer}` } });
    const posted = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: `my key is ${bodySecret}`, channelIds: ['ch_x'], password },
    });
    const careless = await call(app, 'POST', '/v1/__careless', {
      key,
      body: { content: `my key is ${bodySecret}`, password, credentials: { accessToken: bearer }, idempotencyKey: 'idem-visible' },
    });
    expect([ok.status, bad.status, other.status, posted.status, careless.status]).toEqual([200, 401, 401, 422, 500]);
    for (const r of [ok, bad, other, posted, careless]) await logs.requestLine(r.headers.get('x-request-id'));

    const badLine = await logs.requestLine(bad.headers.get('x-request-id'));
    expect(badLine).toMatchObject({ status: 401, route: '/v1/me' });
    expect(badLine.organizationId).toBeUndefined();
    const error = logs.entries.find((e) => e.level === 'error' && e.msg === 'unexpected error');
    expect(error).toMatchObject({ requestId: careless.headers.get('x-request-id'), route: '/v1/__careless', method: 'POST' });
    // The error is there, its secrets are not.
    const message = (error!.error as { message: string }).message;
    expect(message).toContain('could not handle Bearer [redacted]');
    expect(message).toContain(`"password":"${REDACTED}"`);
    expect(message).toContain('postgres://[redacted]@db/x');
    expect(message).toContain('idem-visible');

    const text = JSON.stringify(logs.entries);
    for (const secret of [key, key.slice(8), badKey, bearer, password, bodySecret]) expect(text).not.toContain(secret);
  });

  test('a response that breaks its own schema is a 500 internal_error, logged with the request id', async () => {
    const logs = capture();
    const app = (await testApp({ log: logs.log })).use(
      new Elysia().get('/v1/__drift', () => ({ a: 'not a number' }) as never, { response: { 200: t.Object({ a: t.Number() }) } }),
    );
    const r = await call(app, 'GET', '/v1/__drift');
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('internal_error');
    await logs.requestLine(r.headers.get('x-request-id'));
    expect(logs.entries.find((e) => e.level === 'error' && e.msg === 'response does not match its schema')).toMatchObject({
      requestId: r.headers.get('x-request-id'),
    });
  });

  test('the app with a redacting logger sink: entries redacted once, by the sink; secrets still cut out', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (l) => lines.push(l) });
    const app = (await testApp({ log: logger.sink })).use(
      new Elysia().get('/v1/__leak', () => {
        throw new Error('failed with Bearer sk_live_leakedkey1234 and password=hunter2');
      }),
    );
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    expect((await call(app, 'GET', '/v1/me', { key })).status).toBe(200);
    expect((await call(app, 'GET', '/v1/__leak')).status).toBe(500);
    // The request line is written after the response.
    for (let i = 0; i < 100 && lines.filter((l) => l.includes('"msg":"request"')).length < 2; i++) await Bun.sleep(10);
    const entries = lines.map((l) => JSON.parse(l) as Record<string, any>);
    expect(entries.filter((e) => e.msg === 'request').map((e) => e.status)).toEqual([200, 500]);
    const failure = entries.find((e) => e.msg === 'unexpected error')!;
    expect(failure.error.message).toBe(`failed with Bearer ${REDACTED} and ${'password='}${REDACTED}`);
    for (const l of lines) {
      expect(l).not.toContain('sk_live_leakedkey1234');
      expect(l).not.toContain('hunter2');
      expect(l).not.toContain(key);
    }
  });

  test('stdout lines of one turn go out in one write; lines still held when the process exits are written', async () => {
    const script = [
      "import { createLogger } from './lib/log.ts';",
      'const writes = [];',
      'const real = process.stdout.write.bind(process.stdout);',
      'process.stdout.write = (chunk, ...rest) => { writes.push(String(chunk)); return real(chunk, ...rest); };',
      "const log = createLogger({ level: 'info' });",
      "for (let i = 0; i < 5; i++) log.info('same turn', { i });",
      'setImmediate(() => setImmediate(() => {',
      '  process.stderr.write(`writes ${writes.length}\\n`);',
      "  log.info('held at exit');",
      '  process.exit(0);',
      '}));',
    ].join('\n');
    const proc = Bun.spawn([process.execPath, '-e', script], { cwd: resolve(import.meta.dir, '..'), stdout: 'pipe', stderr: 'pipe' });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(await proc.exited).toBe(0);
    expect(err).toContain('writes 1');
    const msgs = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg);
    expect(msgs).toEqual([...Array(5).fill('same turn'), 'held at exit']);
  });

  test('createLogger: JSON lines at LOG_LEVEL and above; redact keeps what is not secret', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', base: { service: 'api' }, write: (l) => lines.push(l) });
    logger.info('dropped');
    logger.warn('kept', { authorization: 'Bearer abc', n: 1 });
    logger.error('also kept', { error: new Error('token sk_live_abcdef in message') });
    expect(lines).toHaveLength(2);
    const [warn, err] = lines.map((l) => JSON.parse(l));
    expect(warn).toEqual({ time: expect.any(String), level: 'warn', service: 'api', msg: 'kept', authorization: REDACTED, n: 1 });
    expect(err.error.message).toBe(`token ${REDACTED} in message`);
    expect(err.error.stack).not.toContain('sk_live_abcdef');
    for (const l of lines) expect(l.includes('\n')).toBe(false);

    expect(
      redact<Record<string, unknown>>({
        headers: { Authorization: 'Bearer x', 'X-Api-Key': 'k', 'Idempotency-Key': 'idem-1', 'content-type': 'application/json' },
        credentials: { instanceUrl: 'https://m.example', accessToken: 't' },
        appPassword: 'p',
        refresh_token: 'r',
        webhookUrl: 'https://discord.com/api/webhooks/1/secret',
        url: 'https://x.example/cb?code=1&access_token=abc&state=2',
        key: 'media/2026/11/file.png',
        note: 'form password=hunter2&user=a',
        count: 3,
        nothing: null,
      }),
    ).toEqual({
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED, 'Idempotency-Key': 'idem-1', 'content-type': 'application/json' },
      credentials: REDACTED,
      appPassword: REDACTED,
      refresh_token: REDACTED,
      webhookUrl: REDACTED,
      url: `https://x.example/cb?code=1&access_token=${REDACTED}&state=2`,
      key: 'media/2026/11/file.png',
      note: `form password=${REDACTED}&user=a`,
      count: 3,
      nothing: null,
    });
  });
});

// ---- Graceful shutdown of the real entry points ----------------------------------------------

interface Child {
  proc: ReturnType<typeof Bun.spawn>;
  lines: string[];
  json: () => LogEntry[];
  waitForLog: (pred: (e: LogEntry) => boolean, timeoutMs: number, what: string) => Promise<LogEntry>;
  exitedAt: () => number | undefined;
}

const children: Child[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  for (const f of cleanups) await f();
});

function start(entry: string, env: Record<string, string>): Child {
  const proc = Bun.spawn([process.execPath, entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const lines: string[] = [];
  let exitedAt: number | undefined;
  void proc.exited.then(() => (exitedAt = Date.now()));
  for (const stream of [proc.stdout, proc.stderr] as ReadableStream<Uint8Array>[]) {
    void (async () => {
      const decoder = new TextDecoder();
      let rest = '';
      for await (const chunk of stream) {
        rest += decoder.decode(chunk, { stream: true });
        const parts = rest.split('\n');
        rest = parts.pop()!;
        lines.push(...parts);
      }
      if (rest) lines.push(rest);
    })();
  }
  const json = () =>
    lines.flatMap((l) => {
      try {
        const v = JSON.parse(l);
        return v && typeof v === 'object' ? [v as LogEntry] : [];
      } catch {
        return [];
      }
    });
  const child: Child = {
    proc,
    lines,
    json,
    exitedAt: () => exitedAt,
    waitForLog: async (pred, timeoutMs, what) => {
      try {
        return await waitFor(
          () => json().find(pred) ?? (proc.exitCode !== null ? Promise.reject(new Error(`${entry} exited (${proc.exitCode})`)) : undefined),
          timeoutMs,
          what,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}\n--- ${entry} output ---\n${lines.slice(-40).join('\n')}`);
      }
    },
  };
  children.push(child);
  return child;
}

function tryConnect(port: number): Promise<'open' | 'refused'> {
  return new Promise((done) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      done('open');
    });
    s.once('error', () => done('refused'));
  });
}

async function stackEnv() {
  const h = await harness();
  const env = await h.temporal();
  return {
    h,
    env,
    vars: {
      DATABASE_URL: h.databaseUrl,
      CREDENTIALS_KEY: h.credentialsKey.toString('hex'),
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
      LOG_LEVEL: 'info',
      // The fake platforms listen on 127.0.0.1 (DESIGN.md §7: tests allow private addresses).
      OUTBOUND_ALLOW_PRIVATE: 'true',
    },
  };
}

describe('graceful shutdown', () => {
  test('API: on SIGTERM it refuses new connections, answers the request in flight (200), closes its pools and exits 0', async () => {
    const { env, vars } = await stackEnv();
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'postpilot-test-shutdown-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const api = start('api/main.ts', {
      ...vars,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dir,
      STORAGE_DIR: join(dir, 'media'),
    });
    await api.waitForLog((e) => e.msg === 'listening', 60_000, 'the API to listen');

    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const bytes = randomBytes(256 * 1024);
    const created = await fetch(`http://127.0.0.1:${port}/v1/media/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fileName: 'slow.png', mimeType: 'image/png', fileSize: bytes.length }),
    });
    expect(created.status).toBe(201);
    const { media, upload } = (await created.json()) as { media: { id: string }; upload: { url: string; headers: Record<string, string> } };
    cleanups.push(() =>
      new Client({ connection: env.connection, namespace: env.namespace ?? 'default' }).workflow
        .getHandle(uploadWorkflowId(media.id))
        .terminate('test finished')
        .then(
          () => {},
          () => {},
        ),
    );
    const target = new URL(upload.url);
    expect(target.port).toBe(String(port));

    // A slow client: headers and half the body now, the rest after SIGTERM.
    const socket = createConnection({ port, host: '127.0.0.1' });
    await new Promise((r) => socket.once('connect', r));
    const answer = new Promise<string>((done, fail) => {
      let text = '';
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.once('end', () => done(text));
      socket.once('error', fail);
    });
    const head = [
      `PUT ${target.pathname}${target.search} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      ...Object.entries(upload.headers).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${bytes.length}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    socket.write(head);
    socket.write(bytes.subarray(0, bytes.length / 2));
    await Bun.sleep(300); // the handler is now streaming the body to disk

    api.proc.kill('SIGTERM');
    const stopping = await api.waitForLog(
      (e) => e.msg === 'shutting down: refusing new connections, finishing requests in flight',
      5000,
      'the shutdown to start',
    );
    // The shutdown counts the upload among the requests it finishes…
    expect(stopping.pendingRequests).toBe(1);
    // …new connections are refused at once…
    await waitFor(async () => (await tryConnect(port)) === 'refused', 5000, 'the port to refuse connections');
    // …and the request in flight keeps the process alive: it answers the rest of the body below.
    expect(api.proc.exitCode).toBeNull();

    socket.write(bytes.subarray(bytes.length / 2));
    const response = await answer;
    expect(response.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(await api.proc.exited).toBe(0);

    const logs = api.json();
    expect(logs.find((e) => e.msg === 'stopped')).toMatchObject({ drained: true, service: 'api' });
    const put = logs.find((e) => e.msg === 'request' && e.method === 'PUT');
    expect(put).toMatchObject({ route: '/storage/upload/:token', status: 200, level: 'info' });
    // The signed upload token is a credential: it is in no log line.
    const token = target.pathname.split('/').pop()!;
    expect(api.lines.join('\n')).not.toContain(token);
    expect(api.lines.join('\n')).not.toContain(key);
  }, 120_000);

  test('worker: on SIGTERM the publish in progress completes (sent exactly once, recorded) before it exits 0', async () => {
    const { h, env, vars } = await stackEnv();
    // A Mastodon that takes 3 s to accept a status.
    const received: { at: number; idempotencyKey: string | null; body: unknown }[] = [];
    let answeredAt: number | undefined;
    const fake = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const path = new URL(req.url).pathname;
        if (req.method !== 'POST' || path !== '/api/v1/statuses') return Response.json({ error: 'Record not found' }, { status: 404 });
        received.push({ at: Date.now(), idempotencyKey: req.headers.get('idempotency-key'), body: await req.json() });
        await Bun.sleep(3000);
        answeredAt = Date.now();
        const id = String(113_000_000_000_000_000n + BigInt(received.length));
        return Response.json({
          id,
          url: `http://127.0.0.1/@acme/${id}`,
          uri: `http://127.0.0.1/users/acme/statuses/${id}`,
          created_at: new Date().toISOString(),
        });
      },
    });
    cleanups.push(() => fake.stop(true));

    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const channel = await addChannel(h.orm.em.fork(), h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: '@acme@slow.example',
      credentials: { instanceUrl: `http://127.0.0.1:${fake.port}`, accessToken: 'good-token' },
    });

    const worker = start('worker/main.ts', vars);
    await worker.waitForLog((e) => e.msg === 'polling', 90_000, 'the worker to poll');

    const client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
    const app = await testApp({ temporal: { client, taskQueue: vars.TEMPORAL_TASK_QUEUE } });
    const created = await call(app, 'POST', '/v1/posts', { key, body: { content: 'Draining gracefully', channelIds: [channel.id] } });
    expect(created.status).toBe(201);
    const postId = created.body.id as string;
    cleanups.push(() =>
      client.workflow
        .getHandle(postWorkflowId(postId))
        .terminate('test finished')
        .then(
          () => {},
          () => {},
        ),
    );

    // The publish is in progress (the platform has the request, no answer yet): stop the worker.
    await waitFor(() => received.length === 1, 30_000, 'the publish to reach the platform');
    worker.proc.kill('SIGTERM');
    await worker.waitForLog((e) => e.msg === 'shutting down: no new tasks, waiting for running activities', 5000, 'the shutdown to start');
    const code = await worker.proc.exited;
    expect(code).toBe(0);

    // The platform answered before the process went away, and got the post exactly once.
    expect(answeredAt).toBeDefined();
    expect(answeredAt!).toBeLessThanOrEqual(worker.exitedAt() ?? Date.now());
    // The only worker has exited: nothing more can reach the platform.
    expect(received).toHaveLength(1);
    expect(received[0]!.idempotencyKey).toBe(`${postId}:${channel.id}`);

    // The activity finished its work: the channel is published in Postgres, and Temporal has
    // the activity's completion in the workflow's history (nothing left to retry).
    const rows = await h.orm.em
      .fork()
      .getConnection()
      .execute<{ status: string; platform_post_id: string | null }[]>(
        'select status, platform_post_id from post_channels where post_id = ?',
        [postId],
      );
    expect(rows).toEqual([{ status: 'published', platform_post_id: '113000000000000001' }]);
    const history = await client.workflow.getHandle(postWorkflowId(postId)).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishToChannel');
    expect(scheduled).toHaveLength(1);
    const completed = events.filter((e) => e.activityTaskCompletedEventAttributes);
    const completedIds = completed.map((e) => String(e.activityTaskCompletedEventAttributes!.scheduledEventId));
    expect(completedIds).toContain(String(scheduled[0]!.eventId));
    expect(
      events.some(
        (e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes || e.activityTaskCanceledEventAttributes,
      ),
    ).toBe(false);

    const logs = worker.json();
    expect(logs.find((e) => e.msg === 'stopped')).toMatchObject({ exitCode: 0, service: 'worker' });
  }, 150_000);
});

describe('the npm start launcher (scripts/dev.ts)', () => {
  test('starts quietly; Ctrl-C stops the API, drains the worker (the publish in flight is sent once and recorded), then Temporal and Postgres', async () => {
    // A Mastodon that takes 3 s to accept a status.
    const received: string[] = [];
    let answeredAt: number | undefined;
    const fake = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        if (req.method !== 'POST' || new URL(req.url).pathname !== '/api/v1/statuses')
          return Response.json({ error: 'Record not found' }, { status: 404 });
        received.push(String(req.headers.get('idempotency-key')));
        await Bun.sleep(3000);
        answeredAt = Date.now();
        return Response.json({
          id: '113000000000000001',
          url: 'http://127.0.0.1/@acme/1',
          uri: 'http://127.0.0.1/users/acme/statuses/1',
          created_at: new Date().toISOString(),
        });
      },
    });
    cleanups.push(() => fake.stop(true));
    const ports = new Set<number>();
    while (ports.size < 4) ports.add(await freePort());
    const [port, pgPort, temporalPort, uiPort] = [...ports] as [number, number, number, number];
    const dataDir = mkdtempSync(join(tmpdir(), 'postpilot-test-launcher-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const launcher = Bun.spawn([process.execPath, 'run', 'scripts/dev.ts'], {
      cwd: ROOT,
      detached: true, // a process group of its own, as a terminal gives `npm start`: Ctrl-C goes to the group
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PORT: String(port),
        HOST: '127.0.0.1',
        EMBEDDED_PG_PORT: String(pgPort),
        TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
        TEMPORAL_UI_PORT: String(uiPort),
        DATA_DIR: dataDir,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    let output = '';
    for (const stream of [launcher.stdout, launcher.stderr] as ReadableStream<Uint8Array>[]) {
      void (async () => {
        for await (const chunk of stream) output += new TextDecoder().decode(chunk);
      })();
    }
    cleanups.push(() => {
      if (launcher.exitCode === null) process.kill(-launcher.pid, 'SIGKILL');
    });
    await waitFor(() => output.includes('web app on http') || launcher.exitCode !== null, 90_000, 'the launcher to be ready');
    expect(launcher.exitCode).toBeNull();
    const startOutput = output;

    // A channel on the fake and a post to it, in the launcher's own database.
    const paths = embeddedPaths({ dataDir });
    const key = (await Bun.file(paths.devApiKey).text()).trim();
    const credentialsKey = parseCredentialsKey(readEmbeddedCredentialsKey({ dataDir })!);
    const orm = await createOrm(embeddedDatabaseUrl({ embeddedPgPort: pgPort }), 2);
    const me = (await (await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      organization: { id: string };
    };
    const channel = await addChannel(orm.em.fork(), credentialsKey, {
      organizationId: me.organization.id,
      platform: 'MASTODON',
      name: '@acme@slow.example',
      credentials: { instanceUrl: `http://127.0.0.1:${fake.port}`, accessToken: 'good-token' },
    });
    await orm.close();
    const created = await fetch(`http://127.0.0.1:${port}/v1/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Stopping in order', channelIds: [channel.id] }),
    });
    expect(created.status).toBe(201);
    const postId = ((await created.json()) as { id: string }).id;

    // The publish is in progress (the platform has the request, no answer yet): Ctrl-C.
    await waitFor(() => received.length === 1, 30_000, 'the publish to reach the platform');
    process.kill(-launcher.pid, 'SIGINT');
    expect(await launcher.exited).toBe(0);
    const exitedAt = Date.now();
    await Bun.sleep(100); // the last chunks of the pipes

    // The platform answered before the launcher went away, and got the post exactly once.
    expect(answeredAt).toBeDefined();
    expect(answeredAt!).toBeLessThanOrEqual(exitedAt);
    expect(received).toEqual([`${postId}:${channel.id}`]);
    // Nothing answers on the launcher's ports any more.
    for (const p of [port, pgPort, temporalPort]) expect(await tryConnect(p)).toBe('refused');

    // The result was recorded: Postgres was still there when the worker finished (started again to look).
    const pg = await startEmbeddedPostgres({ dir: paths.pg, port: pgPort, logFile: join(dataDir, 'check.log') });
    try {
      const check = await createOrm(embeddedDatabaseUrl({ embeddedPgPort: pgPort }), 1);
      const rows = await check.em
        .fork()
        .getConnection()
        .execute<{ status: string }[]>('select status from post_channels where post_id = ?', [postId]);
      await check.close();
      expect(rows).toEqual([{ status: 'published' }]);
    } finally {
      await pg.stop();
    }

    // Only what a user needs: the per-platform activity workers do not each warn that they run no
    // workflows, and nothing complains of a server or database that went away while stopping.
    expect(startOutput).not.toContain('No workflows registered');
    expect(output).not.toContain('shutdown_worker');
    expect(output).not.toMatch(/connection was dropped|terminating connection|Activity failed/);
    const complaints = output.split('\n').filter((l) => /"level":"(warn|error)"/.test(l) || /\bfatal\b|stop: /.test(l));
    expect(complaints).toEqual([]);
    expect(output).toMatch(/\[postpilot\] stopping…\n\[postpilot\] stopped\n?$/);
  }, 150_000);
});
