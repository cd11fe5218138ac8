// Tags and tracked links in the web app, on the real stack (time-skipping Temporal server, the fake
// Mastodon): Settings → Tags makes, renames, recolours and deletes tags (after a confirmation
// page), each refusal shown at its field; posts show their tags as chips on the calendar and on
// their page, where a writer puts tags on a post or takes them off (any status); the calendar (its
// live feed too), the Drafts and Approvals pages and the Analytics page narrow to one tag; a viewer sees no action and is refused
// at each; a post's page lists its short links with their clicks, and its clicks say where they
// come from; Settings → Tracked links sets the organization's default for new posts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AuditEvent, Organization, type Role } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { getPostForKey } from '../domain/posts/view.ts';
import { createTag, getTag, listTags, TAG_LIMITS } from '../domain/tags.ts';
import { createUser } from '../services/users.ts';
import { dayKey } from '../web/time.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, type Page, signedInUser } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
const PASSWORD = 'correct horse battery';
const DAY = 86_400_000;

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ storage: 'disk' });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
});

/** An organization with a Mastodon channel on the fake and an API key; a member of `role` signed in. */
async function setup(role: Role = 'editor') {
  const user = await signedInUser(stack.app, { role });
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: user.org.id,
    platform: 'MASTODON',
    name: 'Team News',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  const { key } = await makeKey(user.org.id);
  return { ...user, channel, key };
}

