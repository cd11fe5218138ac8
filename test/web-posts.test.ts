// The calendar, the composer and the media library of the web application, end to end: the
// browser's forms and JSON calls → the same services as the API → the post workflow on the
// time-skipping Temporal server → the Mastodon connector against its local fake.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { MediaItem, Post, PostChannel } from '../db/entities/index.ts';
import { addChannel, setChannelStatus } from '../domain/channels.ts';
import { postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import { dayKey, formatTime, localInputValue } from '../web/time.ts';
import { zonedParts, zonedToUtc } from '../lib/zoned-time.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel, makeKey, readyMedia } from './harness/fixtures.ts';
import { PostOptions, type PlatformOptions } from '../platforms/options.ts';
import { PostContent } from '../domain/posts/content.ts';
import { OPTION_FIELDS, optionsWithoutFields } from '../web/option-input.ts';
import { optionFields } from '../web/option-fields.ts';
import { boundsOf, recordValues, schemaAt } from '../lib/schema-words.ts';
import type { IChannel } from '../db/entities/index.ts';
import type { MediaView } from '../domain/media.ts';
import { startPostStack } from './harness/post-stack.ts';
import { query, signedInUser, type Browser } from './harness/web-browser.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let stack: Stack;
let fake: FakeMastodon;
let png: Buffer;

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
  fake = await startFakeMastodon();
  png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c03030' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

async function setup(tokens = ['good-token']) {
  const user = await signedInUser(stack.app);
  const { key } = await makeKey(user.org.id);
  const channels = [];
  for (const [i, token] of tokens.entries()) {
    channels.push(
      await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: user.org.id,
        platform: 'MASTODON',
        name: `Mastodon ${i}`,
        credentials: { instanceUrl: fake.url, accessToken: token },
      }),
    );
  }
  return { ...user, key, channels };
}

/** The composer's form, as the browser sends it. */
async function compose(
  b: Browser,
  f: { channelIds: string[]; content: string; when?: 'now' | 'later'; at?: Date; tz?: string; extra?: Record<string, string | string[]> },
) {
  const tz = f.tz ?? 'UTC';
  return b.post('/posts', {
    channelIds: f.channelIds,
    content: f.content,
    when: f.when ?? 'later',
    publishAt: f.at ? localInputValue(f.at, tz) : '',
    tz,
    ...f.extra,
  });
}

const postIdFrom = (location: string | null) => /^\/posts\/(post_[0-9a-z]+)\?notice=created$/.exec(location ?? '')![1]!;
const minute = (t: number) => new Date(Math.ceil(t / 60_000) * 60_000);
const text = (label: string) => `${label} ${crypto.randomUUID()}`;

describe('calendar', () => {
  test("an API post and an app post (source app) appear with time, channel, excerpt and status, in the viewer's zone", async () => {
    const { browser, key, channels } = await setup();
    const t0 = await stack.syncClock();
    const tz = 'Europe/Berlin';
    // 10:00 and 11:00 in the viewer's zone two days ahead: both on one local day, whatever the
    // time of day the test runs (a run at 23:00 Berlin put the second post on the next day).
    const inTwoDays = zonedParts(new Date(t0.getTime() + 2 * 86_400_000), tz);
    const apiAt = zonedToUtc({ ...inTwoDays, hour: 10, minute: 0, second: 0 }, tz);
    const appAt = new Date(apiAt.getTime() + 3600_000);
    const apiText = text('from the API');
    const api = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: apiText, channelIds: [channels[0]!.id], publishAt: apiAt.toISOString() },
    });
    expect(api.status).toBe(201);
    const appText = text('from the app <b>bold</b>');
    const created = await compose(browser, { channelIds: [channels[0]!.id], content: appText, at: appAt, tz });
    expect(created.status).toBe(303);
    const appId = postIdFrom(created.location);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: appId });
    expect(row).toMatchObject({ source: 'app', apiKeyId: null, status: 'scheduled', content: appText });
    expect(row.scheduledAt.toISOString()).toBe(appAt.toISOString());

    for (const view of ['month', 'week']) {
      const page = await browser.get(`/calendar?view=${view}&date=${dayKey(apiAt, tz)}&tz=${tz}`);
      expect(page.status).toBe(200);
      expect(await page.query(`[data-testid="calendar-${view}"]`)).toHaveLength(1);
      const items = await page.query('[data-testid="post-item"]');
      expect(items.map((i) => [i.attrs['data-post-id'], i.attrs['data-source'], i.attrs['data-status']])).toEqual([
        [api.body.id, 'api', 'scheduled'],
        [appId, 'app', 'scheduled'],
      ]);
      const day = `[data-testid="day-${dayKey(apiAt, tz)}"]`;
      expect(await page.query(`${day} [data-testid="post-item"]`)).toHaveLength(2);
      const times = await page.query('[data-testid="post-time"]');
      expect(times.map((t) => t.text)).toEqual([formatTime(apiAt, tz), formatTime(appAt, tz)]);
      const statuses = await page.query('[data-testid="post-status"]');
      expect(statuses.map((s) => s.text)).toEqual(['Scheduled', 'Scheduled']);
      const sources = await page.query('[data-testid="post-source"]');
      expect(sources.map((s) => s.text)).toEqual(['API', 'App']);
      const excerpt = await page.one(`[data-post-id="${appId}"] [data-testid="post-excerpt"]`);
      expect(excerpt.text).toBe(appText);
      expect(page.html).not.toContain('<b>bold</b>');
      const badge = await page.one(`[data-post-id="${appId}"] [data-testid="platform-badge"]`);
      expect(badge.attrs['aria-label']).toBe('Mastodon: Mastodon 0');
      expect(badge.attrs.role).toBe('img');
      // Scheduled posts can be dragged.
      expect(items[0]!.attrs.draggable).toBe('true');
    }
    // The API lists the app's post too.
    const listed = await call(stack.app, 'GET', '/v1/posts', { key });
    expect(listed.body.data.map((p: { id: string; source: string }) => [p.id, p.source])).toEqual([
      [appId, 'app'],
      [api.body.id, 'api'],
    ]);
  });

  test("the live feed under the session: the period's posts with per-channel status; a failed post shows its error", async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    const created = await compose(browser, { channelIds: [channels[0]!.id], content: text('will fail'), when: 'now' });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    const from = new Date(t0.getTime() - 86_400_000).toISOString();
    const to = new Date(t0.getTime() + 86_400_000).toISOString();
    const before = await browser.get(`/web/api/posts?from=${from}&to=${to}`);
    expect(before.status).toBe(200);
    expect(before.json().data.map((p: { id: string }) => p.id)).toEqual([id]);
    await stack.settle(id);
    const feed = (await browser.get(`/web/api/posts?from=${from}&to=${to}`)).json();
    expect(feed.data[0]).toMatchObject({ id, status: 'failed', source: 'app' });
    expect(feed.data[0].channels[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('character limit') });

    const page = await browser.get(`/calendar?date=${dayKey(t0, 'UTC')}&tz=UTC`);
    const status = await page.one(`[data-post-id="${id}"] [data-testid="post-status"]`);
    expect(status.text).toBe('Failed');
    expect(status.attrs.title).toContain('character limit');
    const details = await page.one(`[data-post-id="${id}"] [data-testid="post-error"]`);
    expect(details.attrs.hidden).toBeUndefined();
    expect(details.text).toContain('Mastodon (Mastodon 0): ');
    expect(details.text).toContain('character limit');
    // A failed post is not draggable, and the feed URL the page polls is on the calendar.
    expect((await page.one(`[data-testid="post-item"][data-post-id="${id}"]`)).attrs.draggable).toBeUndefined();
    expect((await page.one('[data-testid="calendar"]')).attrs['data-feed']).toStartWith('/web/api/posts?from=');
    expect(page.html).toContain('/static/calendar.js?v=');
  });
});

