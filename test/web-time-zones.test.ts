// Time zones: each person's own zone (users.time_zone), set from the browser on the first
// sign-in and on the settings page; the calendar, the composer, post pages and drag-to-reschedule
// in that zone; wall time ↔ instant across daylight-saving changes (lib/zoned-time.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post, User } from '../db/entities/index.ts';
import { offsetMs, resolveWallTime, zonedToUtc } from '../lib/zoned-time.ts';
import { addChannel } from '../domain/channels.ts';
import { createUser } from '../services/users.ts';
import { postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import { dayKey, dayStart, formatTime, parseDayKey, parseLocalInput } from '../web/time.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

const iso = (d: Date) => d.toISOString();
const wall = (s: string) => {
  const [date, time] = s.split('T') as [string, string];
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  return { year, month, day, hour, minute };
};

describe('wall time ↔ instant (lib/zoned-time.ts)', () => {
  test('09:00 stays 09:00 local on both sides of each change, in two zones with DST and one without', () => {
    const cases: [string, string, string][] = [
      ['America/New_York', '2027-03-13T09:00', '2027-03-13T14:00:00.000Z'], // EST
      ['America/New_York', '2027-03-15T09:00', '2027-03-15T13:00:00.000Z'], // EDT
      ['America/New_York', '2026-10-31T09:00', '2026-10-31T13:00:00.000Z'],
      ['America/New_York', '2026-11-02T09:00', '2026-11-02T14:00:00.000Z'],
      ['Europe/Berlin', '2027-03-27T09:00', '2027-03-27T08:00:00.000Z'], // CET
      ['Europe/Berlin', '2027-03-29T09:00', '2027-03-29T07:00:00.000Z'], // CEST
      ['Europe/Berlin', '2026-10-24T09:00', '2026-10-24T07:00:00.000Z'],
      ['Europe/Berlin', '2026-10-26T09:00', '2026-10-26T08:00:00.000Z'],
      ['Asia/Kolkata', '2027-03-14T09:00', '2027-03-14T03:30:00.000Z'],
      ['Asia/Kolkata', '2026-11-01T09:00', '2026-11-01T03:30:00.000Z'],
    ];
    for (const [tz, local, utc] of cases) {
      const r = resolveWallTime(wall(local), tz);
      expect({ tz, local, utc: iso(r.instant), kind: r.kind }).toEqual({ tz, local, utc, kind: 'exact' });
      expect(iso(parseLocalInput(local, tz)!)).toBe(utc);
    }
  });

  test('a wall time in the skipped hour moves forward by the gap; one in the repeated hour is the earlier instant', () => {
    // New York, 14 March 2027: 02:00 EST → 03:00 EDT. 02:30 does not exist → 03:30 EDT.
    expect(resolveWallTime(wall('2027-03-14T02:30'), 'America/New_York')).toEqual({
      instant: new Date('2027-03-14T07:30:00Z'),
      kind: 'gap',
    });
    // New York, 1 November 2026: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST).
    expect(resolveWallTime(wall('2026-11-01T01:30'), 'America/New_York')).toEqual({
      instant: new Date('2026-11-01T05:30:00Z'),
      kind: 'overlap',
      later: new Date('2026-11-01T06:30:00Z'),
    });
    // Berlin, 28 March 2027: 02:30 does not exist → 03:30 CEST (01:30Z).
    expect(resolveWallTime(wall('2027-03-28T02:30'), 'Europe/Berlin')).toEqual({
      instant: new Date('2027-03-28T01:30:00Z'),
      kind: 'gap',
    });
    // Berlin, 25 October 2026: 02:30 happens at 00:30Z (CEST) and 01:30Z (CET).
    expect(resolveWallTime(wall('2026-10-25T02:30'), 'Europe/Berlin')).toEqual({
      instant: new Date('2026-10-25T00:30:00Z'),
      kind: 'overlap',
      later: new Date('2026-10-25T01:30:00Z'),
    });
    // Lord Howe Island moves by 30 minutes: 02:15 on 4 October 2026 → 02:45 (+11).
    const lh = resolveWallTime(wall('2026-10-04T02:15'), 'Australia/Lord_Howe');
    expect(lh.kind).toBe('gap');
    expect(iso(lh.instant)).toBe('2026-10-03T15:45:00.000Z');
    // Each result reads back as the wall time (or the time after the gap).
    expect(formatTime(zonedToUtc(wall('2027-03-14T02:30'), 'America/New_York'), 'America/New_York')).toBe('03:30');
    expect(formatTime(zonedToUtc(wall('2026-10-25T02:30'), 'Europe/Berlin'), 'Europe/Berlin')).toBe('02:30');
  });

  test('a day that starts at 01:00 (midnight skipped) starts at its first instant', () => {
    // Santiago, 6 September 2026: 00:00 → 01:00.
    const start = dayStart(parseDayKey('2026-09-06')!, 'America/Santiago');
    expect(iso(start)).toBe('2026-09-06T04:00:00.000Z');
    expect(dayKey(start, 'America/Santiago')).toBe('2026-09-06');
    expect(dayKey(new Date(start.getTime() - 1), 'America/Santiago')).toBe('2026-09-05');
  });
});

/** The next day (in the zone) after `from` whose offset differs from the day before's: a DST change. */
function nextChangeDay(tz: string, from: Date): string {
  let prev = offsetMs(from, tz);
  for (let t = from.getTime() + 3_600_000; t < from.getTime() + 400 * 86_400_000; t += 3_600_000) {
    const o = offsetMs(new Date(t), tz);
    if (o !== prev) return dayKey(new Date(t), tz);
    prev = o;
  }
  throw new Error(`no DST change in ${tz} within 400 days`);
}

const shiftDay = (key: string, days: number) => {
  const d = new Date(`${key}T00:00:00Z`);
  return new Date(d.getTime() + days * 86_400_000).toISOString().slice(0, 10);
};

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let stack: Stack;
let fake: FakeMastodon;

beforeAll(async () => {
  stack = await startPostStack();
  fake = await startFakeMastodon();
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

const zoneOf = async (userId: string) => (await stack.h.orm.em.fork().findOneOrFail(User, { id: userId })).timeZone;

describe("each person's time zone", () => {
  test("the first sign-in stores the browser's zone (pp_tz); a later sign-in from another zone does not replace it", async () => {
    const org = await makeOrg('PRO', 'TZ org');
    const email = `tz-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const user = await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password: 'correct horse battery' });
    expect(await zoneOf(user.id)).toBeNull();
    const b = new Browser(stack.app);
    b.jar.set('pp_tz', 'america/new_york');
    expect((await b.signIn(email, 'correct horse battery')).status).toBe(303);
    expect(await zoneOf(user.id)).toBe('America/New_York');
    // Shown in it from now on, whatever the cookie says; the header links to the settings.
    b.jar.set('pp_tz', 'Asia/Tokyo');
    const cal = await b.get('/calendar');
    expect((await cal.one('[data-testid="calendar-tz"]')).text).toBe('America/New_York');
    expect((await cal.one('[data-testid="header-tz"]')).attrs.href).toBe('/settings/time-zone');
    expect((await cal.one('[data-testid="header-tz"]')).text).toBe('America/New_York');
    expect((await cal.one('[data-testid="time-zone"]')).text).toBe('America/New_York');
    expect((await cal.one('body')).attrs['data-tz-unset']).toBeUndefined();
    // ?tz= still forces one for a page.
    expect((await (await b.get('/calendar?tz=Europe/Berlin')).one('[data-testid="calendar-tz"]')).text).toBe('Europe/Berlin');

    const again = new Browser(stack.app);
    again.jar.set('pp_tz', 'Asia/Tokyo');
    expect((await again.signIn(email, 'correct horse battery')).status).toBe(303);
    expect(await zoneOf(user.id)).toBe('America/New_York');
  });

  test('a session without a zone: the page says so; PUT /web/api/me/time-zone with ifUnset sets it once (CSRF, session, validation)', async () => {
    const { browser, user } = await signedInUser(stack.app);
    const page = await browser.get('/calendar');
    expect((await page.one('body')).attrs['data-tz-unset']).toBe('true');
    expect((await page.one('[data-testid="calendar-tz"]')).text).toBe('UTC');

    const noToken = await browser.json('PUT', '/web/api/me/time-zone', { timeZone: 'Europe/Berlin', ifUnset: true }, { csrf: false });
    expect(noToken.status).toBe(403);
    const crossSite = await browser.json(
      'PUT',
      '/web/api/me/time-zone',
      { timeZone: 'Europe/Berlin', ifUnset: true },
      { headers: { origin: 'https://evil.example' } },
    );
    expect(crossSite.status).toBe(403);
    const bad = await browser.json('PUT', '/web/api/me/time-zone', { timeZone: 'Mars/Olympus_Mons', ifUnset: true });
    expect(bad.status).toBe(422);
    expect(bad.json().error.details.fields[0].path).toBe('timeZone');
    const anonymous = await new Browser(stack.app).json('PUT', '/web/api/me/time-zone', { timeZone: 'Europe/Berlin' });
    expect(anonymous.status).toBe(401);
    expect(await zoneOf(user.id)).toBeNull();

    const first = await browser.json('PUT', '/web/api/me/time-zone', { timeZone: 'Europe/Berlin', ifUnset: true });
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ timeZone: 'Europe/Berlin', saved: true });
    const second = await browser.json('PUT', '/web/api/me/time-zone', { timeZone: 'Asia/Tokyo', ifUnset: true });
    expect(second.json()).toEqual({ timeZone: 'Europe/Berlin', saved: false });
    expect(await zoneOf(user.id)).toBe('Europe/Berlin');
    const after = await browser.get('/calendar');
    expect((await after.one('body')).attrs['data-tz-unset']).toBeUndefined();
    expect((await after.one('[data-testid="calendar-tz"]')).text).toBe('Europe/Berlin');
  });

  test('the settings page changes the zone (form with CSRF; an unknown zone → 422 with the form again)', async () => {
    const { browser, user } = await signedInUser(stack.app);
    const page = await browser.get('/settings/time-zone');
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="settings-tz-current"]')).text).toBe('UTC');
    const options = await page.query('[data-testid="tz-select"] option');
    expect(options.length).toBeGreaterThan(300);
    expect(options.filter((o) => o.attrs.selected !== undefined).map((o) => o.attrs.value)).toEqual(['UTC']);

    const forged = await browser.post('/settings/time-zone', { timeZone: 'Asia/Tokyo' }, { csrf: false });
    expect(forged.status).toBe(403);
    const unknown = await browser.post('/settings/time-zone', { timeZone: 'Not/AZone' });
    expect(unknown.status).toBe(422);
    expect((await unknown.one('[data-testid="form-errors"]')).text).toContain('IANA time zone');
    expect(await zoneOf(user.id)).toBeNull();

    const saved = await browser.post('/settings/time-zone', { timeZone: 'America/Los_Angeles' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/settings/time-zone?notice=saved');
    const shown = await browser.get(saved.location!);
    expect((await shown.one('[data-testid="notice"]')).text).toBe('Time zone saved.');
    expect((await shown.one('[data-testid="settings-tz-current"]')).text).toBe('America/Los_Angeles');
    expect((await shown.query('[data-testid="tz-select"] option[selected]')).map((o) => o.attrs.value)).toEqual(['America/Los_Angeles']);
    expect(await zoneOf(user.id)).toBe('America/Los_Angeles');

    // "Use this browser's time zone": the zone app.js put in browserTimeZone.
    const browserZone = await browser.post('/settings/time-zone', {
      timeZone: 'UTC',
      useBrowser: 'yes',
      browserTimeZone: 'Australia/Lord_Howe',
    });
    expect(browserZone.status).toBe(303);
    expect(await zoneOf(user.id)).toBe('Australia/Lord_Howe');
  });
});

describe('the calendar, the composer, a post page and drag-to-reschedule in the person’s zone, across a DST change', () => {
  test('09:00 local typed after the change is stored as the right UTC instant, shown as 09:00, and a drag across the change keeps 09:00', async () => {
    const tz = 'America/New_York';
    const { browser, user } = await signedInUser(stack.app);
    expect((await browser.post('/settings/time-zone', { timeZone: tz })).status).toBe(303);
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: user.organizationId,
      platform: 'MASTODON',
      name: 'Mastodon NY',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    const t0 = await stack.syncClock();
    const change = nextChangeDay(tz, new Date(t0.getTime() + 3 * 86_400_000));
    const before = shiftDay(change, -2);
    const after = shiftDay(change, 2);
    const beforeUtc = zonedToUtc(wall(`${before}T09:00`), tz);
    const afterUtc = zonedToUtc(wall(`${after}T09:00`), tz);
    // Across the change the offset differs by an hour: 09:00 is not the same UTC time of day.
    expect(Math.abs(offsetMs(beforeUtc, tz) - offsetMs(afterUtc, tz))).toBe(3_600_000);

    // The composer takes the person's zone (no ?tz, no cookie) and says which.
    browser.jar.delete('pp_tz');
    const form = await browser.get(`/posts/new?date=${after}`);
    expect((await form.one('input[name="tz"]')).attrs.value).toBe(tz);
    expect((await form.one('label[for="publishAt"]')).text).toContain(tz);
    expect((await form.one('[data-testid="composer-publish-at"]')).attrs.value).toBe(`${after}T09:00`);

    const create = async (day: string) => {
      const res = await browser.post('/posts', {
        channelIds: [channel.id],
        content: `NY ${day} ${crypto.randomUUID()}`,
        when: 'later',
        publishAt: `${day}T09:00`,
      });
      expect(res.status).toBe(303);
      return /^\/posts\/(post_[0-9a-z]+)\?/.exec(res.location!)![1]!;
    };
    const afterId = await create(after);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: afterId });
    expect(iso(row.scheduledAt)).toBe(iso(afterUtc));

    // The post's page and the calendar (month and week) show 09:00 and state the zone.
    const detail = await browser.get(`/posts/${afterId}`);
    expect((await detail.one('[data-testid="post-scheduled-at"]')).text).toContain('09:00');
    expect((await detail.one('[data-testid="post-tz"]')).text).toBe(`(${tz})`);
    for (const view of ['month', 'week']) {
      const cal = await browser.get(`/calendar?view=${view}&date=${after}`);
      expect((await cal.one('[data-testid="calendar-tz"]')).text).toBe(tz);
      const times = await cal.query(`[data-testid="day-${after}"] [data-post-id="${afterId}"] [data-testid="post-time"]`);
      expect(times.map((t) => t.text)).toEqual(['09:00']);
    }

    // A post at 09:00 before the change, dragged (PATCH {date}) to the day after it: still 09:00 local.
    const beforeId = await create(before);
    expect(iso((await stack.h.orm.em.fork().findOneOrFail(Post, { id: beforeId })).scheduledAt)).toBe(iso(beforeUtc));
    const moved = await browser.json('PATCH', `/web/api/posts/${beforeId}`, { date: after });
    expect(moved.status).toBe(200);
    expect(moved.json().scheduledAt).toBe(iso(afterUtc));
    const wf = await stack.env.client.workflow.getHandle(postWorkflowId(beforeId)).query(postStateQuery);
    expect(wf.publishAt).toBe(iso(afterUtc));
    const cal = await browser.get(`/calendar?view=week&date=${after}`);
    const times = await cal.query(`[data-testid="day-${after}"] [data-testid="post-time"]`);
    expect(times.map((t) => t.text)).toEqual(['09:00', '09:00']);
  });
});
