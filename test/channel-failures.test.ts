// Failures a program can act on: a failed channel keeps `error` (the human reason) and gains
// `errorCode` and `retryable`. End to end through the post workflow (time-skipping server) with
// the real Mastodon and Discord connectors on their fakes: the connector's classification travels
// in the activity failure's details, through the workflow, into post_channels, and out of GET.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post, PostChannel } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { createDiscordConnector } from '../platforms/discord.ts';
import { failureCodeOf } from '../platforms/failure-class.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { PlatformError } from '../platforms/types.ts';
import { addChannel } from '../domain/channels.ts';
import { CHANNEL_ERROR_CODES, classOfFailure, RETRYABLE } from '../workflows/publish-failure-types.ts';
import { startFakeDiscord, type FakeDiscord } from './fakes/discord.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let discord: FakeDiscord;

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  discord = await startFakeDiscord();
  stack = await startPostStack({
    connectors: {
      MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }),
      // A short timeout: "the answer never came" costs half a second of real time.
      DISCORD: createDiscordConnector({ baseUrl: discord.apiBase, timeoutMs: 500 }),
    },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
  await discord?.stop();
});

async function account() {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channel = (platform: 'MASTODON' | 'DISCORD', token = 'good-token') =>
    addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform,
      name: `${platform} ${token}`,
      credentials: platform === 'MASTODON' ? { instanceUrl: mastodon.url, accessToken: token } : { webhookUrl: discord.webhookUrl() },
    });
  return { org, key, channel };
}

/**
 * Publishes now and waits for the post's outcome (published or failed), moving the test server's
 * clock in `step`s while nothing happens (retry backoffs); returns GET /v1/posts/{id}.
 */
async function publishNow(key: string, channelIds: string[], step = '1 minute') {
  await stack.syncClock();
  const content = `failure ${crypto.randomUUID()}`;
  const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content, channelIds } });
  expect(r.status).toBe(201);
  for (let i = 0; i < 60; i++) {
    for (let j = 0; j < 20; j++) {
      const post = await stack.h.orm.em.fork().findOneOrFail(Post, { id: r.body.id });
      if (post.status === 'published' || post.status === 'failed')
        return (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
      await Bun.sleep(15);
    }
    await stack.env.sleep(step);
  }
  throw new Error(`post ${r.body.id} did not finish`);
}

const channelOf = (post: { channels: { channelId: string }[] }, id: string) => post.channels.find((c) => c.channelId === id) as any;
const statusRequests = () => mastodon.requests.filter((q) => q.method === 'POST' && q.path === '/api/v1/statuses').length;

