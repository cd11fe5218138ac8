// The web app's Feeds pages, end to end: a feed added through the form against a local feed
// server (read when saved: its items are the backlog), the domain's refusals at their fields with
// the form refilled (422, nothing created), pause and resume through the edit form, "Read now"
// reading a new item into a post (the feed poll's workflow on the time-skipping server), delete
// after its confirmation page, the roles: a viewer reads but may change nothing, an editor adds;
// and the list narrowed to one tag's feeds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AuditEvent, Feed, FeedItem, Post, type Role } from '../db/entities/index.ts';
import { feedPostId } from '../domain/feeds/poll.ts';
import { hashKey } from '../domain/feeds/items.ts';
import { createTag } from '../domain/tags.ts';
import { createUser } from '../services/users.ts';
import { feedPollNowWorkflowId } from '../workflows/feed-poll-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { feedItem, startFeedServer, type FeedItemFixture, type FeedServer } from './fakes/feed-server.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, query, signedInUserWithChannel } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
const servers: FeedServer[] = [];

beforeAll(async () => {
  fake = await startFakeMastodon();
  // `web` gives the web app its own options, whose outbound policy lets the feed server on 127.0.0.1 through.
  stack = await startPostStack({ web: {} });
});
afterAll(async () => {
  for (const s of servers) s.stop();
  await stack?.stop();
  await fake?.stop();
});

const item = feedItem;

function feedServer(items: FeedItemFixture[]) {
  const s = startFeedServer(items);
  servers.push(s);
  return s;
}

/** A member (of `role`) of a new organization with a Mastodon channel named "Team News". */
const member = (role: Role = 'owner') => signedInUserWithChannel(stack.app, fake.url, { role });

/** Another member of the organization, signed in. */
async function join(orgId: string, role: Role) {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(stack.h.orm.em.fork(), { organizationId: orgId, email, password: 'long enough', role });
  const browser = new Browser(stack.app);
  expect((await browser.signIn(email, 'long enough')).status).toBe(303);
  return { user, browser };
}

/** What the page's feed form submits as it stands: its fields, the checked boxes and radios, its textareas. */
async function formOn(html: string): Promise<URLSearchParams> {
  const form = new URLSearchParams();
  const scope = '[data-testid="feed-form"]';
  for (const input of await query(html, `${scope} input`)) {
    const { name, value = '', type = 'text', checked } = input.attrs;
    if (!name || ((type === 'checkbox' || type === 'radio') && checked === undefined)) continue;
    form.append(name, value);
  }
  for (const area of await query(html, `${scope} textarea`)) form.append(area.attrs.name!, area.text);
  return form;
}

/** The add form filled in as a person would: the URL, the channel, and what `fields` says. */
async function addForm(b: Browser, url: string, channelId: string, fields: Record<string, string> = {}) {
  const page = await b.get('/feeds');
  expect(page.status).toBe(200);
  const form = await formOn(page.html);
  form.set('url', url);
  form.append('channelIds', channelId);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return form;
}

const feedsOf = (organizationId: string) => stack.h.orm.em.fork().find(Feed, { organization: organizationId });

/** Adds a feed through the form; its id from the redirect. */
async function addFeed(b: Browser, url: string, channelId: string, fields: Record<string, string> = {}) {
  const res = await b.post('/feeds', await addForm(b, url, channelId, fields));
  expect({ status: res.status, errors: (await res.query('[data-testid="form-errors"]')).map((e) => e.text) }).toEqual({
    status: 303,
    errors: [],
  });
  const id = /^\/feeds\/(feed_\w+)\?notice=created$/.exec(res.location ?? '')?.[1];
  expect(id).toBeDefined();
  return id!;
}

/** The field errors of a page, by path. */
async function fieldErrors(html: string) {
  return Object.fromEntries((await query(html, '[data-testid="feed-field-error"]')).map((e) => [e.attrs['data-path'], e.text]));
}

const auditOf = (organizationId: string, action: string) =>
  stack.h.orm.em
    .fork()
    .find(AuditEvent, { organization: organizationId, action }, { orderBy: { occurredAt: 'asc' } })
    .then((events) => events.map((e) => ({ actor: e.actorId, resource: e.resourceId })));

