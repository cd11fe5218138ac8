// Answering a comment through the API, on the real stack and the fake Mastodon: the reply lands
// once under the comment (counted at the fake), its comment becomes `replied`, the conversation
// shows it as ours, its outcome is announced; the same Idempotency-Key answers with the same
// reply; an answer cut off after Mastodon accepted is retried into no second status; a
// contributor's reply waits for a decision (four eyes) and a rejected one never goes out; a
// refusal is a failed reply with its class; a reply is deleted on the platform.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { commentReplyWorkflowId } from '../workflows/comment-actions-types.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { person, publishedOnMastodon, sweepComments } from './harness/comments.ts';
import { call } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let secret = '';
const receiver = startEventReceiver({ secret: () => secret });

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
  receiver.stop();
});

/** A published post with Alice's comment under it, collected; a webhook endpoint for the reply events. */
async function scene() {
  const s = await publishedOnMastodon(stack, mastodon);
  const alice = mastodon.reply(s.statusId, person('91', 'alice'), 'Is this open on Sundays?');
  await sweepComments(stack);
  const inbox = await call(stack.app, 'GET', `/v1/inbox?postId=${s.postId}`, { key: s.key });
  const comment = inbox.body.data[0] as { id: string; platformCommentId: string };
  expect(comment.platformCommentId).toBe(alice.id);
  const hook = await call(stack.app, 'POST', '/v1/webhooks', {
    key: s.key,
    body: { url: `http://127.0.0.1:${receiver.port}/replies`, events: ['comment.reply.published', 'comment.reply.failed'] },
  });
  expect(hook.status).toBe(201);
  secret = hook.body.secret;
  return { ...s, alice, comment };
}

/** The reply's workflow, to its end (the time-skipping server moves past retry backoffs). */
async function settled(key: string, replyId: string) {
  await stack.client.workflow.getHandle(commentReplyWorkflowId(replyId)).result();
  return (await call(stack.app, 'GET', `/v1/replies/${replyId}`, { key })).body;
}

async function eventually<T>(read: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('not within the time');
    await Bun.sleep(25);
  }
}

/** A key of a member of `role`, as the member's own. */
async function memberKey(organizationId: string, role: 'contributor' | 'editor') {
  const em = stack.h.orm.em.fork();
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(em, { organizationId, email, password: 'long enough', role });
  const made = await createApiKey(em, {
    organizationId,
    name: `${role} key`,
    scopes: ['read', 'publish', 'approve'].filter((s) => role === 'editor' || s !== 'approve'),
    channels: 'all',
    createdBy: { userId: user.id, role },
  });
  return made.key;
}

const statusesAnswering = (id: string) => mastodon.statuses.filter((st) => st.in_reply_to_id === id);

