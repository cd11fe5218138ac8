// startPublishing (activities/posts.ts), one statement against the real Postgres: what moves to
// publishing, what it answers, and what it leaves alone.
import { describe, expect, test } from 'bun:test';
import { createActivities } from '../activities/index.ts';
import { Post, PostChannel, PostChannelItem } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { makeChannel, makeOrg } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';

const at = new Date('2026-11-28T12:00:00.000Z');
const earlier = new Date('2026-11-27T08:00:00.000Z');

async function activities() {
  const h = await harness();
  return createActivities({ orm: h.orm, connectors: {}, credentialsKey: h.credentialsKey, now: () => at });
}

/** A scheduled post on three channels: one draft with two follow-ups (one already sent), one published, one already publishing. */
async function postOnThreeChannels(firstComment: { content: string } | null) {
  const h = await harness();
  const org = await makeOrg();
  const [draft, published, publishing] = [
    await makeChannel(org.id, 'MASTODON'),
    await makeChannel(org.id, 'MASTODON'),
    await makeChannel(org.id, 'MASTODON'),
  ];
  const postId = newId('post');
  const pcs = { draft: newId('pc'), published: newId('pc'), publishing: newId('pc') };
  const items = { sent: newId('pci'), waiting: newId('pci') };
  const em = h.orm.em.fork();
  em.create(Post, {
    id: postId,
    organization: org.id,
    status: 'scheduled',
    content: 'hello',
    contentByPlatform: {},
    threadByPlatform: {},
    mediaIds: [],
    source: 'api',
    scheduledAt: earlier,
    firstComment,
    createdAt: earlier,
    updatedAt: earlier,
  });
  const channel = (id: string, channelId: string, status: 'draft' | 'published' | 'publishing') =>
    em.create(PostChannel, {
      id,
      post: postId,
      channel: channelId,
      platform: 'MASTODON',
      status,
      content: 'hello',
      createdAt: earlier,
      updatedAt: earlier,
    });
  channel(pcs.draft, draft.id, 'draft');
  channel(pcs.published, published.id, 'published');
  channel(pcs.publishing, publishing.id, 'publishing');
  const item = (id: string, position: number, status: 'draft' | 'published') =>
    em.create(PostChannelItem, {
      id,
      postChannel: pcs.draft,
      position,
      kind: 'reply',
      content: `reply ${position}`,
      status,
      createdAt: earlier,
      updatedAt: earlier,
    });
  item(items.sent, 1, 'published');
  item(items.waiting, 2, 'draft');
  await em.flush();
  return { postId, pcs, items, channels: { draft: draft.id, published: published.id, publishing: publishing.id } };
}

const read = async (postId: string) => {
  const em = (await harness()).orm.em.fork();
  const post = await em.findOneOrFail(Post, { id: postId });
  const pcs = await em.find(PostChannel, { post: postId });
  const items = await em.find(PostChannelItem, { postChannel: { $in: pcs.map((pc) => pc.id) } });
  return {
    post: [post.status, post.updatedAt.toISOString()],
    pcs: Object.fromEntries(pcs.map((pc) => [pc.id, [pc.status, pc.updatedAt.toISOString()]])),
    items: Object.fromEntries(items.map((i) => [i.id, [i.status, i.updatedAt.toISOString()]])),
  };
};

describe('startPublishing', () => {
  test('a post with no row: null, nothing written', async () => {
    expect(await (await activities()).startPublishing(newId('post'))).toBeNull();
  });

  test('moves the post, its channels not published and their unsent follow-ups to publishing; answers those channels in id order with their follow-up count', async () => {
    const { postId, pcs, items, channels } = await postOnThreeChannels({ content: 'first' });
    const targets = await (await activities()).startPublishing(postId);
    const expected = [
      { pc: pcs.draft, target: { channelId: channels.draft, platform: 'MASTODON', followUps: 2 } },
      { pc: pcs.publishing, target: { channelId: channels.publishing, platform: 'MASTODON' } },
    ].sort((a, b) => (a.pc < b.pc ? -1 : 1));
    expect(targets).toEqual(expected.map((e) => e.target));
    const now = at.toISOString();
    const then = earlier.toISOString();
    expect(await read(postId)).toEqual({
      post: ['publishing', now],
      pcs: {
        [pcs.draft]: ['publishing', now],
        [pcs.published]: ['published', then],
        // Already publishing (a retried step): its updated_at stays.
        [pcs.publishing]: ['publishing', then],
      },
      items: { [items.sent]: ['published', then], [items.waiting]: ['publishing', now] },
    });
    // Again (a retried local activity): the same answer, nothing moves.
    const again = await (await activities()).startPublishing(postId);
    expect(again).toEqual(targets);
  });

  test('a post that asked for no follow-ups: no count, its items left alone', async () => {
    const { postId, pcs, items } = await postOnThreeChannels(null);
    const targets = await (await activities()).startPublishing(postId);
    expect(targets?.every((t) => t.followUps === undefined)).toBe(true);
    const state = await read(postId);
    expect(state.items[items.waiting]).toEqual(['draft', earlier.toISOString()]);
    expect(state.pcs[pcs.draft]![0]).toBe('publishing');
  });

  test('every channel published: an empty list, not null; a post no longer scheduled keeps its status', async () => {
    const h = await harness();
    const { postId, pcs } = await postOnThreeChannels(null);
    await h.orm.em.fork().nativeUpdate(PostChannel, { id: { $in: [pcs.draft, pcs.publishing] } }, { status: 'published' });
    await h.orm.em.fork().nativeUpdate(Post, { id: postId }, { status: 'failed' });
    expect(await (await activities()).startPublishing(postId)).toEqual([]);
    expect((await read(postId)).post).toEqual(['failed', expect.any(String)]);
  });
});
