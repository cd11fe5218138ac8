// The comments sweep end to end: a post (a thread of two) published through the API on the fake
// Mastodon, people answering under it on the instance, and the sweep workflow (what the Temporal
// Schedule runs) on the worker storing each comment once, with when the post is read next.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { nextReadAt } from '../domain/inbox/collection.ts';
import { sql } from '../db/sql.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { person, publishedOnMastodon, sweepComments } from './harness/comments.ts';
import { call } from './harness/fixtures.ts';
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

const sweep = () => sweepComments(stack);

interface StoredComment {
  platform_comment_id: string;
  parent_platform_id: string;
  author_name: string | null;
  author_handle: string | null;
  author_avatar_url: string | null;
  author_profile_url: string | null;
  text: string;
  url: string | null;
  ours: boolean;
  status: string;
  channel_id: string;
}

/** The post's one channel post's id (the API shows the channel, not this row). */
async function postChannelId(postId: string): Promise<string> {
  const [row] = await sql<{ id: string }>(stack.h.orm.em.fork(), 'select id from post_channels where post_id = ?', [postId]);
  return row!.id;
}

const stored = (postId: string) =>
  sql<StoredComment>(
    stack.h.orm.em.fork(),
    `select platform_comment_id, parent_platform_id, author_name, author_handle, author_avatar_url, author_profile_url, text, url, ours,
       status, channel_id from comments where post_id = ? order by written_at, platform_comment_id`,
    [postId],
  );

describe('the comments sweep', () => {
  test('follows a post once published, stores each comment once with its parent and author, leaves the thread items out; comment.received once each', async () => {
    const { key, channel, postId, post } = await publishedOnMastodon(stack, mastodon, { thread: [{ content: 'and a second part' }] });
    const hook = await call(stack.app, 'POST', '/v1/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${receiver.port}/comments`, events: ['comment.received'] },
    });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
    const statusId = post.channels[0].platformPostId as string;
    const itemId = post.channels[0].items[1].platformPostId as string;
    expect(mastodon.statuses.find((s) => s.id === itemId)?.in_reply_to_id).toBe(statusId);

    const alice = person('71', 'alice', 'one.example');
    const bob = person('72', 'bob', 'two.example');
    const hers = mastodon.reply(statusId, alice, 'Great news');
    const his = mastodon.reply(hers.id, bob, 'Agreed!');
    const onItem = mastodon.reply(itemId, bob, 'About the second part');

    const first = await sweep();
    expect(first.stored).toBeGreaterThanOrEqual(3);
    const rows = await stored(postId);
    // Our own thread item is the post, not a comment on it.
    expect(rows.map((r) => r.platform_comment_id)).toEqual([hers.id, his.id, onItem.id]);
    expect(rows[0]).toEqual({
      platform_comment_id: hers.id,
      parent_platform_id: statusId,
      author_name: 'alice',
      author_handle: 'alice@one.example',
      author_avatar_url: 'https://one.example/a/71.png',
      author_profile_url: 'https://one.example/@alice',
      text: 'Great news',
      url: hers.url,
      ours: false,
      status: 'unread',
      channel_id: channel.id,
    });
    expect(rows[1]).toMatchObject({ parent_platform_id: hers.id, author_handle: 'bob@two.example' });
    expect(rows[2]).toMatchObject({ parent_platform_id: itemId });

    // Read again later: what is stored stays once, a new comment is added.
    const later = mastodon.reply(statusId, alice, 'One more thing');
    await sql(stack.h.orm.em.fork(), 'update comment_follows set next_at = now() where post_channel_id = ?', [await postChannelId(postId)]);
    await sweep();
    expect((await stored(postId)).map((r) => r.platform_comment_id)).toEqual([hers.id, his.id, onItem.id, later.id]);

    // One signed comment.received per comment of others, with the comment as GET /v1/comments/{id} shows it; none twice.
    const ids = async () =>
      (
        await sql<{ id: string }>(
          stack.h.orm.em.fork(),
          'select id from comments where post_id = ? order by written_at, platform_comment_id',
          [postId],
        )
      ).map((r) => r.id);
    const want = await ids();
    for (let i = 0; i < 400 && events.length < want.length; i++) await Bun.sleep(25);
    expect(events.map((e) => e.type)).toEqual(want.map(() => 'comment.received'));
    expect(events.map((e) => e.data.id).sort()).toEqual([...want].sort());
    const shown = await call(stack.app, 'GET', `/v1/comments/${want[0]}`, { key });
    expect(events.find((e) => e.data.id === want[0])!.data).toEqual(shown.body);

    // The next read is where the cadence puts it after the last one.
    const [follow] = await sql<{ next_at: string; last_read_at: string; error: string | null }>(
      stack.h.orm.em.fork(),
      'select next_at, last_read_at, error from comment_follows where post_channel_id = ?',
      [await postChannelId(postId)],
    );
    expect(follow!.error).toBeNull();
    expect(new Date(follow!.next_at)).toEqual(nextReadAt(new Date(post.channels[0].publishedAt), new Date(follow!.last_read_at), true)!);
  });

  test('a post removed from the instance is no longer followed, with why', async () => {
    const { postId, post } = await publishedOnMastodon(stack, mastodon);
    mastodon.remove(post.channels[0].platformPostId);
    await sweep();
    const [follow] = await sql<{ next_at: string | null; error: string | null }>(
      stack.h.orm.em.fork(),
      'select next_at, error from comment_follows where post_channel_id = ?',
      [await postChannelId(postId)],
    );
    expect(follow).toEqual({ next_at: null, error: 'the post is no longer on the platform' });
  });
});
