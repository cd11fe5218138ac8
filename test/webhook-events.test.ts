// Webhook events end to end: the changes the API and the workflows make reach a
// receiver as signed events (verified with the official `standardwebhooks` package), with the
// API's own objects as `data`; an organization never receives another's events.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { Client } from '@temporalio/client';
import { addChannel } from '../domain/channels.ts';
import { createApp } from '../server/app.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { POST_WORKFLOW_TYPE } from '../workflows/post-types.ts';
import { WEBHOOK_DELIVERIES_WORKFLOW_TYPE, webhookEventWorkflowId } from '../workflows/webhook-delivery-types.ts';
import { WebhookEvent } from '../db/entities/index.ts';
import { endpointWants } from '../domain/webhooks/outbox.ts';

interface Event {
  path: string;
  id: string;
  type: string;
  data: Record<string, any>;
}

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let server: ReturnType<typeof Bun.serve>;
const secrets = new Map<string, string>();
const events: Event[] = [];
const unverified: string[] = [];

beforeAll(async () => {
  fake = await startFakeMastodon();
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      try {
        const payload = new Webhook(secrets.get(path)!).verify(body, Object.fromEntries(req.headers)) as Record<string, any>;
        events.push({ path, id: req.headers.get('webhook-id')!, type: payload.type, data: payload.data });
      } catch (err) {
        unverified.push(`${path}: ${(err as Error).message}`);
      }
      return new Response('ok');
    },
  });
  stack = await startPostStack({ storage: 'disk' });
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  server?.stop(true);
});

async function setup(path: string) {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  const res = await call(stack.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: `http://127.0.0.1:${server.port}${path}`, events: 'all' },
  });
  expect(res.status).toBe(201);
  secrets.set(path, res.body.secret);
  return { org, key, channel: (name: string, accessToken: string) => mastodonChannel(org.id, name, accessToken) };
}

/** A Mastodon channel of the organization on the fake, with the token the fake answers for. */
async function mastodonChannel(organizationId: string, name: string, accessToken: string): Promise<string> {
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name,
    credentials: { instanceUrl: fake.url, accessToken },
  });
  return channel.id;
}

const at = (path: string) => events.filter((e) => e.path === path);

async function until(check: () => boolean, step = '30 seconds') {
  for (let i = 0; i < 200; i++) {
    for (let j = 0; j < 10; j++) {
      if (check()) return;
      await Bun.sleep(20);
    }
    await stack.env.sleep(step);
  }
  throw new Error(`condition never held; received ${JSON.stringify(events.map((e) => [e.path, e.type]))}`);
}

