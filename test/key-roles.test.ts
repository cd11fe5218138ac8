// An API key made by a member is held to the member's role, beyond its scopes: every /v1 route
// that changes something is tried with a key of each role that can hold its scope. A role the
// action is not allowed gets 403 forbidden_scope naming the role and the action, before anything
// changes; a role that may passes the check (whatever the route answers next). A key made with
// the CLI belongs to no member and is held to its scopes only.
import { beforeAll, describe, expect, test } from 'bun:test';
import { ROLES, type Action, can, KEY_SCOPES, type Role } from '../domain/access.ts';
import { createUser } from '../services/users.ts';
import { createApiKey } from '../services/api-keys.ts';
import type { Scope } from '../lib/scopes.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

/** Each /v1 route that changes something: its scope, the member action, a body that passes validation. */
const ROUTES: { op: string; method: string; path: string; scope: Scope; action: Action | null; body?: unknown }[] = [
  {
    op: 'createPostsInBulk',
    method: 'POST',
    path: '/v1/posts/bulk',
    scope: 'publish',
    action: null,
    body: { posts: [{ content: 'hi', channelIds: ['ch_x'] }] },
  },
  { op: 'importPosts', method: 'POST', path: '/v1/posts/import', scope: 'publish', action: null, body: 'content,channels\nhi,ch_x\n' },
  { op: 'createPost', method: 'POST', path: '/v1/posts', scope: 'publish', action: null, body: { content: 'hi', channelIds: ['ch_x'] } },
  { op: 'updatePost', method: 'PATCH', path: '/v1/posts/post_x', scope: 'publish', action: null, body: { content: 'hi' } },
  { op: 'deletePost', method: 'DELETE', path: '/v1/posts/post_x', scope: 'publish', action: 'posts.publish' },
  { op: 'retryPost', method: 'POST', path: '/v1/posts/post_x/retry', scope: 'publish', action: 'posts.publish' },
  { op: 'approvePost', method: 'POST', path: '/v1/posts/post_x/approve', scope: 'approve', action: 'posts.approve' },
  { op: 'rejectPost', method: 'POST', path: '/v1/posts/post_x/reject', scope: 'approve', action: 'posts.approve' },
  {
    op: 'createUpload',
    method: 'POST',
    path: '/v1/media/uploads',
    scope: 'publish',
    action: 'media.write',
    body: { fileName: 'a.png', mimeType: 'image/png', fileSize: 10 },
  },
  { op: 'completeUpload', method: 'POST', path: '/v1/media/med_x/complete', scope: 'publish', action: 'media.write' },
  { op: 'setQueue', method: 'PUT', path: '/v1/channels/ch_x/queue', scope: 'publish', action: 'queues.write', body: { slots: [] } },
  {
    op: 'createSeries',
    method: 'POST',
    path: '/v1/series',
    scope: 'publish',
    action: 'series.write',
    body: { content: 'hi', channelIds: ['ch_x'], publishAt: '2030-01-01T00:00:00Z', repeat: { every: 'week', count: 2 } },
  },
  { op: 'updateSeries', method: 'PATCH', path: '/v1/series/ser_x', scope: 'publish', action: 'series.write', body: { content: 'hi' } },
  { op: 'deleteSeries', method: 'DELETE', path: '/v1/series/ser_x', scope: 'publish', action: 'series.write' },
  {
    op: 'createFeed',
    method: 'POST',
    path: '/v1/feeds',
    scope: 'publish',
    action: 'feeds.write',
    body: { url: 'https://example.com/feed.xml', channelIds: ['ch_x'] },
  },
  { op: 'updateFeed', method: 'PATCH', path: '/v1/feeds/feed_x', scope: 'publish', action: 'feeds.write', body: { name: 'x' } },
  { op: 'deleteFeed', method: 'DELETE', path: '/v1/feeds/feed_x', scope: 'publish', action: 'feeds.write' },
  { op: 'pollFeed', method: 'POST', path: '/v1/feeds/feed_x/poll', scope: 'publish', action: 'feeds.write' },
  {
    op: 'createWebhook',
    method: 'POST',
    path: '/v1/webhooks',
    scope: 'publish',
    action: 'webhooks.manage',
    body: { url: 'https://example.com/hook', events: 'all' },
  },
  {
    op: 'updateWebhook',
    method: 'PATCH',
    path: '/v1/webhooks/wh_x',
    scope: 'publish',
    action: 'webhooks.manage',
    body: { enabled: false },
  },
  { op: 'deleteWebhook', method: 'DELETE', path: '/v1/webhooks/wh_x', scope: 'publish', action: 'webhooks.manage' },
  { op: 'testWebhook', method: 'POST', path: '/v1/webhooks/wh_x/test', scope: 'publish', action: 'webhooks.manage' },
  { op: 'rotateWebhookSecret', method: 'POST', path: '/v1/webhooks/wh_x/rotate-secret', scope: 'publish', action: 'webhooks.manage' },
  {
    op: 'redeliverWebhook',
    method: 'POST',
    path: '/v1/webhooks/wh_x/deliveries/whd_x/redeliver',
    scope: 'publish',
    action: 'webhooks.manage',
  },
];

