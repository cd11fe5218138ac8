// The web app's Inbox on the real stack: posts published on the fake Mastodon (and X, which lets
// the service hide replies), people answering them there, the comments sweep collecting them; then
// the Inbox as each role sees it: the list unread first and newest first with its filters, a reply
// in place published once under its comment, marking read and assigning, a contributor's reply
// waiting for an approver, a viewer with no buttons and refused at every form, hostile text shown
// as text, hiding where the platform allows it, the rows the page's live update fetches, and the
// unread counts on a post's page and in the calendar (one statement for all of a page's posts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AuditEvent, Channel, CommentReply, type Role } from '../db/entities/index.ts';
import { updateComment } from '../domain/inbox/comments.ts';
import { measureFollowUp } from '../domain/posts/thread.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { createXConnector } from '../platforms/x.ts';
import { createUser } from '../services/users.ts';
import { commentReplyWorkflowId } from '../workflows/comment-actions-types.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { type FakeX, startFakeX } from './fakes/x.ts';
import { person, publishedOnMastodon, spamOnX, sweepComments } from './harness/comments.ts';
import { call, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { countQueries } from './harness/query-count.ts';
import { Browser, type Page } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let x: FakeX;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  x = await startFakeX();
  stack = await startPostStack({
    publicBaseUrl: 'http://localhost',
    connectors: {
      X: createXConnector({ baseUrl: x.url, timeoutMs: 2_000 }),
      MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }),
    },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
  await x?.stop();
});

/** A member of the organization with this role, signed in to the web app. */
async function member(organizationId: string, role: Role) {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(stack.h.orm.em.fork(), { organizationId, email, password: PASSWORD, role });
  const browser = new Browser(stack.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { user, email, browser };
}

/** The collected comments' ids by their Mastodon status id. */
async function commentIds(postId: string): Promise<Record<string, string>> {
  const { rows } = await stack.h.pool.query<{ id: string; platform_comment_id: string }>(
    'select id, platform_comment_id from comments where post_id = $1',
    [postId],
  );
  return Object.fromEntries(rows.map((r) => [r.platform_comment_id, r.id]));
}

/**
 * A post published on Mastodon (its organization has a second Mastodon channel), with Alice's
 * comment, Bob's answer to Alice and Carol's comment under it, collected; an editor signed in.
 */
async function scene() {
  const s = await publishedOnMastodon(stack, mastodon, { extraChannels: 1 });
  const alice = mastodon.reply(s.statusId, person('81', 'alice'), 'First!');
  const bob = mastodon.reply(alice.id, person('82', 'bob'), 'Second, to Alice');
  const carol = mastodon.reply(s.statusId, person('83', 'carol'), 'A question');
  await sweepComments(stack);
  const ids = await commentIds(s.postId);
  const editor = await member(s.org.id, 'editor');
  return { ...s, other: s.others[0]!, alice: ids[alice.id]!, bob: ids[bob.id]!, carol: ids[carol.id]!, status: { alice }, editor };
}

/** Another post of the organization on the channel, published, with Dave's comment under it, collected. */
async function secondPost(s: Awaited<ReturnType<typeof scene>>) {
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', {
    key: s.key,
    body: { content: `second ${crypto.randomUUID()}`, channelIds: [s.channel.id] },
  });
  expect(created.status).toBe(201);
  await stack.settle(created.body.id);
  const post = (await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key: s.key })).body;
  const dave = mastodon.reply(post.channels[0].platformPostId, person('84', 'dave'), 'On the second one');
  await sweepComments(stack);
  return { postId: created.body.id as string, post, dave: (await commentIds(created.body.id))[dave.id]! };
}

const inbox = async (b: Browser, query = '') => {
  const page = await b.get(`/inbox${query}`);
  expect(page.status).toBe(200);
  return page;
};
const order = async (page: Page) => (await page.query('[data-testid="inbox-item"]')).map((i) => i.attrs['data-comment-id']);
/** An element of one comment's row. */
const inRow = (page: Page, commentId: string, testId: string) => page.query(`[data-comment-id="${commentId}"] [data-testid="${testId}"]`);
const oneInRow = (page: Page, commentId: string, testId: string) => page.one(`[data-comment-id="${commentId}"] [data-testid="${testId}"]`);
const mark = (organizationId: string, id: string, change: Parameters<typeof updateComment>[4]) =>
  updateComment(stack.h.orm.em.fork(), organizationId, id, 'all', change, new Date());
