// Drafts in the web app on the real stack (time-skipping Temporal server, the fake Mastodon): the
// composer's Save as draft keeps everything the form holds, unchecked, and publishes nothing; the
// Drafts page lists them last changed first; a draft opens in the composer, is saved again, and is
// scheduled by the composer's button or the page's (one post by the create path, published once at
// its time; the draft then shows it and no longer changes); delete asks first; a viewer sees no
// action and is refused at every one; the calendar marks drafts on their day and moves them (drag
// and drop's PATCH, the page's date field); text is shown as text everywhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AuditEvent, Post, type Role } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createDraft, getDraft } from '../domain/posts/drafts.ts';
import { POST_LIMITS } from '../domain/posts/limits.ts';
import { getPostForKey } from '../domain/posts/view.ts';
import { zonedParts, zonedToUtc } from '../lib/zoned-time.ts';
import { createUser } from '../services/users.ts';
import { dayKey, formatTime, localInputValue } from '../web/time.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel, makeKey, readyMedia } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, type Page, signedInUser } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ storage: 'disk' });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
});

/** An organization with a Mastodon channel on the fake (a name that needs escaping) and a Telegram one; an editor signed in. */
async function setup() {
  const user = await signedInUser(stack.app, { role: 'editor' });
  const toot = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: user.org.id,
    platform: 'MASTODON',
    name: 'Team <News>',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  const telegram = await makeChannel(user.org.id, 'TELEGRAM', { name: 'Alerts' });
  return { ...user, toot, telegram };
}