describe('composer', () => {
  test('publish now: the post goes out on the Mastodon fake; its page shows the outcome', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    const content = text('hello from the composer');
    const created = await compose(browser, { channelIds: [channels[0]!.id], content, when: 'now' });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    const page = await browser.get(created.location!);
    expect((await page.one('[data-testid="notice"]')).text).toBe('Post created.');
    expect((await page.one('[data-testid="post-source"]')).text).toBe('the app');
    await stack.settle(id);
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(1);
    const after = await browser.get(`/posts/${id}`);
    expect((await after.one('[data-testid="post-detail"] h1 [data-testid="post-status"]')).text).toBe('Published');
    const link = await after.one('[data-testid="post-channel-url"]');
    expect(link.attrs.href).toStartWith(`${fake.url}/@user/`);
    expect(await after.query('[data-testid="post-edit"]')).toHaveLength(0);
    const json = (await browser.get(`/web/api/posts/${id}`)).json();
    expect(json).toMatchObject({ id, status: 'published', source: 'app' });
  });

  test("character counts: per channel, as its platform counts (X weighs emoji 2), against each channel's maxChars; too long → 422 with the form kept", async () => {
    const { browser, org, channels } = await setup();
    const xChannel = await makeChannel(org.id, 'X', { name: 'Our X' });
    const form = await browser.get('/posts/new');
    const counts = await form.query('[data-testid="char-count"]');
    expect(
      counts.map((c) => [c.attrs['data-channel-id'], c.attrs['data-platform'], c.attrs['data-max-chars'], c.attrs['data-count']]),
    ).toEqual([
      [channels[0]!.id, 'MASTODON', '500', '0'],
      [xChannel.id, 'X', '280', '0'],
    ]);
    const options = await form.query('[data-testid="channel-option"]');
    expect(options.map((o) => o.attrs['data-max-chars'])).toEqual(['500', '280']);
    expect(await form.query('[data-testid="platform-text-input-X"]')).toHaveLength(1);
    expect(form.html).toContain('/static/composer.js?v=');

    const family = '👨‍👩‍👧'; // one grapheme, 8 UTF-16 code units
    const long = family.repeat(300);
    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const refused = await compose(browser, { channelIds: [channels[0]!.id, xChannel.id], content: long, at });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain(
      'is 600 characters (X counts most CJK characters and emoji as 2 and every URL as 23); X channel',
    );
    const xCount = await refused.one(`[data-testid="char-count"][data-channel-id="${xChannel.id}"]`);
    expect(xCount.attrs).toMatchObject({ 'data-count': '600', 'data-over': 'true' });
    expect(xCount.attrs.hidden).toBeUndefined();
    expect((await refused.one(`[data-testid="char-count"][data-channel-id="${channels[0]!.id}"]`)).attrs['data-over']).toBe('false');
    expect((await refused.one('[data-testid="composer-content"]')).text).toBe(long);
    // Per-platform text for X fixes it.
    const ok = await compose(browser, { channelIds: [channels[0]!.id, xChannel.id], content: long, at, extra: { text_X: 'short for X' } });
    expect(ok.status).toBe(303);
    const id = postIdFrom(ok.location);
    const pcs = await stack.h.orm.em.fork().find(PostChannel, { post: id });
    expect(pcs.find((p) => p.channel === xChannel.id)!.content).toBe('short for X');
    expect(pcs.find((p) => p.channel === channels[0]!.id)!.content).toBe(long);
  });

  test('validation as in the API: no channel, a time in the past, a reauth_required channel', async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    const none = await compose(browser, { channelIds: [], content: 'x', at: new Date(t0.getTime() + 86_400_000) });
    expect(none.status).toBe(422);
    expect((await none.one('[data-testid="form-errors"]')).text).toContain('choose at least one channel');
    const past = await compose(browser, { channelIds: [channels[0]!.id], content: 'x', at: new Date(t0.getTime() - 3600_000) });
    expect(past.status).toBe(422);
    expect((await past.one('[data-testid="form-errors"]')).text).toContain('in the past');
    const noTime = await compose(browser, { channelIds: [channels[0]!.id], content: 'x' });
    expect(noTime.status).toBe(422);
    await setChannelStatus(stack.h.orm.em.fork(), channels[0]!.id, 'reauth_required');
    const reauth = await compose(browser, { channelIds: [channels[0]!.id], content: 'x', when: 'now' });
    expect(reauth.status).toBe(409);
    expect((await reauth.one('[data-testid="form-errors"]')).text).toContain('reconnected');
  });

  test('edit and reschedule go through the workflow Update; a published post cannot be edited', async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    const tz = 'America/New_York';
    const at3 = minute(t0.getTime() + 3 * 86_400_000);
    const content = text('to be edited');
    const created = await compose(browser, { channelIds: [channels[0]!.id], content, at: at3, tz });
    const id = postIdFrom(created.location);

    const edit = await browser.get(`/posts/${id}/edit?tz=${tz}`);
    expect(edit.status).toBe(200);
    expect((await edit.one('[data-testid="composer-form"]')).attrs['data-mode']).toBe('edit');
    expect((await edit.one('[data-testid="composer-content"]')).text).toBe(content);
    expect((await edit.one('[data-testid="composer-publish-at"]')).attrs.value).toBe(localInputValue(at3, tz));
    expect((await edit.one('[data-testid="channel-option"]')).attrs.disabled).toBe('');

    const at1 = minute(t0.getTime() + 86_400_000);
    const edited = text('edited text');
    const saved = await browser.post(`/posts/${id}/edit`, { content: edited, publishAt: localInputValue(at1, tz), tz });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/posts/${id}?notice=saved`);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id });
    expect(row.scheduledAt.toISOString()).toBe(at1.toISOString());
    expect(row.content).toBe(edited);
    const state = await stack.env.client.workflow.getHandle(postWorkflowId(id)).query(postStateQuery);
    expect(state).toMatchObject({ phase: 'scheduled', publishAt: at1.toISOString() });

    // Saving without touching the time keeps it to the second.
    const again = await browser.post(`/posts/${id}/edit`, { content: edited, publishAt: localInputValue(at1, tz), tz });
    expect(again.status).toBe(303);

    await stack.env.sleep('1 day');
    await stack.settle(id);
    expect(fake.statuses.filter((s) => s.text === edited)).toHaveLength(1);
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(0);

    const late = await browser.post(`/posts/${id}/edit`, { content: 'too late', publishAt: localInputValue(at3, tz), tz });
    expect(late.status).toBe(409);
    expect((await late.one('[data-testid="error-message"]')).text).toContain('published');
    expect((await browser.get(`/posts/${id}/edit`)).status).toBe(409);
    const drag = await browser.json('PATCH', `/web/api/posts/${id}`, { date: '2099-01-01' });
    expect(drag.status).toBe(409);
    expect(drag.json().error.code).toBe('conflict');
  });

  test("drag to another day (PATCH under the session): same time of day in the viewer's zone, through the workflow", async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    const tz = 'Asia/Tokyo';
    const at = minute(t0.getTime() + 2 * 86_400_000);
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content: text('drag me'), at, tz })).location);
    const target = dayKey(new Date(at.getTime() + 5 * 86_400_000), tz);
    const moved = await browser.json('PATCH', `/web/api/posts/${id}?tz=${encodeURIComponent(tz)}`, { date: target });
    expect(moved.status).toBe(200);
    const expected = new Date(at.getTime() + 5 * 86_400_000).toISOString();
    expect(moved.json().scheduledAt).toBe(expected);
    const state = await stack.env.client.workflow.getHandle(postWorkflowId(id)).query(postStateQuery);
    expect(state.publishAt).toBe(expected);
    expect(formatTime(new Date(moved.json().scheduledAt), tz)).toBe(formatTime(at, tz));
    const bad = await browser.json('PATCH', `/web/api/posts/${id}`, { date: '2030-02-30' });
    expect(bad.status).toBe(422);
    const past = await browser.json('PATCH', `/web/api/posts/${id}`, { date: '2001-01-01' });
    expect(past.status).toBe(422);
    expect(past.json().error.details.fields[0].path).toBe('publishAt');
  });
});

describe('media library', () => {
  test('upload through the session endpoints (create → PUT → complete), shown in the library and attachable in the composer', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    const created = await browser.json('POST', '/web/api/media/uploads', {
      fileName: 'red.png',
      mimeType: 'image/png',
      fileSize: png.length,
      altText: 'A red square',
    });
    expect(created.status).toBe(201);
    const { media, upload } = created.json();
    expect(media).toMatchObject({ status: 'pending', fileName: 'red.png', altText: 'A red square' });
    const early = await browser.json('POST', `/web/api/media/${media.id}/complete`);
    expect(early.status).toBe(409);
    const put = await stack.app.handle(new Request(upload.url, { method: 'PUT', headers: upload.headers, body: png }));
    expect(put.status).toBe(200);
    const done = await browser.json('POST', `/web/api/media/${media.id}/complete`);
    expect(done.status).toBe(200);
    expect(done.json()).toMatchObject({ id: media.id, status: 'ready', width: 64, height: 48 });
    expect(done.json().thumbnailUrl).toContain('/storage/object/');

    const library = await browser.get('/media');
    const item = await library.one('[data-testid="media-item"]');
    expect(item.attrs).toMatchObject({ 'data-media-id': media.id, 'data-status': 'ready' });
    const thumb = await library.one('[data-testid="media-thumbnail"]');
    expect(thumb.attrs.alt).toBe('A red square');
    expect((await stack.app.handle(new Request(thumb.attrs.src!))).status).toBe(200);
    expect((await library.one('[data-testid="media-alt"]')).text).toBe('Alt text: A red square');
    expect(await library.query('[data-testid="media-upload-form"]')).toHaveLength(1);

    const composer = await browser.get('/posts/new');
    expect((await composer.one('[data-testid="media-option"]')).attrs.value).toBe(media.id);
    const t0 = await stack.syncClock();
    const post = await compose(browser, {
      channelIds: [channels[0]!.id],
      content: text('with media'),
      at: new Date(t0.getTime() + 86_400_000),
      extra: { mediaIds: [media.id] },
    });
    expect(post.status).toBe(303);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: postIdFrom(post.location) });
    expect(row.mediaIds).toEqual([media.id]);
  });
});

describe('organizations are separate', () => {
  test("another organization's posts, channels and media are never visible or editable", async () => {
    const a = await setup();
    const b = await setup();
    const t0 = await stack.syncClock();
    const at = minute(t0.getTime() + 86_400_000);
    const secret = text('org A only');
    const id = postIdFrom((await compose(a.browser, { channelIds: [a.channels[0]!.id], content: secret, at })).location);
    const upload = (
      await a.browser.json('POST', '/web/api/media/uploads', { fileName: 'a.png', mimeType: 'image/png', fileSize: png.length })
    ).json();

    const cal = await b.browser.get(`/calendar?date=${dayKey(at, 'UTC')}&tz=UTC`);
    expect(cal.html).not.toContain(secret);
    expect(cal.html).not.toContain(id);
    const from = new Date(at.getTime() - 86_400_000).toISOString();
    const to = new Date(at.getTime() + 86_400_000).toISOString();
    expect((await b.browser.get(`/web/api/posts?from=${from}&to=${to}`)).json().data).toEqual([]);
    expect((await b.browser.get(`/posts/${id}`)).status).toBe(404);
    expect((await b.browser.get(`/posts/${id}/edit`)).status).toBe(404);
    expect((await b.browser.post(`/posts/${id}/edit`, { content: 'hijack', publishAt: '' })).status).toBe(404);
    expect((await b.browser.get(`/web/api/posts/${id}`)).status).toBe(404);
    expect((await b.browser.json('PATCH', `/web/api/posts/${id}`, { date: dayKey(at, 'UTC') })).status).toBe(404);
    expect((await b.browser.get(`/web/api/media/${upload.media.id}`)).status).toBe(404);
    expect((await b.browser.json('POST', `/web/api/media/${upload.media.id}/complete`)).status).toBe(404);
    expect((await b.browser.get('/media')).html).not.toContain(upload.media.id);
    const usingA = await compose(b.browser, { channelIds: [a.channels[0]!.id], content: 'x', at });
    expect(usingA.status).toBe(422);
    expect((await b.browser.get('/posts/new')).html).not.toContain(a.channels[0]!.id);
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id })).content).toBe(secret);
  });
});

describe('delete and retry', () => {
  /** Polls the post's row (real time) until it has the status. */
  async function rowStatus(id: string, status: string) {
    for (let i = 0; i < 200; i++) {
      const row = await stack.h.orm.em.fork().findOne(Post, { id }, { filters: false });
      if (row?.status === status) return row;
      await Bun.sleep(50);
    }
    throw new Error(`post ${id} never became ${status}`);
  }

  test('delete a scheduled post: a confirmation page first; CSRF and confirm=yes required; then cancelled, 404, gone from the calendar, never sent', async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    const at = minute(t0.getTime() + 2 * 3600_000);
    const content = text('to be deleted');
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content, at })).location);

    const page = await browser.get(`/posts/${id}`);
    const del = await page.one('[data-testid="post-delete"]');
    expect(del.attrs.href).toBe(`/posts/${id}/delete`);
    expect(del.attrs.hidden).toBeUndefined();
    expect(await page.query('[data-testid="post-retry"]')).toHaveLength(0);

    const confirm = await browser.get(`/posts/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect((await confirm.one('[data-testid="delete-confirm"]')).attrs['data-status']).toBe('scheduled');
    expect((await confirm.one('[data-testid="delete-explain"]')).text).toContain('will not be published');
    const button = await confirm.one('[data-testid="delete-confirm-submit"]');
    expect(button.attrs).toMatchObject({ name: 'confirm', value: 'yes' });
    expect((await confirm.one('[data-testid="delete-form"]')).attrs).toMatchObject({ method: 'post', action: `/posts/${id}/delete` });

    // No CSRF token: refused, nothing happens.
    const forged = await browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'scheduled' }, { csrf: false });
    expect(forged.status).toBe(403);
    // Another site's form (the right token would not help either).
    const crossSite = await browser.post(`/posts/${id}/delete`, { confirm: 'yes' }, { headers: { origin: 'https://evil.example' } });
    expect(crossSite.status).toBe(403);
    // No confirmation: the confirmation page again (422), nothing happens.
    const unconfirmed = await browser.post(`/posts/${id}/delete`, {});
    expect(unconfirmed.status).toBe(422);
    expect((await unconfirmed.one('[data-testid="form-errors"]')).text).toContain('Confirm');
    expect(await unconfirmed.query('[data-testid="delete-confirm-submit"]')).toHaveLength(1);
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id }, { filters: false })).status).toBe('scheduled');
    expect((await browser.get(`/posts/${id}`)).status).toBe(200);

    const done = await browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'scheduled' });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/calendar?date=${dayKey(at, 'UTC')}&notice=deleted`);
    const calendar = await browser.get(done.location!);
    expect((await calendar.one('[data-testid="notice"]')).text).toBe('Post deleted: it will not be published.');
    expect(calendar.html).not.toContain(id);
    expect((await browser.get(`/posts/${id}`)).status).toBe(404);
    expect((await browser.get(`/posts/${id}/delete`)).status).toBe(404);
    expect((await browser.get(`/web/api/posts/${id}`)).status).toBe(404);
    // A second delete: 404, as the API's.
    expect((await browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'scheduled' })).status).toBe(404);
    const from = new Date(at.getTime() - 86_400_000).toISOString();
    const to = new Date(at.getTime() + 86_400_000).toISOString();
    expect((await browser.get(`/web/api/posts?from=${from}&to=${to}`)).json().data).toEqual([]);
    // Its workflow closes (just after answering the Update), and after its time nothing was sent.
    let closed = false;
    for (let i = 0; i < 200 && !closed; i++) {
      closed = (await stack.env.client.workflow.getHandle(postWorkflowId(id)).describe()).status.name !== 'RUNNING';
      if (!closed) await Bun.sleep(50);
    }
    expect(closed).toBe(true);
    await stack.env.sleep('3 hours');
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(0);
  });

  test('a confirmation for a post that has changed since (scheduled then, published now) is asked again', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    const content = text('published meanwhile');
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content, when: 'now' })).location);
    await rowStatus(id, 'published');
    const stale = await browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'scheduled' });
    expect(stale.status).toBe(409);
    expect((await stale.one('[data-testid="delete-confirm"]')).attrs['data-status']).toBe('published');
    expect((await stale.one('[data-testid="form-errors"]')).text).toContain('published now');
    expect((await browser.get(`/posts/${id}`)).status).toBe(200);
  });

  test('remove a published post from the lists: the wording says the live posts stay; the platform keeps its post', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    const content = text('published then removed');
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content, when: 'now' })).location);
    await rowStatus(id, 'published');
    const page = await browser.get(`/posts/${id}`);
    expect((await page.one('[data-testid="post-delete"]')).text).toBe('Remove from lists');
    const confirm = await browser.get(`/posts/${id}/delete`);
    expect((await confirm.one('[data-testid="delete-explain"]')).text).toContain('The posts already live on the platforms stay there');
    expect((await confirm.one('[data-testid="delete-confirm-submit"]')).text).toBe('Remove from lists');
    expect((await confirm.one('[data-testid="post-channel-url"]')).attrs.href).toStartWith(`${fake.url}/@user/`);
    const done = await browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'published' });
    expect(done.status).toBe(303);
    expect(done.location).toEndWith('&notice=removed');
    expect((await (await browser.get(done.location!)).one('[data-testid="notice"]')).text).toBe(
      'Post removed from the lists. Its posts on the platforms stay.',
    );
    expect((await browser.get(`/posts/${id}`)).status).toBe(404);
    // Kept for audit; the platform's post untouched.
    expect((await stack.h.orm.em.fork().findOne(Post, { id }, { filters: false }))?.status).toBe('published');
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(1);
  });

  test('a post that is publishing cannot be deleted: 409 "already publishing", on the confirmation page and its form', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    fake.failNext(1, 'hang');
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content: text('hanging'), when: 'now' })).location);
    await rowStatus(id, 'publishing');
    const page = await browser.get(`/posts/${id}`);
    expect((await page.one('[data-testid="post-delete"]')).attrs.hidden).toBe('');
    for (const res of [await browser.get(`/posts/${id}/delete`), await browser.post(`/posts/${id}/delete`, { confirm: 'yes' })]) {
      expect(res.status).toBe(409);
      expect((await res.one('[data-testid="error-message"]')).text).toContain('already publishing');
    }
    const retry = await browser.post(`/posts/${id}/retry`);
    expect(retry.status).toBe(409);
    expect((await retry.one('[data-testid="error-message"]')).text).toBe('This post is already publishing.');
  });

  test('retry: disabled with "Reconnect … first" while the failed channel needs reconnecting; after the reconnect, published once; the channel that succeeded is not sent again', async () => {
    const { browser, channels } = await setup(['good-token', 'good-token']);
    await stack.syncClock();
    const [bad, good] = channels as [(typeof channels)[0], (typeof channels)[0]];
    const content = text('retry me');
    // The first channel's request is answered 401: its channel becomes reauth_required; the second publishes.
    fake.failNext(1, { status: 401, body: { error: 'The access token is invalid' } });
    const id = postIdFrom((await compose(browser, { channelIds: [bad.id, good.id], content, when: 'now' })).location);
    await rowStatus(id, 'failed');
    const pcs = await stack.h.orm.em.fork().find(PostChannel, { post: id });
    const failedChannel = pcs.find((p) => p.status === 'failed')!.channel;
    const okChannel = pcs.find((p) => p.status === 'published')!.channel;
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(1);

    const page = await browser.get(`/posts/${id}`);
    const button = await page.one('[data-testid="post-retry"]');
    expect(button.attrs.disabled).toBe('');
    const hint = await page.one('[data-testid="retry-blocked"]');
    expect(hint.text).toBe(`Reconnect Mastodon (${failedChannel === bad.id ? 'Mastodon 0' : 'Mastodon 1'}) first.`);
    expect((await page.one('[data-testid="retry-reconnect"]')).attrs.href).toBe(`/channels/connect/mastodon?channel=${failedChannel}`);
    expect((await page.one('[data-testid="post-delete"]')).text).toBe('Remove from lists');
    // The form sent anyway: 409 with the same hint, nothing sent.
    const early = await browser.post(`/posts/${id}/retry`);
    expect(early.status).toBe(409);
    expect((await early.one('[data-testid="retry-blocked"]')).text).toContain('Reconnect Mastodon');
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(1);

    await setChannelStatus(stack.h.orm.em.fork(), failedChannel, 'active');
    const ready = await browser.get(`/posts/${id}`);
    expect((await ready.one('[data-testid="post-retry"]')).attrs.disabled).toBeUndefined();
    expect(await ready.query('[data-testid="retry-blocked"]')).toHaveLength(0);
    expect((await browser.post(`/posts/${id}/retry`, {}, { csrf: false })).status).toBe(403);
    const retried = await browser.post(`/posts/${id}/retry`);
    expect(retried.status).toBe(303);
    expect(retried.location).toBe(`/posts/${id}?notice=retrying`);
    expect((await (await browser.get(retried.location!)).one('[data-testid="notice"]')).text).toBe(
      'Publishing again on the channels that failed.',
    );
    await rowStatus(id, 'published');
    const sent = fake.statuses.filter((s) => s.text === content);
    expect(sent).toHaveLength(2);
    const after = await stack.h.orm.em.fork().find(PostChannel, { post: id });
    expect(after.map((p) => [p.channel, p.status]).sort()).toEqual(
      [
        [failedChannel, 'published'],
        [okChannel, 'published'],
      ].sort(),
    );
    // A published post has nothing to retry.
    const again = await browser.post(`/posts/${id}/retry`);
    expect(again.status).toBe(409);
    expect((await again.one('[data-testid="error-message"]')).text).toContain('already published');
    expect(fake.statuses.filter((s) => s.text === content)).toHaveLength(2);
  });

  test("another organization's post: the confirmation page, delete and retry all answer 404 and change nothing", async () => {
    const a = await setup();
    const b = await setup();
    const t0 = await stack.syncClock();
    const id = postIdFrom(
      (await compose(a.browser, { channelIds: [a.channels[0]!.id], content: text('A only'), at: minute(t0.getTime() + 86_400_000) }))
        .location,
    );
    expect((await b.browser.get(`/posts/${id}/delete`)).status).toBe(404);
    expect((await b.browser.post(`/posts/${id}/delete`, { confirm: 'yes', status: 'scheduled' })).status).toBe(404);
    expect((await b.browser.post(`/posts/${id}/retry`)).status).toBe(404);
    // Ids of any shape: a 404 page, never a 500.
    for (const odd of ['post_doesnotexist', '%', '%00', 'x'.repeat(3000), "post_' OR 1=1 --", '%F0%9F%98%80', '..%2F..%2Fcalendar']) {
      for (const res of [
        await b.browser.get(`/posts/${odd}/delete`),
        await b.browser.post(`/posts/${odd}/delete`, { confirm: 'yes', status: 'scheduled' }),
        await b.browser.post(`/posts/${odd}/retry`),
      ]) {
        expect([odd, res.status]).toEqual([odd, 404]);
      }
    }
    // A NUL in the form is refused as the other forms refuse it.
    expect((await b.browser.post(`/posts/${id}/delete`, { confirm: 'yes\u0000' })).status).toBe(422);
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id }, { filters: false })).status).toBe('scheduled');
    expect((await a.browser.get(`/posts/${id}`)).status).toBe(200);
  });
});

describe('thread and first comment', () => {
  /** The follow-up fields as composer.js sends them: thread_0, thread_1, … in order, and the first comment. */
  const followUps = (thread: string[], firstComment = '') => ({
    followUps: '1',
    firstComment,
    ...Object.fromEntries(thread.map((t, i) => [`thread_${i}`, t])),
  });
  const itemsOf = async (page: Awaited<ReturnType<Browser['get']>>, channelId: string) =>
    (await page.query(`[data-pc-items="${channelId}"] [data-testid="post-channel-item"]`)).map((r) => [
      r.attrs['data-position'],
      r.attrs['data-kind'],
      r.attrs['data-status'],
    ]);

  test('published from the form on Mastodon: the first comment is the first reply, then the thread in order; the post page lists each item with its link', async () => {
    const { browser, channels } = await setup();
    await stack.syncClock();
    const form = await browser.get('/posts/new');
    const target = await form.one('[data-testid="follow-up-target"]');
    expect(target.attrs).toMatchObject({ 'data-follow-platform': 'MASTODON', 'data-follow-kind': 'thread' });
    // Without JavaScript: blank slots to fill, each with its counter for the Mastodon channel.
    expect(await form.query('[data-testid="thread-items"] [data-testid="thread-item-content"]')).toHaveLength(3);
    expect((await form.query('[data-testid="thread-items"] [data-testid="thread-count"]')).map((c) => c.attrs['data-channel-id'])).toEqual(
      Array(3).fill(channels[0]!.id),
    );
    expect((await form.one('[data-testid="first-comment-count"]')).attrs['data-max-chars']).toBe('500');

    const content = text('a thread from the form');
    // The blank slot between the two replies is no item.
    const created = await compose(browser, {
      channelIds: [channels[0]!.id],
      content,
      when: 'now',
      extra: followUps([`${content} / 1`, ' ', `${content} / 2`], `${content} / comment`),
    });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    await stack.settle(id);
    const sent = fake.statuses.filter((s) => s.text.startsWith(content));
    expect(sent.map((s) => s.text)).toEqual([content, `${content} / comment`, `${content} / 1`, `${content} / 2`]);
    expect(sent.slice(1).map((s) => s.in_reply_to_id)).toEqual(sent.slice(0, -1).map((s) => s.id));

    const page = await browser.get(`/posts/${id}`);
    expect(await itemsOf(page, channels[0]!.id)).toEqual([
      ['0', 'post', 'published'],
      ['1', 'reply', 'published'],
      ['2', 'reply', 'published'],
      ['3', 'reply', 'published'],
    ]);
    const links = await page.query('[data-testid="post-item-url"]');
    expect(links.map((l) => l.attrs.href)).toEqual(sent.map((s) => s.url));
    expect((await page.query('[data-testid="post-item-text"]')).map((t) => t.text)).toEqual(sent.map((s) => s.text));
    // The channel's own row keeps its one link.
    expect(await page.query('[data-testid="post-channel-url"]')).toHaveLength(1);
  });

  test('one thread for all chosen channels: a comment platform gets the first comment alone, a thread platform the replies', async () => {
    const { browser, org, channels } = await setup();
    const linkedIn = await makeChannel(org.id, 'LINKEDIN', { name: 'Our LinkedIn' });
    const telegram = await makeChannel(org.id, 'TELEGRAM', { name: 'Our Telegram' });
    const form = await browser.get(`/posts/new?channel=${channels[0]!.id}&channel=${linkedIn.id}`);
    const targets = await form.query('[data-testid="follow-up-target"]');
    expect(targets.map((t) => [t.attrs['data-follow-platform'], t.attrs['data-follow-kind'], t.attrs.hidden])).toEqual([
      ['MASTODON', 'thread', undefined],
      ['LINKEDIN', 'comment', undefined],
      ['TELEGRAM', 'none', ''],
    ]);
    // A thread's counters only for the platform that takes one; the comment's for both.
    expect(new Set((await form.query('[data-testid="thread-count"]')).map((c) => c.attrs['data-platform']))).toEqual(new Set(['MASTODON']));
    const commentCounts = await form.query('[data-testid="first-comment-count"]');
    expect(commentCounts.map((c) => [c.attrs['data-platform'], c.attrs['data-max-chars'], c.attrs.hidden])).toEqual([
      ['MASTODON', '500', undefined],
      ['LINKEDIN', '1250', undefined],
    ]);

    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const content = text('thread and comment');
    const created = await compose(browser, {
      channelIds: [channels[0]!.id, linkedIn.id],
      content,
      at,
      extra: followUps(['reply one', 'reply two'], 'the comment'),
    });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id });
    expect(row.thread).toEqual([
      { content: 'reply one', mediaIds: [] },
      { content: 'reply two', mediaIds: [] },
    ]);
    expect(row.threadByPlatform).toEqual({ LINKEDIN: [] });
    expect(row.firstComment).toEqual({ content: 'the comment' });
    const page = await browser.get(`/posts/${id}`);
    expect(await itemsOf(page, channels[0]!.id)).toEqual([
      ['0', 'post', 'draft'],
      ['1', 'reply', 'draft'],
      ['2', 'reply', 'draft'],
      ['3', 'reply', 'draft'],
    ]);
    expect(await itemsOf(page, linkedIn.id)).toEqual([
      ['0', 'post', 'draft'],
      ['1', 'comment', 'draft'],
    ]);

    // Telegram takes no comment: the refusal is shown at the first comment.
    const refused = await compose(browser, {
      channelIds: [telegram.id],
      content: text('no comment here'),
      at,
      extra: followUps([], 'a comment'),
    });
    expect(refused.status).toBe(422);
    const error = await refused.one('[data-testid="first-comment-error"]');
    expect(error.text).toContain('takes no comments');
    expect((await refused.one('[data-testid="first-comment"]')).attrs['aria-describedby']).toBe(error.attrs.id);
  });

  test('a reply too long for X and a first comment too long: 422, each error at its own field, the form kept', async () => {
    const { browser, org, channels } = await setup();
    const xChannel = await makeChannel(org.id, 'X', { name: 'Our X' });
    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const long = 'a'.repeat(300);
    const refused = await compose(browser, {
      channelIds: [channels[0]!.id, xChannel.id],
      content: text('short post'),
      at,
      extra: followUps(['fine', long], 'b'.repeat(281)),
    });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('thread[1].content: is 300 characters');
    // Only the second item has an error, next to its textarea.
    const itemErrors = await refused.query('[data-testid="thread-items"] [data-testid="thread-item-error"]');
    expect(itemErrors.map((e) => e.attrs.id)).toEqual(['thread-1-error']);
    expect(itemErrors[0]!.text).toContain(`X channel ${xChannel.id} allows 280`);
    const fields = await refused.query('[data-testid="thread-items"] [data-testid="thread-item-content"]');
    expect(fields.map((f) => [f.attrs.name, f.text, f.attrs['aria-invalid']])).toEqual([
      ['thread_0', 'fine', undefined],
      ['thread_1', long, 'true'],
      ['thread_2', '', undefined],
    ]);
    expect(fields[1]!.attrs['aria-describedby']).toBe('thread-1-error');
    const xCount = await refused.one(`[data-testid="thread-items"] [data-count-source="thread-1"][data-channel-id="${xChannel.id}"]`);
    expect(xCount.attrs).toMatchObject({ 'data-count': '300', 'data-over': 'true' });
    const commentError = await refused.one('[data-testid="first-comment-error"]');
    expect(commentError.text).toContain('is 281 characters');
    expect((await refused.one('[data-testid="first-comment"]')).text).toBe('b'.repeat(281));
    expect(await refused.query('[data-testid="thread-error"]')).toHaveLength(0);
  });

  test("the post content's schema holds the form: a reply with more media than an item takes, a text longer than any post's, half the Reddit fields: 422 in the schema's words, each at its field", async () => {
    const { browser, org, channels } = await setup();
    const reddit = await makeChannel(org.id, 'REDDIT', { name: 'Our Reddit' });
    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const media = Array.from({ length: 11 }, (_, i) => `med_${i}`);
    const refused = await compose(browser, {
      channelIds: [channels[0]!.id, reddit.id],
      content: 'x'.repeat(100_001),
      at,
      extra: { ...followUps(['fine', 'with media']), thread_1_media: media, subreddit: 'r/test' },
    });
    expect(refused.status).toBe(422);
    const listed = (await refused.one('[data-testid="form-errors"]')).text;
    expect(listed).toContain('content: must be at most 100000 characters');
    expect(listed).toContain('reddit.title: must be 1 to 300 characters');
    const itemErrors = await refused.query('[data-testid="thread-items"] [data-testid="thread-item-error"]');
    expect(itemErrors.map((e) => e.attrs.id)).toEqual(['thread-1-error']);
    expect(itemErrors[0]!.text).toContain('must be a list of at most 10 items');
    expect((await refused.one('[data-testid="reddit-subreddit"]')).attrs.value).toBe('r/test');

    // An edit: the same schema, each field optional.
    const id = postIdFrom((await compose(browser, { channelIds: [channels[0]!.id], content: text('to edit'), at })).location);
    const edit = await browser.post(`/posts/${id}/edit`, {
      content: 'y'.repeat(100_001),
      publishAt: localInputValue(at, 'UTC'),
      tz: 'UTC',
      ...followUps(['fine', 'with media']),
      thread_1_media: media,
    });
    expect(edit.status).toBe(422);
    expect((await edit.one('[data-testid="form-errors"]')).text).toContain('content: must be at most 100000 characters');
    const editErrors = await edit.query('[data-testid="thread-items"] [data-testid="thread-item-error"]');
    expect(editErrors.map((e) => [e.attrs.id, e.text.includes('must be a list of at most 10 items')])).toEqual([['thread-1-error', true]]);
  });

  test('edit: the form is pre-filled with the thread and first comment; reordered and changed, the comment cleared; a form without the fields keeps them', async () => {
    const { browser, channels } = await setup();
    const t0 = await stack.syncClock();
    const at = minute(t0.getTime() + 86_400_000);
    const content = text('thread to edit');
    const id = postIdFrom(
      (await compose(browser, { channelIds: [channels[0]!.id], content, at, extra: followUps([`${content} A`, `${content} B`], 'first!') }))
        .location,
    );

    const edit = await browser.get(`/posts/${id}/edit`);
    const fields = await edit.query('[data-testid="thread-items"] [data-testid="thread-item-content"]');
    expect(fields.map((f) => f.text)).toEqual([`${content} A`, `${content} B`, '']);
    expect((await edit.one('[data-testid="first-comment"]')).text).toBe('first!');

    const saved = await browser.post(`/posts/${id}/edit`, {
      content,
      publishAt: localInputValue(at, 'UTC'),
      tz: 'UTC',
      ...followUps([`${content} B2`, '', `${content} A`]),
    });
    expect(saved.status).toBe(303);
    let row = await stack.h.orm.em.fork().findOneOrFail(Post, { id });
    expect(row.thread!.map((i) => i.content)).toEqual([`${content} B2`, `${content} A`]);
    expect(row.firstComment).toBeNull();
    const page = await browser.get(`/posts/${id}`);
    expect((await page.query('[data-testid="post-item-text"]')).map((t) => t.text)).toEqual([content, `${content} B2`, `${content} A`]);

    // The drag-and-drop shape (no follow-up fields) changes the text only.
    const textOnly = await browser.post(`/posts/${id}/edit`, { content: `${content}!`, publishAt: localInputValue(at, 'UTC'), tz: 'UTC' });
    expect(textOnly.status).toBe(303);
    row = await stack.h.orm.em.fork().findOneOrFail(Post, { id });
    expect(row.thread!.map((i) => i.content)).toEqual([`${content} B2`, `${content} A`]);

    await stack.env.sleep('1 day');
    await stack.settle(id);
    const sent = fake.statuses.filter((s) => s.text.startsWith(content));
    expect(sent.map((s) => s.text)).toEqual([`${content}!`, `${content} B2`, `${content} A`]);
    expect(sent[2]!.in_reply_to_id).toBe(sent[1]!.id);
  });

  test("edit keeps a platform's own thread set through the API, and says so", async () => {
    const { browser, key, channels } = await setup();
    const t0 = await stack.syncClock();
    const api = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: text('API thread'),
        channelIds: [channels[0]!.id],
        publishAt: new Date(t0.getTime() + 86_400_000).toISOString(),
        thread: [{ content: 'for everyone' }],
        threadByPlatform: { MASTODON: [{ content: 'Mastodon only' }] },
      },
    });
    expect(api.status).toBe(201);
    const edit = await browser.get(`/posts/${api.body.id}/edit`);
    expect((await edit.one('[data-testid="follow-up-target"]')).text).toContain('its own thread of 1 reply (set through the API)');
    const saved = await browser.post(`/posts/${api.body.id}/edit`, {
      content: api.body.content,
      publishAt: localInputValue(new Date(api.body.scheduledAt), 'UTC'),
      tz: 'UTC',
      ...followUps(['changed for everyone']),
    });
    expect(saved.status).toBe(303);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: api.body.id });
    expect(row.thread).toEqual([{ content: 'changed for everyone', mediaIds: [] }]);
    expect(row.threadByPlatform).toEqual({ MASTODON: [{ content: 'Mastodon only', mediaIds: [] }] });
  });
});

describe('options per platform', () => {
  /** A ready video in the library (TikTok and YouTube take one video). */
  async function video(orgId: string) {
    const id = await readyMedia(stack.storage!, orgId);
    const em = stack.h.orm.em.fork();
    const row = await em.findOneOrFail(MediaItem, { id });
    Object.assign(row, { type: 'video', mimeType: 'video/mp4', fileName: 'clip.mp4', durationSeconds: 2, width: 160, height: 120 });
    await em.flush();
    return id;
  }

  async function videoSetup() {
    const user = await setup();
    const tiktok = await makeChannel(user.org.id, 'TIKTOK', { name: 'Our TikTok' });
    const youtube = await makeChannel(user.org.id, 'YOUTUBE', { name: 'Our YouTube' });
    const linkedIn = await makeChannel(user.org.id, 'LINKEDIN', { name: 'Our LinkedIn' });
    const pinterest = await makeChannel(user.org.id, 'PINTEREST', { name: 'Our Pinterest' });
    return { ...user, tiktok, youtube, linkedIn, pinterest, videoId: await video(user.org.id) };
  }

  const hidden = async (page: Awaited<ReturnType<Browser['get']>>, platform: string) =>
    (await page.one(`[data-testid="options-${platform}"]`)).attrs.hidden !== undefined;

  test('the form has a field for every option of the API schema (but the Reddit subreddit and title, which have their own)', () => {
    const schema = PostOptions as unknown as {
      properties: Record<string, { properties: Record<string, { properties?: Record<string, unknown> }> }>;
    };
    const expected = Object.entries(schema.properties).flatMap(([platform, s]) =>
      Object.entries(s.properties)
        .filter(([k]) => !(platform === 'reddit' && (k === 'subreddit' || k === 'title')))
        .flatMap(([k, v]) => (v.properties ? Object.keys(v.properties).map((n) => `${platform}.${k}.${n}`) : [`${platform}.${k}`])),
    );
    const drawn = Object.entries(OPTION_FIELDS).flatMap(([platform, fields]) => fields.map((f) => `${platform}.${f.path}`));
    expect(drawn.sort()).toEqual(expected.sort());
    // Options the form has no field for (set through the API) are what an edit keeps.
    expect(optionsWithoutFields({ youtube: { title: 'T', later: true }, telegram: { protectContent: true } } as PlatformOptions)).toEqual({
      youtube: { later: true },
    });
  });

  test('each field offers what the API schema allows — length, range, pattern, choices — read from the schema', async () => {
    const channels = Object.keys(OPTION_FIELDS).map((p) => ({ id: `ch_${p}`, platform: p.toUpperCase(), name: p }) as unknown as IChannel);
    const image = { id: 'med_1', type: 'image', fileName: 'a.png', altText: null } as unknown as MediaView;
    const page = String(optionFields({ channels, selected: () => true, values: {}, errors: [], media: [image], mediaIds: ['med_1'] }));
    let checked = 0;
    for (const [platform, fields] of Object.entries(OPTION_FIELDS)) {
      for (const f of fields) {
        const own = schemaAt(PostOptions, `${platform}.${f.path}`);
        const b = boundsOf(f.kind === 'perMedia' ? recordValues(own) : own);
        const name = `options.${platform}.${f.path}${f.kind === 'perMedia' ? '.med_1' : ''}`;
        const [el] = await query(page, `[name="${name}"]`);
        expect({ name, found: el !== undefined }).toEqual({ name, found: true });
        const attrs = el!.attrs;
        const typed = f.kind === 'text' || f.kind === 'textarea' || f.kind === 'perMedia';
        if (b.maxLength !== undefined && typed)
          expect({ name, maxlength: attrs.maxlength }).toEqual({ name, maxlength: String(b.maxLength) });
        if (b.minimum !== undefined) expect({ name, min: attrs.min }).toEqual({ name, min: String(b.minimum) });
        if (b.maximum !== undefined) expect({ name, max: attrs.max }).toEqual({ name, max: String(b.maximum) });
        if (b.pattern !== undefined && f.kind === 'text')
          expect(new RegExp(`^(?:${attrs.pattern})$`).source).toBe(`^(?:${b.pattern.replace(/^\^|\$$/g, '')})$`);
        if (b.values && f.kind === 'select') {
          const offered = (await query(page, `[name="${name}"] option`)).map((o) => o.attrs.value).filter(Boolean);
          expect({ name, offered }).toEqual({ name, offered: b.values });
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  test('the Reddit subreddit and title take what the post content schema does: its length and pattern', async () => {
    const user = await signedInUser(stack.app);
    const reddit = await makeChannel(user.org.id, 'REDDIT', { name: 'Our Reddit' });
    const form = await user.browser.get(`/posts/new?channel=${reddit.id}`);
    expect(form.status).toBe(200);
    for (const [testId, path] of [
      ['reddit-subreddit', 'reddit.subreddit'],
      ['reddit-title', 'reddit.title'],
    ] as const) {
      const b = boundsOf(schemaAt(PostContent, path));
      expect(b.maxLength).toBeGreaterThan(0);
      const { maxlength, pattern } = (await form.one(`[data-testid="${testId}"]`)).attrs;
      expect({ path, maxlength, pattern }).toEqual({ path, maxlength: String(b.maxLength), pattern: b.pattern!.replace(/^\^|\$$/g, '') });
    }
  });

  test('a panel per chosen platform; a form post sends only the values given, and the API shows them', async () => {
    const { browser, key, tiktok, youtube, linkedIn, videoId } = await videoSetup();
    const form = await browser.get(`/posts/new?channel=${tiktok.id}&channel=${linkedIn.id}`);
    expect(form.status).toBe(200);
    // Panels for the platforms that have options, shown for the chosen ones; none for Mastodon.
    expect((await form.query('[data-options-platform]')).map((p) => p.attrs['data-options-platform'])).toEqual([
      'TIKTOK',
      'YOUTUBE',
      'LINKEDIN',
      'PINTEREST',
    ]);
    expect(await hidden(form, 'TIKTOK')).toBe(false);
    expect(await hidden(form, 'LINKEDIN')).toBe(false);
    expect(await hidden(form, 'YOUTUBE')).toBe(true);
    expect(await hidden(form, 'PINTEREST')).toBe(true);
    // TikTok's privacy: every level, none chosen; YouTube's "made for kids": neither answer chosen.
    const privacy = await form.one('[data-testid="option-tiktok-privacyLevel"]');
    expect(privacy.attrs).toMatchObject({ name: 'options.tiktok.privacyLevel', 'aria-required': 'true' });
    const levels = await form.query('[data-testid="option-tiktok-privacyLevel"] option');
    expect(levels.map((o) => o.attrs.value)).toEqual([
      '',
      'PUBLIC_TO_EVERYONE',
      'MUTUAL_FOLLOW_FRIENDS',
      'FOLLOWER_OF_CREATOR',
      'SELF_ONLY',
    ]);
    expect(levels[0]!.text).toBe('Choose who can see it');
    expect(levels.filter((o) => o.attrs.selected !== undefined)).toEqual([]);
    const kids = await form.query('input[name="options.youtube.madeForKids"]');
    expect(kids.map((k) => [k.attrs.type, k.attrs.value, k.attrs.checked])).toEqual([
      ['radio', 'true', undefined],
      ['radio', 'false', undefined],
    ]);
    // Without JavaScript a board is typed as its id.
    expect((await form.one('[data-testid="option-pinterest-boardId"]')).attrs).toMatchObject({
      type: 'text',
      name: 'options.pinterest.boardId',
    });

    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const created = await compose(browser, {
      channelIds: [tiktok.id, youtube.id, linkedIn.id],
      content: text('options from the form'),
      at,
      extra: {
        mediaIds: [videoId],
        optionFields: '1',
        'options.tiktok.privacyLevel': 'SELF_ONLY',
        'options.tiktok.disableDuet': 'true',
        'options.youtube.madeForKids': 'false',
        'options.youtube.title': ' Kites in a storm ',
        'options.youtube.description': '',
        'options.youtube.tags': 'kites, storm,,',
        'options.youtube.privacyStatus': '',
        'options.youtube.categoryId': '',
        'options.linkedin.visibility': 'CONNECTIONS',
        // A hidden panel's values (Pinterest is not chosen) are not sent.
        'options.pinterest.boardId': '1234',
      },
    });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    const api = await call(stack.app, 'GET', `/v1/posts/${id}`, { key });
    expect(api.status).toBe(200);
    expect(api.body.options).toEqual({
      tiktok: { privacyLevel: 'SELF_ONLY', disableDuet: true },
      youtube: { madeForKids: false, title: 'Kites in a storm', tags: ['kites', 'storm'] },
      linkedin: { visibility: 'CONNECTIONS' },
    });
  });

  test('edit: the panels are pre-filled with the post’s options; the form replaces them; a form without the fields keeps them', async () => {
    const { browser, key, tiktok, youtube, videoId } = await videoSetup();
    const t0 = await stack.syncClock();
    const at = minute(t0.getTime() + 86_400_000);
    const content = text('options to edit');
    const api = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content,
        channelIds: [tiktok.id, youtube.id],
        mediaIds: [videoId],
        publishAt: at.toISOString(),
        options: {
          tiktok: { privacyLevel: 'MUTUAL_FOLLOW_FRIENDS', disableComment: true, isAigc: true },
          youtube: { madeForKids: true, tags: ['one', 'two'], privacyStatus: 'unlisted', notifySubscribers: false },
        },
      },
    });
    expect(api.status).toBe(201);
    const id = api.body.id as string;

    const edit = await browser.get(`/posts/${id}/edit`);
    expect(edit.status).toBe(200);
    expect(await hidden(edit, 'TIKTOK')).toBe(false);
    expect(await hidden(edit, 'YOUTUBE')).toBe(false);
    const selected = async (testId: string) =>
      (await edit.query(`[data-testid="${testId}"] option`)).filter((o) => o.attrs.selected !== undefined).map((o) => o.attrs.value);
    expect(await selected('option-tiktok-privacyLevel')).toEqual(['MUTUAL_FOLLOW_FRIENDS']);
    expect(await selected('option-youtube-privacyStatus')).toEqual(['unlisted']);
    const checked = async (testId: string) => (await edit.one(`[data-testid="${testId}"]`)).attrs.checked !== undefined;
    expect(await checked('option-tiktok-disableComment')).toBe(true);
    expect(await checked('option-tiktok-disableDuet')).toBe(false);
    expect(await checked('option-tiktok-isAigc')).toBe(true);
    expect(await checked('option-youtube-madeForKids-yes')).toBe(true);
    expect(await checked('option-youtube-madeForKids-no')).toBe(false);
    expect(await checked('option-youtube-notifySubscribers')).toBe(true);
    expect((await edit.one('[data-testid="option-youtube-tags"]')).attrs.value).toBe('one, two');

    // The form as the browser sends it back, with changes: another level, comments on, not for kids, no tags.
    const saved = await browser.post(`/posts/${id}/edit`, {
      content,
      publishAt: localInputValue(at, 'UTC'),
      tz: 'UTC',
      mediaIds: [videoId],
      optionFields: '1',
      'options.tiktok.privacyLevel': 'SELF_ONLY',
      'options.tiktok.isAigc': 'true',
      'options.youtube.madeForKids': 'false',
      'options.youtube.tags': '',
      'options.youtube.privacyStatus': 'unlisted',
      'options.youtube.notifySubscribers': 'false',
    });
    expect(saved.status).toBe(303);
    const expected = {
      tiktok: { privacyLevel: 'SELF_ONLY', isAigc: true },
      youtube: { madeForKids: false, privacyStatus: 'unlisted', notifySubscribers: false },
    };
    expect((await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).body.options).toEqual(expected);

    // The drag-and-drop shape (no option fields) leaves them as they are.
    const textOnly = await browser.post(`/posts/${id}/edit`, {
      content: `${content}!`,
      publishAt: localInputValue(at, 'UTC'),
      tz: 'UTC',
      mediaIds: [videoId],
    });
    expect(textOnly.status).toBe(303);
    const after = (await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).body;
    expect(after.content).toBe(`${content}!`);
    expect(after.options).toEqual(expected);
  });

  test("Instagram's alt text per image: a field for each image of the library, shown for the post's; only the post's are sent; an edit pre-fills them", async () => {
    const { browser, key, org } = await setup();
    const instagram = await makeChannel(org.id, 'INSTAGRAM', { name: 'Our Instagram' });
    const [kite, other] = [await readyMedia(stack.storage!, org.id), await readyMedia(stack.storage!, org.id)];
    const form = await browser.get(`/posts/new?channel=${instagram.id}`);
    const inputs = await form.query('[data-testid="option-instagram-altText-input"]');
    expect(inputs.map((i) => [i.attrs.name, i.attrs.placeholder]).sort()).toEqual(
      [kite, other].map((id) => [`options.instagram.altText.${id}`, 'a square']).sort(),
    );
    // No image is attached yet: the fields wait for one.
    expect((await form.query('[data-media-field]')).every((f) => f.attrs.hidden !== undefined)).toBe(true);

    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const created = await compose(browser, {
      channelIds: [instagram.id],
      content: text('alt text per image'),
      at,
      extra: {
        mediaIds: [kite],
        optionFields: '1',
        [`options.instagram.altText.${kite}`]: 'A red kite over the dunes',
        [`options.instagram.altText.${other}`]: 'not attached, not sent',
      },
    });
    expect(created.status).toBe(303);
    const id = postIdFrom(created.location);
    expect((await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).body.options).toEqual({
      instagram: { altText: { [kite]: 'A red kite over the dunes' } },
    });
    const edit = await browser.get(`/posts/${id}/edit`);
    const shown = await edit.one(`[data-media-field="${kite}"]`);
    expect(shown.attrs.hidden).toBeUndefined();
    expect((await edit.one(`textarea[name="options.instagram.altText.${kite}"]`)).text).toBe('A red kite over the dunes');
    expect((await edit.one(`[data-media-field="${other}"]`)).attrs.hidden).toBe('');
  });

  test('422 at options.*: each error at its field (aria-invalid, described by it), the values kept', async () => {
    const { browser, tiktok, youtube, videoId } = await videoSetup();
    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const base = { channelIds: [tiktok.id, youtube.id], content: text('options refused'), at };

    // The form's own reading, against the API's schema: a category is its number.
    const shape = await compose(browser, {
      ...base,
      extra: { mediaIds: [videoId], optionFields: '1', 'options.youtube.categoryId': 'music', 'options.youtube.madeForKids': 'true' },
    });
    expect(shape.status).toBe(422);
    const categoryError = await shape.one('[data-testid="options-YOUTUBE"] [data-testid="option-error"]');
    expect(categoryError.attrs.id).toBe('opt-youtube-categoryId-error');
    expect((await shape.one('[data-path="options.youtube.categoryId"]')).text).not.toBe('');
    const category = await shape.one('[data-testid="option-youtube-categoryId"]');
    expect(category.attrs).toMatchObject({ value: 'music', 'aria-invalid': 'true' });
    expect(category.attrs['aria-describedby']!.split(' ')).toContain('opt-youtube-categoryId-error');
    expect((await shape.one('[data-testid="option-youtube-madeForKids-yes"]')).attrs.checked).toBe('');

    // The domain's: TikTok's privacy level and YouTube's "made for kids" must be chosen.
    const missing = await compose(browser, {
      ...base,
      extra: { mediaIds: [videoId], optionFields: '1', 'options.tiktok.disableStitch': 'true' },
    });
    expect(missing.status).toBe(422);
    expect((await missing.one('[data-testid="form-errors"]')).text).toContain('options.tiktok.privacyLevel');
    const privacyError = await missing.one('#opt-tiktok-privacyLevel-error');
    expect(privacyError.attrs['data-testid']).toBe('option-error');
    expect((await missing.one('#opt-tiktok-privacyLevel-error p')).attrs['data-path']).toBe('options.tiktok.privacyLevel');
    const privacy = await missing.one('[data-testid="option-tiktok-privacyLevel"]');
    expect(privacy.attrs['aria-invalid']).toBe('true');
    expect(privacy.attrs['aria-describedby']!.split(' ')).toContain('opt-tiktok-privacyLevel-error');
    const kidsError = await missing.one('[data-testid="option-youtube-madeForKids"] [data-testid="option-error"]');
    expect(kidsError.attrs.id).toBe('opt-youtube-madeForKids-error');
    expect((await missing.one('[data-testid="option-youtube-madeForKids-no"]')).attrs['aria-invalid']).toBe('true');
    expect((await missing.one('[data-testid="option-tiktok-disableStitch"]')).attrs.checked).toBe('');
    // Only the fields with a problem are marked.
    expect((await missing.query('[data-testid="option-error"]')).map((e) => e.attrs.id).sort()).toEqual([
      'opt-tiktok-privacyLevel-error',
      'opt-youtube-madeForKids-error',
    ]);
  });

  test('GET /web/api/channels/{id}/capabilities under the session: the channel’s facts; another organization’s channel 404; a bad subreddit 422', async () => {
    const { browser, tiktok } = await videoSetup();
    const other = await videoSetup();
    const caps = await browser.json('GET', `/web/api/channels/${tiktok.id}/capabilities`);
    expect(caps.status).toBe(200);
    // This stack has no TikTok connector: the fixed facts only.
    expect(caps.json()).toMatchObject({
      channelId: tiktok.id,
      platform: 'TIKTOK',
      fixed: { requiresMedia: true },
      live: null,
      liveError: null,
    });
    expect((await browser.json('GET', `/web/api/channels/${other.tiktok.id}/capabilities`)).status).toBe(404);
    const bad = await browser.json('GET', `/web/api/channels/${tiktok.id}/capabilities?subreddit=r%2Fno%20spaces`);
    expect(bad.status).toBe(422);
    expect(bad.json().error.details.fields[0].path).toBe('subreddit');
    const signedOut = await stack.app.handle(new Request(`http://localhost/web/api/channels/${tiktok.id}/capabilities`));
    expect(signedOut.status).toBe(401);
  });
});
