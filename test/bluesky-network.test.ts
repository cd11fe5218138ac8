// A real Bluesky network (@atproto/dev-env TestNetwork: PLC, PDS and the AppView, with Postgres
// and Redis), read back: a post published through the service, liked by two other accounts,
// reposted by one and replied to by one, whose refresh reads what the AppView counts; and the
// conversation under a post, as the connector reads it from the AppView; and the inbox through the
// API: two accounts answering a post published through the service, one answering the other, and
// our reply read back from the AppView as a reply to the comment in the post's thread, once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addChannel } from '../domain/channels.ts';
import { createBlueskyConnector } from '../platforms/bluesky.ts';
import { startBlueskyNetwork, type BlueskyNetwork, type NetworkAccount } from './harness/bsky-network.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { sweepComments } from './harness/comments.ts';
import { commentReplyWorkflowId } from '../workflows/comment-actions-types.ts';

let network: BlueskyNetwork;
let stack: Awaited<ReturnType<typeof startPostStack>>;

beforeAll(async () => {
  network = await startBlueskyNetwork();
  stack = await startPostStack({
    connectors: { BLUESKY: createBlueskyConnector({ outbound: { allowPrivate: true }, timeoutMs: 10_000 }) },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await network?.stop();
});

/** A post published now through the API on a channel of `account`'s, and what the AppView knows it by. */
async function publishedBy(account: NetworkAccount, content: string) {
  const org = await makeOrg('PRO');
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'BLUESKY',
    name: account.handle,
    credentials: { service: network.pdsUrl, identifier: account.handle, appPassword: account.appPassword },
  });
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content, channelIds: [channel.id] } });
  expect(created.status).toBe(201);
  const postId = created.body.id as string;
  await stack.settle(postId);
  const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
  expect(post.status).toBe('published');
  return { key, postId, uri: post.channels[0].platformPostId as string };
}

describe('Bluesky metrics from a real network', () => {
  test('two likes, a repost and a reply by other accounts read back through GET /v1/posts/{id}/analytics', async () => {
    const alice = await network.newAccount('alice');
    const bob = await network.newAccount('bob');
    const carol = await network.newAccount('carol');
    const { key, postId, uri } = await publishedBy(alice, 'Read me back');

    // The record's cid, as another app would read it before liking it.
    const [, , did, collection, rkey] = /^at:\/\/(([^/]+))\/([^/]+)\/([^/]+)$/.exec(uri)!;
    const got = await fetch(
      `${network.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: did!, collection: collection!, rkey: rkey! })}`,
    );
    const subject = { uri, cid: ((await got.json()) as { cid: string }).cid };
    const now = () => new Date().toISOString();
    await network.createRecord(bob, 'app.bsky.feed.like', { $type: 'app.bsky.feed.like', subject, createdAt: now() });
    await network.createRecord(carol, 'app.bsky.feed.like', { $type: 'app.bsky.feed.like', subject, createdAt: now() });
    await network.createRecord(bob, 'app.bsky.feed.repost', { $type: 'app.bsky.feed.repost', subject, createdAt: now() });
    await network.createRecord(carol, 'app.bsky.feed.post', {
      $type: 'app.bsky.feed.post',
      text: 'Well said',
      reply: { root: subject, parent: subject },
      createdAt: now(),
    });
    await network.sync();

    const asked = await call(stack.app, 'POST', `/v1/posts/${postId}/analytics/refresh`, { key });
    expect(asked.status).toBe(202);
    let channelFigures = asked.body.channels[0];
    for (let i = 0; i < 200 && channelFigures.history.length === 0; i++) {
      await Bun.sleep(50);
      channelFigures = (await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key })).body.channels[0];
    }
    expect(channelFigures.error).toBeNull();
    expect(channelFigures.metrics).toMatchObject({ likes: 2, reposts: 1, replies: 1, quotes: 0, impressions: null, views: null });
  });
});

