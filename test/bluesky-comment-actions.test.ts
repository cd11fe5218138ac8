// Answering and deleting under a published Bluesky post, against a real PDS (@atproto/pds with an
// in-memory PLC, test/harness/pds.ts): the comments are other accounts' records in their own
// repos, the reply's strong references and the deletes are the PDS's own. Reading the answer back
// through an AppView is test/bluesky-network.test.ts's (a reply to another account's comment, read
// with readComments as ours under that comment).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createBlueskyConnector, rkeyFor } from '../platforms/bluesky.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { credentialsOf, LOCAL_PDS_CONNECTOR, pds, stopPds, type TestAccount, type TestPds } from './harness/pds.ts';
import { failure } from './harness/platform-failure.ts';

let p: TestPds;
beforeAll(async () => {
  p = await pds();
}, 120_000);
afterAll(stopPds);

const POST = 'app.bsky.feed.post';
const connector = (fetchImpl?: typeof fetch) => createBlueskyConnector({ ...LOCAL_PDS_CONNECTOR, fetch: fetchImpl });
const credentials = (acct: TestAccount) => credentialsOf(p, acct);
const target = (uri: string, post: PostRef): CommentTarget => ({ platformCommentId: uri, url: null, post });

/** A record as the PDS stores it (uri, cid, value); null when it has none. */
async function record(uri: string): Promise<{ uri: string; cid: string; value: any } | null> {
  const [, , repo, collection, rkey] = uri.split('/');
  const r = await p.xrpc('GET', 'com.atproto.repo.getRecord', { params: { repo: repo!, collection: collection!, rkey: rkey! } });
  if (r.status === 400 && r.body?.error === 'RecordNotFound') return null;
  expect(r.status).toBe(200);
  return r.body;
}

async function posts(did: string): Promise<{ uri: string; value: any }[]> {
  const r = await p.xrpc('GET', 'com.atproto.repo.listRecords', { params: { repo: did, collection: POST, limit: '100' } });
  expect(r.status).toBe(200);
  return r.body.records;
}

/** Another account comments, as its app would: a post in its own repo answering `parent` under `root`. */
async function comment(acct: TestAccount, text: string, root: { uri: string; cid: string }, parent: { uri: string; cid: string }) {
  const session = await p.xrpc('POST', 'com.atproto.server.createSession', { json: { identifier: acct.handle, password: acct.password } });
  const r = await p.xrpc('POST', 'com.atproto.repo.createRecord', {
    json: { repo: acct.did, collection: POST, record: { $type: POST, text, reply: { root, parent }, createdAt: new Date().toISOString() } },
    auth: `Bearer ${session.body.accessJwt}`,
  });
  expect(r.status).toBe(200);
  return { ...(r.body as { uri: string; cid: string }), session: `Bearer ${session.body.accessJwt}` };
}

function recording(paths: string[]): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  }) as typeof fetch;
}

/** A published post of `owner` with a comment by `bob` and, under it, one by `carol`. */
async function conversation(prefix: string) {
  const owner = await p.newAccount(`${prefix}o`);
  const bob = await p.newAccount(`${prefix}b`);
  const carol = await p.newAccount(`${prefix}c`);
  const post = await connector().publish({
    text: 'What do you think?',
    media: [],
    idempotencyKey: `${prefix}-post`,
    credentials: credentials(owner),
  });
  const root = (await record(post.platformPostId))!;
  const rootRef = { uri: root.uri, cid: root.cid };
  const bobs = await comment(bob, 'Love it', rootRef, rootRef);
  const carols = await comment(carol, 'Agreed with Bob', rootRef, { uri: bobs.uri, cid: bobs.cid });
  return { owner, bob, carol, post, root, bobs, carols };
}

function answer(owner: TestAccount, post: PostRef, parentUri: string, text: string, key: string): PublishRequest {
  return {
    text,
    media: [],
    idempotencyKey: key,
    credentials: credentials(owner),
    attempt: 1,
    replyTo: { root: post, parent: { platformPostId: parentUri, url: '' } },
  };
}