/** Another member of the organization with this role, signed in. */
async function member(organizationId: string, role: Role) {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const user = await createUser(stack.h.orm.em.fork(), { organizationId, email, password: PASSWORD, role });
  const browser = new Browser(stack.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  return { user, browser };
}

const draftIdFrom = (location: string | null) => {
  const m = /^\/drafts\/(drf_[0-9a-z]+)\/edit\?notice=draft-saved$/.exec(location ?? '');
  if (!m) throw new Error(`not a saved draft: ${location}`);
  return m[1]!;
};
const postIdFrom = (location: string | null) => {
  const m = /^\/posts\/(post_[0-9a-z]+)\?notice=created$/.exec(location ?? '');
  if (!m) throw new Error(`not a created post: ${location}`);
  return m[1]!;
};
const draftOf = (organizationId: string, id: string) => getDraft(stack.h.orm.em.fork(), organizationId, id, 'all');
const postsOf = (organizationId: string) => stack.h.orm.em.fork().find(Post, { organization: organizationId });
const published = (text: string) => mastodon.statuses.filter((s) => s.text === text);
const minute = (t: number) => new Date(Math.ceil(t / 60_000) * 60_000);
const inRow = (page: Page, id: string, testId: string) => page.query(`[data-draft-id="${id}"] [data-testid="${testId}"]`);
const oneInRow = (page: Page, id: string, testId: string) => page.one(`[data-draft-id="${id}"] [data-testid="${testId}"]`);
const rows = async (page: Page) => (await page.query('[data-testid="draft-item"]')).map((r) => r.attrs['data-draft-id']);

/** A draft saved from the new-post composer; its id. */
async function saved(b: Browser, form: Record<string, string | string[]>) {
  const res = await b.post('/drafts', { tz: 'UTC', when: 'later', publishAt: '', ...form });
  expect(res.status).toBe(303);
  return draftIdFrom(res.location);
}

const HOSTILE = '<img src=x onerror=alert(1)> & <b>bold</b>';

describe('drafts in the web app', () => {
  test('Save as draft keeps everything the form holds, unchecked: nothing is created or published; it opens in the composer and lists on the Drafts page', async () => {
    const s = await setup();
    const t0 = await stack.syncClock();
    const mediaId = await readyMedia(stack.storage!, s.org.id);
    const tz = 'Europe/Berlin';
    const at = minute(t0.getTime() + 2 * 86_400_000);
    const mark = crypto.randomUUID();
    // Longer than Mastodon's 500: a draft is not checked as a post.
    const text = `${HOSTILE} ${mark} ${'x'.repeat(600)}`;

    // The composer offers the button: the same form, sent to /drafts.
    const composer = await s.browser.get('/posts/new');
    expect((await composer.one('[data-testid="composer-save-draft"]')).attrs.formaction).toBe('/drafts');

    const res = await s.browser.post('/drafts', {
      channelIds: [s.toot.id, s.telegram.id],
      content: text,
      text_TELEGRAM: 'Telegram words',
      mediaIds: [mediaId],
      followUps: '1',
      thread_0: 'the second part',
      thread_1: '',
      firstComment: 'a first comment',
      'options.telegram.disableNotification': 'true',
      when: 'later',
      publishAt: localInputValue(at, tz),
      tz,
    });
    expect(res.status).toBe(303);
    const id = draftIdFrom(res.location);
    expect(await draftOf(s.org.id, id)).toMatchObject({
      content: text,
      contentByPlatform: { TELEGRAM: 'Telegram words' },
      mediaIds: [mediaId],
      thread: [{ content: 'the second part', mediaIds: [] }],
      // Telegram takes no thread: the post goes there without it, as a composed post does.
      threadByPlatform: { TELEGRAM: [] },
      firstComment: { content: 'a first comment' },
      options: { telegram: { disableNotification: true } },
      channelIds: [s.toot.id, s.telegram.id],
      intendedAt: at.toISOString(),
      status: 'draft',
      postId: null,
      createdBy: { type: 'member', id: s.user.id },
    });
    expect(await postsOf(s.org.id)).toEqual([]);
    expect(mastodon.statuses.filter((st) => st.text.includes(mark))).toEqual([]);
    expect(await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'draft.create' })).toMatchObject({
      resourceType: 'draft',
      resourceId: id,
    });

    // It opens in the composer as it was saved.
    const edit = await s.browser.get(`/drafts/${id}/edit?notice=draft-saved&tz=${tz}`);
    expect(edit.status).toBe(200);
    expect((await edit.one('[data-testid="notice"]')).text).toBe('Draft saved.');
    expect((await edit.one('[data-testid="nav-drafts"]')).attrs['aria-current']).toBe('page');
    const form = await edit.one('[data-testid="composer-form"]');
    expect(form.attrs).toMatchObject({ 'data-mode': 'draft', 'data-draft-id': id, action: `/drafts/${id}/schedule` });
    expect((await edit.one('[data-testid="composer-save-draft"]')).attrs.formaction).toBe(`/drafts/${id}`);
    expect((await edit.one('[data-testid="composer-content"]')).text).toBe(text);
    expect(edit.html).not.toContain('<img src=x');
    const checked = (await edit.query('[data-testid="channel-option"]')).filter((c) => c.attrs.checked !== undefined);
    expect(checked.map((c) => c.attrs.value).sort()).toEqual([s.toot.id, s.telegram.id].sort());
    expect((await edit.one('[data-testid="platform-text-input-TELEGRAM"]')).text).toBe('Telegram words');
    expect((await edit.one(`[data-testid="media-option"][value="${mediaId}"]`)).attrs.checked).toBe('');
    expect((await edit.query('[data-testid="thread-item-content"]'))[0]!.text).toBe('the second part');
    expect((await edit.one('[data-testid="first-comment"]')).text).toBe('a first comment');
    expect((await edit.one('[data-testid="option-telegram-disableNotification"]')).attrs.checked).toBe('');
    expect((await edit.one('[data-testid="composer-publish-at"]')).attrs.value).toBe(localInputValue(at, tz));
    expect((await edit.one('[data-testid="composer-when-later"]')).attrs.checked).toBe('');

    // The Drafts page: its text (as text), channels, time and status, and what an editor may do.
    const list = await s.browser.get(`/drafts?tz=${tz}`);
    expect(list.status).toBe(200);
    expect((await list.one('[data-testid="nav-drafts"]')).attrs['aria-current']).toBe('page');
    expect(await rows(list)).toEqual([id]);
    expect((await oneInRow(list, id, 'draft-text')).text).toBe(`${text.slice(0, 280)}…`);
    expect(list.html).not.toContain('<img src=x');
    expect(list.html).not.toContain('<b>bold</b>');
    expect((await inRow(list, id, 'platform-badge')).map((b) => b.attrs['aria-label'])).toEqual([
      'Mastodon: Team <News>',
      'Telegram: Alerts',
    ]);
    expect(list.html).not.toContain('Team <News>');
    expect((await list.one(`[data-draft-id="${id}"] [data-testid="draft-intended"] time`)).attrs.datetime).toBe(at.toISOString());
    expect((await oneInRow(list, id, 'draft-status')).attrs['data-status']).toBe('draft');
    expect(await inRow(list, id, 'draft-post-link')).toEqual([]);
    expect((await oneInRow(list, id, 'draft-edit')).attrs.href).toBe(`/drafts/${id}/edit`);
    expect((await oneInRow(list, id, 'draft-schedule-intended')).attrs.value).toBe('intended');
    expect((await oneInRow(list, id, 'draft-schedule-now')).attrs.value).toBe('now');
    expect((await oneInRow(list, id, 'draft-date-input')).attrs.value).toBe(dayKey(at, tz));
    expect((await list.one(`[data-draft-id="${id}"] [data-testid="draft-date-form"] input[name="tz"]`)).attrs.value).toBe(tz);
    expect((await oneInRow(list, id, 'draft-delete')).attrs.href).toBe(`/drafts/${id}/delete`);
    expect((await list.one(`[data-draft-id="${id}"] [data-testid="draft-schedule-form"] input[name="_csrf"]`)).attrs.value).toBe(
      s.browser.csrfToken,
    );
  });

  test('saved again from the composer: the form replaces the draft (emptied fields and the time go), fields only the API sets stay; shapes the API refuses are refused', async () => {
    const s = await setup();
    const { key } = await makeKey(s.org.id);
    const made = await call(stack.app, 'POST', '/v1/drafts', {
      key,
      body: {
        content: 'first idea',
        channelIds: [s.toot.id],
        thread: [{ content: 'more' }],
        threadByPlatform: { MASTODON: [{ content: 'its own reply' }] },
        firstComment: { content: 'a comment' },
        intendedAt: '2031-01-01T09:00:00Z',
      },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    // The composer names the per-platform thread set through the API, as it does a post's.
    const edit = await s.browser.get(`/drafts/${id}/edit`);
    expect((await edit.query('[data-testid="follow-up-target"][data-follow-platform="MASTODON"]')).map((t) => t.text).join('')).toContain(
      'its own thread of 1 reply',
    );

    const res = await s.browser.post(`/drafts/${id}`, {
      channelIds: [s.toot.id, s.telegram.id],
      content: 'a better idea',
      followUps: '1',
      thread_0: '',
      firstComment: '',
      when: 'later',
      publishAt: '',
      tz: 'UTC',
    });
    expect(res.status).toBe(303);
    expect(draftIdFrom(res.location)).toBe(id);
    const draft = await draftOf(s.org.id, id);
    expect(draft).toMatchObject({
      content: 'a better idea',
      channelIds: [s.toot.id, s.telegram.id],
      intendedAt: null,
      threadByPlatform: { MASTODON: [{ content: 'its own reply' }] },
    });
    expect(draft.thread).toBeUndefined();
    expect(draft.firstComment).toBeUndefined();
    // What the web app keeps reads back through the API.
    const api = await call(stack.app, 'GET', `/v1/drafts/${id}`, { key });
    expect(api.status).toBe(200);
    expect(api.body.content).toBe('a better idea');
    expect(await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'draft.update' })).toMatchObject({
      resourceId: id,
    });

    // Past the content schema's bounds: the form again with why, the draft as it was.
    const long = 'y'.repeat(POST_LIMITS.textChars + 1);
    const refused = await s.browser.post(`/drafts/${id}`, { channelIds: [s.toot.id], content: long, publishAt: '', tz: 'UTC' });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('content');
    expect((await refused.one('[data-testid="composer-form"]')).attrs['data-draft-id']).toBe(id);
    expect((await draftOf(s.org.id, id)).content).toBe('a better idea');
    // A time that cannot be read is refused too, at its field.
    const badTime = await s.browser.post(`/drafts/${id}`, {
      channelIds: [s.toot.id],
      content: 'x',
      publishAt: '2031-02-30T09:00',
      tz: 'UTC',
    });
    expect(badTime.status).toBe(422);
    expect((await badTime.one('[data-testid="form-errors"]')).text).toContain('publishAt');
    // And a new draft refused shows the new-post composer again with what was typed.
    const refusedNew = await s.browser.post('/drafts', { content: long, publishAt: '', tz: 'UTC' });
    expect(refusedNew.status).toBe(422);
    expect((await refusedNew.one('[data-testid="composer-form"]')).attrs.action).toBe('/posts');
  });

  test('scheduled from the composer: the form kept in it, one post made by the create path (source app), published once at its time; the draft then shows its post and no longer changes', async () => {
    const s = await setup();
    const t0 = await stack.syncClock();
    const id = await saved(s.browser, { channelIds: [s.toot.id], content: 'rough words' });
    const text = `Launch day ${crypto.randomUUID()}`;
    const at = minute(t0.getTime() + 86_400_000);

    const res = await s.browser.post(`/drafts/${id}/schedule`, {
      composer: '1',
      channelIds: [s.toot.id],
      content: text,
      followUps: '1',
      firstComment: '',
      when: 'later',
      publishAt: localInputValue(at, 'UTC'),
      tz: 'UTC',
    });
    expect(res.status).toBe(303);
    const postId = postIdFrom(res.location);
    const posts = await postsOf(s.org.id);
    expect(posts.map((p) => [p.id, p.source, p.apiKeyId, p.status, p.content])).toEqual([[postId, 'app', null, 'scheduled', text]]);
    expect(posts[0]!.scheduledAt.toISOString()).toBe(at.toISOString());
    expect(await draftOf(s.org.id, id)).toMatchObject({ status: 'scheduled', postId, content: text, intendedAt: at.toISOString() });
    expect((await (await s.browser.get(res.location!)).one('[data-testid="notice"]')).text).toBe('Post created.');
    const audit = await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'draft.schedule' });
    expect(audit).toMatchObject({ resourceType: 'post', resourceId: postId, details: { draftId: id } });

    // The Drafts page: scheduled, with its post; delete is all that is left to do.
    const list = await s.browser.get('/drafts');
    expect((await oneInRow(list, id, 'draft-status')).attrs['data-status']).toBe('scheduled');
    expect((await oneInRow(list, id, 'draft-post-link')).attrs.href).toBe(`/posts/${postId}`);
    for (const gone of ['draft-edit', 'draft-schedule-form', 'draft-date-form']) expect(await inRow(list, id, gone)).toEqual([]);
    expect(await inRow(list, id, 'draft-delete')).toHaveLength(1);

    expect(published(text)).toEqual([]);
    await stack.env.sleep('1 day');
    await stack.settle(postId);
    expect(published(text)).toHaveLength(1);

    // It no longer changes, nor makes a second post.
    const again = await s.browser.post(`/drafts/${id}/schedule`, { at: 'now' });
    expect(again.status).toBe(409);
    expect((await again.one('[data-testid="draft-post-link"]')).attrs.href).toBe(`/posts/${postId}`);
    expect((await s.browser.post(`/drafts/${id}`, { content: 'changed', publishAt: '', tz: 'UTC' })).status).toBe(409);
    expect((await s.browser.get(`/drafts/${id}/edit`)).status).toBe(409);
    expect((await s.browser.post(`/drafts/${id}/intended`, { date: '2031-01-01' })).status).toBe(409);
    const drag = await s.browser.json('PATCH', `/web/api/drafts/${id}`, { date: '2031-01-01' });
    expect(drag.status).toBe(409);
    expect(drag.json().error.code).toBe('conflict');
    expect(await postsOf(s.org.id)).toHaveLength(1);
    expect(published(text)).toHaveLength(1);
    expect((await draftOf(s.org.id, id)).content).toBe(text);
  });

  test('from the Drafts page: Schedule for its intended time, Publish now; without a channel it cannot be, and says why', async () => {
    const s = await setup();
    const t0 = await stack.syncClock();
    const later = minute(t0.getTime() + 2 * 3_600_000);
    const laterText = `For later ${crypto.randomUUID()}`;
    const nowText = `For now ${crypto.randomUUID()}`;
    const forLater = await saved(s.browser, { channelIds: [s.toot.id], content: laterText, publishAt: localInputValue(later, 'UTC') });
    const forNow = await saved(s.browser, { channelIds: [s.toot.id], content: nowText, publishAt: localInputValue(later, 'UTC') });
    const noChannel = await saved(s.browser, { content: 'nowhere yet' });

    const list = await s.browser.get('/drafts');
    // Last changed first.
    expect(await rows(list)).toEqual([noChannel, forNow, forLater]);
    expect((await oneInRow(list, noChannel, 'draft-schedule-now')).attrs.disabled).toBe('');
    expect((await oneInRow(list, noChannel, 'draft-needs-channel')).text).toContain('Choose its channels first');
    expect(await inRow(list, noChannel, 'draft-schedule-intended')).toEqual([]);

    const scheduled = await s.browser.post(`/drafts/${forLater}/schedule`, { at: 'intended' });
    expect(scheduled.status).toBe(303);
    const laterPost = postIdFrom(scheduled.location);
    const laterRow = await stack.h.orm.em.fork().findOneOrFail(Post, { id: laterPost });
    expect(laterRow.scheduledAt.toISOString()).toBe(later.toISOString());
    expect(laterRow.content).toBe(laterText);

    const now = await s.browser.post(`/drafts/${forNow}/schedule`, { at: 'now' });
    expect(now.status).toBe(303);
    const nowPost = postIdFrom(now.location);
    await stack.settle(nowPost);
    expect(published(nowText)).toHaveLength(1);
    expect(published(laterText)).toEqual([]);
    expect(await draftOf(s.org.id, forNow)).toMatchObject({ status: 'scheduled', postId: nowPost });

    // No channel: the draft's composer with why, nothing made.
    const refused = await s.browser.post(`/drafts/${noChannel}/schedule`, { at: 'now' });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('channelIds: choose at least one channel');
    expect((await refused.one('[data-testid="composer-form"]')).attrs['data-draft-id']).toBe(noChannel);
    expect((await draftOf(s.org.id, noChannel)).status).toBe('draft');
    expect(await postsOf(s.org.id)).toHaveLength(2);
  });

  test('a contributor’s draft scheduled waits for approval, as the composer’s posts do', async () => {
    const s = await setup();
    const contributor = await member(s.org.id, 'contributor');
    await stack.syncClock();
    const id = await saved(contributor.browser, { channelIds: [s.toot.id], content: `Needs a yes ${crypto.randomUUID()}` });
    const res = await contributor.browser.post(`/drafts/${id}/schedule`, { at: 'now' });
    expect(res.status).toBe(303);
    const post = await getPostForKey(stack.h.orm.em.fork(), s.org.id, postIdFrom(res.location), 'all');
    expect(post.approval?.status).toBe('pending');
    expect(await draftOf(s.org.id, id)).toMatchObject({ status: 'scheduled', postId: post.id });
    expect((await draftOf(s.org.id, id)).createdBy).toMatchObject({ type: 'member', id: contributor.user.id });
  });

  test('delete asks on a page of its own; the draft goes, and a scheduled draft’s post stays', async () => {
    const s = await setup();
    await stack.syncClock();
    const id = await saved(s.browser, { content: HOSTILE });
    const ask = await s.browser.get(`/drafts/${id}/delete`);
    expect(ask.status).toBe(200);
    expect((await ask.one('[data-testid="draft-delete-excerpt"]')).text).toBe(HOSTILE);
    expect(ask.html).not.toContain('<img src=x');
    expect((await ask.one('[data-testid="draft-delete-form"]')).attrs.action).toBe(`/drafts/${id}/delete`);

    // Without the confirmation's button nothing goes.
    const unconfirmed = await s.browser.post(`/drafts/${id}/delete`, {});
    expect(unconfirmed.status).toBe(422);
    expect((await draftOf(s.org.id, id)).id).toBe(id);
    const gone = await s.browser.post(`/drafts/${id}/delete`, { confirm: 'yes' });
    expect(gone.status).toBe(303);
    expect(gone.location).toBe('/drafts?notice=deleted');
    expect((await (await s.browser.get(gone.location!)).one('[data-testid="notice"]')).text).toBe('Draft deleted.');
    expect(await draftOf(s.org.id, id).catch((e) => e.code)).toBe('not_found');
    expect((await s.browser.get(`/drafts/${id}/delete`)).status).toBe(404);
    expect(await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'draft.delete' })).toMatchObject({
      resourceId: id,
    });

    const text = `Stays ${crypto.randomUUID()}`;
    const done = await saved(s.browser, { channelIds: [s.toot.id], content: text });
    const postId = postIdFrom((await s.browser.post(`/drafts/${done}/schedule`, { at: 'now' })).location);
    expect((await (await s.browser.get(`/drafts/${done}/delete`)).one('[data-testid="draft-delete-explain"]')).text).toContain(
      'The post it became stays',
    );
    expect((await s.browser.post(`/drafts/${done}/delete`, { confirm: 'yes' })).status).toBe(303);
    expect((await s.browser.get(`/posts/${postId}`)).status).toBe(200);
  });

  test('a viewer sees the drafts without any action, and every change they send is refused, changing nothing', async () => {
    const s = await setup();
    const t0 = await stack.syncClock();
    const at = minute(t0.getTime() + 86_400_000);
    const id = await saved(s.browser, { channelIds: [s.toot.id], content: 'look, do not touch', publishAt: localInputValue(at, 'UTC') });
    const before = await draftOf(s.org.id, id);
    const viewer = await member(s.org.id, 'viewer');

    const list = await viewer.browser.get('/drafts');
    expect(list.status).toBe(200);
    expect(await rows(list)).toEqual([id]);
    expect((await oneInRow(list, id, 'draft-text')).text).toBe('look, do not touch');
    for (const action of ['draft-edit', 'draft-schedule-form', 'draft-schedule-now', 'draft-date-form', 'draft-delete'])
      expect(await list.query(`[data-testid="${action}"]`)).toEqual([]);
    expect(await list.query('[data-testid="drafts-compose"]')).toEqual([]);
    // On the calendar: marked, but neither draggable nor a link to the composer.
    const calendar = await viewer.browser.get(`/calendar?date=${dayKey(at, 'UTC')}`);
    const mark = await calendar.one(`[data-testid="calendar-draft"][data-draft-id="${id}"]`);
    expect(mark.attrs.draggable).toBeUndefined();
    expect((await calendar.one(`[data-draft-id="${id}"] [data-testid="calendar-draft-link"]`)).attrs.href).toBe(`/drafts#draft-${id}`);

    const b = viewer.browser;
    const refusals = [
      await b.post('/drafts', { content: 'sneaky', publishAt: '', tz: 'UTC' }),
      await b.post(`/drafts/${id}`, { channelIds: [s.toot.id], content: 'changed', publishAt: '', tz: 'UTC' }),
      await b.post(`/drafts/${id}/schedule`, { at: 'now' }),
      await b.post(`/drafts/${id}/intended`, { date: '2031-01-01' }),
      await b.post(`/drafts/${id}/delete`, { confirm: 'yes' }),
      await b.get(`/drafts/${id}/edit`),
      await b.get(`/drafts/${id}/delete`),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect(refusals[0]!.html).toContain('does not allow this (posts.write)');
    const drag = await b.json('PATCH', `/web/api/drafts/${id}`, { date: '2031-01-01' });
    expect(drag.status).toBe(403);
    expect(drag.json().error.code).toBe('forbidden_role');
    expect(await draftOf(s.org.id, id)).toEqual(before);
    expect(await postsOf(s.org.id)).toEqual([]);
    expect(await rows(await s.browser.get('/drafts'))).toEqual([id]);
  });

  test('the calendar marks a draft on the day it is meant for (not a scheduled one); dragged to a day (PATCH) or given one on the Drafts page, it keeps its time of day', async () => {
    const s = await setup();
    const t0 = await stack.syncClock();
    const tz = 'America/New_York';
    const start = zonedParts(new Date(t0.getTime() + 3 * 86_400_000), tz);
    const at = zonedToUtc({ ...start, hour: 14, minute: 30, second: 0 }, tz);
    const day = dayKey(at, tz);
    const text = `On the calendar ${HOSTILE}`;
    const id = await saved(s.browser, { channelIds: [s.toot.id], content: text, publishAt: localInputValue(at, tz), tz });
    const timeless = await saved(s.browser, { content: 'no day yet' });
    const done = await saved(s.browser, {
      channelIds: [s.toot.id],
      content: `scheduled ${crypto.randomUUID()}`,
      publishAt: localInputValue(at, tz),
      tz,
    });
    expect((await s.browser.post(`/drafts/${done}/schedule`, { at: 'intended' })).status).toBe(303);

    for (const view of ['month', 'week']) {
      const page = await s.browser.get(`/calendar?view=${view}&date=${day}&tz=${tz}`);
      const marked = await page.query(`[data-testid="day-${day}"] [data-testid="calendar-draft"]`);
      expect(marked.map((m) => m.attrs['data-draft-id'])).toEqual([id]);
      expect(marked[0]!.attrs).toMatchObject({ draggable: 'true', 'data-intended-at': at.toISOString() });
      expect((await page.one(`[data-draft-id="${id}"] [data-testid="calendar-draft-time"]`)).text).toBe('14:30');
      expect((await page.one(`[data-draft-id="${id}"] [data-testid="calendar-draft-mark"]`)).text).toBe('✎ Draft');
      expect((await page.one(`[data-draft-id="${id}"] [data-testid="calendar-draft-excerpt"]`)).text).toBe(text);
      expect((await page.one(`[data-draft-id="${id}"] [data-testid="calendar-draft-link"]`)).attrs.href).toBe(`/drafts/${id}/edit`);
      expect(page.html).not.toContain('<img src=x');
      // The scheduled draft shows as its post, not as a draft.
      expect(await page.query(`[data-draft-id="${done}"]`)).toEqual([]);
      // The draft without a time waits beside the calendar, to be dragged onto a day.
      expect(
        (await page.query('[data-testid="calendar-unplaced-drafts"] [data-testid="calendar-draft"]')).map((m) => m.attrs['data-draft-id']),
      ).toEqual([timeless]);
    }

    // Dropped three days later: the same time of day there.
    const target = dayKey(new Date(at.getTime() + 3 * 86_400_000), tz);
    const moved = await s.browser.json('PATCH', `/web/api/drafts/${id}?tz=${encodeURIComponent(tz)}`, { date: target });
    expect(moved.status).toBe(200);
    const expected = zonedToUtc({ ...zonedParts(new Date(at.getTime() + 3 * 86_400_000), tz), hour: 14, minute: 30, second: 0 }, tz);
    expect(moved.json()).toMatchObject({ id, intendedAt: expected.toISOString() });
    expect((await draftOf(s.org.id, id)).intendedAt).toBe(expected.toISOString());
    const after = await s.browser.get(`/calendar?view=month&date=${target}&tz=${tz}`);
    expect(await after.query(`[data-testid="day-${day}"] [data-testid="calendar-draft"]`)).toEqual([]);
    expect(
      (await after.query(`[data-testid="day-${target}"] [data-testid="calendar-draft"]`)).map((m) => m.attrs['data-draft-id']),
    ).toEqual([id]);
    expect(
      await stack.h.orm.em.fork().findOne(AuditEvent, { organization: s.org.id, action: 'draft.update', resourceId: id }),
    ).not.toBeNull();

    // A draft without a time gets 09:00 on its day.
    const nine = await s.browser.json('PATCH', `/web/api/drafts/${timeless}?tz=${encodeURIComponent(tz)}`, { date: target });
    expect(nine.json().intendedAt).toBe(zonedToUtc({ ...zonedParts(expected, tz), hour: 9, minute: 0, second: 0 }, tz).toISOString());
    expect(formatTime(new Date(nine.json().intendedAt), tz)).toBe('09:00');
    // Refused: a date that is none, and a request without the session's token.
    expect((await s.browser.json('PATCH', `/web/api/drafts/${id}`, { date: '2031-02-30' })).status).toBe(422);
    expect((await s.browser.json('PATCH', `/web/api/drafts/${id}`, { date: target }, { csrf: false })).status).toBe(403);

    // The Drafts page's date field, without a script: the same move.
    const fallback = dayKey(new Date(at.getTime() + 5 * 86_400_000), tz);
    // In the zone the page showed the day in (its hidden field), not the person's (UTC).
    const set = await s.browser.post(`/drafts/${id}/intended`, { date: fallback, tz });
    expect(set.status).toBe(303);
    expect(set.location).toBe(`/drafts?notice=day-set#draft-${id}`);
    const there = zonedToUtc({ ...zonedParts(new Date(at.getTime() + 5 * 86_400_000), tz), hour: 14, minute: 30, second: 0 }, tz);
    expect((await draftOf(s.org.id, id)).intendedAt).toBe(there.toISOString());
    expect((await s.browser.post(`/drafts/${id}/intended`, { date: 'someday' })).status).toBe(422);
    expect((await s.browser.post(`/drafts/${id}/intended`, { _csrf: 'forged', date: fallback })).status).toBe(403);
    // Emptied: no intended time.
    const cleared = await s.browser.post(`/drafts/${id}/intended`, { date: '' });
    expect(cleared.location).toBe(`/drafts?notice=time-cleared#draft-${id}`);
    expect((await draftOf(s.org.id, id)).intendedAt).toBeNull();
  });

  test('another organization’s draft is not found at any of the routes', async () => {
    const s = await setup();
    const other = await setup();
    const theirs = await createDraft(
      stack.h.orm.em.fork(),
      {
        organizationId: other.org.id,
        keyChannels: 'all',
        actor: { type: 'member', id: other.user.id, name: other.email },
        now: new Date(),
      },
      { content: 'theirs' },
    );
    const b = s.browser;
    const answers = [
      await b.get(`/drafts/${theirs.id}/edit`),
      await b.post(`/drafts/${theirs.id}`, { content: 'mine now', publishAt: '', tz: 'UTC' }),
      await b.post(`/drafts/${theirs.id}/schedule`, { at: 'now' }),
      await b.post(`/drafts/${theirs.id}/intended`, { date: '2031-01-01' }),
      await b.get(`/drafts/${theirs.id}/delete`),
      await b.post(`/drafts/${theirs.id}/delete`, { confirm: 'yes' }),
      await b.json('PATCH', `/web/api/drafts/${theirs.id}`, { date: '2031-01-01' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(await draftOf(other.org.id, theirs.id)).toMatchObject({ content: 'theirs', intendedAt: null });
    expect(await rows(await b.get('/drafts'))).toEqual([]);
  });
});
