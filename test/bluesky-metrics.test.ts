// Metrics read back from a real Bluesky network (@atproto/dev-env TestNetwork: PLC, PDS and the
// AppView, with Postgres and Redis): a post published through the service, liked by two other
// accounts, reposted by one and replied to by one; a refresh reads what the AppView counts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addChannel } from '../domain/channels.ts';
import { createBlueskyConnector } from '../platforms/bluesky.ts';
import { startBlueskyNetwork, type BlueskyNetwork } from './harness/bsky-network.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

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

describe('Bluesky metrics from a real network', () => {
  test('two likes, a repost and a reply by other accounts read back through GET /v1/posts/{id}/analytics', async () => {
    const alice = await network.newAccount('alice');
    const bob = await network.newAccount('bob');
    const carol = await network.newAccount('carol');
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id);
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'BLUESKY',
      name: 'alice',
      credentials: { service: network.pdsUrl, identifier: alice.handle, appPassword: alice.appPassword },
    });
    await stack.syncClock();
    const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'Read me back', channelIds: [channel.id] } });
    expect(created.status).toBe(201);
    const postId = created.body.id as string;
    await stack.settle(postId);
    const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
    expect(post.status).toBe('published');
    const uri = post.channels[0].platformPostId as string;

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
