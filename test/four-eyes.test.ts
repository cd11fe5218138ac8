// Four eyes: a post's approval is never decided by the person who asked for it — not with the
// same key, another key of the same member, the web app or a preview link the requester shared —
// and a preview link that decides is shared only by a member who may approve, stands for that
// member as they are now, decides once, and is revoked from the post's page. (The MCP tools are
// tried in test/mcp.test.ts.) An organization that asks everyone's posts to be approved with one
// approver is told so.
import { describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { setMemberRole } from '../domain/members.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeOrg } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { Browser } from './harness/web-browser.ts';
import type { Role } from '../domain/access.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({ publicBaseUrl: 'http://localhost' }, (s, f) => {
  stack = s;
  fake = f;
});

const HOUR = 3_600_000;
const PASSWORD = 'correct horse battery';

/** A member of the organization, signed in, with a key of their own holding `scopes`. */
async function member(orgId: string, role: Role, scopes: string[] = ['read', 'publish', 'approve']) {
  const em = stack.h.orm.em.fork();
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(em, { organizationId: orgId, email, password: PASSWORD, role });
  const key = await createApiKey(stack.h.orm.em.fork(), {
    organizationId: orgId,
    name: `${role} key`,
    scopes: scopes.filter((s) => role !== 'contributor' || s !== 'approve'),
    channels: 'all',
    createdBy: { userId: user.id, role },
  });
  const browser = new Browser(stack.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { user, key: key.key, keyId: key.id, browser, email };
}

/** An organization whose every post waits for approval, with a Mastodon channel and reviewers allowed to decide. */
async function organization() {
  const org = await makeOrg('ENTERPRISE');
  await setApprovalSettings(stack.h.orm.em.fork(), org.id, { approval: 'everyone', previewDecisions: true });
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { org, channelId: channel.id };
}

async function createPost(key: string, channelId: string) {
  const t0 = await stack.syncClock();
  const r = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: {
      content: `four eyes ${crypto.randomUUID()}`,
      channelIds: [channelId],
      publishAt: new Date(t0.getTime() + 48 * HOUR).toISOString(),
    },
  });
  expect(r.status).toBe(201);
  expect(r.body.approval.status).toBe('pending');
  return r.body as { id: string };
}

const approval = async (postId: string) => (await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId })).approval;