describe('Bluesky: answering a comment (real PDS)', () => {
  test('a reply to another account’s comment deep in the conversation: root the post, parent the comment, by URI and CID', async () => {
    const { owner, post, root, carols } = await conversation('deep');
    const ours = await connector().publish(answer(owner, post, carols.uri, 'Thank you both!', 'deep-reply'));

    expect(ours.platformPostId).toBe(`at://${owner.did}/${POST}/${rkeyFor('deep-reply')}`);
    const written = (await record(ours.platformPostId))!;
    expect(written.value.reply).toEqual({ root: { uri: root.uri, cid: root.cid }, parent: { uri: carols.uri, cid: carols.cid } });
    expect(written.value.text).toBe('Thank you both!');
  });

  test('attempt 2 finds the reply an earlier attempt wrote (its answer lost): one record in the repo', async () => {
    const { owner, post, bobs } = await conversation('lost');
    let lose = true;
    const losing = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      if (lose && String(input instanceof Request ? input.url : input).includes('com.atproto.repo.createRecord')) {
        lose = false;
        throw new TypeError('socket hang up');
      }
      return res;
    }) as typeof fetch;
    const c = connector(losing);
    const req = answer(owner, post, bobs.uri, 'Thanks, Bob', 'lost-reply');

    expect((await failure(c.publish(req))).kind).toBe('transient');
    const found = await c.findPublished!({ ...req, attempt: 2 });
    const replies = (await posts(owner.did)).filter((r) => r.value.reply?.parent?.uri === bobs.uri);
    expect(replies).toHaveLength(1);
    expect(found).toEqual({
      platformPostId: replies[0]!.uri,
      url: `https://bsky.app/profile/${owner.handle}/post/${rkeyFor('lost-reply')}`,
      publishedAt: replies[0]!.value.createdAt,
    });
    // A re-send under the same key answers with the same record.
    expect(await c.publish({ ...req, attempt: 2 })).toEqual(found!);
    expect((await posts(owner.did)).filter((r) => r.value.reply?.parent?.uri === bobs.uri)).toHaveLength(1);
  });

  test('a comment its author deleted → permanent before anything is written', async () => {
    const { owner, bob, post, bobs } = await conversation('gone');
    const rkey = bobs.uri.split('/').pop()!;
    const deleted = await p.xrpc('POST', 'com.atproto.repo.deleteRecord', {
      json: { repo: bob.did, collection: POST, rkey },
      auth: bobs.session,
    });
    expect(deleted.status).toBe(200);
    const err = await failure(connector().publish(answer(owner, post, bobs.uri, 'Too late', 'gone-reply')));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('is not there');
    expect(await posts(owner.did)).toHaveLength(1);
  });

  test('a comment by an account on another PDS: its CID is asked of the account’s own PDS (com.atproto.repo.getRecord, which the PDS passes on to its AppView)', async () => {
    const { owner, post, root, bobs } = await conversation('remote');
    const remote = `at://did:plc:elsewhere2bskyaccount0/${POST}/3lzzzzzzzzz22`;
    const asked: string[] = [];
    // What the PDS answers for a repo it does not host: the AppView's copy of the record.
    const appViewAnswer = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname === '/xrpc/com.atproto.repo.getRecord' && url.searchParams.get('repo') === 'did:plc:elsewhere2bskyaccount0') {
        asked.push(url.port);
        return Response.json({
          uri: remote,
          cid: bobs.cid,
          value: { $type: POST, text: 'From afar', createdAt: new Date().toISOString() },
        });
      }
      return fetch(input, init);
    }) as typeof fetch;
    const ours = await connector(appViewAnswer).publish(answer(owner, post, remote, 'Hello from here', 'remote-reply'));
    // The PDS's own port (the outbound guard connects to the address it resolved, not the name).
    expect(asked).toEqual([new URL(p.url).port]);
    expect((await record(ours.platformPostId))!.value.reply).toEqual({
      root: { uri: root.uri, cid: root.cid },
      parent: { uri: remote, cid: bobs.cid },
    });
  });
});

describe('Bluesky: deleting our reply (real PDS)', () => {
  test('com.atproto.repo.deleteRecord: the reply is gone from the repo, the post and the comments stay; deleting it again succeeds', async () => {
    const { owner, post, bobs, carols } = await conversation('del');
    const c = connector();
    const ours = await c.publish(answer(owner, post, bobs.uri, 'Thanks!', 'del-reply'));
    expect(await record(ours.platformPostId)).not.toBeNull();

    await c.deletePublished!(credentials(owner), target(ours.platformPostId, post));
    expect(await record(ours.platformPostId)).toBeNull();
    expect((await posts(owner.did)).map((r) => r.uri)).toEqual([post.platformPostId]);
    expect(await record(bobs.uri)).not.toBeNull();
    expect(await record(carols.uri)).not.toBeNull();

    // The PDS answers a record already gone with success.
    await c.deletePublished!(credentials(owner), target(ours.platformPostId, post));
    expect((await posts(owner.did)).map((r) => r.uri)).toEqual([post.platformPostId]);
  });

  test('another account’s comment is refused (permanent) before the PDS is asked, and stays', async () => {
    const { owner, post, bobs } = await conversation('theirs');
    const paths: string[] = [];
    const err = await failure(connector(recording(paths)).deletePublished!(credentials(owner), target(bobs.uri, post)));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('only its own can be deleted');
    expect(paths).not.toContain('/xrpc/com.atproto.repo.deleteRecord');
    expect(await record(bobs.uri)).not.toBeNull();
  });

  test('a revoked app password → reauth, nothing deleted', async () => {
    const owner = await p.newAccount('revdel');
    const c = connector();
    const post = await c.publish({ text: 'Keep me', media: [], idempotencyKey: 'revdel-post', credentials: credentials(owner) });
    await p.revokeAppPassword(owner);
    const err = await failure(connector().deletePublished!(credentials(owner), target(post.platformPostId, post)));
    expect(err.kind).toBe('reauth');
    expect(await record(post.platformPostId)).not.toBeNull();
  });
});
