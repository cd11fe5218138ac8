// Approval before publishing, end to end: API (and the web app's pages) → Postgres → the post
// workflow's decideApproval Update on a time-skipping server → the Mastodon connector → its fake.
// A post that needs approval is never sent before an approve decision; one that gets none in
// time fails with not_approved; preview links are checked valid, expired and tampered.
import { describe, expect, test } from 'bun:test';
import { ApiKey, Post, PostChannel, WebhookEvent } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { readPreviewLink, signPreviewLink } from '../domain/posts/preview-links.ts';
import { createUser } from '../services/users.ts';
import { createApiKey } from '../services/api-keys.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({ publicBaseUrl: 'http://localhost' }, (s, f) => {
  stack = s;
  fake = f;
});

const HOUR = 3_600_000;

/** Polls (real time) until fn() gives a value. */
async function until<T>(fn: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v) return v;
    await Bun.sleep(25);
  }
  throw new Error('nothing came');
}

/** A Mastodon channel of the organization, and a key (`name`) whose posts need approval. */
async function channelAndAuthor(organizationId: string, name: string) {
  const em = stack.h.orm.em.fork();
  const channel = await addChannel(em, stack.h.credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  const author = await createApiKey(em, { organizationId, name, scopes: ['read', 'publish'], channels: 'all', requiresApproval: true });
  return { channelId: channel.id, author };
}

/** An organization with a Mastodon channel, a key whose posts need approval and an approver's key. */
async function setup(o: { setting?: 'none' | 'contributors' | 'everyone' } = {}) {
  const org = await makeOrg('ENTERPRISE');
  if (o.setting) await setApprovalSettings(stack.h.orm.em.fork(), org.id, { approval: o.setting });
  const { channelId, author } = await channelAndAuthor(org.id, 'author');
  const approver = (await makeKey(org.id, { scopes: ['read', 'approve'], name: 'approver' })).key;
  const plain = (await makeKey(org.id, { scopes: ['read', 'publish'], name: 'plain' })).key;
  // A webhook endpoint, so the events are written (their deliveries fail: nobody listens).
  const hook = await call(stack.app, 'POST', '/v1/webhooks', { key: plain, body: { url: 'http://127.0.0.1:9/hook', events: 'all' } });
  expect(hook.status).toBe(201);
  return { org, channelId, author: author.key, authorId: author.id, approver, plain };
}

/** A post now, or `inHours` from the test server's clock. */
async function create(key: string, channelId: string, o: { inHours?: number; text?: string } = {}) {
  const t0 = await stack.syncClock();
  const text = o.text ?? `needs approval ${crypto.randomUUID()}`;
  const publishAt = o.inHours === undefined ? undefined : new Date(t0.getTime() + o.inHours * HOUR).toISOString();
  const r = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: { content: text, channelIds: [channelId], ...(publishAt ? { publishAt } : {}) },
  });
  expect(r.status).toBe(201);
  return { id: r.body.id as string, text, body: r.body };
}

const sent = (text: string) => fake.statuses.filter((s) => s.text === text).length;
const row = (id: string) => stack.h.orm.em.fork().findOneOrFail(Post, { id });
const eventTypes = async (postId: string) =>
  (await stack.h.orm.em.fork().find(WebhookEvent, {}, { orderBy: { createdAt: 'asc' } }))
    .filter((e) => {
      const data = (e.payload as { data?: { id?: string; post?: { id?: string } } }).data;
      return (data?.id ?? data?.post?.id) === postId;
    })
    .map((e) => e.type);
const decide = (key: string, id: string, verb: 'approve' | 'reject', body?: unknown) =>
  call(stack.app, 'POST', `/v1/posts/${id}/${verb}`, { key, ...(body === undefined ? {} : { body }) });

