// Posts end to end: API → Postgres → post workflow (time-skipping server) → Mastodon connector
// → a local fake speaking Mastodon's HTTP contract.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel, Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;

beforeAll(async () => {
  stack = await startPostStack();
  fake = await startFakeMastodon();
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

async function setup(channelTokens: string[] = ['good-token']) {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channels = [];
  for (const [i, token] of channelTokens.entries()) {
    channels.push(
      await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: `mastodon ${i}`,
        credentials: { instanceUrl: fake.url, accessToken: token },
      }),
    );
  }
  return { org, key, channels };
}

const statusesFor = (text: string) => fake.statuses.filter((s) => s.text === text);

const waitForWorkflow = (postId: string) => stack.settle(postId);

describe('posts', () => {
  test('publish now: 201 with Location, published on the fake, outcome on every channel', async () => {
    const { key, channels } = await setup(['good-token', 'good-token']);
    await stack.syncClock();
    const text = `hello now ${crypto.randomUUID()}`;
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: channels.map((c) => c.id) } });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/posts/${r.body.id}`);
    expect(r.body).toMatchObject({ status: 'scheduled', content: text, source: 'api', media: [], reddit: null });
    expect(r.body.channels.map((c: { status: string }) => c.status)).toEqual(['draft', 'draft']);
    await waitForWorkflow(r.body.id);
    const got = await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key });
    expect(got.body.status).toBe('published');
    expect(got.body.publishedAt).toBeTruthy();
    for (const ch of got.body.channels) {
      expect(ch).toMatchObject({ status: 'published', content: text, error: null });
      expect(ch.platformPostId).toMatch(/^\d+$/);
      expect(ch.url).toBe(`${fake.url}/@user/${ch.platformPostId}`);
    }
    expect(statusesFor(text)).toHaveLength(2);
  });

  test('scheduled 3 days ahead: still scheduled after 2 days; moved to 1 day by PATCH, it publishes at 1 day and never at 3', async () => {
    const { key, channels } = await setup();
    const t0 = await stack.syncClock();
    const text = `scheduled ${crypto.randomUUID()}`;
    const at3 = new Date(t0.getTime() + 3 * 86_400_000).toISOString();
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channels[0]!.id], publishAt: at3 } });
    expect(r.status).toBe(201);
    expect(r.body.scheduledAt).toBe(at3);

    // A post that is not moved: after 2 days it still waits.
    await stack.env.sleep('2 days');
    expect((await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body.status).toBe('scheduled');
    expect(statusesFor(text)).toHaveLength(0);

    // Move it: 1 day from now (server time), with new text.
    const t1 = await stack.syncClock();
    const at1 = new Date(t1.getTime() + 86_400_000).toISOString();
    const p = await call(stack.app, 'PATCH', `/v1/posts/${r.body.id}`, { key, body: { publishAt: at1, content: `${text} (edited)` } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ status: 'scheduled', scheduledAt: at1, content: `${text} (edited)` });

    await stack.env.sleep('1 day');
    await waitForWorkflow(r.body.id);
    // The history proves the timing: the 3-day timer was cancelled by the edit and never fired;
    // the one timer that fired was armed for the new time (1 day from the edit).
    const history = await stack.env.client.workflow.getHandle(postWorkflowId(r.body.id)).fetchHistory();
    const events = history.events ?? [];
    const started = events.filter((e) => e.timerStartedEventAttributes);
    const fired = events.filter((e) => e.timerFiredEventAttributes);
    const canceled = events.filter((e) => e.timerCanceledEventAttributes);
    const seconds = (e: (typeof events)[number]) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds);
    expect(seconds(started[0]!)).toBeGreaterThan(3 * 86_400 - 60);
    expect(canceled.map((e) => e.timerCanceledEventAttributes!.timerId)).toContain(started[0]!.timerStartedEventAttributes!.timerId);
    expect(fired).toHaveLength(1);
    const firedTimer = started.find((e) => e.timerStartedEventAttributes!.timerId === fired[0]!.timerFiredEventAttributes!.timerId)!;
    expect(Math.abs(seconds(firedTimer) - 86_400)).toBeLessThan(120);
    const firedAt = Number(fired[0]!.eventTime!.seconds) * 1000;
    expect(Math.abs(firedAt - Date.parse(at1))).toBeLessThan(120_000);
    expect(statusesFor(`${text} (edited)`)).toHaveLength(1);
    expect(statusesFor(text)).toHaveLength(0);
    // Later, nothing more is sent.
    await stack.env.sleep('3 days');
    expect(statusesFor(`${text} (edited)`)).toHaveLength(1);

    // Done posts cannot be edited.
    const late = await call(stack.app, 'PATCH', `/v1/posts/${r.body.id}`, { key, body: { content: 'too late' } });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('conflict');
  });

  test('partial failure: a 401 channel fails with the reason and becomes reauth_required; the other publishes; post failed', async () => {
    const { key, channels } = await setup(['good-token', 'revoked-token']);
    await stack.syncClock();
    const text = `partial ${crypto.randomUUID()}`;
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: channels.map((c) => c.id) } });
    expect(r.status).toBe(201);
    await waitForWorkflow(r.body.id);
    const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    expect(got.status).toBe('failed');
    const [ok, bad] = [channels[0]!.id, channels[1]!.id].map((id) => got.channels.find((c: { channelId: string }) => c.channelId === id));
    expect(ok).toMatchObject({ status: 'published', error: null });
    expect(bad.status).toBe('failed');
    expect(bad.error).toMatch(/401|invalid/i);
    expect(bad.platformPostId).toBeNull();
    const ch = await stack.h.orm.em.fork().findOneOrFail(Channel, { id: channels[1]!.id });
    expect(ch.status).toBe('reauth_required');
    expect(statusesFor(text)).toHaveLength(1);
    // Posting to it now is refused until it is reconnected.
    const again = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [channels[1]!.id] } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'reauth_required', details: { channelIds: [channels[1]!.id] } });
  });

  test('503 twice then success → published, exactly one status created on the fake', async () => {
    const { key, channels } = await setup();
    await stack.syncClock();
    const text = `retry ${crypto.randomUUID()}`;
    fake.failNext(2, { status: 503, body: { error: 'Service Unavailable' } });
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channels[0]!.id] } });
    await waitForWorkflow(r.body.id);
    const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    expect(got.status).toBe('published');
    expect(statusesFor(text)).toHaveLength(1);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: r.body.id });
    expect(row.status).toBe('published');
  });
});

describe('posts: crash safety', () => {
  test('worker stopped mid-fan-out and restarted → every channel published exactly once', async () => {
    // Without a workflow cache: the time-skipping test server would keep the next workflow task
    // on the stopped worker's sticky queue until a timeout it never lets pass (the dev server
    // and real clusters reset stickiness when a worker shuts down).
    const own = await startPostStack({ maxCachedWorkflows: 0 });
    try {
      const { key, channels } = await setup(['good-token', 'good-token', 'good-token']);
      await own.syncClock();
      const text = `crash ${crypto.randomUUID()}`;
      // Mastodon accepts all three statuses, but no answer ever comes back: the worker is then
      // stopped with the three publish activities in flight.
      fake.failNext(3, 'accept-then-hang');
      const r = await call(own.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: channels.map((c) => c.id) } });
      expect(r.status).toBe(201);
      for (let i = 0; i < 500 && statusesFor(text).length < 3; i++) await Bun.sleep(10);
      expect(statusesFor(text)).toHaveLength(3);
      expect((await call(own.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body.status).toBe('publishing');

      const stoppedAt = Date.now();
      await own.restartWorker();
      await own.settle(r.body.id);
      // Attempts lost with the old worker stop heartbeating and are retried after the 10 s
      // heartbeat timeout (real seconds: the test server does not skip time past a lost task).
      expect(Date.now() - stoppedAt).toBeLessThan(40_000);

      const got = (await call(own.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
      expect(got.status).toBe('published');
      // Sent again after the restart, with the same Idempotency-Key, and deduplicated by Mastodon.
      expect(statusesFor(text)).toHaveLength(3);
      for (const ch of got.channels) {
        const status = statusesFor(text).find((s) => s.id === ch.platformPostId);
        expect(status?.idempotencyKey).toBe(`${r.body.id}:${ch.channelId}`);
        const sends = fake.requests.filter((q) => q.path === '/api/v1/statuses' && q.idempotencyKey === status!.idempotencyKey);
        expect(sends.length).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await own.stop();
    }
  });

  test('a hung request times out and is retried with the same Idempotency-Key → one status', async () => {
    const { key, channels } = await setup();
    await stack.syncClock();
    const text = `hang ${crypto.randomUUID()}`;
    fake.failNext(1, 'accept-then-hang');
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channels[0]!.id] } });
    await waitForWorkflow(r.body.id);
    const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    expect(got.status).toBe('published');
    expect(statusesFor(text)).toHaveLength(1);
    expect(got.channels[0].platformPostId).toBe(statusesFor(text)[0]!.id);
  });

  test('a permanent error (422) fails the channel at once with Mastodon’s reason, no retry', async () => {
    const { key, channels } = await setup();
    await stack.syncClock();
    const text = `perm ${crypto.randomUUID()}`;
    fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    const before = fake.requests.length;
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channels[0]!.id] } });
    await waitForWorkflow(r.body.id);
    const got = (await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    expect(got.status).toBe('failed');
    expect(got.channels[0]).toMatchObject({ status: 'failed', platformPostId: null, url: null });
    expect(got.channels[0].error).toContain('Text character limit of 500 exceeded');
    expect(fake.requests.slice(before).filter((q) => q.path === '/api/v1/statuses')).toHaveLength(1);
    // The channel itself stays usable.
    const ch = await stack.h.orm.em.fork().findOneOrFail(Channel, { id: channels[0]!.id });
    expect(ch.status).toBe('active');
  });

  test('429 with Retry-After waits that long before the next attempt', async () => {
    const { key, channels } = await setup();
    await stack.syncClock();
    const text = `ratelimited ${crypto.randomUUID()}`;
    fake.failNext(1, { status: 429, body: { error: 'Too many requests' }, headers: { 'Retry-After': '120' } });
    const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: text, channelIds: [channels[0]!.id] } });
    await waitForWorkflow(r.body.id);
    expect((await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body.status).toBe('published');
    const history = await stack.env.client.workflow.getHandle(postWorkflowId(r.body.id)).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishToChannel')!;
    const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId))!;
    // History keeps the last attempt only: the second one, which started 120 s (Retry-After)
    // after the first, not after the 5 s default backoff.
    expect(started.activityTaskStartedEventAttributes!.attempt).toBe(2);
    const waited = Number(started.eventTime!.seconds) - Number(scheduled.eventTime!.seconds);
    expect(waited).toBeGreaterThanOrEqual(119);
    expect(waited).toBeLessThan(180);
    const sends = fake.requests.filter((q) => q.path === '/api/v1/statuses' && q.idempotencyKey?.startsWith(r.body.id));
    expect(sends).toHaveLength(2);
    expect(statusesFor(text)).toHaveLength(1);
  });
});