describe('replies to comments', () => {
  test('published once under the comment; the comment replied; the conversation shows it as ours; announced; the same key answers the same reply', async () => {
    const s = await scene();
    const text = `Yes, 10 to 4 ${crypto.randomUUID().slice(0, 6)}`;
    const sent = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, {
      key: s.key,
      body: { content: text },
      headers: { 'idempotency-key': 'reply-once' },
    });
    expect(sent.status).toBe(202);
    expect(sent.headers.get('location')).toBe(`/v1/replies/${sent.body.id}`);
    expect(sent.body).toMatchObject({
      commentId: s.comment.id,
      postId: s.postId,
      channelId: s.channel.id,
      platform: 'MASTODON',
      content: text,
      status: 'publishing',
      approval: null,
    });
    const reply = await settled(s.key, sent.body.id);
    const out = statusesAnswering(s.alice.id);
    expect(out).toHaveLength(1);
    expect(out[0]!.text).toBe(text);
    expect(reply).toMatchObject({ status: 'published', platformReplyId: out[0]!.id, url: out[0]!.url, error: null, errorCode: null });

    const again = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, {
      key: s.key,
      body: { content: text },
      headers: { 'idempotency-key': 'reply-once' },
    });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(sent.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await Bun.sleep(200);
    expect(statusesAnswering(s.alice.id)).toHaveLength(1);

    const comment = await call(stack.app, 'GET', `/v1/comments/${s.comment.id}`, { key: s.key });
    expect(comment.body.status).toBe('replied');
    const conv = await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key });
    expect(
      conv.body.data.map((c: { platformCommentId: string; depth: number; ours: boolean }) => [c.platformCommentId, c.depth, c.ours]),
    ).toEqual([
      [s.alice.id, 0, false],
      [out[0]!.id, 1, true],
    ]);
    // The sweep reads the same reply back: still one row.
    await sweepComments(stack);
    expect((await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key })).body.data).toHaveLength(2);
    const listed = await call(stack.app, 'GET', `/v1/comments/${s.comment.id}/replies`, { key: s.key });
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([sent.body.id]);

    const event = await eventually(() =>
      receiver.events.find((e) => e.type === 'comment.reply.published' && e.data.reply.id === sent.body.id),
    );
    expect(event.data.reply).toMatchObject({ status: 'published', url: out[0]!.url });
    expect(event.data.comment).toMatchObject({ id: s.comment.id, status: 'replied' });
  });

  test('checked first: empty, over the platform’s limit, one of our own replies, an unknown comment', async () => {
    const s = await scene();
    const send = (id: string, content: string) => call(stack.app, 'POST', `/v1/comments/${id}/reply`, { key: s.key, body: { content } });
    const empty = await send(s.comment.id, '   ');
    expect(empty.status).toBe(422);
    expect(empty.body.error.details.fields[0].path).toBe('content');
    const long = await send(s.comment.id, 'x'.repeat(501));
    expect(long.status).toBe(422);
    expect(long.body.error.details.fields[0].message).toContain('500');
    expect((await send('cmt_00000000000000000000000000', 'hello')).status).toBe(404);
    const ok = await send(s.comment.id, 'ours to be');
    const reply = await settled(s.key, ok.body.id);
    const [ours] = (await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key })).body.data.filter(
      (c: { ours: boolean }) => c.ours,
    );
    expect(ours.platformCommentId).toBe(reply.platformReplyId);
    const toOurs = await send(ours.id, 'answering myself');
    expect(toOurs.status).toBe(409);
    expect(statusesAnswering(reply.platformReplyId)).toHaveLength(0);
  });

  test('an answer cut off after Mastodon accepted: retried, one status at the fake, the reply published', async () => {
    const s = await scene();
    mastodon.failNext(1, 'accept-then-hang');
    const sent = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, { key: s.key, body: { content: 'cut off once' } });
    expect(sent.status).toBe(202);
    const reply = await settled(s.key, sent.body.id);
    expect(reply.status).toBe('published');
    const out = statusesAnswering(s.alice.id);
    expect(out).toHaveLength(1);
    expect(reply.platformReplyId).toBe(out[0]!.id);
    // It took more than one attempt: the first one's answer never came.
    const rows = await stack.h.orm.em.fork().getConnection().execute('select attempts from comment_replies where id = ?', [sent.body.id]);
    expect(rows[0]?.attempts).toBeGreaterThan(1);
  });

  test('Mastodon refuses: failed with its reason and class, announced; nothing published', async () => {
    const s = await scene();
    mastodon.failNext(1, { status: 422, body: { error: 'Validation failed: Text is too spammy' } });
    const sent = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, { key: s.key, body: { content: 'buy now' } });
    const reply = await settled(s.key, sent.body.id);
    expect(reply).toMatchObject({ status: 'failed', errorCode: 'rejected_content', retryable: false, platformReplyId: null });
    expect(reply.error).toContain('spammy');
    expect(statusesAnswering(s.alice.id)).toHaveLength(0);
    const event = await eventually(() =>
      receiver.events.find((e) => e.type === 'comment.reply.failed' && e.data.reply.id === sent.body.id),
    );
    expect(event.data.reply.errorCode).toBe('rejected_content');
    expect((await call(stack.app, 'GET', `/v1/comments/${s.comment.id}`, { key: s.key })).body.status).toBe('unread');
  });

  test('a contributor’s reply waits for a decision: not by its author; approved, it goes out; rejected, it never does', async () => {
    const s = await scene();
    const contributor = await memberKey(s.org.id, 'contributor');
    const editor = await memberKey(s.org.id, 'editor');
    const ask = (content: string) => call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, { key: contributor, body: { content } });
    const first = await ask('from the contributor');
    expect(first.status).toBe(202);
    expect(first.body.status).toBe('pending_approval');
    expect(first.body.approval).toMatchObject({ status: 'pending', requestedBy: { type: 'api_key' } });
    await Bun.sleep(300);
    expect(statusesAnswering(s.alice.id)).toHaveLength(0);
    // Contributors may not approve at all; the scope is missing from their key.
    expect((await call(stack.app, 'POST', `/v1/replies/${first.body.id}/approve`, { key: contributor })).status).toBe(403);
    const approved = await call(stack.app, 'POST', `/v1/replies/${first.body.id}/approve`, { key: editor, body: { comment: 'ok' } });
    expect(approved.status).toBe(200);
    const reply = await settled(s.key, first.body.id);
    expect(reply.status).toBe('published');
    expect(reply.approval).toMatchObject({ status: 'approved', comment: 'ok' });
    expect(statusesAnswering(s.alice.id).map((st) => st.text)).toEqual(['from the contributor']);
    expect((await call(stack.app, 'POST', `/v1/replies/${first.body.id}/approve`, { key: editor })).status).toBe(409);

    const second = await ask('never to be seen');
    const rejected = await call(stack.app, 'POST', `/v1/replies/${second.body.id}/reject`, { key: editor });
    expect(rejected.status).toBe(200);
    expect((await settled(s.key, second.body.id)).status).toBe('rejected');
    expect(statusesAnswering(s.alice.id)).toHaveLength(1);

    // An editor's own reply needs no approval: the decision is refused.
    const own = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, { key: editor, body: { content: 'editor here' } });
    // Sent at once: the answer shows it on its way, or already out when the worker was quicker than the answer.
    expect(['publishing', 'published']).toContain(own.body.status);
    expect((await call(stack.app, 'POST', `/v1/replies/${own.body.id}/approve`, { key: editor })).status).toBe(409);
  });

  test('deleted on the platform: gone from the fake and from the conversation; a reply never sent is deleted here only', async () => {
    const s = await scene();
    const sent = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, { key: s.key, body: { content: 'to delete' } });
    const reply = await settled(s.key, sent.body.id);
    const gone = await call(stack.app, 'DELETE', `/v1/replies/${sent.body.id}`, { key: s.key });
    expect(gone.status).toBe(200);
    expect(gone.body.status).toBe('deleted');
    expect(mastodon.statuses.find((st) => st.id === reply.platformReplyId)).toBeUndefined();
    expect(mastodon.deleted.map((st) => st.id)).toContain(reply.platformReplyId);
    const conv = await call(stack.app, 'GET', `/v1/posts/${s.postId}/comments`, { key: s.key });
    expect(conv.body.data.map((c: { ours: boolean }) => c.ours)).toEqual([false]);
    expect((await call(stack.app, 'DELETE', `/v1/replies/${sent.body.id}`, { key: s.key })).status).toBe(200);

    const contributor = await memberKey(s.org.id, 'contributor');
    const waiting = await call(stack.app, 'POST', `/v1/comments/${s.comment.id}/reply`, {
      key: contributor,
      body: { content: 'withdrawn' },
    });
    const withdrawn = await call(stack.app, 'DELETE', `/v1/replies/${waiting.body.id}`, { key: s.key });
    expect(withdrawn.body.status).toBe('deleted');
    const editor = await memberKey(s.org.id, 'editor');
    expect((await call(stack.app, 'POST', `/v1/replies/${waiting.body.id}/approve`, { key: editor })).status).toBe(409);
  });
});
