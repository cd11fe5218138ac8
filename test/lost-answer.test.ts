// A lost answer never becomes a second post, end to end: API → Postgres → post workflow
// (time-skipping server) → the real X connector → the X fake. X has no idempotency key for
// POST /2/tweets, so a retry must look the post up (findPublished) or read the row Postgres
// already holds before it sends again — and X refuses the same text twice (403), so a blind
// resend would also fail the channel.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { PostChannel } from '../db/entities/index.ts';
import { createXConnector } from '../platforms/x.ts';
import { addChannel } from '../domain/channels.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startFakeX, type FakeX } from './fakes/x.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeX;

/**
 * Set by a test: the next publish attempt on this channel runs to the end — the post is out and
 * Postgres has recorded it `published` — and then fails instead of reporting its result, as when
 * the worker dies between its last commit and the completion's way to Temporal.
 */
let loseNextCompletion: {
  channelId: string;
  fired: number;
  rowAtCrash?: { status: string; publishedAt: string | null; attempts: number };
} | null = null;

const losingCompletions: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const result = await next(input);
      const armed = loseNextCompletion;
      const { postId, channelId } = input.args[0] as { postId: string; channelId: string };
      if (!armed || armed.fired || ctx.info.activityType !== 'publishToChannel' || channelId !== armed.channelId) return result;
      armed.fired++;
      const row = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: postId, channel: channelId });
      armed.rowAtCrash = { status: row.status, publishedAt: row.publishedAt?.toISOString() ?? null, attempts: row.attempts };
      throw new Error('simulated crash: the result never reached Temporal');
    },
  },
});

beforeAll(async () => {
  fake = await startFakeX();
  stack = await startPostStack({
    // Production's X connector (platforms/index.ts) with a short request timeout, so "hangs
    // until our timeout" costs a second of real time, not thirty.
    connectors: {
      X: createXConnector({
        baseUrl: fake.url,
        timeoutMs: 1_000,
        oauth: { clientId: fake.clientId, clientSecret: fake.clientSecret ?? undefined },
      }),
    },
    publishInterceptors: [losingCompletions],
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

async function setup() {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'X',
    name: 'x channel',
    credentials: { accessToken: 'good-token' },
  });
  return { key, channel };
}

/** Counts of the fake's routes, taken before a test, so a test reads only its own calls. */
function counter() {
  const routes = ['tweets', 'timeline', 'me'] as const;
  const before = Object.fromEntries(routes.map((r) => [r, fake.count(r)])) as Record<(typeof routes)[number], number>;
  return (route: (typeof routes)[number]) => fake.count(route) - before[route];
}

/** The attempt number of the publish activity's last attempt, from the workflow history. */
async function lastPublishAttempt(postId: string): Promise<number> {
  const history = await stack.env.client.workflow.getHandle(postWorkflowId(postId)).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishToChannel')!;
  const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId))!;
  return started.activityTaskStartedEventAttributes!.attempt!;
}

describe('lost answer → look-up before re-sending (X, no idempotency key)', () => {
  test('X accepts the post and never answers: the retry finds it, one post, its id recorded', async () => {
    const { key, channel } = await setup();
    await stack.syncClock();
    const calls = counter();
    const text = `lost answer ${crypto.randomUUID()}`;
    fake.failNext(1, 'accept-then-hang');
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channel.id] } });
    expect(r.status).toBe(201);
    await stack.settle(r.body.id);

    const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    expect(got.status).toBe('published');
    const mine = fake.tweets.filter((t) => t.text === text);
    expect(mine).toHaveLength(1);
    expect(got.channels[0]).toMatchObject({ status: 'published', error: null, platformPostId: mine[0]!.id });
    // One send (the first attempt's, whose answer was lost), then the look-up on the retry.
    expect(calls('tweets')).toBe(1);
    expect(calls('timeline')).toBe(1);
    expect(await lastPublishAttempt(r.body.id)).toBe(2);
  });

  test('Postgres recorded published but Temporal never got the completion: the retry sends nothing', async () => {
    const { key, channel } = await setup();
    await stack.syncClock();
    const calls = counter();
    const text = `lost completion ${crypto.randomUUID()}`;
    const crash: NonNullable<typeof loseNextCompletion> = { channelId: channel.id, fired: 0 };
    loseNextCompletion = crash;
    try {
      const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channel.id] } });
      expect(r.status).toBe(201);
      await stack.settle(r.body.id);

      expect(crash.fired).toBe(1);
      // (Not toMatchObject with expect.any(): Bun 1.4 writes the matchers into the received object.)
      expect(crash.rowAtCrash!.status).toBe('published');
      expect(crash.rowAtCrash!.publishedAt).toBeString();
      expect(await lastPublishAttempt(r.body.id)).toBe(2);
      const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
      expect(got.status).toBe('published');
      const mine = fake.tweets.filter((t) => t.text === text);
      expect(mine).toHaveLength(1);
      expect(got.channels[0]).toMatchObject({ status: 'published', error: null, platformPostId: mine[0]!.id });
      // The retry was answered by the row: no second send, not even a look-up on X, and the row
      // is as the lost attempt left it (not re-recorded, not another attempt at the platform).
      expect(calls('tweets')).toBe(1);
      expect(calls('timeline')).toBe(0);
      expect(calls('me')).toBe(0);
      const row = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: r.body.id, channel: channel.id });
      expect({
        status: row.status as string,
        publishedAt: row.publishedAt?.toISOString() ?? null,
        attempts: row.attempts as number,
      }).toEqual(crash.rowAtCrash!);
    } finally {
      loseNextCompletion = null;
    }
  });
});