describe('approval through the workflow', () => {
  test('pending → nothing is sent, however long past its time within the grace → approved → published once', async () => {
    const { channelId, author, authorId, approver } = await setup();
    const post = await create(author, channelId);
    expect(post.body.approval).toMatchObject({
      status: 'pending',
      requestedBy: { type: 'api_key', id: authorId, name: 'author' },
      decidedBy: null,
      decidedAt: null,
      comment: null,
    });
    expect(post.body.status).toBe('scheduled');
    // Due at once, but waiting: an hour later nothing has been sent and it is still scheduled.
    await stack.env.sleep('1 hour');
    expect(sent(post.text)).toBe(0);
    expect((await row(post.id)).status).toBe('scheduled');
    const ok = await decide(approver, post.id, 'approve', { comment: 'good to go' });
    expect(ok.status).toBe(200);
    expect(ok.body.approval).toMatchObject({ status: 'approved', decidedBy: { type: 'api_key', name: 'approver' }, comment: 'good to go' });
    expect((await stack.settle(post.id)).phase).toBe('done');
    expect((await row(post.id)).status).toBe('published');
    expect(sent(post.text)).toBe(1);
    // Approving again: nothing left to approve.
    expect((await decide(approver, post.id, 'approve')).status).toBe(409);
    expect(await eventTypes(post.id)).toEqual(
      expect.arrayContaining(['post.scheduled', 'post.approval.requested', 'post.approval.approved', 'post.published']),
    );
  });

  test('rejected → never published: past its time plus the grace every channel fails with not_approved, and a retry is refused', async () => {
    const { channelId, author, approver } = await setup();
    const post = await create(author, channelId, { inHours: 1 });
    const no = await decide(approver, post.id, 'reject', { comment: 'off brand' });
    expect(no.status).toBe(200);
    expect(no.body.approval).toMatchObject({ status: 'rejected', comment: 'off brand' });
    expect((await decide(approver, post.id, 'reject')).status).toBe(409);
    await stack.env.sleep('2 hours');
    expect(sent(post.text)).toBe(0);
    expect((await row(post.id)).status).toBe('scheduled');
    await stack.env.sleep('24 hours');
    expect((await stack.settle(post.id)).phase).toBe('done');
    const failed = await call(stack.app, 'GET', `/v1/posts/${post.id}`, { key: approver });
    expect(failed.body.status).toBe('failed');
    expect(failed.body.channels[0]).toMatchObject({ status: 'failed', errorCode: 'not_approved', retryable: false });
    expect(sent(post.text)).toBe(0);
    const retry = await call(stack.app, 'POST', `/v1/posts/${post.id}/retry`, { key: author });
    expect(retry.status).toBe(409);
    expect(retry.body.error.details.approval).toBe('rejected');
    expect(await eventTypes(post.id)).toEqual(expect.arrayContaining(['post.approval.rejected', 'post.channel.failed', 'post.failed']));
  });

  test('pending with no decision → not_approved after the grace; approved within it after its time → published', async () => {
    const { channelId, author, approver } = await setup();
    const late = await create(author, channelId, { inHours: 1 });
    const inGrace = await create(author, channelId, { inHours: 1 });
    await stack.env.sleep('20 hours');
    expect((await decide(approver, inGrace.id, 'approve')).status).toBe(200);
    expect((await stack.settle(inGrace.id)).phase).toBe('done');
    expect(sent(inGrace.text)).toBe(1);
    await stack.env.sleep('6 hours');
    expect((await stack.settle(late.id)).phase).toBe('done');
    const pcs = await stack.h.orm.em.fork().find(PostChannel, { post: late.id });
    expect(pcs.map((pc) => pc.errorCode)).toEqual(['not_approved']);
    expect(sent(late.text)).toBe(0);
    // Past its time: no decision any more.
    expect((await decide(approver, late.id, 'approve')).status).toBe(409);
  });

  test('an edit by a key whose posts need approval puts an approved post back to pending; an edit by another key does not', async () => {
    const { channelId, author, approver, plain } = await setup();
    const post = await create(author, channelId, { inHours: 2 });
    expect((await decide(approver, post.id, 'approve')).status).toBe(200);
    const byOther = await call(stack.app, 'PATCH', `/v1/posts/${post.id}`, { key: plain, body: { content: `${post.text} (typo)` } });
    expect(byOther.status).toBe(200);
    expect(byOther.body.approval.status).toBe('approved');
    const byAuthor = await call(stack.app, 'PATCH', `/v1/posts/${post.id}`, { key: author, body: { content: `${post.text} v2` } });
    expect(byAuthor.status).toBe(200);
    expect(byAuthor.body.approval).toMatchObject({ status: 'pending', decidedBy: null });
    // Its time comes: still waiting, nothing sent.
    await stack.env.sleep('3 hours');
    expect(fake.statuses.some((s) => s.text.startsWith(post.text))).toBe(false);
    expect((await decide(approver, post.id, 'approve')).status).toBe(200);
    expect((await stack.settle(post.id)).phase).toBe('done');
    expect(sent(`${post.text} v2`)).toBe(1);
  });

  test('who needs approval: the organization setting everyone, a contributor’s key; none for an editor’s under contributors', async () => {
    const everyone = await setup({ setting: 'everyone' });
    const a = await create(everyone.plain, everyone.channelId, { inHours: 48 });
    expect(a.body.approval?.status).toBe('pending');
    const contributors = await setup({ setting: 'contributors' });
    const em = stack.h.orm.em.fork();
    const made = async (role: 'contributor' | 'editor') => {
      const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
      const user = await createUser(em, { organizationId: contributors.org.id, email, password: 'long enough', role });
      return (
        await createApiKey(em, {
          organizationId: contributors.org.id,
          name: `${role} key`,
          scopes: ['read', 'publish'],
          channels: 'all',
          createdBy: { userId: user.id, role },
        })
      ).key;
    };
    const fromContributor = await create(await made('contributor'), contributors.channelId, { inHours: 48 });
    expect(fromContributor.body.approval?.status).toBe('pending');
    const fromEditor = await create(await made('editor'), contributors.channelId, { inHours: 48 });
    expect(fromEditor.body.approval).toBeNull();
    // A post that needs no approval cannot be approved.
    expect((await decide(contributors.approver, fromEditor.id, 'approve')).status).toBe(409);
  });

  test('a series made with a key whose posts need approval: each occurrence waits for approval too', async () => {
    const { channelId, author, approver } = await setup();
    const t0 = await stack.syncClock();
    const created = await call(stack.app, 'POST', '/v1/series', {
      key: author,
      body: {
        content: `weekly ${crypto.randomUUID()}`,
        channelIds: [channelId],
        publishAt: new Date(t0.getTime() + HOUR).toISOString(),
        repeat: { every: 'week', count: 1 },
      },
    });
    expect(created.status).toBe(201);
    await stack.env.sleep('2 hours');
    const occurrence = await until(() => stack.h.orm.em.fork().findOne(Post, { seriesId: created.body.id }));
    expect(occurrence.approval).toMatchObject({ status: 'pending', requestedBy: { type: 'api_key', name: 'author' } });
    expect(occurrence.status).toBe('scheduled');
    expect(sent(created.body.content)).toBe(0);
    expect((await decide(approver, occurrence.id, 'approve')).status).toBe(200);
    expect((await stack.settle(occurrence.id)).phase).toBe('done');
    expect(sent(created.body.content)).toBe(1);
  });

  test('refusals: the approve scope, an unknown post, a comment too long, a body of the wrong shape', async () => {
    const { channelId, author, approver, plain } = await setup();
    const post = await create(author, channelId, { inHours: 48 });
    const noScope = await decide(plain, post.id, 'approve');
    expect(noScope.status).toBe(403);
    expect(noScope.body.error).toMatchObject({ code: 'forbidden_scope', details: { requiredScope: 'approve' } });
    expect((await decide(approver, 'post_nope', 'approve')).status).toBe(404);
    const long = await decide(approver, post.id, 'reject', { comment: 'x'.repeat(2001) });
    expect(long.status).toBe(422);
    expect(long.body.error.details.fields[0].path).toBe('comment');
    expect((await decide(approver, post.id, 'reject', { because: 'no' })).status).toBe(422);
    expect((await row(post.id)).approval?.status).toBe('pending');
  });
});