describe('Bluesky comments from a real network', () => {
  test('replies by two accounts, one answering the other, and our answer: each with its parent, author and whether it is ours', async () => {
    const alice = await network.newAccount('alice');
    const bob = await network.newAccount('bob');
    const carol = await network.newAccount('carol');
    const connector = createBlueskyConnector({ outbound: { allowPrivate: true }, timeoutMs: 10_000 });
    const credentials = { service: network.pdsUrl, identifier: alice.handle, appPassword: alice.appPassword };
    const post = await connector.publish({ text: 'What do you think?', media: [], idempotencyKey: 'comments-1', credentials });
    const cidOf = async (uri: string) => {
      const [, did, collection, rkey] = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri)!;
      const got = await fetch(
        `${network.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: did!, collection: collection!, rkey: rkey! })}`,
      );
      return { uri, cid: ((await got.json()) as { cid: string }).cid };
    };
    const root = await cidOf(post.platformPostId);
    const now = () => new Date().toISOString();
    const bobs = await network.createRecord(bob, 'app.bsky.feed.post', {
      $type: 'app.bsky.feed.post',
      text: 'Love it',
      reply: { root, parent: root },
      createdAt: now(),
    });
    const carols = await network.createRecord(carol, 'app.bsky.feed.post', {
      $type: 'app.bsky.feed.post',
      text: 'Agreed with Bob',
      reply: { root, parent: { uri: bobs.uri, cid: bobs.cid } },
      createdAt: now(),
    });
    const ours = await connector.publish({
      text: 'Thank you both!',
      media: [],
      idempotencyKey: 'comments-2',
      credentials,
      replyTo: { root: post, parent: { platformPostId: carols.uri, url: '' } },
    });
    await network.sync();

    const read = await connector.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    const byId = new Map(read.comments.map((c) => [c.platformCommentId, c]));
    expect([...byId.keys()].sort()).toEqual([bobs.uri, carols.uri, ours.platformPostId].sort());
    expect(byId.get(bobs.uri)).toMatchObject({
      parentPlatformId: post.platformPostId,
      author: { handle: bob.handle, profileUrl: `https://bsky.app/profile/${bob.handle}` },
      text: 'Love it',
      ours: false,
      url: `https://bsky.app/profile/${bob.handle}/post/${bobs.uri.split('/').pop()}`,
    });
    expect(byId.get(carols.uri)).toMatchObject({
      parentPlatformId: bobs.uri,
      author: { handle: carol.handle },
      text: 'Agreed with Bob',
      ours: false,
    });
    expect(byId.get(ours.platformPostId)).toMatchObject({ parentPlatformId: carols.uri, text: 'Thank you both!', ours: true });
    for (const c of read.comments) expect(Number.isNaN(Date.parse(c.createdAt))).toBe(false);

    // The post deleted by its author: the AppView no longer has it.
    const rkey = post.platformPostId.split('/').pop()!;
    const deleted = await fetch(`${network.pdsUrl}/xrpc/com.atproto.repo.deleteRecord`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.accessJwt}` },
      body: JSON.stringify({ repo: alice.did, collection: 'app.bsky.feed.post', rkey }),
    });
    expect(deleted.status).toBe(200);
    await network.sync();
    expect(await connector.readComments!(credentials, post)).toEqual({ comments: [], gone: true });
  });
});

describe('the inbox on a real network', () => {
  test('two accounts answer a post published through the service; the inbox shows both as a tree; our reply lands under the comment once', async () => {
    const alice = await network.newAccount('alice');
    const bob = await network.newAccount('bob');
    const carol = await network.newAccount('carol');
    const { key, postId, uri } = await publishedBy(alice, 'Ask me anything');
    const [, did, collection, rkey] = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri)!;
    const got = await fetch(
      `${network.pdsUrl}/xrpc/com.atproto.repo.getRecord?${new URLSearchParams({ repo: did!, collection: collection!, rkey: rkey! })}`,
    );
    const root = { uri, cid: ((await got.json()) as { cid: string }).cid };
    const now = () => new Date().toISOString();
    const bobs = await network.createRecord(bob, 'app.bsky.feed.post', {
      $type: 'app.bsky.feed.post',
      text: 'What time is it open?',
      reply: { root, parent: root },
      createdAt: now(),
    });
    const carols = await network.createRecord(carol, 'app.bsky.feed.post', {
      $type: 'app.bsky.feed.post',
      text: 'Bob, from nine I think',
      reply: { root, parent: bobs },
      createdAt: now(),
    });
    await network.sync();
    await sweepComments(stack);

    const inbox = await call(stack.app, 'GET', `/v1/inbox?postId=${postId}`, { key });
    expect(
      inbox.body.data.map((c: { platformCommentId: string; author: { handle: string } }) => [c.platformCommentId, c.author.handle]),
    ).toEqual([
      [carols.uri, carol.handle],
      [bobs.uri, bob.handle],
    ]);
    const tree = (await call(stack.app, 'GET', `/v1/posts/${postId}/comments`, { key })).body.data;
    expect(tree.map((c: { platformCommentId: string; depth: number }) => [c.platformCommentId, c.depth])).toEqual([
      [bobs.uri, 0],
      [carols.uri, 1],
    ]);
    expect(tree[1].parentId).toBe(tree[0].id);

    // Our answer to Carol, through the API, twice with one key.
    const ask = () =>
      call(stack.app, 'POST', `/v1/comments/${tree[1].id}/reply`, {
        key,
        body: { content: 'Nine to five, every day' },
        headers: { 'idempotency-key': 'bsky-answer' },
      });
    const first = await ask();
    expect(first.status).toBe(202);
    await stack.client.workflow.getHandle(commentReplyWorkflowId(first.body.id)).result();
    const again = await ask();
    expect(again.body.id).toBe(first.body.id);
    const reply = (await call(stack.app, 'GET', `/v1/replies/${first.body.id}`, { key })).body;
    expect(reply.status).toBe('published');
    await network.sync();

    // Read back from the AppView: a reply whose root is the post and whose parent is Carol's comment, and only one.
    const thread = await fetch(`${network.appviewUrl}/xrpc/app.bsky.feed.getPostThread?${new URLSearchParams({ uri, depth: '10' })}`);
    expect(thread.status).toBe(200);
    type Node = {
      post: {
        uri: string;
        author: { did: string };
        record: { text: string; reply?: { root: { uri: string; cid: string }; parent: { uri: string; cid: string } } };
      };
      replies?: Node[];
    };
    const all: Node[] = [];
    const walk = (n: Node) => {
      all.push(n);
      for (const r of n.replies ?? []) walk(r);
    };
    walk(((await thread.json()) as { thread: Node }).thread);
    const ours = all.filter((n) => n.post.author.did === alice.did && n.post.uri !== uri);
    expect(ours).toHaveLength(1);
    expect(ours[0]!.post.uri).toBe(reply.platformReplyId);
    expect(ours[0]!.post.record.text).toBe('Nine to five, every day');
    expect(ours[0]!.post.record.reply).toEqual({ root, parent: { uri: carols.uri, cid: carols.cid } });
  });
});
