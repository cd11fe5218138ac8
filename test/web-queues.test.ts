// The web application's side of posting queues and recurring posts: the queue editor on a
// channel's queue page (slots + zone, the next free times), "Add to queue" in the composer, and
// the calendar's marks — upcoming occurrences of series and the queues' free slots.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel, Post, Series } from '../db/entities/index.ts';
import { zonedParts } from '../lib/zoned-time.ts';
import { newId } from '../lib/ids.ts';
import { getQueue } from '../domain/queues/queues.ts';
import { dayKey, formatTime, localInputValue } from '../web/time.ts';
import { makeChannel, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { signedInUser } from './harness/web-browser.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let stack: Stack;

beforeAll(async () => {
  stack = await startPostStack();
});
afterAll(async () => {
  await stack?.stop();
});

const NY = 'America/New_York';
const weekdayOf = (d: Date, tz: string) => {
  const p = zonedParts(d, tz);
  return new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay(); // 0 = Sunday
};

async function nyUser() {
  const u = await signedInUser(stack.app);
  expect((await u.browser.post('/settings/time-zone', { timeZone: NY })).status).toBe(303);
  const channel = await makeChannel(u.org.id, 'MASTODON', { name: 'Queue channel' });
  return { ...u, channel };
}

describe('the queue editor (channel page)', () => {
  test('slots per weekday and the zone are saved through setQueue; the next free times are listed in the viewer’s zone', async () => {
    const { browser, channel, org } = await nyUser();
    await stack.syncClock();
    const list = await browser.get('/channels');
    const link = (await list.query('[data-testid="channel-queue"]')).map((a) => a.attrs.href);
    expect(link).toEqual([`/channels/${channel.id}/queue`]);

    const empty = await browser.get(`/channels/${channel.id}/queue`);
    expect(empty.status).toBe(200);
    // A first queue starts in the person's zone.
    expect((await empty.query('[data-testid="queue-tz-select"] option[selected]')).map((o) => o.attrs.value)).toEqual([NY]);
    expect((await empty.one('[data-testid="queue-free-none"]')).text).toBe('No slots yet.');

    const path = `/channels/${channel.id}/queue`;
    const forged = await browser.post(path, { slots_monday: '09:00', timeZone: NY }, { csrf: false });
    expect(forged.status).toBe(403);
    const bad = await browser.post(path, { slots_monday: '9:00, 25:00', slots_friday: 'noon', timeZone: NY });
    expect(bad.status).toBe(422);
    const errs = (await bad.one('[data-testid="form-errors"]')).text;
    expect(errs).toContain('"25:00" is not a time');
    expect(errs).toContain('"noon" is not a time');
    expect((await bad.one('[data-testid="queue-day-monday"]')).attrs.value).toBe('9:00, 25:00');
    const badZone = await browser.post(path, { slots_monday: '09:00', timeZone: 'Nowhere/Land' });
    expect(badZone.status).toBe(422);
    expect((await badZone.one('[data-testid="form-errors"]')).text).toContain('timeZone');
    expect((await getQueue(stack.h.orm.em.fork(), org.id, channel.id, { now: await stack.syncClock() })).slots).toEqual([]);

    const saved = await browser.post(path, { slots_monday: '13:30, 9:00', slots_friday: '09:00', timeZone: NY });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${path}?notice=saved`);
    const q = await getQueue(stack.h.orm.em.fork(), org.id, channel.id, { now: await stack.syncClock() });
    expect(q.timeZone).toBe(NY);
    expect(q.timeZoneSource).toBe('channel');
    expect(q.slots).toEqual([
      { weekday: 'monday', time: '09:00' },
      { weekday: 'monday', time: '13:30' },
      { weekday: 'friday', time: '09:00' },
    ]);

    const page = await browser.get(saved.location!);
    expect((await page.one('[data-testid="notice"]')).text).toBe('Queue saved.');
    expect((await page.one('[data-testid="queue-tz"]')).text).toBe(NY);
    expect((await page.one('[data-testid="queue-day-monday"]')).attrs.value).toBe('09:00, 13:30');
    expect((await page.one('[data-testid="queue-day-tuesday"]')).attrs.value).toBe('');
    const free = await page.query('[data-testid="queue-free-slot"]');
    expect(free.map((f) => f.attrs['data-at'])).toEqual(q.nextFreeSlots);
    expect(free).toHaveLength(10);
    for (const f of free) {
      const at = new Date(f.attrs['data-at']!);
      expect([1, 5]).toContain(weekdayOf(at, NY));
      expect(['09:00', '13:30']).toContain(formatTime(at, NY));
    }

    // The organization's zone instead (the empty choice): the channel keeps none of its own.
    expect((await browser.post(path, { slots_monday: '09:00', timeZone: '' })).status).toBe(303);
    expect((await stack.h.orm.em.fork().findOneOrFail(Channel, { id: channel.id })).timeZone).toBeNull();
    const orgZone = await browser.get(path);
    expect((await orgZone.one('[data-testid="queue-tz"]')).text).toBe('UTC');
    expect((await orgZone.query('[data-testid="queue-tz-select"] option[selected]')).map((o) => o.attrs.value)).toEqual(['']);

    // Another organization's channel: 404.
    const other = await makeChannel((await makeOrg('PRO', 'Other')).id);
    expect((await browser.get(`/channels/${other.id}/queue`)).status).toBe(404);
    expect((await browser.post(`/channels/${other.id}/queue`, { slots_monday: '09:00', timeZone: '' })).status).toBe(404);
  });
});

describe('"Add to queue" in the composer', () => {
  test('takes the earliest free slot, then the next; a channel without slots → 422 on the form', async () => {
    const { browser, channel, org } = await nyUser();
    expect(
      (await browser.post(`/channels/${channel.id}/queue`, { slots_tuesday: '10:00', slots_thursday: '16:15', timeZone: NY })).status,
    ).toBe(303);
    const form = await browser.get('/posts/new');
    expect((await form.one('[data-testid="composer-when-queue"]')).attrs.value).toBe('queue');
    const q = await getQueue(stack.h.orm.em.fork(), org.id, channel.id, { now: await stack.syncClock() });
    const queued: string[] = [];
    for (const n of [1, 2]) {
      const res = await browser.post('/posts', {
        channelIds: [channel.id],
        content: `queued ${n} ${crypto.randomUUID()}`,
        when: 'queue',
        publishAt: '',
      });
      expect(res.status).toBe(303);
      const id = /^\/posts\/(post_[0-9a-z]+)\?/.exec(res.location!)![1]!;
      queued.push((await stack.h.orm.em.fork().findOneOrFail(Post, { id })).scheduledAt.toISOString());
    }
    expect(queued).toEqual(q.nextFreeSlots.slice(0, 2));

    const bare = await makeChannel(org.id, 'MASTODON', { name: 'No queue' });
    const refused = await browser.post('/posts', { channelIds: [bare.id], content: 'nowhere', when: 'queue', publishAt: '' });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="form-errors"]')).text).toContain('no queue slots');
    expect((await refused.one('[data-testid="composer-when-queue"]')).attrs.checked).toBe('');
  });
});

describe('the calendar’s marks', () => {
  test('free queue slots (linking to the composer at that time) and upcoming occurrences of a series, in the viewer’s zone', async () => {
    const { browser, channel, org } = await nyUser();
    expect((await browser.post(`/channels/${channel.id}/queue`, { slots_wednesday: '08:45', timeZone: NY })).status).toBe(303);
    const now = await stack.syncClock();
    const q = await getQueue(stack.h.orm.em.fork(), org.id, channel.id, { now, count: 3 });
    const [first, second] = q.nextFreeSlots.map((s) => new Date(s));
    const day = dayKey(second!, NY);

    // One slot taken by a queued post: that one is a post on the calendar, not a free slot.
    const res = await browser.post('/posts', {
      channelIds: [channel.id],
      content: `queued ${crypto.randomUUID()}`,
      when: 'queue',
      publishAt: '',
    });
    const postId = /^\/posts\/(post_[0-9a-z]+)\?/.exec(res.location!)![1]!;
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId })).scheduledAt.toISOString()).toBe(first!.toISOString());

    // A weekly series (no occurrence created yet) starting on the second slot's day at 12:00 New York time.
    const em = stack.h.orm.em.fork();
    const startAt = new Date(`${day}T17:00:00Z`); // 12:00 EST / 13:00 EDT
    const seriesId = newId('ser');
    em.create(Series, {
      id: seriesId,
      organization: org.id,
      status: 'active',
      content: 'Weekly tip: drink water',
      contentByPlatform: {},
      reddit: null,
      mediaIds: [],
      channelIds: [channel.id],
      source: 'app',
      apiKeyId: null,
      startAt,
      timeZone: NY,
      every: 'week',
      interval: 1,
      until: null,
      count: 3,
      workflowId: `series-${seriesId}`,
    });
    await em.flush();

    for (const view of ['week', 'month']) {
      const cal = await browser.get(`/calendar?view=${view}&date=${day}`);
      expect(cal.status).toBe(200);
      const slots = await cal.query(`[data-testid="day-${day}"] [data-testid="queue-slot"]`);
      expect(slots.map((s) => [s.attrs['data-at'], s.attrs['data-channel-ids']])).toEqual([[second!.toISOString(), channel.id]]);
      const time = await cal.one(`[data-testid="day-${day}"] [data-testid="queue-slot-time"]`);
      expect(time.text).toBe('08:45');
      const link = await cal.one(`[data-testid="day-${day}"] [data-testid="queue-slot-link"]`);
      expect(link.attrs.href).toBe(`/posts/new?date=${day}&time=08:45&channel=${channel.id}`);
      // The taken slot shows as the post, not as free.
      expect((await cal.query(`[data-testid="queue-slot"][data-at="${first!.toISOString()}"]`)).length).toBe(0);

      const occ = await cal.query(`[data-testid="day-${day}"] [data-testid="series-occurrence"]`);
      expect(occ.map((o) => [o.attrs['data-series-id'], o.attrs['data-at']])).toEqual([[seriesId, startAt.toISOString()]]);
      expect((await cal.one(`[data-testid="day-${day}"] [data-testid="occurrence-time"]`)).text).toBe(formatTime(startAt, NY));
      expect((await cal.one(`[data-testid="day-${day}"] [data-testid="occurrence-mark"]`)).text).toBe('↻ Repeats');
    }
    // The next week's occurrence keeps the local time of day.
    const nextWeek = dayKey(new Date(startAt.getTime() + 7 * 86_400_000), NY);
    const cal = await browser.get(`/calendar?view=week&date=${nextWeek}`);
    const occ = await cal.query(`[data-testid="day-${nextWeek}"] [data-testid="occurrence-time"]`);
    expect(occ.map((o) => o.text)).toEqual([formatTime(startAt, NY)]);

    // The composer opened from a free slot is prefilled with its time and channel.
    const compose = await browser.get(`/posts/new?date=${day}&time=08:45&channel=${channel.id}`);
    expect((await compose.one('[data-testid="composer-publish-at"]')).attrs.value).toBe(localInputValue(second!, NY));
    expect((await compose.one(`[data-testid="channel-option"][data-channel-id="${channel.id}"]`)).attrs.checked).toBe('');

    // A post that is an occurrence of a series is marked on the calendar.
    await stack.h.orm.em.fork().nativeUpdate(Post, { id: postId }, { seriesId });
    const marked = await browser.get(`/calendar?view=week&date=${dayKey(first!, NY)}`);
    expect((await marked.one(`[data-post-id="${postId}"] [data-testid="post-series"]`)).attrs['data-series-id']).toBe(seriesId);
  });
});
