// Makers re-checked at every run (domain/makers.ts): a feed whose member left, or whose key was
// revoked, and a series whose key was revoked or expired, are paused at their next run with the
// reason, a webhook and an audit event by the service — and nothing they would have posted
// reaches the platform (counted at the fake Mastodon). Resuming is a take-over by a current key
// or member; a maker demoted to contributor makes posts that wait for approval.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Feed, Post, Series, WebhookEvent } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createFeed } from '../domain/feeds/feeds.ts';
import { updateSeries } from '../domain/series/series.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { removeMember, setMemberRole } from '../domain/members.ts';
import { sql } from '../db/sql.ts';
import { admissionChanged } from '../db/admission-changes.ts';
import { createApiKey, revokeApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { feedPollNowWorkflowId } from '../workflows/feed-poll-types.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { feedItem, startFeedServer, type FeedServer } from './fakes/feed-server.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import type { MemberPrincipal, Role } from '../domain/access.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let receiver: ReturnType<typeof startEventReceiver>;
const servers: FeedServer[] = [];

beforeAll(async () => {
  fake = await startFakeMastodon();
  receiver = startEventReceiver();
  stack = await startPostStack({ appDeps: { outbound: { allowPrivate: true } } });
});
afterAll(async () => {
  for (const s of servers) s.stop();
  await stack?.stop();
  await fake?.stop();
  receiver?.stop();
});

const HOUR = 3_600_000;

/** An organization with a Mastodon channel, its owner (a member with a key), and a webhook endpoint for the pause events. */
async function organization() {
  const org = await makeOrg('ENTERPRISE');
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  const owner = await member(org.id, 'owner');
  const hook = await call(stack.app, 'POST', '/v1/webhooks', {
    key: owner.key,
    body: { url: `http://127.0.0.1:${receiver.port}/makers`, events: ['feed.paused', 'series.paused'] },
  });
  expect(hook.status).toBe(201);
  return { org, channelId: channel.id, owner };
}

async function member(orgId: string, role: Role, scopes?: string[]) {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(stack.h.orm.em.fork(), { organizationId: orgId, email, password: 'correct horse battery', role });
  const key = await createApiKey(stack.h.orm.em.fork(), {
    organizationId: orgId,
    name: `${role} key`,
    scopes: scopes ?? (role === 'contributor' ? ['read', 'publish'] : ['read', 'publish', 'approve']),
    channels: 'all',
    createdBy: { userId: user.id, role },
  });
  const principal: MemberPrincipal = { type: 'member', organizationId: orgId, userId: user.id, name: email, role };
  return { user, key: key.key, keyId: key.id, principal };
}

const sentWith = (marker: string) => fake.statuses.filter((s) => s.text.includes(marker)).length;

/** A daily series of the key, its first occurrence an hour from the workflows' clock. */
async function dailySeries(key: string, channelId: string, content: string, count: number) {
  const t0 = await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/series', {
    key,
    body: { content, channelIds: [channelId], publishAt: new Date(t0.getTime() + HOUR).toISOString(), repeat: { every: 'day', count } },
  });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, t0 };
}

async function pollNow(key: string, feedId: string) {
  const r = await call(stack.app, 'POST', `/v1/feeds/${feedId}/poll`, { key });
  expect(r.status).toBe(202);
  return stack.client.workflow.getHandle(feedPollNowWorkflowId(feedId)).result();
}

async function auditOf(resourceId: string, action: string) {
  return sql<{ actor_type: string; details: { reason: string } }>(
    stack.h.orm.em.fork(),
    'select actor_type, details from audit_events where resource_id = ? and action = ?',
    [resourceId, action],
  );
}

const pauseEvents = (orgId: string, type: string) => stack.h.orm.em.fork().find(WebhookEvent, { organization: orgId, type });

/** A feed with one old item (its backlog) whose every new item is marked with `marker`. */
function feedServer() {
  const s = startFeedServer([feedItem(1)]);
  servers.push(s);
  return s;
}