/** A signed-in owner's organization with a post (made by a key whose posts need approval) waiting for approval. */
async function ownerWithWaitingPost() {
  const { browser: owner, org } = await signedInUser(stack.app, { plan: 'ENTERPRISE' });
  const { channelId, author } = await channelAndAuthor(org.id, 'a');
  const post = await create(author.key, channelId, { inHours: 48 });
  return { owner, org, post, authorId: author.id };
}

describe('preview links', () => {
  test('signed and expiring: valid, expired, tampered', () => {
    const key = stack.h.credentialsKey;
    const now = new Date('2030-01-01T00:00:00Z');
    const token = signPreviewLink(key, {
      linkId: 'plk_1',
      postId: 'post_1',
      organizationId: 'org_1',
      expiresAt: new Date(now.getTime() + HOUR),
      decide: true,
    });
    expect(readPreviewLink(key, token, now)).toMatchObject({ postId: 'post_1', organizationId: 'org_1', decide: true });
    expect(readPreviewLink(key, token, new Date(now.getTime() + HOUR))).toBe('expired');
    const [payload, sig] = token.split('.') as [string, string];
    const other = Buffer.from(JSON.stringify({ post: 'post_2', org: 'org_1', exp: 9e9, decide: 1 })).toString('base64url');
    expect(readPreviewLink(key, `${other}.${sig}`, now)).toBe('invalid');
    expect(readPreviewLink(key, `${payload}.${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`, now)).toBe('invalid');
    expect(readPreviewLink(Buffer.alloc(32, 7), token, now)).toBe('invalid');
  });

  test('the page shows each channel’s text; a reviewer approves when the organization allows it; expired → 410, tampered → 404', async () => {
    const { owner, org, post } = await ownerWithWaitingPost();
    // The organization does not allow reviewers to decide yet: the link has no buttons.
    const page = await owner.get(`/posts/${post.id}`);
    expect((await page.one('[data-testid="approval-status"]')).attrs['data-approval']).toBe('pending');
    const made = await owner.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    expect(made.status).toBe(200);
    const url = new URL((await made.one('[data-testid="preview-link"]')).attrs.value!);
    const reviewer = new Browser(stack.app);
    const preview = await reviewer.get(url.pathname);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await preview.one('[data-testid="preview-text"]')).text).toBe(post.text);
    expect(await preview.query('[data-testid="preview-decision"]')).toHaveLength(0);
    expect((await reviewer.post(`${url.pathname}/approve`, { reviewer: 'Client' }, { csrf: false })).status).toBe(404);

    await setApprovalSettings(stack.h.orm.em.fork(), org.id, { previewDecisions: true });
    await owner.get('/calendar'); // the session's organization is read again
    const allowed = await owner.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    const link = new URL((await allowed.one('[data-testid="preview-link"]')).attrs.value!).pathname;
    expect(await (await reviewer.get(link)).query('[data-testid="preview-approve"]')).toHaveLength(1);
    expect((await reviewer.post(`${link}/approve`, { reviewer: '' }, { csrf: false })).status).toBe(422);
    const approved = await reviewer.post(`${link}/approve`, { reviewer: 'Client Co', comment: 'lovely' }, { csrf: false });
    expect(approved.status).toBe(303);
    expect((await row(post.id)).approval).toMatchObject({
      status: 'approved',
      decidedBy: { type: 'reviewer', id: expect.stringMatching(/^plk_/), name: 'Client Co' },
      comment: 'lovely',
    });
    // Tampered: another byte → 404; expired → 410.
    const token = link.split('/').pop()!;
    expect((await reviewer.get(`/preview/${token.slice(0, -2)}xx`)).status).toBe(404);
    const expired = signPreviewLink(stack.h.credentialsKey, {
      linkId: null,
      postId: post.id,
      organizationId: org.id,
      expiresAt: new Date((await stack.syncClock()).getTime() - 1000),
      decide: true,
    });
    expect((await reviewer.get(`/preview/${expired}`)).status).toBe(410);
    // A member of another organization's link cannot reach this one's posts: the grant names its organization.
    const foreign = signPreviewLink(Buffer.alloc(32, 1), {
      linkId: null,
      postId: post.id,
      organizationId: org.id,
      expiresAt: new Date(Date.now() + 1000 * HOUR),
      decide: true,
    });
    expect((await reviewer.get(`/preview/${foreign}`)).status).toBe(404);
  });

  test('approvers see the Approvals page and decide there; a contributor cannot', async () => {
    const { owner, org, post, authorId } = await ownerWithWaitingPost();
    const list = await owner.get('/approvals');
    expect((await list.query('[data-testid="approval-item"]')).map((i) => i.attrs['data-post-id'])).toEqual([post.id]);
    const rejected = await owner.post(`/posts/${post.id}/reject`, { comment: 'needs a link', next: '/approvals' });
    expect(rejected.status).toBe(303);
    expect((await row(post.id)).approval).toMatchObject({ status: 'rejected', comment: 'needs a link', decidedBy: { type: 'member' } });
    const email = `c-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password: 'long enough', role: 'contributor' });
    const contributor = new Browser(stack.app);
    expect((await contributor.signIn(email, 'long enough')).status).toBe(303);
    expect((await contributor.get('/approvals')).status).toBe(403);
    expect((await contributor.post(`/posts/${post.id}/approve`, {})).status).toBe(403);
    expect((await row(post.id)).approval?.status).toBe('rejected');
    expect((await stack.h.orm.em.fork().findOneOrFail(ApiKey, { id: authorId })).requiresApproval).toBe(true);
  });
});