describe('four eyes', () => {
  test('API: the requester’s key, and another key of the same member, are refused; another member’s key decides', async () => {
    const { org, channelId } = await organization();
    const editor = await member(org.id, 'editor');
    const post = await createPost(editor.key, channelId);
    const own = await call(stack.app, 'POST', `/v1/posts/${post.id}/approve`, { key: editor.key, body: {} });
    expect(own.status).toBe(403);
    expect(own.body.error).toMatchObject({ code: 'forbidden_scope', details: { reason: 'own_post', action: 'posts.approve' } });
    expect(own.body.error.message).toContain('another member who may approve (owner, admin, editor)');
    const second = await createApiKey(stack.h.orm.em.fork(), {
      organizationId: org.id,
      name: 'second',
      scopes: ['read', 'approve'],
      channels: 'all',
      createdBy: { userId: editor.user.id, role: 'editor' },
    });
    expect((await call(stack.app, 'POST', `/v1/posts/${post.id}/reject`, { key: second.key, body: {} })).status).toBe(403);
    expect((await approval(post.id))?.status).toBe('pending');
    const other = await member(org.id, 'editor');
    const decided = await call(stack.app, 'POST', `/v1/posts/${post.id}/approve`, { key: other.key, body: {} });
    expect(decided.status).toBe(200);
    expect(decided.body.approval).toMatchObject({ status: 'approved', decidedBy: { type: 'api_key', name: 'editor key' } });
  });

  test('API: a key of no member whose posts need approval cannot approve them itself', async () => {
    const { org, channelId } = await organization();
    const author = await createApiKey(stack.h.orm.em.fork(), {
      organizationId: org.id,
      name: 'self-approver',
      scopes: ['read', 'publish', 'approve'],
      channels: 'all',
      requiresApproval: true,
    });
    const post = await createPost(author.key, channelId);
    const own = await call(stack.app, 'POST', `/v1/posts/${post.id}/approve`, { key: author.key, body: {} });
    expect(own.status).toBe(403);
    expect(own.body.error.details.reason).toBe('own_post');
    expect((await approval(post.id))?.status).toBe('pending');
  });

  test('web: the member who asked is refused on the post page; the decision buttons of another member work', async () => {
    const { org, channelId } = await organization();
    const editor = await member(org.id, 'editor');
    const post = await createPost(editor.key, channelId);
    const own = await editor.browser.post(`/posts/${post.id}/approve`, {});
    expect(own.status).toBe(403);
    expect(own.html).toContain('must decide it');
    expect((await approval(post.id))?.status).toBe('pending');
    const admin = await member(org.id, 'admin');
    expect((await admin.browser.post(`/posts/${post.id}/reject`, { comment: 'not yet' })).status).toBe(303);
    expect(await approval(post.id)).toMatchObject({ status: 'rejected', decidedBy: { type: 'member', id: admin.user.id } });
  });

  test('preview links: only an approver who did not ask shares one that decides; it decides once, in their name', async () => {
    const { org, channelId } = await organization();
    const contributor = await member(org.id, 'contributor');
    const editor = await member(org.id, 'editor');
    const post = await createPost(contributor.key, channelId);
    // A contributor may share a link that shows, never one that decides.
    const contributorLink = await contributor.browser.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    expect(contributorLink.status).toBe(403);
    const viewOnly = await contributor.browser.post(`/posts/${post.id}/preview-link`, { days: '3' });
    expect(viewOnly.status).toBe(200);
    const viewPath = new URL((await viewOnly.one('[data-testid="preview-link"]')).attrs.value!).pathname;
    const reviewer = new Browser(stack.app);
    expect(await (await reviewer.get(viewPath)).query('[data-testid="preview-decision"]')).toHaveLength(0);
    expect((await reviewer.post(`${viewPath}/approve`, { reviewer: 'Client' }, { csrf: false })).status).toBe(404);

    // The editor's own post: their link cannot decide it.
    const editorsPost = await createPost(editor.key, channelId);
    expect((await editor.browser.post(`/posts/${editorsPost.id}/preview-link`, { days: '3', decide: 'yes' })).status).toBe(403);

    // The editor's link for the contributor's post decides once, recorded with the reviewer's name and the link.
    const made = await editor.browser.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    expect(made.status).toBe(200);
    const link = new URL((await made.one('[data-testid="preview-link"]')).attrs.value!).pathname;
    expect(await (await reviewer.get(link)).query('[data-testid="preview-approve"]')).toHaveLength(1);
    expect((await reviewer.post(`${link}/approve`, { reviewer: 'Client Co' }, { csrf: false })).status).toBe(303);
    const decided = await approval(post.id);
    expect(decided).toMatchObject({ status: 'approved', decidedBy: { type: 'reviewer', name: 'Client Co' } });
    expect(decided?.decidedBy?.id).toMatch(/^plk_/);
    // Once: no more buttons, and a second decision through it is refused.
    const after = await reviewer.get(link);
    expect(await after.query('[data-testid="preview-decision"]')).toHaveLength(0);
    expect((await after.one('[data-testid="preview-link-decided"]')).text).toContain('Client Co');
    expect((await reviewer.post(`${link}/reject`, { reviewer: 'Client Co' }, { csrf: false })).status).toBe(409);
    expect((await approval(post.id))?.status).toBe('approved');
    // The audit log names the reviewer and the member whose link it was.
    const [event] = await stack.h.orm.em
      .getConnection()
      .execute(`select actor_type, actor_name, details from audit_events where resource_id = ? and action = 'post.approve'`, [post.id]);
    expect(event).toMatchObject({ actor_type: 'reviewer', actor_name: 'Client Co', details: { linkSharedBy: editor.user.id } });
  });

  test('preview links: a link whose member may no longer approve decides nothing; a revoked link is gone', async () => {
    const { org, channelId } = await organization();
    const contributor = await member(org.id, 'contributor');
    const editor = await member(org.id, 'editor');
    const post = await createPost(contributor.key, channelId);
    const made = await editor.browser.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    const link = new URL((await made.one('[data-testid="preview-link"]')).attrs.value!).pathname;
    const owner = await member(org.id, 'owner');
    await setMemberRole(
      stack.h.orm.em.fork(),
      org.id,
      { type: 'member', organizationId: org.id, userId: owner.user.id, name: owner.email, role: 'owner' },
      editor.user.id,
      'contributor',
    );
    const reviewer = new Browser(stack.app);
    expect(await (await reviewer.get(link)).query('[data-testid="preview-decision"]')).toHaveLength(0);
    expect((await reviewer.post(`${link}/approve`, { reviewer: 'Client' }, { csrf: false })).status).toBe(404);
    expect((await approval(post.id))?.status).toBe('pending');

    // The owner's link, revoked from the post's page by the owner: 410 to the reviewer.
    const second = await owner.browser.post(`/posts/${post.id}/preview-link`, { days: '3', decide: 'yes' });
    const secondPath = new URL((await second.one('[data-testid="preview-link"]')).attrs.value!).pathname;
    const page = await owner.browser.get(`/posts/${post.id}`);
    const rows = await page.query('[data-testid="preview-link-row"]');
    expect(rows.length).toBe(2);
    const linkId = rows[0]!.attrs['data-link-id']!;
    // A contributor revokes neither (not theirs; they may not approve).
    expect((await contributor.browser.post(`/posts/${post.id}/preview-links/${linkId}/revoke`, {})).status).toBe(403);
    expect((await owner.browser.post(`/posts/${post.id}/preview-links/${linkId}/revoke`, {})).status).toBe(303);
    expect((await reviewer.get(secondPath)).status).toBe(410);
    expect((await reviewer.post(`${secondPath}/approve`, { reviewer: 'Client' }, { csrf: false })).status).toBe(410);
    expect((await approval(post.id))?.status).toBe('pending');
  });

  test('an organization asking everyone’s posts to be approved with a single approver is told so', async () => {
    const org = await makeOrg('ENTERPRISE');
    const owner = await member(org.id, 'owner');
    const alone = await owner.browser.post('/settings/approval', { approval: 'everyone' });
    expect(alone.status).toBe(303);
    const page = await owner.browser.get(alone.headers.get('location')!);
    expect((await page.one('[data-testid="approval-warning"]')).text).toContain('only one member may approve');
    await member(org.id, 'editor');
    const two = await owner.browser.get('/settings/approval');
    expect(await two.query('[data-testid="approval-warning"]')).toHaveLength(0);
  });
});