/** Statuses of the channel's own account (not other people's) answering this one. */
const answering = (statusId: string) => mastodon.statuses.filter((st) => st.in_reply_to_id === statusId && !st.account);

describe('the Inbox', () => {
  test('lists the comments others wrote, unread first then newest first, each with its author, text, time, link, status and assignee', async () => {
    const s = await scene();
    const page = await inbox(s.editor.browser, `?postId=${s.postId}`);
    expect(await order(page)).toEqual([s.carol, s.bob, s.alice]);
    expect((await page.one('[data-testid="nav-inbox"]')).attrs['aria-current']).toBe('page');
    expect((await oneInRow(page, s.alice, 'inbox-author-name')).text).toBe('alice');
    const handle = await oneInRow(page, s.alice, 'inbox-author-handle');
    expect([handle.text, handle.attrs.href]).toEqual(['@alice@people.example', 'https://people.example/@alice']);
    expect((await oneInRow(page, s.alice, 'inbox-avatar')).attrs.src).toBe('https://people.example/a/81.png');
    expect((await oneInRow(page, s.alice, 'inbox-text')).text).toBe('First!');
    expect((await oneInRow(page, s.alice, 'inbox-comment-url')).attrs.href).toBe(s.status.alice.url);
    expect((await oneInRow(page, s.alice, 'inbox-time')).attrs.datetime).toBe(new Date(s.status.alice.created_at).toISOString());
    expect((await oneInRow(page, s.alice, 'inbox-post-link')).attrs.href).toBe(`/posts/${s.postId}`);
    expect((await oneInRow(page, s.alice, 'inbox-status')).attrs['data-status']).toBe('unread');
    expect((await oneInRow(page, s.alice, 'inbox-assignee')).text).toBe('Not assigned');

    // Read ones go below the unread ones, whatever their age.
    await mark(s.org.id, s.carol, { status: 'read', assigneeUserId: s.editor.user.id });
    const after = await inbox(s.editor.browser, `?postId=${s.postId}`);
    expect(await order(after)).toEqual([s.bob, s.alice, s.carol]);
    expect((await oneInRow(after, s.carol, 'inbox-assignee')).text).toBe(`Assigned to ${s.editor.email}`);
  });

  test('filters per channel, post, status and assignee; the post filter offers the posts with comments', async () => {
    const s = await scene();
    const second = await secondPost(s);
    await mark(s.org.id, s.carol, { status: 'read', assigneeUserId: s.editor.user.id });
    const b = s.editor.browser;
    const all = await inbox(b);
    expect(await order(all)).toEqual([second.dave, s.bob, s.alice, s.carol]);
    expect((await all.query('[data-testid="inbox-filter-post"] option')).map((o) => o.attrs.value)).toEqual(['', second.postId, s.postId]);
    expect((await all.query('[data-testid="inbox-filter-channel"] option')).map((o) => o.attrs.value).sort()).toEqual(
      ['', s.channel.id, s.other.id].sort(),
    );
    expect(await order(await inbox(b, `?postId=${second.postId}`))).toEqual([second.dave]);
    expect(await order(await inbox(b, `?channelId=${s.channel.id}&status=unread`))).toEqual([second.dave, s.bob, s.alice]);
    expect(await order(await inbox(b, '?status=read'))).toEqual([s.carol]);
    expect(await order(await inbox(b, `?assignee=${s.editor.user.id}`))).toEqual([s.carol]);
    expect(await order(await inbox(b, `?assignee=none&postId=${s.postId}`))).toEqual([s.bob, s.alice]);
    const none = await inbox(b, `?channelId=${s.other.id}`);
    expect(await order(none)).toEqual([]);
    expect((await none.one('[data-testid="inbox-empty"]')).attrs.hidden).toBeUndefined();
    // The chosen filters stay chosen.
    const chosen = await inbox(b, `?postId=${s.postId}&status=read`);
    expect((await chosen.one('[data-testid="inbox-filter-post"] option[selected]')).attrs.value).toBe(s.postId);
    expect((await chosen.one('[data-testid="inbox-filter-status"] option[selected]')).attrs.value).toBe('read');
  });

  test('a reply in place: the channel’s limit and count, published once under the comment, its link; too long is refused with the text kept', async () => {
    const s = await scene();
    const b = s.editor.browser;
    const next = `/inbox?postId=${s.postId}`;
    const page = await inbox(b, `?postId=${s.postId}`);
    const form = await oneInRow(page, s.alice, 'inbox-reply-form');
    expect(form.attrs.action).toBe(`/inbox/comments/${s.alice}/reply`);
    expect((await page.one(`[data-comment-id="${s.alice}"] [data-testid="inbox-reply-form"] input[name="_csrf"]`)).attrs.value).toBe(
      b.csrfToken,
    );
    // The limit the API's check of a reply applies, and Mastodon's weighted count asked of the server.
    const channel = await stack.h.orm.em.fork().findOneOrFail(Channel, { id: s.channel.id });
    const { maxChars } = measureFollowUp(channel, { position: 1, kind: 'reply', content: '', mediaIds: [] });
    const count = await oneInRow(page, s.alice, 'inbox-reply-count');
    expect(count.attrs).toMatchObject({
      'data-max-chars': String(maxChars),
      'data-count': '0',
      'data-count-rule': 'server',
      'data-count-source': `reply-${s.alice}`,
    });
    expect((await page.one(`#reply-${s.alice}`)).attrs['data-testid']).toBe('inbox-reply-input');

    // Without the session's token nothing is sent.
    expect((await b.post(`/inbox/comments/${s.alice}/reply`, { content: 'forged', next, _csrf: 'not-the-token' })).status).toBe(403);

    const text = `Open 10 to 4 ${crypto.randomUUID().slice(0, 6)}`;
    const sent = await b.post(`/inbox/comments/${s.alice}/reply`, { content: text, next });
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`${next}&notice=replied#comment-${s.alice}`);
    const replyId = (await oneInRow(await inbox(b, `?postId=${s.postId}`), s.alice, 'inbox-reply')).attrs['data-reply-id']!;
    await stack.client.workflow.getHandle(commentReplyWorkflowId(replyId)).result();
    const out = answering(s.status.alice.id);
    expect(out.map((st) => st.text)).toEqual([text]);

    const done = await inbox(b, `?postId=${s.postId}`);
    const reply = await oneInRow(done, s.alice, 'inbox-reply');
    expect(reply.attrs).toMatchObject({ 'data-reply-id': replyId, 'data-status': 'published' });
    expect((await oneInRow(done, s.alice, 'inbox-reply-text')).text).toBe(text);
    expect((await oneInRow(done, s.alice, 'inbox-reply-url')).attrs.href).toBe(out[0]!.url);
    expect((await oneInRow(done, s.alice, 'inbox-status')).attrs['data-status']).toBe('replied');
    // Bob's row (he answered Alice) has no reply of its own.
    expect(await inRow(done, s.bob, 'inbox-reply')).toEqual([]);
    const audit = await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'comment.reply' });
    expect(audit).toMatchObject({ resourceType: 'reply', resourceId: replyId });

    const long = 'x'.repeat(maxChars + 1);
    const refused = await b.post(`/inbox/comments/${s.alice}/reply`, { content: long, next });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain(`${maxChars}`);
    expect((await oneInRow(refused, s.alice, 'inbox-reply-input')).text).toBe(long);
    expect((await oneInRow(refused, s.alice, 'inbox-reply-count')).attrs['data-over']).toBe('true');
    expect(await inRow(refused, s.carol, 'inbox-reply-input')).toEqual([{ attrs: expect.any(Object), text: '' }]);
    expect(await stack.h.orm.em.fork().count(CommentReply, { comment: s.alice })).toBe(1);

    // Delete asks first, then removes the reply on Mastodon.
    const ask = await b.get(`/inbox/replies/${replyId}/delete?next=${encodeURIComponent(next)}`);
    expect(ask.status).toBe(200);
    expect((await ask.one('[data-testid="inbox-reply-delete-text"]')).text).toBe(text);
    expect((await b.post(`/inbox/replies/${replyId}/delete`, { next })).status).toBe(422);
    expect(mastodon.deleted.map((st) => st.id)).not.toContain(out[0]!.id);
    const gone = await b.post(`/inbox/replies/${replyId}/delete`, { confirm: 'yes', next });
    expect(gone.status).toBe(303);
    expect(gone.location).toMatch(new RegExp(`^/inbox\\?postId=${s.postId}&notice=reply-delet(ed|ing)#comment-${s.alice}$`));
    for (let i = 0; i < 200 && !mastodon.deleted.some((st) => st.id === out[0]!.id); i++) await Bun.sleep(25);
    expect(mastodon.deleted.map((st) => st.id)).toContain(out[0]!.id);
  });

  test('mark read and unread, assign to a member and to no one: the row changes; a stranger cannot be given it', async () => {
    const s = await scene();
    const b = s.editor.browser;
    const contributor = await member(s.org.id, 'contributor');
    const next = `/inbox?postId=${s.postId}`;
    const before = await inbox(b, `?postId=${s.postId}`);
    expect(await inRow(before, s.alice, 'inbox-mark-unread')).toEqual([]);
    const options = (await before.query(`[data-comment-id="${s.alice}"] [data-testid="inbox-assign-select"] option`)).map(
      (o) => o.attrs.value,
    );
    expect(options.sort()).toEqual(['', s.editor.user.id, contributor.user.id].sort());

    const read = await b.post(`/inbox/comments/${s.alice}/status`, { status: 'read', next });
    expect(read.status).toBe(303);
    expect(read.location).toBe(`${next}&notice=read#comment-${s.alice}`);
    const given = await b.post(`/inbox/comments/${s.alice}/assign`, { assigneeUserId: contributor.user.id, next });
    expect(given.location).toBe(`${next}&notice=assigned#comment-${s.alice}`);

    const page = await inbox(b, `?postId=${s.postId}`);
    const row = await page.one(`[data-testid="inbox-item"][data-comment-id="${s.alice}"]`);
    expect(row.attrs).toMatchObject({ 'data-status': 'read', 'data-assignee': contributor.user.id });
    expect((await oneInRow(page, s.alice, 'inbox-status')).text).toBe('Read');
    expect((await oneInRow(page, s.alice, 'inbox-assignee')).text).toBe(`Assigned to ${contributor.email}`);
    expect(await inRow(page, s.alice, 'inbox-mark-read')).toEqual([]);
    expect(await inRow(page, s.alice, 'inbox-mark-unread')).toHaveLength(1);
    expect((await page.one(`[data-comment-id="${s.alice}"] [data-testid="inbox-assign-select"] option[selected]`)).attrs.value).toBe(
      contributor.user.id,
    );
    // The others are as they were.
    expect((await page.one(`[data-testid="inbox-item"][data-comment-id="${s.bob}"]`)).attrs).toMatchObject({
      'data-status': 'unread',
      'data-assignee': '',
    });

    const outsider = await createUser(stack.h.orm.em.fork(), {
      organizationId: (await makeOrg('PRO')).id,
      email: `o-${crypto.randomUUID().slice(0, 8)}@example.com`,
      password: PASSWORD,
    });
    const refused = await b.post(`/inbox/comments/${s.alice}/assign`, { assigneeUserId: outsider.id, next });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('is not a member of the organization');
    expect((await refused.one(`[data-testid="inbox-item"][data-comment-id="${s.alice}"]`)).attrs['data-assignee']).toBe(
      contributor.user.id,
    );

    await b.post(`/inbox/comments/${s.alice}/assign`, { assigneeUserId: '', next });
    await b.post(`/inbox/comments/${s.alice}/status`, { status: 'unread', next });
    const back = await inbox(b, `?postId=${s.postId}`);
    expect((await back.one(`[data-testid="inbox-item"][data-comment-id="${s.alice}"]`)).attrs).toMatchObject({
      'data-status': 'unread',
      'data-assignee': '',
    });
    expect(
      (await stack.h.orm.em.fork().find(AuditEvent, { organization: s.org.id, action: 'comment.update', resourceId: s.alice })).length,
    ).toBe(4);
  });

  test('a contributor replies but manages nothing: the reply waits for approval and nothing is sent; an approver sends it once', async () => {
    const s = await scene();
    const contributor = await member(s.org.id, 'contributor');
    const b = contributor.browser;
    const next = `/inbox?postId=${s.postId}`;
    const page = await inbox(b, `?postId=${s.postId}`);
    expect(await inRow(page, s.alice, 'inbox-reply-form')).toHaveLength(1);
    expect(await inRow(page, s.alice, 'inbox-reply-waits')).toHaveLength(1);
    for (const button of ['inbox-mark-read', 'inbox-mark-unread', 'inbox-assign-select', 'inbox-hide']) {
      expect(await page.query(`[data-testid="${button}"]`)).toEqual([]);
    }
    expect((await b.post(`/inbox/comments/${s.alice}/status`, { status: 'read', next })).status).toBe(403);

    const text = `Let me check ${crypto.randomUUID().slice(0, 6)}`;
    const sent = await b.post(`/inbox/comments/${s.alice}/reply`, { content: text, next });
    expect(sent.location).toBe(`${next}&notice=reply-waits#comment-${s.alice}`);
    const waiting = await inbox(b, `?postId=${s.postId}`);
    const reply = await oneInRow(waiting, s.alice, 'inbox-reply');
    expect(reply.attrs['data-status']).toBe('pending_approval');
    expect((await oneInRow(waiting, s.alice, 'inbox-reply-status')).text).toBe('Waiting for approval');
    expect(await waiting.query('[data-testid="inbox-reply-approve"]')).toEqual([]);
    const replyId = reply.attrs['data-reply-id']!;
    expect((await b.post(`/inbox/replies/${replyId}/approve`, { next })).status).toBe(403);
    await Bun.sleep(300);
    expect(answering(s.status.alice.id)).toEqual([]);
    expect((await oneInRow(waiting, s.alice, 'inbox-status')).attrs['data-status']).toBe('unread');

    // The editor sees it waiting, with the decision.
    const editorPage = await inbox(s.editor.browser, `?postId=${s.postId}`);
    expect(await inRow(editorPage, s.alice, 'inbox-reply-approve')).toHaveLength(1);
    const approved = await s.editor.browser.post(`/inbox/replies/${replyId}/approve`, { next });
    expect(approved.location).toBe(`${next}&notice=reply-approved#comment-${s.alice}`);
    await stack.client.workflow.getHandle(commentReplyWorkflowId(replyId)).result();
    expect(answering(s.status.alice.id).map((st) => st.text)).toEqual([text]);
    expect((await oneInRow(await inbox(b, `?postId=${s.postId}`), s.alice, 'inbox-reply')).attrs['data-status']).toBe('published');
  });

  test('a viewer reads the Inbox with no action at all, and every form of it is refused, changing nothing', async () => {
    const s = await scene();
    const viewer = await member(s.org.id, 'viewer');
    const b = viewer.browser;
    const page = await inbox(b, `?postId=${s.postId}`);
    expect(await order(page)).toEqual([s.carol, s.bob, s.alice]);
    expect(await page.query('[data-testid="inbox-list"] form')).toEqual([]);
    expect(await page.query('[data-testid="inbox-list"] textarea')).toEqual([]);
    expect(await page.query('[data-testid="inbox-list"] button')).toEqual([]);
    const next = `/inbox?postId=${s.postId}`;
    const tries: [string, Record<string, string>][] = [
      [`/inbox/comments/${s.alice}/reply`, { content: 'sneaky', next }],
      [`/inbox/comments/${s.alice}/status`, { status: 'read', next }],
      [`/inbox/comments/${s.alice}/assign`, { assigneeUserId: viewer.user.id, next }],
      [`/inbox/comments/${s.alice}/hide`, { next }],
    ];
    for (const [path, form] of tries) {
      const res = await b.post(path, form);
      expect([path, res.status]).toEqual([path, 403]);
      expect((await res.one('[data-testid="error-message"]')).text).toContain('(viewer) does not allow this');
    }
    const still = await inbox(s.editor.browser, `?postId=${s.postId}`);
    expect((await still.one(`[data-testid="inbox-item"][data-comment-id="${s.alice}"]`)).attrs).toMatchObject({
      'data-status': 'unread',
      'data-assignee': '',
    });
    expect(await stack.h.orm.em.fork().count(CommentReply, { comment: s.alice })).toBe(0);
    await Bun.sleep(200);
    expect(answering(s.status.alice.id)).toEqual([]);
  });

  test('text and names holding HTML are shown as text; avatar, profile and comment links only when http(s)', async () => {
    const s = await scene();
    const hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    await stack.h.pool.query(
      `update comments set text = $1, author_name = $2, author_avatar_url = 'javascript:alert(1)',
         author_profile_url = 'javascript:alert(2)', url = 'javascript:alert(3)' where id = $3`,
      [hostile, '<b>Mallory</b>', s.carol],
    );
    for (const path of [`/inbox?postId=${s.postId}`, `/inbox/live?postId=${s.postId}`]) {
      const page = await s.editor.browser.get(path);
      expect(page.status).toBe(200);
      expect(page.html).not.toContain('<script>alert');
      expect(page.html).not.toContain('<img src=x');
      expect(page.html).not.toContain('<b>Mallory');
      expect(page.html).not.toContain('javascript:');
      expect(page.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
      expect((await oneInRow(page, s.carol, 'inbox-text')).text).toBe(hostile);
      expect((await oneInRow(page, s.carol, 'inbox-author-name')).text).toBe('<b>Mallory</b>');
      expect(await inRow(page, s.carol, 'inbox-avatar')).toEqual([]);
      expect(await inRow(page, s.carol, 'inbox-avatar-none')).toHaveLength(1);
      expect(await inRow(page, s.carol, 'inbox-comment-url')).toEqual([]);
      expect((await oneInRow(page, s.carol, 'inbox-author-handle')).attrs.href).toBeUndefined();
    }
  });

  test('live: the page names its feed; the feed answers the rows alone, with new comments and changes as they happen', async () => {
    const s = await scene();
    const b = s.editor.browser;
    const page = await inbox(b, `?postId=${s.postId}`);
    expect((await page.one('[data-inbox]')).attrs['data-feed']).toBe(`/inbox/live?postId=${s.postId}`);
    expect(page.html).toMatch(/<script src="\/static\/inbox\.js\?v=[0-9a-f]+" defer><\/script>/);
    const first = await b.get(`/inbox/live?postId=${s.postId}`);
    expect(first.status).toBe(200);
    expect(await first.query('[data-testid="main-nav"]')).toEqual([]);
    expect(await first.query('[data-inbox-fragment]')).toHaveLength(1);
    expect(await order(first)).toEqual([s.carol, s.bob, s.alice]);

    const erin = mastodon.reply(s.statusId, person('85', 'erin'), 'Late to the party');
    // The post's comments are due to be read again.
    await stack.h.pool.query(
      'update comment_follows set next_at = now() where post_channel_id in (select id from post_channels where post_id = $1)',
      [s.postId],
    );
    await sweepComments(stack);
    await mark(s.org.id, s.alice, { status: 'read' });
    const later = await b.get(`/inbox/live?postId=${s.postId}`);
    const erinId = (await commentIds(s.postId))[erin.id]!;
    expect(await order(later)).toEqual([erinId, s.carol, s.bob, s.alice]);
    expect((await later.one(`[data-testid="inbox-item"][data-comment-id="${s.alice}"]`)).attrs['data-status']).toBe('read');
    // Its forms go back to the list, not to the feed.
    expect((await later.query(`[data-comment-id="${s.alice}"] input[name="next"]`)).map((i) => i.attrs.value)).toContain(
      `/inbox?postId=${s.postId}`,
    );
    // Each part the script swaps is marked; the reply form is not one (what is typed stays).
    expect((await later.query(`[data-comment-id="${s.alice}"] [data-live-part]`)).map((p) => p.attrs['data-live-part'])).toEqual([
      'state',
      'replies',
      'manage',
    ]);
  });

  test('hide and show again where the platform allows it (X), not on Mastodon', async () => {
    const s = await scene();
    const next = `/inbox?postId=${s.postId}`;
    const mastodonPage = await inbox(s.editor.browser, `?postId=${s.postId}`);
    expect(await mastodonPage.query('[data-testid="inbox-hide"]')).toEqual([]);
    const refused = await s.editor.browser.post(`/inbox/comments/${s.alice}/hide`, { next });
    expect(refused.status).toBe(409);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('MASTODON does not let the service hide comments');

    const { org, postId, spam } = await spamOnX(stack, x);
    const commentId = (await commentIds(postId))[spam.id]!;
    const editor = await member(org.id, 'editor');
    const xNext = `/inbox?postId=${postId}`;
    const page = await inbox(editor.browser, `?postId=${postId}`);
    expect((await oneInRow(page, commentId, 'inbox-hide')).text).toBe('Hide on X');

    const hidden = await editor.browser.post(`/inbox/comments/${commentId}/hide`, { next: xNext });
    expect(hidden.location).toBe(`${xNext}&notice=hidden#comment-${commentId}`);
    expect(x.tweets.find((t) => t.id === spam.id)?.hidden).toBe(true);
    const after = await inbox(editor.browser, `?postId=${postId}`);
    expect((await oneInRow(after, commentId, 'inbox-status')).attrs['data-status']).toBe('hidden');
    expect(await inRow(after, commentId, 'inbox-hide')).toEqual([]);
    expect(await inRow(after, commentId, 'inbox-unhide')).toHaveLength(1);

    const shown = await editor.browser.post(`/inbox/comments/${commentId}/unhide`, { next: xNext });
    expect(shown.location).toBe(`${xNext}&notice=unhidden#comment-${commentId}`);
    expect(x.tweets.find((t) => t.id === spam.id)?.hidden).toBe(false);
    expect((await oneInRow(await inbox(editor.browser, `?postId=${postId}`), commentId, 'inbox-status')).attrs['data-status']).toBe('read');
  });

  test('unread counts: on the post’s page with a link to the Inbox, and in the calendar on each published post that has any, in one statement', async () => {
    const s = await scene();
    const second = await secondPost(s);
    await mark(s.org.id, s.carol, { status: 'read' });
    const b = s.editor.browser;

    const postPage = await b.get(`/posts/${s.postId}`);
    expect(postPage.status).toBe(200);
    const count = await postPage.one('[data-testid="post-unread-count"]');
    expect([count.attrs['data-count'], count.text]).toEqual(['2', '2 unread']);
    expect((await postPage.one('[data-testid="post-comments"]')).text).toContain('of 3 comments');
    expect((await postPage.one('[data-testid="post-inbox-link"]')).attrs.href).toBe(`/inbox?postId=${s.postId}`);

    // A published post without comments, and one scheduled: no mark in the calendar.
    await stack.syncClock();
    const quiet = await call(stack.app, 'POST', '/v1/posts', {
      key: s.key,
      body: { content: `quiet ${crypto.randomUUID()}`, channelIds: [s.channel.id] },
    });
    await stack.settle(quiet.body.id);
    const day = (s.post.scheduledAt as string).slice(0, 10);
    const { result: calendar, queries } = await countQueries(() => b.get(`/calendar?date=${day}`));
    expect(calendar.status).toBe(200);
    const mark1 = await calendar.one(`[data-testid="post-item"][data-post-id="${s.postId}"] [data-testid="post-unread"]`);
    expect([mark1.attrs['data-count'], mark1.attrs.href]).toEqual(['2', `/inbox?postId=${s.postId}`]);
    const mark2 = await calendar.one(`[data-testid="post-item"][data-post-id="${second.postId}"] [data-testid="post-unread"]`);
    expect(mark2.attrs['data-count']).toBe('1');
    expect(await calendar.query(`[data-testid="post-item"][data-post-id="${quiet.body.id}"] [data-testid="post-unread"]`)).toEqual([]);
    expect(queries.filter((q) => /\bfrom comments\b/.test(q))).toHaveLength(1);

    // All read: the calendar has no mark; the post's page says none unread.
    await mark(s.org.id, s.alice, { status: 'read' });
    await mark(s.org.id, s.bob, { status: 'read' });
    const quietNow = await b.get(`/calendar?date=${day}`);
    expect(await quietNow.query(`[data-testid="post-item"][data-post-id="${s.postId}"] [data-testid="post-unread"]`)).toEqual([]);
    expect((await (await b.get(`/posts/${s.postId}`)).one('[data-testid="post-unread-count"]')).attrs['data-count']).toBe('0');
    // The Inbox link of the post's page lists the post's comments, all read now: newest first.
    expect(await order(await inbox(b, `?postId=${s.postId}`))).toEqual([s.carol, s.bob, s.alice]);
  });
});