describe('errorCode and retryable through the workflow', () => {
  test('401 → reauth_required, retryable; the channel that published has neither', async () => {
    const { key, channel } = await account();
    const ok = await channel('MASTODON');
    const revoked = await channel('MASTODON', 'revoked-token');
    const post = await publishNow(key, [ok.id, revoked.id]);
    expect(post.status).toBe('failed');
    expect(channelOf(post, revoked.id)).toMatchObject({
      status: 'failed',
      errorCode: 'reauth_required',
      retryable: true,
      error: expect.stringMatching(/401/),
    });
    expect(channelOf(post, ok.id)).toMatchObject({ status: 'published', error: null, errorCode: null, retryable: null });
    // Stored as such (not only derived by the view).
    const row = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: post.id, channel: revoked.id });
    expect({ errorCode: row.errorCode, retryable: row.retryable }).toEqual({ errorCode: 'reauth_required', retryable: true });
  });

  test('5xx on every attempt until they are spent → platform_unavailable, retryable', async () => {
    const { key, channel } = await account();
    const ch = await channel('MASTODON');
    const before = statusRequests();
    mastodon.failNext(10, { status: 503, body: { error: 'Service Unavailable' } });
    const post = await publishNow(key, [ch.id], '5 minutes');
    expect(statusRequests() - before).toBe(10);
    expect(channelOf(post, ch.id)).toMatchObject({
      status: 'failed',
      errorCode: 'platform_unavailable',
      retryable: true,
      error: 'Mastodon 503: Service Unavailable',
    });
  });

  test('429 on every attempt → rate_limited, retryable', async () => {
    const { key, channel } = await account();
    const ch = await channel('MASTODON');
    const before = statusRequests();
    mastodon.failNext(10, { status: 429, body: { error: 'Too many requests' }, headers: { 'retry-after': '2' } });
    const post = await publishNow(key, [ch.id]);
    expect(statusRequests() - before).toBe(10);
    expect(channelOf(post, ch.id)).toMatchObject({
      status: 'failed',
      errorCode: 'rate_limited',
      retryable: true,
      error: 'Mastodon 429: Too many requests',
    });
  });

  test('422 (the text refused) → rejected_content, not retryable; 413 (the attachment too large) → media_rejected', async () => {
    const { key, channel } = await account();
    const ch = await channel('MASTODON');
    mastodon.failNext(1, { status: 422, body: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    const refused = await publishNow(key, [ch.id]);
    expect(channelOf(refused, ch.id)).toMatchObject({ status: 'failed', errorCode: 'rejected_content', retryable: false });
    mastodon.failNext(1, { status: 413, body: { error: 'File is too large' } });
    const tooBig = await publishNow(key, [ch.id]);
    expect(channelOf(tooBig, ch.id)).toMatchObject({ status: 'failed', errorCode: 'media_rejected', retryable: false });
  });

  test('Discord: the answer lost after sending (no look-up) → may_have_posted, retryable after checking', async () => {
    const { key, channel } = await account();
    const ch = await channel('DISCORD');
    const before = discord.messages.length;
    discord.failNext(1, 'accept-then-hang');
    const post = await publishNow(key, [ch.id]);
    expect(discord.messages.length - before).toBe(1);
    expect(channelOf(post, ch.id)).toMatchObject({
      status: 'failed',
      errorCode: 'may_have_posted',
      retryable: true,
      error: expect.stringContaining('the message may have been posted'),
    });
  });

  test('a channel that failed before the columns existed shows unknown (retryable); other channels null', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const [a, b] = [await makeChannel(org.id, 'MASTODON'), await makeChannel(org.id, 'MASTODON')];
    const postId = newId('post');
    const conn = stack.h.orm.em.fork().getConnection();
    await conn.execute(
      `insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
       values (?, ?, 'failed', 'old', 'api', now(), now(), now())`,
      [postId, org.id],
    );
    // As a row written before Migration20261123130100: no error_code, no retryable.
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, error, created_at, updated_at)
       values (?, ?, ?, 'MASTODON', 'failed', 'old', 'Mastodon 500: boom', now(), now()),
              (?, ?, ?, 'MASTODON', 'published', 'old', null, now(), now())`,
      [newId('pc'), postId, a.id, newId('pc'), postId, b.id],
    );
    const got = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
    expect(channelOf(got, a.id)).toMatchObject({ status: 'failed', error: 'Mastodon 500: boom', errorCode: 'unknown', retryable: true });
    expect(channelOf(got, b.id)).toMatchObject({ status: 'published', errorCode: null, retryable: null });
    const listed = (await call(stack.app, 'GET', '/v1/posts', { key })).body.data[0];
    expect(channelOf(listed, a.id)).toMatchObject({ errorCode: 'unknown', retryable: true });
  });
});

describe('the classification', () => {
  const err = (kind: 'reauth' | 'transient' | 'permanent', opts: { status?: number; platformCode?: string } = {}) =>
    new PlatformError(kind, 'x', opts);

  test('connectors’ errors by kind, status and platform code', () => {
    const cases: [Parameters<typeof failureCodeOf>[0], PlatformError, string][] = [
      ['X', err('reauth', { status: 401 }), 'reauth_required'],
      ['DISCORD', err('permanent', { platformCode: 'outcome_unknown' }), 'may_have_posted'],
      ['TELEGRAM', err('permanent', { platformCode: 'outcome_unknown' }), 'may_have_posted'],
      ['MASTODON', err('transient', { status: 503 }), 'platform_unavailable'],
      ['MASTODON', err('transient'), 'platform_unavailable'],
      ['X', err('transient', { status: 429 }), 'rate_limited'],
      ['INSTAGRAM', err('transient', { status: 400, platformCode: '4' }), 'rate_limited'],
      ['FACEBOOK', err('transient', { status: 403, platformCode: '32' }), 'rate_limited'],
      ['REDDIT', err('transient', { platformCode: 'RATELIMIT' }), 'rate_limited'],
      ['TELEGRAM', err('transient', { status: 429, platformCode: '429' }), 'rate_limited'],
      ['TIKTOK', err('transient', { platformCode: 'spam_risk_too_many_posts' }), 'rate_limited'],
      ['YOUTUBE', err('transient', { status: 403, platformCode: 'quotaExceeded' }), 'rate_limited'],
      ['MASTODON', err('permanent', { status: 422 }), 'rejected_content'],
      ['MASTODON', err('permanent', { platformCode: 'outbound_refused' }), 'rejected_content'],
      ['LINKEDIN', err('permanent', { status: 422, platformCode: 'DUPLICATE_POST' }), 'rejected_content'],
      ['MASTODON', err('permanent', { status: 413 }), 'media_rejected'],
      ['X', err('permanent', { status: 415 }), 'media_rejected'],
      ['INSTAGRAM', err('permanent', { platformCode: 'ERROR' }), 'media_rejected'],
      ['INSTAGRAM', err('permanent', { status: 400, platformCode: '36003/2207009' }), 'media_rejected'],
      ['THREADS', err('permanent', { platformCode: 'FAILED_PROCESSING_VIDEO' }), 'media_rejected'],
      ['TIKTOK', err('permanent', { platformCode: 'file_format_check_failed' }), 'media_rejected'],
      ['PINTEREST', err('permanent', { platformCode: 'failed' }), 'media_rejected'],
      ['BLUESKY', err('permanent', { status: 400, platformCode: 'BlobTooLarge' }), 'media_rejected'],
      ['DISCORD', err('permanent', { status: 400, platformCode: '40005' }), 'media_rejected'],
      // A code means media only on its own platform.
      ['MASTODON', err('permanent', { platformCode: 'failed' }), 'rejected_content'],
    ];
    expect(cases.map(([p, e]) => failureCodeOf(p, e))).toEqual(cases.map(([, , code]) => code) as never);
  });

  test('the workflow’s reading of a failure: its details, else its type; retryable per code', () => {
    expect(classOfFailure('TransientPublishError', [{ errorCode: 'rate_limited', retryable: true }])).toEqual({
      errorCode: 'rate_limited',
      retryable: true,
    });
    // Failures without details (an older worker, a failure of ours): by type.
    expect(classOfFailure('ReauthRequired', undefined)).toEqual({ errorCode: 'reauth_required', retryable: true });
    expect(classOfFailure('PermanentPublishError', [])).toEqual({ errorCode: 'rejected_content', retryable: false });
    expect(classOfFailure('TransientPublishError', null)).toEqual({ errorCode: 'platform_unavailable', retryable: true });
    expect(classOfFailure('Error', undefined)).toEqual({ errorCode: 'unknown', retryable: true });
    expect(classOfFailure(undefined, [{ errorCode: 'not-a-code' }])).toEqual({ errorCode: 'unknown', retryable: true });
    expect(Object.keys(RETRYABLE)).toEqual([...CHANNEL_ERROR_CODES]);
    expect(CHANNEL_ERROR_CODES.filter((c) => !RETRYABLE[c])).toEqual(['rejected_content', 'media_rejected', 'not_approved']);
  });
});