let app: Awaited<ReturnType<typeof testApp>>;
beforeAll(async () => {
  app = await testApp();
});

/** Changing operations no member action applies to: they change nothing of the organization's (a check, a reading, a draft). */
const EXEMPT = ['validatePost', 'refreshPostAnalytics', 'generatePost', 'generateAltText'];

describe('API keys held to their member’s role', () => {
  test('the table names every /v1 operation that is not a GET', async () => {
    const doc = (await call(app, 'GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string }>> };
    const changing = Object.values(doc.paths)
      .flatMap((ops) =>
        Object.entries(ops)
          .filter(([m]) => m !== 'get')
          .map(([, o]) => o.operationId),
      )
      .filter((id) => !EXEMPT.includes(id));
    expect(changing.sort()).toEqual(ROUTES.map((r) => r.op).sort());
  });

  test('every changing route × every role that can hold its scope: refused exactly where the role may not', async () => {
    const h = await harness();
    const org = await makeOrg('ENTERPRISE');
    const keys = {} as Record<Role, string>;
    for (const role of ROLES) {
      const user = await createUser(h.orm.em.fork(), {
        organizationId: org.id,
        email: `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`,
        password: 'long enough',
        role,
      });
      keys[role] = (
        await createApiKey(h.orm.em.fork(), {
          organizationId: org.id,
          name: role,
          scopes: [...KEY_SCOPES[role]],
          channels: 'all',
          createdBy: { userId: user.id, role },
        })
      ).key;
    }
    const seen: string[] = [];
    for (const r of ROUTES) {
      for (const role of ROLES.filter((x) => KEY_SCOPES[x].includes(r.scope))) {
        const res = await call(app, r.method, r.path, { key: keys[role], body: r.body });
        const refused = res.status === 403 && res.body?.error?.code === 'forbidden_scope';
        const expected = r.action !== null && !can(role, r.action);
        expect({ route: `${r.method} ${r.path}`, role, refused }).toEqual({ route: `${r.method} ${r.path}`, role, refused: expected });
        if (refused) {
          expect(res.body.error.details).toEqual({ requiredScope: r.scope, role, action: r.action });
          seen.push(`${role} ${r.action}`);
        }
      }
    }
    // The contributor is the role the scopes alone would let through.
    expect(seen).toContain('contributor webhooks.manage');
    expect(seen).toContain('contributor series.write');
    expect(seen).toContain('contributor queues.write');
    expect(seen).toContain('contributor posts.publish');
  });

  test('a key made with the CLI has no member: its scopes alone decide', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id, { scopes: ['read', 'publish'] });
    const res = await call(app, 'POST', '/v1/webhooks', { key, body: { url: 'https://example.com/hook', events: 'all' } });
    expect(res.status).not.toBe(403);
  });
});