describe('the Feeds page', () => {
  test('a feed added through the form is read at once: it is listed, and its items are its backlog', async () => {
    const { browser, org, user, channel } = await member();
    const server = feedServer([item(2), item(1)]);
    const id = await addFeed(browser, server.url, channel.id, {
      name: 'Company blog',
      template: 'New: {title} {link}',
      'templateByPlatform.MASTODON': '{title} (via {feed}) {link}',
      mode: 'queue',
      include: 'release, launch',
      exclude: 'draft',
      pollMinutes: '30',
    });

    const stored = await stack.h.orm.em.fork().findOneOrFail(Feed, { id });
    expect(stored).toMatchObject({
      organization: org.id,
      name: 'Company blog',
      url: server.url,
      channelIds: [channel.id],
      template: 'New: {title} {link}',
      templateByPlatform: { MASTODON: '{title} (via {feed}) {link}' },
      mode: 'queue',
      filter: { include: ['release', 'launch'], exclude: ['draft'] },
      pollMinutes: 30,
      status: 'active',
      // The web app's, made by the member: its posts are theirs.
      source: 'app',
      apiKeyId: null,
      createdByUserId: user.id,
    });

    const list = await browser.get('/feeds');
    const row = await list.one('[data-testid="feed-row"]');
    expect(row.attrs).toMatchObject({ 'data-feed-id': id, 'data-status': 'active' });
    expect((await list.one('[data-testid="feed-link"]')).text).toBe('Company blog');
    expect((await list.one('[data-testid="feed-url-cell"]')).text).toBe(server.url);
    expect((await list.one('[data-testid="feed-channel-name"]')).text).toContain('Team News');
    expect((await list.one('[data-testid="feed-mode"]')).text).toBe('Into the posting queue');
    expect((await list.one('[data-testid="feed-status"]')).text).toBe('Active');
    expect((await list.one('[data-testid="feed-next-read"] time')).attrs.datetime).toBe(stored.nextPollAt.toISOString());

    const page = await browser.get(`/feeds/${id}?notice=created`);
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="notice"]')).text).toContain('Feed added');
    const items = await page.query('[data-testid="feed-item"]');
    expect(items.map((i) => i.attrs['data-outcome'])).toEqual(['backlog', 'backlog']);
    expect((await page.query('[data-testid="feed-item-link"]')).map((a) => a.text).sort()).toEqual(['Item 1', 'Item 2']);
    // The edit form holds the feed's settings as saved.
    const form = await formOn(page.html);
    expect(Object.fromEntries(form)).toMatchObject({
      url: server.url,
      channelIds: channel.id,
      name: 'Company blog',
      template: 'New: {title} {link}',
      'templateByPlatform.MASTODON': '{title} (via {feed}) {link}',
      mode: 'queue',
      include: 'release, launch',
      exclude: 'draft',
      pollMinutes: '30',
      status: 'active',
    });
    expect(await auditOf(org.id, 'feed.create')).toEqual([{ actor: user.id, resource: id }]);
  });

  test('refusals show at their fields with the form refilled (422), and create nothing', async () => {
    const { browser, org, channel } = await member();
    const server = feedServer([item(1)]);
    const notAFeed = feedServer([]);
    notAFeed.misbehave = { kind: 'html' };

    const cases: { fields: Record<string, string>; url?: string; path: string; message: RegExp }[] = [
      { url: 'ftp://files.example/feed.xml', fields: {}, path: 'url', message: /must be an http or https URL/ },
      { url: notAFeed.url, fields: {}, path: 'url', message: /is not an RSS or Atom feed/ },
      { fields: { template: '{title} {nope}' }, path: 'template', message: /unknown placeholder \{nope\}/ },
      {
        fields: { 'templateByPlatform.MASTODON': 'On Mastodon: {headline}' },
        path: 'templateByPlatform.MASTODON',
        message: /unknown placeholder \{headline\}/,
      },
      { fields: { pollMinutes: '0' }, path: 'pollMinutes', message: /from 1 to 1440/ },
    ];
    for (const c of cases) {
      const form = await addForm(browser, c.url ?? server.url, channel.id, { name: 'Refused one', ...c.fields });
      const res = await browser.post('/feeds', form);
      expect({ case: c, status: res.status }).toEqual({ case: c, status: 422 });
      const errors = await fieldErrors(res.html);
      expect({ case: c, paths: Object.keys(errors) }).toEqual({ case: c, paths: [c.path] });
      expect(errors[c.path]).toMatch(c.message);
      // The form as it was typed.
      const again = await formOn(res.html);
      expect(again.get('url')).toBe(c.url ?? server.url);
      expect(again.get('name')).toBe('Refused one');
      expect(again.getAll('channelIds')).toEqual([channel.id]);
      for (const [k, v] of Object.entries(c.fields)) expect(again.get(k)).toBe(v);
    }
    // No channel chosen: said at the channels.
    const none = await addForm(browser, server.url, channel.id);
    none.delete('channelIds');
    const res = await browser.post('/feeds', none);
    expect(res.status).toBe(422);
    expect(Object.keys(await fieldErrors(res.html))).toEqual(['channelIds']);

    expect(await feedsOf(org.id)).toEqual([]);
    expect(await auditOf(org.id, 'feed.create')).toEqual([]);
  });

  test('pause and resume through the edit form; a paused feed is not read now (409)', async () => {
    const { browser, org, user, channel } = await member();
    const server = feedServer([item(1)]);
    const id = await addFeed(browser, server.url, channel.id, { template: '{title}!' });

    const before = await stack.h.orm.em.fork().findOneOrFail(Feed, { id });
    const form = await formOn((await browser.get(`/feeds/${id}`)).html);
    form.set('status', 'paused');
    const paused = await browser.post(`/feeds/${id}`, form);
    expect(paused.status).toBe(303);
    expect(paused.location).toBe(`/feeds/${id}?notice=saved`);
    expect(await stack.h.orm.em.fork().findOneOrFail(Feed, { id })).toMatchObject({
      status: 'paused',
      pausedReason: null,
      template: '{title}!',
    });
    const page = await browser.get(`/feeds/${id}`);
    expect((await page.one('[data-testid="feed-detail"]')).attrs['data-status']).toBe('paused');
    expect((await page.one('[data-testid="feed-paused-reason"]')).text).toBe('by a member');
    expect((await page.one('[data-testid="feed-status-paused"]')).attrs.checked).toBeDefined();

    const read = await browser.post(`/feeds/${id}/poll`);
    expect(read.status).toBe(409);
    expect((await read.one('[data-testid="form-errors"]')).text).toContain('The feed is paused');

    form.set('status', 'active');
    const resumed = await browser.post(`/feeds/${id}`, form);
    expect(resumed.status).toBe(303);
    const after = await stack.h.orm.em.fork().findOneOrFail(Feed, { id });
    expect(after).toMatchObject({ status: 'active', template: '{title}!', channelIds: [channel.id] });
    // Resumed: read at the next sweep, not a poll interval later.
    expect(after.nextPollAt.getTime()).toBeLessThan(before.nextPollAt.getTime());
    expect((await (await browser.get('/feeds')).one('[data-testid="feed-row"]')).attrs['data-status']).toBe('active');
    expect(await auditOf(org.id, 'feed.update')).toEqual([
      { actor: user.id, resource: id },
      { actor: user.id, resource: id },
    ]);

    // A refused edit shows the error at its field, keeps what was typed, and changes nothing.
    form.set('template', 'Bad {oops}');
    const refused = await browser.post(`/feeds/${id}`, form);
    expect(refused.status).toBe(422);
    expect(Object.keys(await fieldErrors(refused.html))).toEqual(['template']);
    expect((await formOn(refused.html)).get('template')).toBe('Bad {oops}');
    expect((await stack.h.orm.em.fork().findOneOrFail(Feed, { id })).template).toBe('{title}!');
  });

  test('read now: a new item becomes a post, linked from the feed page; a refused one says why', async () => {
    const { browser, org, user, channel } = await member();
    const server = feedServer([item(1)]);
    const id = await addFeed(browser, server.url, channel.id, { template: '{title} {link}' });
    const long = item(3, { title: `Long ${'x'.repeat(600)}` });
    server.items = [long, item(2), item(1)];

    const res = await browser.post(`/feeds/${id}/poll`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/feeds/${id}?notice=polling`);
    await stack.client.workflow.getHandle(feedPollNowWorkflowId(id)).result();

    const postId = feedPostId(id, hashKey('urn:item:2'));
    const post = await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId });
    expect(post).toMatchObject({ organization: org.id, content: 'Item 2 https://blog.example/2', source: 'app' });

    const page = await browser.get(`/feeds/${id}`);
    const items = await page.query('[data-testid="feed-item"]');
    expect(items.map((i) => i.attrs['data-outcome']).sort()).toEqual(['backlog', 'posted', 'refused']);
    const link = await page.one('[data-testid="feed-item-post"]');
    expect(link.attrs).toMatchObject({ href: `/posts/${postId}`, 'data-post-id': postId });
    const refused = await stack.h.orm.em.fork().findOneOrFail(FeedItem, { feed: id, keyHash: hashKey('urn:item:3') });
    expect(refused).toMatchObject({ outcome: 'refused', error: { code: 'validation_failed' } });
    expect((await page.one('[data-testid="feed-item-error"]')).text).toBe(refused.error!.message);
    expect((await page.one('[data-testid="feed-last-read"] time')).attrs.datetime).toBeDefined();
    expect(await auditOf(org.id, 'feed.poll')).toEqual([{ actor: user.id, resource: id }]);
  });

  test('delete asks first, then the feed is gone (its page 404)', async () => {
    const { browser, org, user, channel } = await member();
    const id = await addFeed(browser, feedServer([item(1)]).url, channel.id);

    const confirm = await browser.get(`/feeds/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect((await confirm.one('[data-testid="feed-delete-confirm"]')).attrs['data-feed-id']).toBe(id);
    // Without the confirmation page's button: asked again, nothing deleted.
    const unconfirmed = await browser.post(`/feeds/${id}/delete`);
    expect(unconfirmed.status).toBe(422);
    expect((await stack.h.orm.em.fork().findOneOrFail(Feed, { id })).deletedAt).toBeNull();

    const done = await browser.post(`/feeds/${id}/delete`, { confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/feeds?notice=deleted');
    expect((await stack.h.orm.em.fork().findOneOrFail(Feed, { id })).deletedAt).not.toBeNull();
    const list = await browser.get('/feeds?notice=deleted');
    expect(await list.query('[data-testid="feed-row"]')).toEqual([]);
    expect(await list.query('[data-testid="no-feeds"]')).toHaveLength(1);
    expect((await browser.get(`/feeds/${id}`)).status).toBe(404);
    expect(await auditOf(org.id, 'feed.delete')).toEqual([{ actor: user.id, resource: id }]);
  });

  test('a viewer sees the feeds and their items but no form, and every change is refused (403)', async () => {
    const owner = await member();
    const server = feedServer([item(1)]);
    const id = await addFeed(owner.browser, server.url, owner.channel.id);
    const { browser: viewer } = await join(owner.org.id, 'viewer');

    const list = await viewer.get('/feeds');
    expect(list.status).toBe(200);
    expect((await list.one('[data-testid="feed-row"]')).attrs['data-feed-id']).toBe(id);
    expect(await list.query('[data-testid="feed-form"]')).toEqual([]);
    expect((await list.query('[data-testid="main-nav"] a[data-testid="nav-feeds"]')).map((a) => a.attrs.href)).toEqual(['/feeds']);
    const page = await viewer.get(`/feeds/${id}`);
    expect(page.status).toBe(200);
    expect(await page.query('[data-testid="feed-item"]')).toHaveLength(1);
    expect(await page.query('[data-testid="feed-form"]')).toEqual([]);
    expect(await page.query('[data-testid="feed-poll"]')).toEqual([]);
    expect(await page.query('[data-testid="feed-delete"]')).toEqual([]);

    const edit = await formOn((await owner.browser.get(`/feeds/${id}`)).html);
    edit.set('status', 'paused');
    const attempts = [
      await viewer.post('/feeds', await addForm(owner.browser, server.url, owner.channel.id)),
      await viewer.post(`/feeds/${id}`, edit),
      await viewer.post(`/feeds/${id}/poll`),
      await viewer.post(`/feeds/${id}/delete`, { confirm: 'yes' }),
      await viewer.get(`/feeds/${id}/delete`),
    ];
    expect(attempts.map((a) => a.status)).toEqual([403, 403, 403, 403, 403]);
    const feeds = await feedsOf(owner.org.id);
    expect(feeds.map((f) => ({ id: f.id, status: f.status, deletedAt: f.deletedAt }))).toEqual([{ id, status: 'active', deletedAt: null }]);
    expect(
      await stack.client.workflow
        .getHandle(feedPollNowWorkflowId(id))
        .describe()
        .catch(() => null),
    ).toBeNull();
  });

  test('an editor adds a feed; the list narrows to one tag’s feeds', async () => {
    const owner = await member();
    const { browser: editor, user } = await join(owner.org.id, 'editor');
    const list = await editor.get('/feeds');
    expect(await list.query('[data-testid="feed-form"]')).toHaveLength(1);
    // No tags yet: no filter.
    expect(await list.query('[data-testid="feeds-tag-filter"]')).toEqual([]);
    const server = feedServer([item(1)]);
    const id = await addFeed(editor, server.url, owner.channel.id);
    expect(await stack.h.orm.em.fork().findOneOrFail(Feed, { id })).toMatchObject({ createdByUserId: user.id, source: 'app' });

    const other = await addFeed(owner.browser, server.url, owner.channel.id);
    const tag = await createTag(stack.h.orm.em.fork(), owner.org.id, { name: 'Blog' });
    await stack.h.pool.query('update feeds set tag_ids = $1 where id = $2', [JSON.stringify([tag.id]), id]);
    const rows = async (path: string) =>
      (await (await editor.get(path)).query('[data-testid="feed-row"]')).map((r) => r.attrs['data-feed-id']);
    expect((await rows('/feeds')).sort()).toEqual([id, other].sort());
    expect(await rows(`/feeds?tagId=${tag.id}`)).toEqual([id]);
    const narrowed = await editor.get(`/feeds?tagId=${tag.id}`);
    expect((await narrowed.one('[data-testid="feeds-tag-select"] option[selected]')).attrs.value).toBe(tag.id);
    expect((await narrowed.query(`[data-feed-id="${id}"] [data-testid="tag-chip"]`)).map((c) => c.text)).toEqual(['Blog']);
    // A tag the organization has not narrows nothing.
    expect((await rows('/feeds?tagId=tag_00000000000000000000000000')).sort()).toEqual([id, other].sort());
  });
});