describe('webhook events', () => {
  test('publish with one channel refused (401): scheduled, channel published, channel failed, reauth_required, post failed', async () => {
    const { key, channel } = await setup('/org-a');
    const other = await setup('/org-b');
    const good = await channel('good', 'good-token');
    const revoked = await channel('revoked', 'revoked-token');
    const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'hello webhooks', channelIds: [good, revoked] } });
    expect(created.status).toBe(201);
    const postId = created.body.id;
    expect((await stack.settle(postId)).phase).toBe('failed');
    const want = ['post.scheduled', 'post.channel.published', 'post.channel.failed', 'channel.reauth_required', 'post.failed'];
    await until(() => want.every((t) => at('/org-a').some((e) => e.type === t)));
    const byType = (t: string) => at('/org-a').filter((e) => e.type === t);
    for (const t of want) expect({ t, n: byType(t).length }).toEqual({ t, n: 1 });
    expect(byType('post.scheduled')[0]!.data).toMatchObject({ id: postId, status: 'scheduled' });
    expect(byType('post.channel.published')[0]!.data).toMatchObject({
      post: { id: postId },
      postChannel: { channelId: good, status: 'published' },
    });
    // The post-channel object as the API shows it, with its failure class.
    const shownAfter = await call(stack.app, 'GET', `/v1/posts/${postId}`, { key });
    const failedEntry = shownAfter.body.channels.find((c: { channelId: string }) => c.channelId === revoked);
    expect(failedEntry).toMatchObject({ status: 'failed', errorCode: 'reauth_required' });
    expect(byType('post.channel.failed')[0]!.data.postChannel).toEqual(failedEntry);
    expect(byType('channel.reauth_required')[0]!.data).toMatchObject({ id: revoked, status: 'reauth_required' });
    // The post as GET /v1/posts/{id} shows it.
    const shown = await call(stack.app, 'GET', `/v1/posts/${postId}`, { key });
    expect(byType('post.failed')[0]!.data).toEqual(shown.body);
    // Every event has its own webhook-id; the other organization received nothing of these.
    expect(new Set(at('/org-a').map((e) => e.id)).size).toBe(at('/org-a').length);
    expect(at('/org-b')).toEqual([]);
    expect(other.org.id).not.toBe(undefined);
    expect(unverified).toEqual([]);
  });

  test('20 endpoints: the create starts a constant number of workflows and answers; each endpoint gets one verified post.scheduled', async () => {
    const org = await makeOrg('TEAM');
    const { key } = await makeKey(org.id);
    for (let i = 0; i < 20; i++) {
      const path = `/fanout-${i}`;
      const res = await call(stack.app, 'POST', '/v1/webhooks', {
        key,
        body: { url: `http://127.0.0.1:${server.port}${path}`, events: ['post.scheduled'] },
      });
      expect(res.status).toBe(201);
      secrets.set(path, res.body.secret);
    }
    const channel = (
      await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: 'fanout',
        credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
      })
    ).id;
    // The app's Temporal client counts the workflows the request starts.
    const started: string[] = [];
    const client = new Client({
      connection: stack.env.connection,
      namespace: stack.env.namespace ?? 'default',
      interceptors: { workflow: [{ start: (input, next) => (started.push(input.workflowType), next(input)) }] },
    });
    const app = createApp({
      orm: stack.h.orm,
      log: () => {},
      temporal: { client, taskQueue: stack.taskQueue },
      rateLimiter: stack.h.rateLimiter,
    });
    const publishAt = new Date((await stack.syncClock()).getTime() + 86_400_000).toISOString();
    const created = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: 'to twenty endpoints', channelIds: [channel], publishAt },
    });
    expect(created.status).toBe(201);
    // The post's workflow and the event's one deliveries workflow, not one start per endpoint.
    expect(started.sort()).toEqual([POST_WORKFLOW_TYPE, WEBHOOK_DELIVERIES_WORKFLOW_TYPE].sort());
    const paths = Array.from({ length: 20 }, (_, i) => `/fanout-${i}`);
    await until(() => paths.every((p) => at(p).length >= 1));
    for (const p of paths) {
      expect(at(p)).toHaveLength(1);
      expect(at(p)[0]).toMatchObject({ type: 'post.scheduled', data: { id: created.body.id } });
    }
    expect(unverified).toEqual([]);
    // The twenty were attempted together, by one local activity of the event's workflow (a marker, no activity task).
    const event = await stack.h.orm.em.fork().findOneOrFail(WebhookEvent, { organization: org.id, type: 'post.scheduled' });
    const handle = stack.client.workflow.getHandle(webhookEventWorkflowId(event.id));
    expect(Object.values(await handle.result())).toEqual(Array(20).fill('delivered'));
    const history = await handle.fetchHistory();
    expect(history.events!.filter((e) => e.markerRecordedEventAttributes)).toHaveLength(1);
    expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
  });

  test('every channel published: post.published; a cancelled post: post.cancelled', async () => {
    const { key, channel } = await setup('/published');
    const good = await channel('good', 'good-token');
    const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'all good', channelIds: [good] } });
    await stack.settle(created.body.id);
    await until(() => at('/published').some((e) => e.type === 'post.published'));
    expect(at('/published').find((e) => e.type === 'post.published')!.data).toMatchObject({ id: created.body.id, status: 'published' });

    const later = new Date((await stack.syncClock()).getTime() + 86_400_000).toISOString();
    const scheduled = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'never', channelIds: [good], publishAt: later } });
    expect((await call(stack.app, 'DELETE', `/v1/posts/${scheduled.body.id}`, { key })).status).toBe(204);
    await until(() => at('/published').some((e) => e.type === 'post.cancelled'));
    expect(at('/published').find((e) => e.type === 'post.cancelled')!.data).toMatchObject({ id: scheduled.body.id });
    expect(unverified).toEqual([]);
  });

  test('an outcome no endpoint wants is recorded without an event; one that an endpoint wants comes with its event', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    const endpoint = async (path: string, body: Record<string, unknown>) => {
      const res = await call(stack.app, 'POST', '/v1/webhooks', { key, body: { url: `http://127.0.0.1:${server.port}${path}`, ...body } });
      expect(res.status).toBe(201);
      secrets.set(path, res.body.secret);
      return res.body.endpoint.id as string;
    };
    // Subscribed to failures only; another to everything, then disabled.
    await endpoint('/failures-only', { events: ['post.failed', 'post.channel.failed'] });
    const off = await endpoint('/disabled', { events: 'all' });
    expect((await call(stack.app, 'PATCH', `/v1/webhooks/${off}`, { key, body: { enabled: false } })).status).toBe(200);
    const wants = async (type: string) =>
      (
        await stack.h.orm.em
          .fork()
          .getConnection()
          .execute<{ yes: boolean }[]>(`select exists (select 1 from webhook_endpoints e where ${endpointWants('?', '?')}) as yes`, [
            org.id,
            type,
          ])
      )[0]!.yes;
    expect({ published: await wants('post.published'), failed: await wants('post.failed') }).toEqual({ published: false, failed: true });
    const good = await mastodonChannel(org.id, 'good', 'good-token');
    const revoked = await mastodonChannel(org.id, 'revoked', 'revoked-token');

    const published = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'nobody listens', channelIds: [good] } });
    await stack.settle(published.body.id);
    const shown = await call(stack.app, 'GET', `/v1/posts/${published.body.id}`, { key });
    expect(shown.body).toMatchObject({ status: 'published', channels: [{ status: 'published', errorCode: null }] });
    expect(shown.body.publishedAt).toBe(shown.body.channels[0].publishedAt);
    expect(shown.body.channels[0].url).toStartWith('http');

    const failed = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'someone listens', channelIds: [good, revoked] } });
    expect((await stack.settle(failed.body.id)).phase).toBe('failed');
    await until(() => at('/failures-only').some((e) => e.type === 'post.failed'));
    expect(
      at('/failures-only')
        .map((e) => `${e.type} ${e.data.id ?? e.data.post?.id}`)
        .sort(),
    ).toEqual([`post.channel.failed ${failed.body.id}`, `post.failed ${failed.body.id}`].sort());
    expect(at('/disabled')).toEqual([]);
    // Nothing was written for the events nobody wanted.
    const written = await stack.h.orm.em
      .fork()
      .getConnection()
      .execute<{ type: string }[]>('select type from webhook_events where organization_id = ? order by type', [org.id]);
    expect(written.map((r) => r.type)).toEqual(['post.channel.failed', 'post.failed']);
    expect(unverified).toEqual([]);
  });

  test('an upload that completes: media.ready with the media item', async () => {
    const { key } = await setup('/media');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3366ff' } })
      .png()
      .toBuffer();
    const made = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'ready.png', mimeType: 'image/png', fileSize: png.length },
    });
    const put = await stack.app.handle(new Request(made.body.upload.url, { method: 'PUT', headers: made.body.upload.headers, body: png }));
    expect(put.status).toBe(200);
    const done = await call(stack.app, 'POST', `/v1/media/${made.body.media.id}/complete`, { key });
    expect(done.body.status).toBe('ready');
    await until(() => at('/media').some((e) => e.type === 'media.ready'));
    expect(at('/media').find((e) => e.type === 'media.ready')!.data).toMatchObject({
      id: made.body.media.id,
      status: 'ready',
      type: 'image',
    });
    expect(unverified).toEqual([]);
  });

  test('an upload whose processing fails (not the image it claims to be): media.failed with the media item as GET shows it', async () => {
    const { key } = await setup('/media-failed');
    const bytes = Buffer.from('this is plain text, not a PNG image at all');
    const made = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'fake.png', mimeType: 'image/png', fileSize: bytes.length },
    });
    expect(made.status).toBe(201);
    const put = await stack.app.handle(
      new Request(made.body.upload.url, { method: 'PUT', headers: made.body.upload.headers, body: bytes }),
    );
    expect(put.status).toBe(200);
    const done = await call(stack.app, 'POST', `/v1/media/${made.body.media.id}/complete`, { key });
    expect(done.body.status).toBe('failed');
    await until(() => at('/media-failed').some((e) => e.type === 'media.failed'));
    const shown = await call(stack.app, 'GET', `/v1/media/${made.body.media.id}`, { key });
    expect(shown.body).toMatchObject({ id: made.body.media.id, status: 'failed' });
    expect(at('/media-failed').find((e) => e.type === 'media.failed')!.data).toEqual(shown.body);
    expect(at('/media-failed').filter((e) => e.type === 'media.failed')).toHaveLength(1);
    expect(at('/media-failed').some((e) => e.type === 'media.ready')).toBe(false);
    expect(unverified).toEqual([]);
  });
});
