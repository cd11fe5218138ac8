// The metrics sweep end to end: a post published through the API on the fake Mastodon, its
// reading due, the sweep workflow (what the Temporal Schedule runs) on the worker, and the
// figures read back through GET /v1/posts/{id}/analytics.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { METRICS_SWEEP_WORKFLOW_TYPE, type MetricsSweepSummary } from '../workflows/metrics-sweep-types.ts';
import { addChannel } from '../domain/channels.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let secret = '';
const receiver = startEventReceiver({ secret: () => secret });
const events = receiver.events;

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
  receiver.stop();
});

/** A Mastodon channel of the organization on the fake, its token valid; the API's clock set to the server's. */
async function mastodonChannel(organizationId: string) {
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name: 'metrics',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  mastodon.validTokens.add('good-token');
  await stack.syncClock();
  return channel;
}

describe('the metrics sweep', () => {
  test('reads the due reading of a post published through the API; the API and a post.analytics.updated event show it', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const hook = await call(stack.app, 'POST', '/v1/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${receiver.port}/metrics`, events: ['post.analytics.updated'] },
    });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
    const channel = await mastodonChannel(org.id);
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `sweep ${crypto.randomUUID()}`, channelIds: [channel.id] },
    });
    expect(created.status).toBe(201);
    const postId = created.body.id as string;
    await stack.settle(postId);
    const published = await call(stack.app, 'GET', `/v1/posts/${postId}`, { key });
    expect(published.body.status).toBe('published');
    const statusId = published.body.channels[0].platformPostId as string;
    Object.assign(mastodon.statuses.find((s) => s.id === statusId)!, { favourites_count: 3, reblogs_count: 2, replies_count: 1 });

    const pending = await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key });
    expect(pending.body.channels[0].history).toEqual([]);
    expect(Date.parse(pending.body.channels[0].nextReadingAt)).toBe(Date.parse(published.body.channels[0].publishedAt) + 3_600_000);

    // Its first reading falls due (the hour is not waited for here).
    await stack.h.pool.query(`update post_channels set metrics_next_at = $1 where post_id = $2`, [
      new Date((await stack.syncClock()).getTime() - 1000),
      postId,
    ]);
    const summary = (await stack.client.workflow.execute(METRICS_SWEEP_WORKFLOW_TYPE, {
      args: [{ limit: 100, rounds: 5 }],
      taskQueue: stack.taskQueue,
      workflowId: `metrics-sweep-${crypto.randomUUID()}`,
    })) as MetricsSweepSummary;
    expect(summary.read).toBeGreaterThanOrEqual(1);

    const r = await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key });
    expect(r.status).toBe(200);
    const c = r.body.channels[0];
    expect(c.history).toHaveLength(1);
    expect(c.metrics).toMatchObject({ likes: 3, reposts: 2, replies: 1, impressions: null });
    expect(Date.parse(c.nextReadingAt)).toBe(Date.parse(published.body.channels[0].publishedAt) + 6 * 3_600_000);

    // Its event: the same figures as GET, once.
    for (let i = 0; i < 200 && !events.some((e) => e.data.postId === postId); i++) await Bun.sleep(50);
    const sent = events.filter((e) => e.data.postId === postId);
    expect(sent.map((e) => e.type)).toEqual(['post.analytics.updated']);
    expect(sent[0]!.data).toEqual(r.body);
  });

  test('POST …/analytics/refresh reads now without moving the schedule, at most once every 5 minutes per post', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const channel = await mastodonChannel(org.id);

    const later = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: `later ${crypto.randomUUID()}`,
        channelIds: [channel.id],
        publishAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    const notYet = await call(stack.app, 'POST', `/v1/posts/${later.body.id}/analytics/refresh`, { key });
    expect(notYet.status).toBe(409);
    expect(notYet.body.error.code).toBe('conflict');

    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `refresh ${crypto.randomUUID()}`, channelIds: [channel.id] },
    });
    const postId = created.body.id as string;
    await stack.settle(postId);
    const before = (await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key })).body.channels[0];
    const statusId = before.platformPostId as string;
    Object.assign(mastodon.statuses.find((s) => s.id === statusId)!, { favourites_count: 9 });

    const asked = await call(stack.app, 'POST', `/v1/posts/${postId}/analytics/refresh`, { key });
    expect(asked.status).toBe(202);
    expect(asked.body.postId).toBe(postId);
    let after = before;
    for (let i = 0; i < 100 && after.history.length === 0; i++) {
      await Bun.sleep(50);
      after = (await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key })).body.channels[0];
    }
    expect(after.history).toHaveLength(1);
    expect(after.metrics.likes).toBe(9);
    // The scheduled readings are where they were.
    expect(after.nextReadingAt).toBe(before.nextReadingAt);

    const again = await call(stack.app, 'POST', `/v1/posts/${postId}/analytics/refresh`, { key });
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('rate_limited');
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(200);

    // A read-only key may look, not ask.
    const reader = await makeKey(org.id, { scopes: ['read'] });
    expect((await call(stack.app, 'POST', `/v1/posts/${postId}/analytics/refresh`, { key: reader.key })).status).toBe(403);
  });
});