/** Another member of the organization with this role, signed in. */
async function member(organizationId: string, role: Role) {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await createUser(stack.h.orm.em.fork(), { organizationId, email, password: PASSWORD, role });
  const browser = new Browser(stack.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return browser;
}

/** A post made through the API (scheduled at `at`, or published now without it); its id. */
async function apiPost(key: string, body: Record<string, unknown>, at?: Date) {
  const res = await call(stack.app, 'POST', '/v1/posts', { key, body: { ...body, ...(at ? { publishAt: at.toISOString() } : {}) } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const tagsOfPost = async (orgId: string, postId: string) => (await getPostForKey(stack.h.orm.em.fork(), orgId, postId, 'all')).tagIds;
const chipsIn = async (page: Page, scope: string) => (await page.query(`${scope} [data-testid="tag-chip"]`)).map((c) => c.text);
const auditOf = (orgId: string, action: string) => stack.h.orm.em.fork().find(AuditEvent, { organization: orgId, action });
const tagIdFrom = (location: string | null) => {
  const m = /^\/settings\/tags\?notice=(?:created|saved)#(tag_[0-9a-z]+)$/.exec(location ?? '');
  if (!m) throw new Error(`not a tag's row: ${location}`);
  return m[1]!;
};

describe('Settings → Tags', () => {
  test('make, rename, recolour and delete tags; a name taken, a bad colour, a bad name are shown at their fields and change nothing', async () => {
    const s = await setup('editor');
    const empty = await s.browser.get('/settings/tags');
    expect(empty.status).toBe(200);
    expect((await empty.one('[data-testid="nav-tags"]')).attrs['aria-current']).toBe('page');
    expect(await empty.query('[data-testid="tags-empty"]')).toHaveLength(1);
    // The name's length is the schema's (TAG_FIELDS), not a copy.
    expect((await empty.one('[data-testid="tag-new-name"]')).attrs.maxlength).toBe(String(TAG_LIMITS.nameChars));

    const made = await s.browser.post('/settings/tags', { name: '  Spring <b>launch</b> & co ', colour: '#FF8800' });
    expect(made.status).toBe(303);
    const id = tagIdFrom(made.location);
    expect(await getTag(stack.h.orm.em.fork(), s.org.id, id)).toMatchObject({ name: 'Spring <b>launch</b> & co', colour: '#ff8800' });
    expect(await auditOf(s.org.id, 'tag.create')).toMatchObject([{ resourceType: 'tag', resourceId: id }]);

    const list = await s.browser.get(made.location!);
    expect((await list.one('[data-testid="notice"]')).text).toBe('Tag made.');
    const row = await list.one('[data-testid="tag-row"]');
    expect(row.attrs).toMatchObject({ id, 'data-tag-id': id, 'data-name': 'Spring <b>launch</b> & co', 'data-colour': '#ff8800' });
    expect(await chipsIn(list, '[data-testid="tag-row"]')).toEqual(['Spring <b>launch</b> & co']);
    expect(list.html).not.toContain('<b>launch</b>');
    // The colour is an SVG fill: the pages' CSP allows no inline style.
    expect((await list.one('[data-testid="tag-row"] [data-testid="tag-chip"] circle')).attrs.fill).toBe('#ff8800');
    expect((await list.one('[data-testid="tag-calendar-link"]')).attrs.href).toBe(`/calendar?tagId=${id}`);
    expect((await list.one('[data-testid="tag-analytics-link"]')).attrs.href).toBe(`/analytics?tagId=${id}`);

    // A name another tag has, in any letter case: 409, the form again as typed, nothing made.
    const taken = await s.browser.post('/settings/tags', { name: 'SPRING <B>LAUNCH</B> & CO', colour: '#000000' });
    expect(taken.status).toBe(409);
    expect((await taken.one('[data-testid="form-errors"]')).text).toContain(
      'The organization has a tag named "Spring <b>launch</b> & co" already',
    );
    expect((await taken.one('[data-testid="tag-new-name"]')).attrs.value).toBe('SPRING <B>LAUNCH</B> & CO');
    // A colour that is not #rrggbb, a name of spaces, a name with `|`: 422 at their fields.
    const colour = await s.browser.post('/settings/tags', { name: 'Other', colour: 'orange' });
    expect(colour.status).toBe(422);
    expect(await colour.one('[data-testid="tag-field-error"][data-path="colour"]')).toMatchObject({
      text: 'must be a colour #rrggbb (six hexadecimal digits)',
    });
    expect((await colour.one('[data-testid="tag-new-colour"]')).attrs['aria-invalid']).toBe('true');
    expect((await colour.one('[data-testid="tag-new-name"]')).attrs.value).toBe('Other');
    for (const name of ['   ', 'a|b', 'x'.repeat(51)]) {
      const bad = await s.browser.post('/settings/tags', { name, colour: '#000000' });
      expect(bad.status).toBe(422);
      expect((await bad.one('[data-testid="tag-field-error"][data-path="name"]')).text).toContain('must be 1 to 50 characters');
    }
    expect((await listTags(stack.h.orm.em.fork(), s.org.id)).map((t) => t.id)).toEqual([id]);

    // Rename and recolour.
    const other = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Support' });
    const saved = await s.browser.post(`/settings/tags/${id}`, { name: 'Spring 2027', colour: '#00AA00' });
    expect(saved.status).toBe(303);
    expect(tagIdFrom(saved.location)).toBe(id);
    expect(await getTag(stack.h.orm.em.fork(), s.org.id, id)).toMatchObject({ name: 'Spring 2027', colour: '#00aa00' });
    expect(await auditOf(s.org.id, 'tag.update')).toMatchObject([{ resourceId: id }]);
    // Renamed to another tag's name: 409 in its row, with what was typed; nothing changes.
    const clash = await s.browser.post(`/settings/tags/${id}`, { name: 'support', colour: '#00aa00' });
    expect(clash.status).toBe(409);
    expect((await clash.one(`tr[data-tag-id="${id}"] [data-testid="form-errors"]`)).text).toContain('a tag named "Support" already');
    expect((await clash.one(`tr[data-tag-id="${id}"] [data-testid="tag-name-input"]`)).attrs.value).toBe('support');
    expect(await clash.query(`tr[data-tag-id="${other.id}"] [data-testid="form-errors"]`)).toEqual([]);
    const badEdit = await s.browser.post(`/settings/tags/${id}`, { name: 'Spring 2027', colour: '#12345' });
    expect(badEdit.status).toBe(422);
    expect(await badEdit.query(`tr[data-tag-id="${id}"] [data-testid="tag-field-error"][data-path="colour"]`)).toHaveLength(1);
    expect(await getTag(stack.h.orm.em.fork(), s.org.id, id)).toMatchObject({ name: 'Spring 2027', colour: '#00aa00' });
    // Another organization's tag, or none: 404.
    expect((await s.browser.post('/settings/tags/tag_nope', { name: 'x' })).status).toBe(404);

    // Delete asks first, on a page of its own; the posts that had the tag stay, without it.
    const t0 = await stack.syncClock();
    const postId = await apiPost(
      s.key,
      { content: 'tagged for deletion', channelIds: [s.channel.id], tagIds: [id, other.id] },
      new Date(t0.getTime() + 2 * DAY),
    );
    const rows = await s.browser.get('/settings/tags');
    expect((await rows.one(`tr[data-tag-id="${id}"] [data-testid="tag-delete"]`)).attrs.href).toBe(`/settings/tags/${id}/delete`);
    const confirm = await s.browser.get(`/settings/tags/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect((await confirm.one('[data-testid="tag-delete-confirm"]')).attrs['data-tag-id']).toBe(id);
    expect(await chipsIn(confirm, '[data-testid="tag-delete-confirm"]')).toEqual(['Spring 2027']);
    expect((await confirm.one('[data-testid="tag-delete-keep"]')).attrs.href).toBe(`/settings/tags#${id}`);
    const unconfirmed = await s.browser.post(`/settings/tags/${id}/delete`, {});
    expect(unconfirmed.status).toBe(422);
    expect(await unconfirmed.query('[data-testid="tag-delete-confirm"]')).toHaveLength(1);
    expect(await listTags(stack.h.orm.em.fork(), s.org.id)).toHaveLength(2);
    const gone = await s.browser.post(`/settings/tags/${id}/delete`, { confirm: 'yes' });
    expect(gone.status).toBe(303);
    expect(gone.location).toBe('/settings/tags?notice=deleted');
    expect((await listTags(stack.h.orm.em.fork(), s.org.id)).map((t) => t.id)).toEqual([other.id]);
    expect(await tagsOfPost(s.org.id, postId)).toEqual([other.id]);
    expect(await auditOf(s.org.id, 'tag.delete')).toMatchObject([{ resourceId: id }]);
    expect((await s.browser.get(`/settings/tags/${id}/delete`)).status).toBe(404);
  });
});

describe('tags on posts', () => {
  test('the calendar shows each post’s tags as chips and narrows to one tag’s posts, its live feed too; so do the Drafts and Approvals pages', async () => {
    const s = await setup('editor');
    const em = () => stack.h.orm.em.fork();
    const launch = await createTag(em(), s.org.id, { name: 'Launch', colour: '#ff8800' });
    const support = await createTag(em(), s.org.id, { name: 'Support', colour: '#0055aa' });
    const t0 = await stack.syncClock();
    const at = new Date(Math.ceil((t0.getTime() + 2 * DAY) / 3_600_000) * 3_600_000);
    const one = await apiPost(s.key, { content: 'launch only', channelIds: [s.channel.id], tagIds: [launch.id] }, at);
    const both = await apiPost(s.key, { content: 'launch and support', channelIds: [s.channel.id], tagIds: [support.id, launch.id] }, at);
    const none = await apiPost(s.key, { content: 'no tags', channelIds: [s.channel.id] }, at);
    const day = dayKey(at, 'UTC');

    const all = await s.browser.get(`/calendar?view=week&date=${day}&tz=UTC`);
    expect(all.status).toBe(200);
    const items = async (page: Page) => (await page.query('[data-testid="post-item"]')).map((i) => i.attrs['data-post-id']).sort();
    expect(await items(all)).toEqual([one, both, none].sort());
    expect(await chipsIn(all, `[data-post-id="${one}"]`)).toEqual(['Launch']);
    // In the post's order: id order, the order the tags were made.
    expect(await chipsIn(all, `[data-post-id="${both}"]`)).toEqual(['Launch', 'Support']);
    expect(await chipsIn(all, `[data-post-id="${none}"]`)).toEqual([]);
    expect((await all.query('[data-testid="calendar-tag-select"] option')).map((o) => o.text)).toEqual(['All posts', 'Launch', 'Support']);
    expect(await all.query('[data-testid="calendar-tag-current"]')).toEqual([]);

    const narrowed = await s.browser.get(`/calendar?view=week&date=${day}&tz=UTC&tagId=${launch.id}`);
    expect(await items(narrowed)).toEqual([one, both].sort());
    expect(await chipsIn(narrowed, '[data-testid="calendar-tag-current"]')).toEqual(['Launch']);
    expect((await narrowed.one('[data-testid="calendar-tag-select"] option[selected]')).attrs.value).toBe(launch.id);
    expect((await narrowed.one('[data-testid="calendar-next"]')).attrs.href).toContain(`&tagId=${launch.id}`);
    expect((await narrowed.one('[data-testid="calendar-tag-clear"]')).attrs.href).not.toContain('tagId');
    // The live feed narrows the same way (the posts of other tags are neither added nor announced).
    const feed = (await narrowed.one('[data-testid="calendar"]')).attrs['data-feed']!;
    expect(feed).toContain(`&tagId=${launch.id}`);
    const live = await s.browser.json('GET', feed);
    expect(live.status).toBe(200);
    expect(
      live
        .json()
        .data.map((p: { id: string }) => p.id)
        .sort(),
    ).toEqual([one, both].sort());
    const bySupport = await s.browser.json('GET', feed.replace(launch.id, support.id));
    expect(bySupport.json().data.map((p: { id: string }) => p.id)).toEqual([both]);
    // Another organization's tag, or none: the feed answers 404 (the page keeps what it shows); the page narrows to nothing.
    const stranger = await createTag(em(), (await setup()).org.id, { name: 'Launch' });
    expect((await s.browser.json('GET', feed.replace(launch.id, stranger.id))).status).toBe(404);
    const unknown = await s.browser.get(`/calendar?view=week&date=${day}&tz=UTC&tagId=${stranger.id}`);
    expect(await items(unknown)).toEqual([one, both, none].sort());
    expect((await unknown.one('[data-testid="calendar"]')).attrs['data-feed']).not.toContain('tagId');

    // The Drafts and Approvals pages narrow the same way, by their lists' own filters.
    const draft = async (body: Record<string, unknown>) => (await call(stack.app, 'POST', '/v1/drafts', { key: s.key, body })).body.id;
    const taggedDraft = await draft({ content: 'launch draft', tagIds: [launch.id] });
    const plainDraft = await draft({ content: 'plain draft' });
    await setApprovalSettings(em(), s.org.id, { approval: 'everyone' });
    const waiting = await apiPost(s.key, { content: 'launch, waiting', channelIds: [s.channel.id], tagIds: [launch.id] }, at);
    const plainWaiting = await apiPost(s.key, { content: 'plain, waiting', channelIds: [s.channel.id] }, at);
    for (const [path, item, id, tagged, plain] of [
      ['/drafts', 'draft-item', 'data-draft-id', taggedDraft, plainDraft],
      ['/approvals', 'approval-item', 'data-post-id', waiting, plainWaiting],
    ] as const) {
      const name = path.slice(1);
      const listed = async (page: Page) => (await page.query(`[data-testid="${item}"]`)).map((i) => i.attrs[id]).sort();
      const every = await s.browser.get(path);
      expect({ path, ids: await listed(every) }).toEqual({ path, ids: [tagged, plain].sort() });
      expect((await every.query(`[data-testid="${name}-tag-select"] option`)).map((o) => o.text)).toEqual([
        `All ${name === 'drafts' ? 'drafts' : 'posts'}`,
        'Launch',
        'Support',
      ]);
      expect(await chipsIn(every, `[${id}="${tagged}"]`)).toEqual(['Launch']);
      const one = await s.browser.get(`${path}?tagId=${launch.id}`);
      expect({ path, ids: await listed(one) }).toEqual({ path, ids: [tagged] });
      expect(await chipsIn(one, `[data-testid="${name}-tag-current"]`)).toEqual(['Launch']);
      expect((await one.one(`[data-testid="${name}-tag-clear"]`)).attrs.href).toBe(path);
      expect({ path, ids: await listed(await s.browser.get(`${path}?tagId=${support.id}`)) }).toEqual({ path, ids: [] });
      // Another organization's tag narrows nothing, as on the calendar.
      expect({ path, ids: await listed(await s.browser.get(`${path}?tagId=${stranger.id}`)) }).toEqual({
        path,
        ids: [tagged, plain].sort(),
      });
    }
    // A decision made on the narrowed list comes back to it.
    const decided = await s.browser.get(`/approvals?tagId=${launch.id}`);
    expect((await decided.one('[data-testid="approval-actions"] input[name="next"]')).attrs.value).toBe(`/approvals?tagId=${launch.id}`);

    // An organization without tags has no filter.
    const bare = await setup('viewer');
    expect(await (await bare.browser.get('/calendar')).query('[data-testid="calendar-tag-filter"]')).toEqual([]);
    expect(await (await bare.browser.get('/drafts')).query('[data-testid="drafts-tag-filter"]')).toEqual([]);
  });

  test('a writer puts tags on a post and takes them off through the post page’s form, as PATCH /v1/posts/{id} with tagIds alone', async () => {
    const s = await setup('contributor');
    const em = () => stack.h.orm.em.fork();
    const launch = await createTag(em(), s.org.id, { name: 'Launch' });
    const support = await createTag(em(), s.org.id, { name: 'Support' });
    const t0 = await stack.syncClock();
    const id = await apiPost(s.key, { content: 'to be tagged', channelIds: [s.channel.id] }, new Date(t0.getTime() + 3 * DAY));

    const set = await s.browser.post(`/posts/${id}/tags`, { tagIds: [support.id, launch.id] });
    expect(set.status).toBe(303);
    expect(set.location).toBe(`/posts/${id}?notice=saved#post-tags`);
    expect(await tagsOfPost(s.org.id, id)).toEqual([launch.id, support.id].sort());
    expect(await auditOf(s.org.id, 'post.update')).toMatchObject([{ resourceType: 'post', resourceId: id }]);
    const off = await s.browser.post(`/posts/${id}/tags`, { tagIds: [support.id] });
    expect(off.status).toBe(303);
    expect(await tagsOfPost(s.org.id, id)).toEqual([support.id]);
    // A tag of no organization's, another organization's, a repeat: refused, the post's tags unchanged.
    const stranger = await createTag(em(), (await setup()).org.id, { name: 'Theirs' });
    for (const tagIds of [['tag_nope'], [stranger.id], [launch.id, launch.id]]) {
      const refused = await s.browser.post(`/posts/${id}/tags`, { tagIds });
      expect(refused.status).toBe(422);
      expect((await refused.one('[data-testid="error-message"]')).text).toContain('tagIds');
    }
    expect(await tagsOfPost(s.org.id, id)).toEqual([support.id]);
    const cleared = await s.browser.post(`/posts/${id}/tags`, {});
    expect(cleared.status).toBe(303);
    expect(await tagsOfPost(s.org.id, id)).toEqual([]);
    // Another organization's post: 404.
    expect((await s.browser.post('/posts/post_nope/tags', { tagIds: [launch.id] })).status).toBe(404);
    // A contributor puts tags on posts but does not manage them.
    const page = await s.browser.get('/settings/tags');
    expect(await page.query('[data-testid="tag-create-form"]')).toEqual([]);
    expect((await s.browser.post('/settings/tags', { name: 'Mine' })).status).toBe(403);
  });

  // The post's page is rendered by web/composer.ts, which shows postTagsPanel (web/tags.ts).
  test('a post’s page shows its tags as chips and offers the form of the organization’s tags', async () => {
    const s = await setup('editor');
    const launch = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Launch', colour: '#ff8800' });
    const support = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Support' });
    const t0 = await stack.syncClock();
    const id = await apiPost(
      s.key,
      { content: 'post page tags', channelIds: [s.channel.id], tagIds: [launch.id] },
      new Date(t0.getTime() + 4 * DAY),
    );
    const page = await s.browser.get(`/posts/${id}`);
    expect(page.status).toBe(200);
    expect(await chipsIn(page, '[data-testid="post-tags"]')).toEqual(['Launch', 'Launch', 'Support']);
    expect(await chipsIn(page, '[data-testid="post-tags"] > [data-testid="tag-chips"]')).toEqual(['Launch']);
    const options = await page.query('[data-testid="post-tags-form"] [data-testid="post-tag-option"]');
    expect(options.map((o) => [o.attrs.value, o.attrs.checked !== undefined])).toEqual([
      [launch.id, true],
      [support.id, false],
    ]);
    expect((await page.one('[data-testid="post-tags-form"]')).attrs.action).toBe(`/posts/${id}/tags`);
    await s.browser.post(`/posts/${id}/tags`, { tagIds: [] });
    const untagged = await s.browser.get(`/posts/${id}?notice=saved`);
    expect(await untagged.query('[data-testid="post-tags-none"]')).toHaveLength(1);
  });

  test('a viewer sees the tags and no action; every change is refused and nothing changes', async () => {
    const s = await setup('editor');
    const launch = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Launch' });
    const t0 = await stack.syncClock();
    const id = await apiPost(
      s.key,
      { content: 'viewer sees it', channelIds: [s.channel.id], tagIds: [launch.id] },
      new Date(t0.getTime() + 5 * DAY),
    );
    const viewer = await member(s.org.id, 'viewer');

    const list = await viewer.get('/settings/tags');
    expect(list.status).toBe(200);
    expect(await chipsIn(list, '[data-testid="tag-row"]')).toEqual(['Launch']);
    for (const testId of ['tag-create-form', 'tag-edit-form', 'tag-delete', 'links-settings-link'])
      expect(await list.query(`[data-testid="${testId}"]`)).toEqual([]);
    const post = await viewer.get(`/posts/${id}`);
    expect(await post.query('[data-testid="post-tags-form"]')).toEqual([]);

    const refused = [
      await viewer.post('/settings/tags', { name: 'Sneaky', colour: '#000000' }),
      await viewer.post(`/settings/tags/${launch.id}`, { name: 'Renamed' }),
      await viewer.get(`/settings/tags/${launch.id}/delete`),
      await viewer.post(`/settings/tags/${launch.id}/delete`, { confirm: 'yes' }),
      await viewer.post(`/posts/${id}/tags`, { tagIds: [] }),
      await viewer.get('/settings/links'),
      await viewer.post('/settings/links', { shorten: 'yes' }),
    ];
    expect(refused.map((r) => r.status)).toEqual(refused.map(() => 403));
    expect(refused[0]!.html).toContain('Your role in this organization (viewer) does not allow this (tags.manage).');
    expect((await listTags(stack.h.orm.em.fork(), s.org.id)).map((t) => [t.id, t.name])).toEqual([[launch.id, 'Launch']]);
    expect(await tagsOfPost(s.org.id, id)).toEqual([launch.id]);
    expect((await stack.h.orm.em.fork().findOneOrFail(Organization, { id: s.org.id })).links).toEqual({ shorten: false });
  });
});

describe('tracked links in the web app', () => {
  test('a post’s page lists its short links with their clicks once one is followed; its clicks and the Analytics page’s say where they come from', async () => {
    const s = await setup('editor');
    const launch = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Launch' });
    await stack.syncClock();
    const target = 'https://shop.example.com/spring?ref=blog';
    const id = await apiPost(s.key, {
      content: `Spring sale: ${target}`,
      channelIds: [s.channel.id],
      links: { shorten: true },
      tagIds: [launch.id],
    });
    await stack.settle(id);
    await stack.syncClock();
    const analytics = await call(stack.app, 'GET', `/v1/posts/${id}/analytics`, { key: s.key });
    const [link] = analytics.body.links as { url: string; shortUrl: string }[];
    expect(link!.url).toBe(target);

    const before = await s.browser.get(`/posts/${id}`);
    expect(before.status).toBe(200);
    const row = await before.one('[data-testid="tracked-link-row"]');
    expect(row.attrs).toMatchObject({ 'data-channel-id': s.channel.id, 'data-short-url': link!.shortUrl });
    expect((await before.one('[data-testid="tracked-link-url"]')).text).toBe(target);
    expect((await before.one('[data-testid="tracked-link-short"]')).text).toBe(link!.shortUrl);
    expect((await before.one('[data-testid="tracked-link-clicks"]')).text).toBe('0');

    // Someone follows the short link (an ordinary browser, not a crawler).
    const followed = await stack.app.handle(
      new Request(`http://localhost${new URL(link!.shortUrl).pathname}`, {
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
      }),
    );
    expect(followed.status).toBe(302);
    expect(followed.headers.get('location')).toBe(target);

    const after = await s.browser.get(`/posts/${id}`);
    expect((await after.one('[data-testid="tracked-link-clicks"]')).text).toBe('1');
    // The platform reports no clicks: the post's are its short links', and it says so.
    expect((await after.one('[data-testid="post-clicks"]')).attrs).toMatchObject({ 'data-source': 'service', 'data-clicks': '1' });
    expect((await after.one('[data-testid="post-clicks"]')).text).toBe('clicks 1 (counted on its short links)');

    // The Analytics page narrowed to the post's tag: its top post with the clicks and their source.
    const page = await s.browser.get(`/analytics?tagId=${launch.id}`);
    expect(page.status).toBe(200);
    expect(await chipsIn(page, '[data-testid="analytics-tag-current"]')).toEqual(['Launch']);
    expect((await page.one('[data-testid="analytics-tag"] option[selected]')).attrs.value).toBe(launch.id);
    const top = await page.one(`[data-testid="analytics-top-post"][data-post-id="${id}"] [data-testid="analytics-top-post-clicks"]`);
    expect(top.attrs).toMatchObject({ 'data-source': 'service', 'data-clicks': '1' });
    const otherTag = await createTag(stack.h.orm.em.fork(), s.org.id, { name: 'Other' });
    expect(await (await s.browser.get(`/analytics?tagId=${otherTag.id}`)).query('[data-testid="analytics-top-post"]')).toEqual([]);

    // A published post's tags change too: they are never published.
    expect((await s.browser.post(`/posts/${id}/tags`, { tagIds: [otherTag.id] })).status).toBe(303);
    expect(await tagsOfPost(s.org.id, id)).toEqual([otherTag.id]);
  }, 60_000);

  test('Settings → Tracked links sets the default of the posts made from then on; a campaign without UTM parameters, or too long, is refused', async () => {
    const s = await setup('owner');
    const org = () => stack.h.orm.em.fork().findOneOrFail(Organization, { id: s.org.id });
    const page = await s.browser.get('/settings/links');
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="links-current"]')).attrs['data-shorten']).toBe('false');
    expect((await page.one('[data-testid="links-shorten"]')).attrs.checked).toBeUndefined();
    expect((await page.one('[data-testid="links-campaign"]')).attrs.maxlength).toBe('100');
    expect(await (await s.browser.get('/settings/tags')).query('[data-testid="links-settings-link"]')).toHaveLength(1);

    const saved = await s.browser.post('/settings/links', { shorten: 'yes', utm: 'yes', campaign: 'spring-2026' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/settings/links?notice=saved');
    expect((await org()).links).toEqual({ shorten: true, utm: { campaign: 'spring-2026' } });
    expect(await auditOf(s.org.id, 'settings.update')).toMatchObject([{ resourceType: 'organization', resourceId: s.org.id }]);
    const shown = await s.browser.get(saved.location!);
    expect((await shown.one('[data-testid="notice"]')).text).toBe('Tracked links settings saved.');
    expect((await shown.one('[data-testid="links-current"]')).attrs).toMatchObject({ 'data-shorten': 'true', 'data-utm': 'true' });
    expect((await shown.one('[data-testid="links-shorten"]')).attrs.checked).toBe('');
    expect((await shown.one('[data-testid="links-campaign"]')).attrs.value).toBe('spring-2026');

    // A post that gives no links gets the default, stored with it.
    const t0 = await stack.syncClock();
    const id = await apiPost(
      s.key,
      { content: 'default links https://example.com', channelIds: [s.channel.id] },
      new Date(t0.getTime() + 6 * DAY),
    );
    expect((await call(stack.app, 'GET', `/v1/posts/${id}`, { key: s.key })).body.links).toEqual({
      shorten: true,
      utm: { campaign: 'spring-2026' },
    });

    // A campaign without UTM parameters, or past its length: 422, the form as typed, nothing changes.
    const noUtm = await s.browser.post('/settings/links', { shorten: 'yes', campaign: 'summer' });
    expect(noUtm.status).toBe(422);
    expect((await noUtm.one('[data-testid="form-errors"]')).text).toContain('links.utm.campaign: names the UTM campaign');
    expect((await noUtm.one('[data-testid="links-campaign"]')).attrs.value).toBe('summer');
    expect((await noUtm.one('[data-testid="links-utm"]')).attrs.checked).toBeUndefined();
    const long = await s.browser.post('/settings/links', { shorten: 'yes', utm: 'yes', campaign: 'x'.repeat(101) });
    expect(long.status).toBe(422);
    expect((await long.one('[data-testid="form-errors"]')).text).toContain('links.utm.campaign: must be 1 to 100 characters');
    expect((await org()).links).toEqual({ shorten: true, utm: { campaign: 'spring-2026' } });

    // UTM parameters without a campaign name: the post's first tag names it; then off altogether.
    expect((await s.browser.post('/settings/links', { shorten: 'yes', utm: 'yes', campaign: ' ' })).status).toBe(303);
    expect((await org()).links).toEqual({ shorten: true, utm: {} });
    expect((await s.browser.post('/settings/links', {})).status).toBe(303);
    expect((await org()).links).toEqual({ shorten: false });

    // An editor may not change the organization's settings.
    const editor = await member(s.org.id, 'editor');
    expect((await editor.post('/settings/links', { shorten: 'yes' })).status).toBe(403);
    expect((await org()).links).toEqual({ shorten: false });
  });
});
