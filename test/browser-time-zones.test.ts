// Time zones in real headless Chromium: a browser in New York. The first sign-in stores the
// browser's zone; a session without one gets it from app.js; a post composed at 09:00 local on a
// day after a daylight-saving change is stored at the right UTC instant and shown at 09:00 on the
// calendar; a post at 09:00 before the change, dragged across it, stays at 09:00.
// Screenshot: test-results/screenshots/calendar.png, the month in New York time with posts and the
// queue's free slots; with UPDATE_SCREENSHOTS=1 also docs/screenshots/calendar.png for the README.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post, User } from '../db/entities/index.ts';
import { offsetMs, zonedToUtc } from '../lib/zoned-time.ts';
import { addChannel } from '../domain/channels.ts';
import { createSession, createUser } from '../services/users.ts';
import { dayKey, localInputValue } from '../web/time.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import {
  closeAll,
  docsScreenshot,
  lateBoundServer,
  launchChromium,
  type Browser,
  type BrowserContext,
  type Page,
  until,
} from './harness/browser.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const TZ = 'America/New_York';
type Stack = Awaited<ReturnType<typeof startPostStack>>;

let server: ReturnType<typeof lateBoundServer>;
let stack: Stack;
let mastodon: FakeMastodon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
let orgId: string;
let channelId: string;
/** The post added to the queue, and its slot. */
let queued: { id: string; at: Date } | undefined;
const email = `ny-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';

async function newNewYorkContext(): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ baseURL: server.url, timezoneId: TZ, locale: 'en-US', viewport: { width: 1280, height: 800 } });
  const p = await ctx.newPage();
  p.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${p.url()}: ${m.text()}`);
  });
  p.on('pageerror', (e) => problems.push(`${p.url()}: ${e.message}`));
  return { context: ctx, page: p };
}