describe('feeds re-check their maker at every read', () => {
  test('made in the web app by a member who is then removed: paused at the next read, nothing posted; resumed by the owner, posted once', async () => {
    const { org, channelId, owner } = await organization();
    const editor = await member(org.id, 'editor');
    const server = feedServer();
    const marker = `web-${crypto.randomUUID().slice(0, 8)}`;
    const feed = await createFeed(
      stack.h.orm.em.fork(),
      { organizationId: org.id, source: 'app', key: null, userId: editor.user.id, outbound: { allowPrivate: true }, now: new Date() },
      { url: server.url, channelIds: [channelId], template: `{title} ${marker}` },
    );
    await removeMember(stack.h.orm.em.fork(), org.id, owner.principal, editor.user.id);
    server.items = [feedItem(2), ...server.items];
    expect(await pollNow(owner.key, feed.id)).toMatchObject({ polled: 1, posted: 0 });
    const paused = await call(stack.app, 'GET', `/v1/feeds/${feed.id}`, { key: owner.key });
    expect(paused.body).toMatchObject({
      status: 'paused',
      pausedReason: 'The member who made it is no longer a member of the organization.',
    });
    expect(sentWith(marker)).toBe(0);
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(0);
    expect(await pauseEvents(org.id, 'feed.paused')).toHaveLength(1);
    expect(await auditOf(feed.id, 'feed.pause')).toMatchObject([
      { actor_type: 'system', details: { reason: expect.stringContaining('no longer a member') } },
    ]);

    // A read asked for while paused is refused; resuming makes the owner's key its maker.
    expect((await call(stack.app, 'POST', `/v1/feeds/${feed.id}/poll`, { key: owner.key })).status).toBe(409);
    const resumed = await call(stack.app, 'PATCH', `/v1/feeds/${feed.id}`, { key: owner.key, body: { status: 'active' } });
    expect(resumed.status).toBe(200);
    const row = await stack.h.orm.em.fork().findOneOrFail(Feed, { id: feed.id });
    expect({ apiKeyId: row.apiKeyId, createdByUserId: row.createdByUserId }).toEqual({ apiKeyId: owner.keyId, createdByUserId: null });
    expect(await pollNow(owner.key, feed.id)).toMatchObject({ polled: 1, posted: 1 });
    const post = await stack.h.orm.em.fork().findOneOrFail(Post, { organization: org.id });
    await stack.settle(post.id);
    expect(sentWith(marker)).toBe(1);
  });

  test('made with a member’s key: the member removed (their keys revoked) pauses it; one demoted to contributor is paused too', async () => {
    const { org, channelId, owner } = await organization();
    for (const change of ['remove', 'demote'] as const) {
      // Without `approve`, the key outlives a demotion to contributor (which revokes only the scopes the role may not hold).
      const editor = await member(org.id, 'editor', ['read', 'publish']);
      const server = feedServer();
      const marker = `key-${change}-${crypto.randomUUID().slice(0, 8)}`;
      const made = await call(stack.app, 'POST', '/v1/feeds', {
        key: editor.key,
        body: { url: server.url, channelIds: [channelId], template: `{title} ${marker}` },
      });
      expect(made.status).toBe(201);
      if (change === 'remove') await removeMember(stack.h.orm.em.fork(), org.id, owner.principal, editor.user.id);
      else await setMemberRole(stack.h.orm.em.fork(), org.id, owner.principal, editor.user.id, 'contributor');
      server.items = [feedItem(2), ...server.items];
      expect(await pollNow(owner.key, made.body.id)).toMatchObject({ polled: 1, posted: 0 });
      const reason = (await stack.h.orm.em.fork().findOneOrFail(Feed, { id: made.body.id })).pausedReason;
      expect(reason).toContain(change === 'remove' ? 'was revoked' : 'role (contributor) may not do this (feeds.write)');
      expect(sentWith(marker)).toBe(0);
    }
    expect(await pauseEvents(org.id, 'feed.paused')).toHaveLength(2);
  });
});

