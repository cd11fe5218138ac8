// Posts end to end: API → Postgres → post workflow (time-skipping server) → Mastodon connector
// → a local fake speaking Mastodon's HTTP contract.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel, Post } from '../db/entities/index.ts';
import { addChannel } from '../services/channels.ts';
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

async function waitForWorkflow(postId: string) {
  return stack.env.client.workflow.getHandle(postWorkflowId(postId)).result();
}

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