/** The first day after `from` whose UTC offset differs from the day before's (a DST change), in the zone. */
function nextChangeDay(tz: string, from: Date): string {
  let prev = offsetMs(from, tz);
  for (let t = from.getTime() + 3_600_000; t < from.getTime() + 400 * 86_400_000; t += 3_600_000) {
    const o = offsetMs(new Date(t), tz);
    if (o !== prev) return dayKey(new Date(t), tz);
    prev = o;
  }
  throw new Error(`no DST change in ${tz} within 400 days`);
}
const shiftDay = (key: string, days: number) => new Date(Date.parse(`${key}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const at9 = (day: string) => {
  const [year, month, d] = day.split('-').map(Number) as [number, number, number];
  return zonedToUtc({ year, month, day: d, hour: 9, minute: 0 }, TZ);
};

beforeAll(async () => {
  server = lateBoundServer();
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'New York org');
  orgId = org.id;
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  channelId = (
    await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'NY Mastodon',
      credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
    })
  ).id;
  browser = await launchChromium();
  ({ context, page } = await newNewYorkContext());
});

afterAll(async () => {
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
  await mastodon?.stop();
});

const zoneOf = async (mail: string) => (await stack.h.orm.em.fork().findOneOrFail(User, { email: mail })).timeZone;

async function compose(day: string, content: string, time = '09:00'): Promise<string> {
  await page.goto(`/posts/new?date=${day}`);
  expect(await page.locator('label[for="publishAt"]').textContent()).toContain(TZ);
  await page.locator(`[data-testid="channel-option"][data-channel-id="${channelId}"]`).check();
  await page.getByTestId('composer-content').fill(content);
  await page.getByTestId('composer-when-later').check();
  await page.getByTestId('composer-publish-at').fill(`${day}T${time}`);
  await Promise.all([
    page.waitForURL(/\/posts\/post_[0-9a-z]+\?notice=created$/, { waitUntil: 'load' }),
    page.getByTestId('composer-submit').click(),
  ]);
  return (await page.getByTestId('post-detail').getAttribute('data-post-id'))!;
}

describe('a person in New York, across a daylight-saving change', () => {
  test("the first sign-in stores the browser's zone: the calendar and the header show America/New_York", async () => {
    expect(await zoneOf(email)).toBeNull();
    await page.goto('/sign-in');
    await page.getByTestId('sign-in-email').fill(email);
    await page.getByTestId('sign-in-password').fill(password);
    await Promise.all([page.waitForURL(/\/calendar$/, { waitUntil: 'load' }), page.getByTestId('sign-in-submit').click()]);
    expect(await zoneOf(email)).toBe(TZ);
    expect(await page.getByTestId('calendar-tz').textContent()).toBe(TZ);
    expect(await page.getByTestId('header-tz').textContent()).toBe(TZ);
  });

  test('09:00 composed on a day after the change: stored at the right UTC instant, 09:00 on the post page and the calendar; a drag across the change keeps 09:00', async () => {
    const t0 = await stack.syncClock();
    const change = nextChangeDay(TZ, new Date(t0.getTime() + 3 * 86_400_000));
    const before = shiftDay(change, -2);
    const after = shiftDay(change, 2);
    expect(Math.abs(offsetMs(at9(before), TZ) - offsetMs(at9(after), TZ))).toBe(3_600_000);

    const afterId = await compose(after, `After the change ${crypto.randomUUID()}`);
    const stored = await stack.h.orm.em.fork().findOneOrFail(Post, { id: afterId });
    expect(stored.scheduledAt.toISOString()).toBe(at9(after).toISOString());
    expect(await page.getByTestId('post-scheduled-at').textContent()).toContain('09:00');
    expect(await page.getByTestId('post-tz').textContent()).toBe(`(${TZ})`);

    const beforeId = await compose(before, `Before the change ${crypto.randomUUID()}`);
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id: beforeId })).scheduledAt.toISOString()).toBe(at9(before).toISOString());

    await page.goto(`/calendar?view=month&date=${change}`);
    const afterItem = page.getByTestId(`day-${after}`).locator(`[data-post-id="${afterId}"]`);
    expect(await afterItem.getByTestId('post-time').textContent()).toBe('09:00');
    const moving = page.getByTestId(`day-${before}`).locator(`[data-post-id="${beforeId}"]`);
    expect(await moving.getByTestId('post-time').textContent()).toBe('09:00');

    await moving.dragTo(page.getByTestId(`day-${after}`));
    await until(
      'the move to be announced',
      async () => (await page.getByTestId('calendar-message').textContent()) === `Post moved to ${after}.`,
    );
    const moved = page.getByTestId(`day-${after}`).locator(`[data-post-id="${beforeId}"]`);
    expect(await moved.getByTestId('post-time').textContent()).toBe('09:00');
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id: beforeId })).scheduledAt.toISOString()).toBe(at9(after).toISOString());
    // And after a reload, from the server.
    await page.reload();
    const times = await page.getByTestId(`day-${after}`).getByTestId('post-time').allTextContents();
    expect(times).toEqual(['09:00', '09:00']);
  });

  test('a session from before time zones (none stored): app.js stores the browser’s zone once and shows the page in it', async () => {
    const other = `ny2-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const em = stack.h.orm.em.fork();
    await createUser(em, { organizationId: orgId, email: other, password });
    const user = await em.findOneOrFail(User, { email: other });
    const session = await createSession(em, user, await stack.syncClock());
    const second = await newNewYorkContext();
    try {
      await second.context.addCookies([{ name: 'pp_session', value: session.token, url: server.url }]);
      await second.page.goto('/calendar');
      await until('the zone to be stored', async () => (await zoneOf(other)) === TZ);
      await until('the calendar in New York time', async () => (await second.page.getByTestId('calendar-tz').textContent()) === TZ);
      expect(await second.page.locator('body').getAttribute('data-tz-unset')).toBeNull();
    } finally {
      await second.context.close();
    }
  });

  test('Settings → Time zone: choose another zone, then "Use this browser\'s time zone" (shown by app.js) brings New York back', async () => {
    await page.getByTestId('header-tz').click();
    await page.waitForURL(/\/settings\/time-zone$/);
    await page.getByTestId('tz-select').selectOption('Europe/Berlin');
    await Promise.all([page.waitForURL(/notice=saved$/), page.getByTestId('tz-save').click()]);
    expect(await page.getByTestId('header-tz').textContent()).toBe('Europe/Berlin');
    expect(await zoneOf(email)).toBe('Europe/Berlin');
    const useBrowser = page.getByTestId('tz-use-browser');
    expect(await useBrowser.isVisible()).toBe(true);
    expect(await useBrowser.textContent()).toBe(`Use this browser's time zone (${TZ})`);
    await Promise.all([page.waitForURL(/notice=saved$/), useBrowser.click()]);
    expect(await zoneOf(email)).toBe(TZ);
    expect(await page.getByTestId('settings-tz-current').textContent()).toBe(TZ);
  });

  test('the queue editor and "Add to queue": slots in New York time, the post lands on the first free one, the calendar marks the next', async () => {
    await page.goto('/channels');
    await Promise.all([page.waitForURL(/\/queue$/), page.getByTestId('channel-queue').click()]);
    expect(await page.getByTestId('queue-tz-select').inputValue()).toBe(TZ);
    await page.getByTestId('queue-day-wednesday').fill('7:30, 18:00');
    await Promise.all([page.waitForURL(/notice=saved$/), page.getByTestId('queue-save').click()]);
    const free = await page.getByTestId('queue-free-slot').evaluateAll((els) => els.map((e) => e.getAttribute('data-at')!));
    expect(free).toHaveLength(10);

    await page.goto('/posts/new');
    await page.locator(`[data-testid="channel-option"][data-channel-id="${channelId}"]`).check();
    await page.getByTestId('composer-content').fill('Weekly roundup: the best questions from the community this week.');
    await page.getByTestId('composer-when-queue').check();
    expect(await page.getByTestId('composer-publish-at').isDisabled()).toBe(true);
    await Promise.all([page.waitForURL(/\/posts\/post_[0-9a-z]+\?notice=created$/), page.getByTestId('composer-submit').click()]);
    const id = (await page.getByTestId('post-detail').getAttribute('data-post-id'))!;
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id })).scheduledAt.toISOString()).toBe(new Date(free[0]!).toISOString());
    queued = { id, at: new Date(free[0]!) };

    const next = new Date(free[1]!);
    await page.goto(`/calendar?view=week&date=${dayKey(next, TZ)}`);
    const slot = page.locator(`[data-testid="queue-slot"][data-at="${next.toISOString()}"]`);
    expect(await slot.getByTestId('queue-slot-time').textContent()).toMatch(/^(07:30|18:00)$/);
    await Promise.all([page.waitForURL(/\/posts\/new\?/), slot.getByTestId('queue-slot-link').click()]);
    expect(await page.getByTestId('composer-publish-at').inputValue()).toBe(localInputValue(next, TZ));
  });

  test("the month in New York time: posts beside the queue's free slots (the README's calendar.png)", async () => {
    // Slots on Thursday and Friday too, and a post on each of those days after the queued Wednesday:
    // all in the queued post's week, so in the month grid whatever today's date.
    await page.goto('/channels');
    await Promise.all([page.waitForURL(/\/queue$/), page.getByTestId('channel-queue').click()]);
    expect(await page.getByTestId('queue-day-wednesday').inputValue()).toBe('07:30, 18:00');
    await page.getByTestId('queue-day-thursday').fill('8:00');
    await page.getByTestId('queue-day-friday').fill('10:00');
    await Promise.all([page.waitForURL(/notice=saved$/), page.getByTestId('queue-save').click()]);

    const wednesday = dayKey(queued!.at, TZ);
    const thursday = shiftDay(wednesday, 1);
    const friday = shiftDay(wednesday, 2);
    const launch = await compose(thursday, 'Launch day: version 2.0 is out. What changed, in one thread.', '12:15');
    const tips = await compose(friday, 'Friday tips: three shortcuts that save a minute on every post.', '16:45');

    await page.goto(`/calendar?view=month&date=${wednesday}`);
    expect(await page.getByTestId('calendar-tz').textContent()).toBe(TZ);
    for (const [day, id, time] of [
      [wednesday, queued!.id, localInputValue(queued!.at, TZ).slice(11)],
      [thursday, launch, '12:15'],
      [friday, tips, '16:45'],
    ] as const) {
      const item = page.getByTestId(`day-${day}`).locator(`[data-testid="post-item"][data-post-id="${id}"]`);
      expect(await item.isVisible()).toBe(true);
      expect(await item.getByTestId('post-time').textContent()).toBe(time);
      expect(await item.getAttribute('data-status')).toBe('scheduled');
    }
    // The free slots are marked beside the posts: Thursday's at 08:00 and Friday's at 10:00.
    for (const [day, time] of [
      [thursday, '08:00'],
      [friday, '10:00'],
    ] as const) {
      const slot = page.getByTestId(`day-${day}`).getByTestId('queue-slot');
      expect(await slot.isVisible()).toBe(true);
      expect(await slot.getByTestId('queue-slot-time').textContent()).toBe(time);
    }
    await docsScreenshot(page, 'calendar');
  });

  test('no console errors or uncaught exceptions', () => {
    expect(problems).toEqual([]);
  });
});