describe('series re-check their maker at every occurrence', () => {
  test('a revoked key’s series: paused when its occurrence is due, nothing created or sent; resumed by another key, the next occurrence is published', async () => {
    const { org, channelId, owner } = await organization();
    const editor = await member(org.id, 'editor');
    const content = `daily ${crypto.randomUUID()}`;
    const { id: seriesId } = await dailySeries(editor.key, channelId, content, 5);
    await revokeApiKey(stack.h.orm.em.fork(), editor.keyId);
    await stack.env.sleep('2 hours');
    const paused = await until(async () => {
      const s = await stack.h.orm.em.fork().findOneOrFail(Series, { id: seriesId });
      return s.status === 'paused' ? s : null;
    });
    expect(paused.pausedReason).toContain('was revoked');
    expect(await stack.h.orm.em.fork().count(Post, { seriesId: seriesId })).toBe(0);
    expect(sentWith(content)).toBe(0);
    expect(await pauseEvents(org.id, 'series.paused')).toHaveLength(1);
    expect(await auditOf(seriesId, 'series.pause')).toHaveLength(1);
    const view = await call(stack.app, 'GET', `/v1/series/${seriesId}`, { key: owner.key });
    expect(view.body).toMatchObject({ status: 'paused', pausedReason: expect.stringContaining('was revoked'), nextOccurrenceAt: null });
    // An edit of a paused series is refused; resuming takes it over, skipping the occurrence missed while paused.
    expect((await call(stack.app, 'PATCH', `/v1/series/${seriesId}`, { key: owner.key, body: { content: 'x' } })).status).toBe(409);
    // By the workflows' clock (the time-skipping server's), the first occurrence fell due while paused.
    const resumed = await updateSeries(
      stack.h.orm.em.fork(),
      { client: stack.client, taskQueue: stack.taskQueue },
      org.id,
      seriesId,
      { status: 'active' },
      { apiKeyId: owner.keyId, channels: 'all' },
      await stack.syncClock(),
    );
    expect(resumed).toMatchObject({ status: 'active', pausedReason: null, occurrencesCreated: 1 });
    expect((await stack.h.orm.em.fork().findOneOrFail(Series, { id: seriesId })).apiKeyId).toBe(owner.keyId);
    await stack.env.sleep('1 day');
    const occurrence = await until(() => stack.h.orm.em.fork().findOne(Post, { seriesId: seriesId }));
    await stack.settle(occurrence.id);
    expect(sentWith(content)).toBe(1);
  });

  test('an expired key’s series is paused at its next occurrence', async () => {
    const { org, channelId } = await organization();
    const editor = await member(org.id, 'editor');
    const content = `expiring ${crypto.randomUUID()}`;
    const { id: seriesId, t0 } = await dailySeries(editor.key, channelId, content, 2);
    await sql(stack.h.orm.em.fork(), 'update api_keys set expires_at = ? where id = ?', [new Date(t0.getTime() + HOUR / 2), editor.keyId]);
    admissionChanged({ keyId: editor.keyId });
    await stack.env.sleep('2 hours');
    const paused = await until(async () => {
      const s = await stack.h.orm.em.fork().findOneOrFail(Series, { id: seriesId });
      return s.status === 'paused' ? s : null;
    });
    expect(paused.pausedReason).toContain('has expired');
    expect(sentWith(content)).toBe(0);
  });

  test('its occurrences get the approval the maker’s own posts would need now: everyone’s posts wait once the setting says so', async () => {
    const { org, channelId } = await organization();
    const editor = await member(org.id, 'editor');
    const content = `approved later ${crypto.randomUUID()}`;
    const { id: seriesId } = await dailySeries(editor.key, channelId, content, 2);
    await setApprovalSettings(stack.h.orm.em.fork(), org.id, { approval: 'everyone' });
    await stack.env.sleep('2 hours');
    const occurrence = await until(() => stack.h.orm.em.fork().findOne(Post, { seriesId: seriesId }));
    expect(occurrence.approval).toMatchObject({ status: 'pending', requestedBy: { type: 'api_key', id: editor.keyId } });
    expect(sentWith(content)).toBe(0);
  });
});

async function until<T>(fn: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v) return v;
    await Bun.sleep(25);
  }
  throw new Error('nothing came');
}
