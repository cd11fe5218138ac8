// The comments API on the real stack: a post published on the fake Mastodon, people answering it
// there, the comments sweep collecting them; then a post's conversation, the inbox with its
// filters and pages, marking and assigning, and what a key limited to another channel sees.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createUser } from '../services/users.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { person, publishedOnMastodon, sweepComments } from './harness/comments.ts';
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

/** An organization with two Mastodon channels, a post published on the first, and a conversation under it. */
async function scene() {
  const { org, key, channel, others, postId, statusId } = await publishedOnMastodon(stack, mastodon, { extraChannels: 1 });
  const alice = mastodon.reply(statusId, person('81', 'alice'), 'First!');
  const bob = mastodon.reply(alice.id, person('82', 'bob'), 'Second, to Alice');
  const carol = mastodon.reply(statusId, person('83', 'carol'), 'A question');
  await sweepComments(stack);
  return { org, key, channel, other: others[0]!, postId, statusId, alice, bob, carol };
}

describe('comments through the API', () => {
  test('a post’s conversation: depth first, each comment with its parent; the inbox newest first; one comment by id', async () => {
    const s = await scene();
    const conv = await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key });
    expect(conv.status).toBe(200);
    const rows = conv.body.data as { id: string; platformCommentId: string; parentId: string | null; depth: number }[];
    expect(rows.map((r) => [r.platformCommentId, r.depth])).toEqual([
      [s.alice.id, 0],
      [s.bob.id, 1],
      [s.carol.id, 0],
    ]);
    expect(rows[1]!.parentId).toBe(rows[0]!.id);
    expect(rows[0]!.parentId).toBeNull();
    expect(conv.body.data[0]).toMatchObject({
      postId: s.postId,
      channelId: s.channel.id,
      platform: 'MASTODON',
      author: {
        name: 'alice',
        handle: 'alice@people.example',
        avatarUrl: 'https://people.example/a/81.png',
        profileUrl: 'https://people.example/@alice',
      },
      text: 'First!',
      url: s.alice.url,
      ours: false,
      status: 'unread',
      assigneeUserId: null,
    });

    const inbox = await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}`, { key: s.key });
    expect(inbox.status).toBe(200);
    expect(inbox.body.data.map((c: { platformCommentId: string }) => c.platformCommentId)).toEqual([s.carol.id, s.bob.id, s.alice.id]);
    const one = await call(stack.app, 'GET', `/v1/comments/${rows[0]!.id}`, { key: s.key });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(inbox.body.data[2]);
    expect((await call(stack.app, 'GET', '/v1/comments/cmt_00000000000000000000000000', { key: s.key })).status).toBe(404);
    expect((await call(stack.app, 'GET', '/v1/posts/post_00000000000000000000000000/comments', { key: s.key })).status).toBe(404);
  });

  test('the inbox in pages by its cursor, and by its filters: status, channel, assignee, since', async () => {
    const s = await scene();
    const page1 = await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}&limit=2`, { key: s.key });
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}&limit=2&cursor=${page1.body.nextCursor}`, { key: s.key });
    expect(page2.body.data.map((c: { platformCommentId: string }) => c.platformCommentId)).toEqual([s.alice.id]);
    expect(page2.body.nextCursor).toBeNull();

    const first = page1.body.data[0] as { id: string };
    const member = await createUser(stack.h.orm.em.fork(), {
      organizationId: s.org.id,
      email: `m-${crypto.randomUUID()}@example.com`,
      password: 'long enough',
      role: 'editor',
    });
    const marked = await call(stack.app, 'PATCH', `/v1/comments/${first.id}`, {
      key: s.key,
      body: { status: 'read', assigneeUserId: member.id },
    });
    expect(marked.status).toBe(200);
    expect(marked.body).toMatchObject({ id: first.id, status: 'read', assigneeUserId: member.id });
    const ids = async (q: string) =>
      (await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}&${q}`, { key: s.key })).body.data.map((c: { id: string }) => c.id);
    expect(await ids('status=read')).toEqual([first.id]);
    expect(await ids('status=unread')).not.toContain(first.id);
    expect(await ids(`assignee=${member.id}`)).toEqual([first.id]);
    expect(await ids('assignee=none')).not.toContain(first.id);
    expect(await ids(`channelId=${s.other.id}`)).toEqual([]);
    expect(await ids(`since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`)).toEqual([]);
    // Given to no one again, and unread.
    const back = await call(stack.app, 'PATCH', `/v1/comments/${first.id}`, {
      key: s.key,
      body: { status: 'unread', assigneeUserId: null },
    });
    expect(back.body).toMatchObject({ status: 'unread', assigneeUserId: null });
  });

  test('bad input is a 422 naming the field; a member of another organization cannot be given a comment', async () => {
    const s = await scene();
    const [c] = (await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}&limit=1`, { key: s.key })).body.data as { id: string }[];
    const bad = async (path: string, method = 'GET', body?: unknown) => {
      const res = await call(stack.app, method, path, { key: s.key, body });
      expect(res.status).toBe(422);
      return res.body.error.details.fields.map((f: { path: string }) => f.path);
    };
    // An id holding NUL names nothing.
    const nul = await call(
      stack.app,
      'GET',
      `/v1/inbox?postId=${encodeURIComponent('post_\u0000')}&channelId=${encodeURIComponent('\u0000')}`,
      { key: s.key },
    );
    expect(nul.status).toBe(200);
    expect(nul.body.data).toEqual([]);
    expect(await bad('/v1/inbox?limit=0')).toEqual(['limit']);
    expect(await bad('/v1/inbox?since=yesterday')).toEqual(['since']);
    expect(await bad('/v1/inbox?cursor=bm90LWEtY3Vyc29y')).toEqual(['cursor']);
    expect(await bad('/v1/inbox?status=archived')).toEqual(['status']);
    expect(await bad(`/v1/comments/${c!.id}`, 'PATCH', { status: 'hidden' })).toEqual(['status']);
    expect(await bad(`/v1/comments/${c!.id}`, 'PATCH', {})).toEqual(expect.any(Array));
    const stranger = await makeOrg('PRO');
    const outsider = await createUser(stack.h.orm.em.fork(), {
      organizationId: stranger.id,
      email: `o-${crypto.randomUUID()}@example.com`,
      password: 'long enough',
      role: 'editor',
    });
    expect(await bad(`/v1/comments/${c!.id}`, 'PATCH', { assigneeUserId: outsider.id })).toEqual(['assigneeUserId']);
  });

  test('a key limited to another channel sees none of the comments; another organization’s key neither', async () => {
    const s = await scene();
    const [c] = (await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}&limit=1`, { key: s.key })).body.data as { id: string }[];
    const limited = (await makeKey(s.org.id, { channels: [s.other.id] })).key;
    expect((await call(stack.app, 'GET', `/v1/comments/${c!.id}`, { key: limited })).status).toBe(404);
    expect((await call(stack.app, 'PATCH', `/v1/comments/${c!.id}`, { key: limited, body: { status: 'read' } })).status).toBe(404);
    expect((await call(stack.app, 'GET', '/v1/inbox', { key: limited })).body.data).toEqual([]);
    expect((await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: limited })).status).toBe(404);
    const foreign = (await makeKey((await makeOrg('PRO')).id)).key;
    expect((await call(stack.app, 'GET', `/v1/comments/${c!.id}`, { key: foreign })).status).toBe(404);
    expect((await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}`, { key: foreign })).body.data).toEqual([]);
  });

  test('a read asked for: 202 with the conversation as it is, the new comment within moments; again within a minute 429; nothing published 409', async () => {
    const s = await scene();
    const late = mastodon.reply(s.statusId, person('84', 'dave'), 'Late to the party');
    // The scene's sweep read it a moment ago: a read counts for the minute, asked or not. A minute passes.
    await stack.h.pool.query(
      `update comment_follows set last_read_at = now() - interval '2 minutes' where post_channel_id in (select id from post_channels where post_id = $1)`,
      [s.postId],
    );
    const asked = await call(stack.app, 'POST', `/v1/posts/${s.postId}/comments/refresh`, { key: s.key });
    expect(asked.status).toBe(202);
    expect(asked.body.data.map((c: { platformCommentId: string }) => c.platformCommentId)).not.toContain(late.id);
    let seen: string[] = [];
    for (let i = 0; i < 200 && !seen.includes(late.id); i++) {
      await Bun.sleep(25);
      seen = (await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key })).body.data.map(
        (c: { platformCommentId: string }) => c.platformCommentId,
      );
    }
    expect(seen).toContain(late.id);
    const again = await call(stack.app, 'POST', `/v1/posts/${s.postId}/comments/refresh`, { key: s.key });
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('rate_limited');
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);

    const scheduled = await call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: {
        content: `later ${crypto.randomUUID()}`,
        channelIds: [s.channel.id],
        publishAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect((await call(stack.app, 'POST', `/v1/posts/${scheduled.body.id}/comments/refresh`, { key: s.key })).status).toBe(409);
  });
});
