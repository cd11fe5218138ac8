// The worker's log lines carry no secret: the real entry point (worker/main.ts) as a child
// process, publishing through the real workflow to the platform fakes — successes, a token
// refresh, a refused login and a platform that echoes the Authorization header into its error —
// with everything it writes to stdout and stderr captured. No access token, refresh token (old
// or rotated), app password, bot token, webhook token, API key or CREDENTIALS_KEY may appear in
// any line, and every line is one of lib/log.ts's redacted JSON lines (the Temporal SDK's own
// "Activity failed" lines included: worker/index.ts installRuntime routes them there).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from '@temporalio/client';
import type { Subprocess } from 'bun';
import { addChannel } from '../domain/channels.ts';
import { startFakeDiscord, type FakeDiscord } from './fakes/discord.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { PUBLIC_CHANNEL, startFakeTelegram, type FakeTelegram } from './fakes/telegram.ts';
import { startFakeX, type FakeX } from './fakes/x.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

const ROOT = resolve(import.meta.dir, '..');
const unique = (label: string) => `${label}-${randomUUID().replaceAll('-', '')}`;

const secrets = {
  mastodonToken: unique('mastodon-access'),
  echoedToken: unique('echoed-access'),
  xAccess: unique('x-access'),
  xRefresh: unique('x-refresh'),
  appPassword: `${unique('app').slice(0, 8)}-pw1x-2y3z-4w5v`,
};

let mastodon: FakeMastodon;
let x: FakeX;
let discord: FakeDiscord;
let telegram: FakeTelegram;
/** A Mastodon-like server that echoes the request's Authorization header into its error, as some proxies do. */
let echo: ReturnType<typeof Bun.serve>;
/** A Bluesky PDS that refuses the app password. */
let pds: ReturnType<typeof Bun.serve>;
let worker: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
const lines: string[] = [];

beforeAll(async () => {
  [mastodon, x, discord, telegram] = await Promise.all([startFakeMastodon(), startFakeX(), startFakeDiscord(), startFakeTelegram()]);
  mastodon.validTokens.add(secrets.mastodonToken);
  x.validRefreshTokens.add(secrets.xRefresh);
  echo = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) =>
      Response.json({ error: `Validation failed: this proxy does not take ${req.headers.get('authorization')}` }, { status: 422 }),
  });
  pds = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => Response.json({ error: 'AuthenticationRequired', message: 'Invalid identifier or password' }, { status: 401 }),
  });
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGKILL');
    await worker.exited;
  }
  await Promise.all([mastodon?.stop(), x?.stop(), discord?.stop(), telegram?.stop(), echo?.stop(true), pds?.stop(true)]);
});

function capture(stream: ReadableStream<Uint8Array>): void {
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

async function until<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (worker && worker.exitCode !== null)
      throw new Error(`the worker exited (${worker.exitCode}) while waiting for ${what}:\n${lines.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${lines.slice(-40).join('\n')}`);
    await Bun.sleep(100);
  }
}

