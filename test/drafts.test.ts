// Drafts on the real stack (time-skipping Temporal server, the fake Mastodon): kept, changed and
// listed freely; never published, even with an intended time long past; checked as a post;
// scheduled into a post by the create path, which publishes once at its time (counted at the
// fake); the same Idempotency-Key makes one post; a scheduled draft no longer changes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addChannel } from '../domain/channels.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
});

async function account() {
  const org = await makeOrg('PRO');
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'drafts',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  const clock = await stack.syncClock();
  return { org, key, channelId: channel.id, clock };
}

const published = (text: string) => mastodon.statuses.filter((s) => s.text === text);

describe('drafts', () => {
  test('kept with anything from nothing to a whole post; changed, fields removed by null; listed last changed first; deleted', async () => {
    const a = await account();
    const empty = await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: {} });
    expect(empty.status).toBe(201);
    expect(empty.headers.get('location')).toBe(`/v1/drafts/${empty.body.id}`);
    expect(empty.body).toMatchObject({ channelIds: [], intendedAt: null, status: 'draft', postId: null, createdBy: { type: 'api_key' } });
    expect(empty.body.content).toBeUndefined();

    const full = await call(stack.app, 'POST', '/v1/drafts', {
      key: a.key,
      body: { content: 'An idea', channelIds: [a.channelId], thread: [{ content: 'and more' }], intendedAt: '2020-01-01T09:00:00Z' },
    });
    expect(full.status).toBe(201);
    expect(full.body).toMatchObject({ content: 'An idea', thread: [{ content: 'and more' }], intendedAt: '2020-01-01T09:00:00.000Z' });

    const edited = await call(stack.app, 'PATCH', `/v1/drafts/${full.body.id}`, {
      key: a.key,
      body: { content: 'A better idea', thread: null, intendedAt: null },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ content: 'A better idea', intendedAt: null });
    expect(edited.body.thread).toBeUndefined();

    const list = await call(stack.app, 'GET', '/v1/drafts?limit=1', { key: a.key });
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([full.body.id]);
    const next = await call(stack.app, 'GET', `/v1/drafts?limit=1&cursor=${list.body.nextCursor}`, { key: a.key });
    expect(next.body.data.map((d: { id: string }) => d.id)).toEqual([empty.body.id]);
    expect(next.body.nextCursor).toBeNull();

    expect(
      (await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: { channelIds: ['ch_00000000000000000000000000'] } })).status,
    ).toBe(422);
    // Tags: the organization's, checked as a post's; a deleted tag leaves every draft.
    const tag = await call(stack.app, 'POST', '/v1/tags', { key: a.key, body: { name: 'Launch' } });
    const tagged = await call(stack.app, 'PATCH', `/v1/drafts/${empty.body.id}`, { key: a.key, body: { tagIds: [tag.body.id] } });
    expect(tagged.body.tagIds).toEqual([tag.body.id]);
    expect(empty.body.tagIds).toEqual([]);
    const foreign = await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: { tagIds: ['tag_00000000000000000000000000'] } });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error.details.fields[0].path).toBe('tagIds');
    expect((await call(stack.app, 'DELETE', `/v1/tags/${tag.body.id}`, { key: a.key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/drafts/${empty.body.id}`, { key: a.key })).body.tagIds).toEqual([]);
    // Any offset RFC 3339 allows is read as its instant; a time outside what a post may take is refused.
    const offset = await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: { intendedAt: '2028-08-13T23:09:20-16:39' } });
    expect(offset.body.intendedAt).toBe('2028-08-14T15:48:20.000Z');
    const early = await call(stack.app, 'PATCH', `/v1/drafts/${offset.body.id}`, {
      key: a.key,
      body: { intendedAt: '0001-01-01T00:00:00+14:00' },
    });
    expect(early.status).toBe(422);
    expect(early.body.error.details.fields[0].path).toBe('intendedAt');
    await call(stack.app, 'DELETE', `/v1/drafts/${offset.body.id}`, { key: a.key });
    expect((await call(stack.app, 'DELETE', `/v1/drafts/${empty.body.id}`, { key: a.key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/drafts/${empty.body.id}`, { key: a.key })).status).toBe(404);
    // Another organization's key does not see it.
    const other = await account();
    expect((await call(stack.app, 'GET', `/v1/drafts/${full.body.id}`, { key: other.key })).status).toBe(404);
    // Drafts are not posts.
    const posts = await call(stack.app, 'GET', '/v1/posts', { key: a.key });
    expect({ status: posts.status, body: posts.body }).toEqual({ status: 200, body: { data: [], nextCursor: null } });
  });

  test('never published, its intended time long past; checked as a post: a draft create would refuse is refused the same way', async () => {
    const a = await account();
    const text = `never ${crypto.randomUUID()}`;
    const d = await call(stack.app, 'POST', '/v1/drafts', {
      key: a.key,
      body: { content: text, channelIds: [a.channelId], intendedAt: '2020-01-01T09:00:00Z' },
    });
    await stack.env.sleep('2 days');
    expect(published(text)).toHaveLength(0);
    expect((await call(stack.app, 'GET', `/v1/drafts/${d.body.id}`, { key: a.key })).body.status).toBe('draft');

    const ok = await call(stack.app, 'POST', `/v1/drafts/${d.body.id}/validate`, {
      key: a.key,
      body: { publishAt: new Date(a.clock.getTime() + 3 * 86_400_000).toISOString() },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.channels[0]).toMatchObject({ channelId: a.channelId, content: text });
    const long = await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: { content: 'x'.repeat(600), channelIds: [a.channelId] } });
    const refused = await call(stack.app, 'POST', `/v1/drafts/${long.body.id}/validate`, { key: a.key });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields[0].path).toBe('content');
    const noChannel = await call(stack.app, 'POST', '/v1/drafts', { key: a.key, body: { content: 'where?' } });
    const why = await call(stack.app, 'POST', `/v1/drafts/${noChannel.body.id}/schedule`, { key: a.key });
    expect(why.status).toBe(422);
    expect(why.body.error.details.fields[0].path).toBe('channelIds');
  });

  test('scheduled: one post with the same key, published once at its time; the draft records it and no longer changes', async () => {
    const a = await account();
    const text = `scheduled ${crypto.randomUUID()}`;
    const tag = await call(stack.app, 'POST', '/v1/tags', { key: a.key, body: { name: 'Campaign' } });
    const d = await call(stack.app, 'POST', '/v1/drafts', {
      key: a.key,
      body: { content: text, channelIds: [a.channelId], tagIds: [tag.body.id] },
    });
    const publishAt = new Date(a.clock.getTime() + 2 * 3_600_000).toISOString();
    const schedule = () =>
      call(stack.app, 'POST', `/v1/drafts/${d.body.id}/schedule`, {
        key: a.key,
        body: { publishAt },
        headers: { 'idempotency-key': 'schedule-once' },
      });
    const first = await schedule();
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/v1/posts/${first.body.id}`);
    expect(first.body).toMatchObject({ status: 'scheduled', content: text, tagIds: [tag.body.id] });
    expect(new Date(first.body.scheduledAt).getTime()).toBe(new Date(publishAt).getTime());
    const again = await schedule();
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const posts = await call(stack.app, 'GET', '/v1/posts', { key: a.key });
    expect(posts.body.data.map((p: { id: string }) => p.id)).toEqual([first.body.id]);

    const draft = await call(stack.app, 'GET', `/v1/drafts/${d.body.id}`, { key: a.key });
    expect(draft.body).toMatchObject({ status: 'scheduled', postId: first.body.id });
    expect((await call(stack.app, 'PATCH', `/v1/drafts/${d.body.id}`, { key: a.key, body: { content: 'late' } })).status).toBe(409);
    const otherKey = await call(stack.app, 'POST', `/v1/drafts/${d.body.id}/schedule`, { key: a.key, body: { publishAt } });
    expect(otherKey.status).toBe(409);
    expect(otherKey.body.error.details).toEqual({ postId: first.body.id });

    expect(published(text)).toHaveLength(0);
    await stack.settle(first.body.id, { step: '1 hour' });
    await stack.client.workflow.getHandle(postWorkflowId(first.body.id)).result();
    expect(published(text)).toHaveLength(1);
    expect((await call(stack.app, 'GET', `/v1/posts/${first.body.id}`, { key: a.key })).body.status).toBe('published');
  });
});
