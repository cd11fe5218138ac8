// Token refresh inside a publish, end to end: API → Postgres → post workflows (time-skipping
// server) → the X connector as the worker builds it (createConnectors, with the app's OAuth
// client) → the X fake, whose token endpoint rotates refresh tokens as X does (a refresh token
// works once). The channel's access token has expired and the fake refuses it, so a post can
// only go out with credentials the worker refreshed itself.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel } from '../db/entities/index.ts';
import { decryptJson } from '../lib/crypto.ts';
import { createConnectors } from '../platforms/index.ts';
import { addChannel } from '../domain/channels.ts';
import { startFakeX, type FakeX, type FakeXResponse } from './fakes/x.ts';
import { call, makeKey, makeOrg, type CallResult } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeX;

beforeAll(async () => {
  fake = await startFakeX();
  const connectors = createConnectors({ X_API_URL: fake.url, X_CLIENT_ID: fake.clientId, X_CLIENT_SECRET: fake.clientSecret ?? undefined });
  stack = await startPostStack({ connectors: { X: connectors.X } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

/** An X channel whose access token expired an hour ago (the fake does not accept it either). */
async function expiredChannel(refreshToken: string) {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'X',
    name: 'x channel',
    credentials: { accessToken: 'expired-token', refreshToken, expiresAt: new Date(Date.now() - 3_600_000).toISOString() },
  });
  return { key, channel };
}

async function storedCredentials(channelId: string) {
  const row = await stack.h.orm.em.fork().findOneOrFail(Channel, { id: channelId });
  return { status: row.status, credentials: decryptJson<Record<string, unknown>>(stack.h.credentialsKey, row.credentialsEncrypted) };
}

/** True while some Postgres session of the test database waits for a row lock. */
async function someoneWaitsOnALock(): Promise<boolean> {
  const { rows } = await stack.h.pool.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
  );
  return rows[0]!.n > 0;
}

const tweetCalls = (from: number) => fake.requests.slice(from).filter((q) => q.method === 'POST' && q.path === '/2/tweets');

describe('token refresh inside a publish (X)', () => {
  test('expired token, two posts at once: one token call, rotated refresh token stored, both published', async () => {
    const { key, channel } = await expiredChannel('refresh-race');
    fake.validRefreshTokens.add('refresh-race');
    await stack.syncClock();
    const from = fake.requests.length;
    const tokenCalls = fake.count('token');
    // The first publish's refresh is held at X's token endpoint, under the channel's row lock.
    let release!: () => void;
    fake.failNext(1, { waitFor: new Promise<void>((r) => (release = r)) }, 'token');
    const texts = [`refresh a ${crypto.randomUUID()}`, `refresh b ${crypto.randomUUID()}`];
    const create = (content: string) => call(stack.app, 'POST', '/v1/posts', { key, body: { content, channelIds: [channel.id] } });
    const posts: CallResult[] = [];
    try {
      posts.push(await create(texts[0]!));
      expect(posts[0]!.status).toBe(201);
      for (let i = 0; i < 1000 && fake.count('token') === tokenCalls; i++) await Bun.sleep(10);
      expect(fake.count('token') - tokenCalls).toBe(1);
      // Creating a post for the channel meanwhile is not held up by the refresh (the lock must
      // not block the post_channels insert; if it did, this call would wait for the release).
      posts.push(await create(texts[1]!));
      expect(posts[1]!.status).toBe(201);
      // Release only once the second publish is waiting for the channel's row lock (correct) or
      // has reached X's token endpoint itself (a second refresh, spending the same refresh token
      // that the first is rotating): the two publishes truly overlap.
      let overlapped = false;
      for (let i = 0; i < 1000 && !overlapped; i++) {
        const calls = fake.count('token') - tokenCalls;
        overlapped = calls >= 2 || (calls === 1 && (await someoneWaitsOnALock()));
        if (!overlapped) await Bun.sleep(10);
      }
      release();
      expect(overlapped).toBe(true);
    } finally {
      release();
    }
    await Promise.all(posts.map((p) => stack.settle(p.body.id)));

    expect(fake.count('token') - tokenCalls).toBe(1);
    const { status, credentials } = await storedCredentials(channel.id);
    expect(status).toBe('active');
    // The rotated refresh token was saved (the old one is dead at X), with the new access token.
    expect(credentials.refreshToken).not.toBe('refresh-race');
    expect(fake.validRefreshTokens.has(credentials.refreshToken as string)).toBe(true);
    expect(fake.validRefreshTokens.has('refresh-race')).toBe(false);
    expect(credentials.accessToken).not.toBe('expired-token');
    expect(fake.validTokens.has(credentials.accessToken as string)).toBe(true);
    expect(Date.parse(credentials.expiresAt as string)).toBeGreaterThan(Date.now() + 3_600_000);

    for (const [i, p] of posts.entries()) {
      const got = (await call(stack.app, 'GET', `/v1/posts/${p.body.id}`, { key })).body;
      expect(got.status).toBe('published');
      const mine = fake.tweets.filter((t) => t.text === texts[i]);
      expect(mine).toHaveLength(1);
      expect(got.channels[0]).toMatchObject({ status: 'published', error: null, platformPostId: mine[0]!.id });
    }
    // Both sent once, with the refreshed token; the expired one never reached X.
    expect(tweetCalls(from).map((q) => q.authorization)).toEqual([
      `Bearer ${credentials.accessToken}`,
      `Bearer ${credentials.accessToken}`,
    ]);
  });

  // X answers a spent or revoked refresh token with 400 invalid_request "Value passed for the
  // token was invalid." (what the fake does by itself); RFC 6749 names the case invalid_grant.
  const refusals: [string, FakeXResponse | null, RegExp][] = [
    ['X’s own answer (invalid_request)', null, /Value passed for the token was invalid/],
    [
      'invalid_grant',
      { status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token was revoked.' } },
      /The refresh token was revoked/,
    ],
  ];
  test.each(refusals)(
    'refresh refused (%s): channel reauth_required, nothing posted, the channel failed with the reason',
    async (_name, answer, reason) => {
      const { key, channel } = await expiredChannel(`refresh-revoked-${crypto.randomUUID()}`);
      const before = await storedCredentials(channel.id);
      await stack.syncClock();
      const from = fake.requests.length;
      const tokenCalls = fake.count('token');
      if (answer) fake.failNext(1, answer, 'token');
      const text = `refused ${crypto.randomUUID()}`;
      const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channel.id] } });
      expect(r.status).toBe(201);
      await stack.settle(r.body.id);

      const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
      expect(got.status).toBe('failed');
      expect(got.channels[0]).toMatchObject({ status: 'failed', platformPostId: null, url: null });
      expect(got.channels[0].error).toMatch(/^token refresh failed: X 400: /);
      expect(got.channels[0].error).toMatch(reason);
      // Not retried (the user must reconnect), nothing sent, the stored credentials untouched.
      expect(fake.count('token') - tokenCalls).toBe(1);
      expect(tweetCalls(from)).toHaveLength(0);
      expect(fake.tweets.filter((t) => t.text === text)).toHaveLength(0);
      const after = await storedCredentials(channel.id);
      expect(after.status).toBe('reauth_required');
      expect(after.credentials).toEqual(before.credentials);
      // The API shows it, and refuses new posts to it until it is reconnected.
      const listed = (await call(stack.app, 'GET', '/v1/channels', { key })).body.data;
      expect(listed).toEqual([expect.objectContaining({ id: channel.id, status: 'reauth_required' })]);
      const again = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'again', channelIds: [channel.id] } });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('reauth_required');
    },
  );
});