describe('worker logs', () => {
  test('a publish through worker/main.ts: no credential in any line it writes', async () => {
    const h = await harness();
    const env = await h.temporal();
    const taskQueue = `test-${randomUUID()}`;
    worker = Bun.spawn([process.execPath, 'worker/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: h.databaseUrl,
        CREDENTIALS_KEY: h.credentialsKey.toString('hex'),
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: env.namespace ?? 'default',
        TEMPORAL_TASK_QUEUE: taskQueue,
        LOG_LEVEL: 'debug',
        X_API_URL: x.url,
        X_CLIENT_ID: x.clientId,
        X_CLIENT_SECRET: x.clientSecret!,
        DISCORD_API_URL: discord.apiBase,
        TELEGRAM_API_URL: telegram.url,
        OUTBOUND_ALLOW_PRIVATE: 'true', // the Mastodon and Bluesky fakes listen on 127.0.0.1
      },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    capture(worker.stdout);
    capture(worker.stderr);
    await until('the worker to poll', () => lines.some((l) => l.includes('"msg":"polling"')));

    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    const em = () => h.orm.em.fork();
    const add = (platform: string, name: string, credentials: Record<string, unknown>) =>
      addChannel(em(), h.credentialsKey, { organizationId: org.id, platform, name, credentials });
    const webhookUrl = `https://discord.com/api/webhooks/${discord.webhook.id}/${discord.webhook.token}`;
    const channels = [
      await add('MASTODON', 'Mastodon', { instanceUrl: mastodon.url, accessToken: secrets.mastodonToken }),
      await add('MASTODON', 'Echoing proxy', { instanceUrl: `http://127.0.0.1:${echo.port}`, accessToken: secrets.echoedToken }),
      // Expired: the worker refreshes it first (X rotates the refresh token).
      await add('X', 'X', {
        accessToken: secrets.xAccess,
        refreshToken: secrets.xRefresh,
        expiresAt: new Date(Date.now() - 60_000).toISOString(),
      }),
      await add('DISCORD', 'Discord', { webhookUrl }),
      await add('TELEGRAM', 'Telegram', { botToken: telegram.token, chatId: String(PUBLIC_CHANNEL.id) }),
      await add('BLUESKY', 'Bluesky', {
        service: `http://127.0.0.1:${pds.port}`,
        identifier: 'someone.example',
        appPassword: secrets.appPassword,
      }),
    ];

    const client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
    const app = await testApp({ temporal: { client, taskQueue } });
    const created = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: `No secrets in the logs ${randomUUID()}`, channelIds: channels.map((c) => c.id) },
    });
    expect(created.status).toBe(201);
    const postId = created.body.id as string;

    const statuses = async () =>
      Object.fromEntries(
        (
          await em()
            .getConnection()
            .execute<{ channel_id: string; status: string }[]>('select channel_id, status from post_channels where post_id = ?', [postId])
        ).map((r) => [r.channel_id, r.status]),
      );
    const done = (await until('every channel to finish', async () => {
      const s = await statuses();
      return Object.values(s).every((v) => v === 'published' || v === 'failed') ? s : null;
    }))!;
    expect(channels.map((c) => [c.name, done[c.id]])).toEqual([
      ['Mastodon', 'published'],
      ['Echoing proxy', 'failed'],
      ['X', 'published'],
      ['Discord', 'published'],
      ['Telegram', 'published'],
      ['Bluesky', 'failed'],
    ]);
    // The SDK logged the two refused attempts (its lines are what this test is about).
    await until('the failed activities in the log', () => lines.filter((l) => l.includes('Activity failed')).length >= 2, 10_000);

    worker.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    await Bun.sleep(100); // the last chunks of the pipes

    const rotated = [...x.validRefreshTokens].filter((t) => t !== 'refresh-1');
    const issued = [...x.validTokens].filter((t) => t !== 'good-token');
    expect(rotated.length).toBe(1); // the refresh happened
    const all: [string, string][] = [
      ['Mastodon access token', secrets.mastodonToken],
      ['access token echoed by a platform', secrets.echoedToken],
      ['X access token (expired)', secrets.xAccess],
      ['X refresh token (used)', secrets.xRefresh],
      ...rotated.map((t): [string, string] => ['X refresh token (rotated)', t]),
      ...issued.map((t): [string, string] => ['X access token (issued)', t]),
      ['X client secret', x.clientSecret!],
      ['Bluesky app password', secrets.appPassword],
      ['Telegram bot token', telegram.token],
      ['Discord webhook token', discord.webhook.token],
      ['API key', key],
      ['CREDENTIALS_KEY', h.credentialsKey.toString('hex')],
    ];
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(3);
    expect(all.filter(([, secret]) => text.includes(secret)).map(([what]) => what)).toEqual([]);
    // The echoed header is there, cut out; the refused login's message too.
    expect(text).toContain('this proxy does not take Bearer [redacted]');
    expect(text).toContain('Bluesky 401: Invalid identifier or password');
    // Every line is a structured, redacted JSON line: the SDK's own (core's included) go through
    // lib/log.ts. The one exception is a fixed notice the SDK prints with console.warn under Bun.
    const SDK_NOTICE = 'v8.promiseHooks.createHook is not available; stack trace collection will be disabled.';
    const notJson = lines.filter((l) => {
      if (!l.trim() || l === SDK_NOTICE) return false;
      try {
        const v = JSON.parse(l);
        return !(v && typeof v === 'object' && typeof v.level === 'string' && typeof v.msg === 'string');
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
  }, 180_000);
});
