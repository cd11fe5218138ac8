// Drafts in real headless Chromium: an editor writes in the composer and clicks Save as draft (the
// button sends the form to /drafts by its formaction, no script), finds it under Drafts in the
// navigation, then on the calendar drags it by HTML5 drag and drop onto another day of the month
// (its time of day kept) and drags a draft without a time from beside the calendar onto a day
// (09:00 there); each move is announced, and the page reloaded shows them where they went. No
// console error. Screenshots: test-results/screenshots/drafts.png, calendar-drafts.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addChannel } from '../domain/channels.ts';
import { getDraft, listDrafts } from '../domain/posts/drafts.ts';
import { createUser } from '../services/users.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { closeAll, launchChromium, lateBoundServer, screenshot, signedInContext, type Browser, until } from './harness/browser.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let browser: Browser;

beforeAll(async () => {
  server = lateBoundServer();
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ publicBaseUrl: server.url, web: {} });
  server.setHandler((request) => stack.app.handle(request));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await closeAll(undefined, browser);
  server?.stop();
  await stack?.stop();
  await mastodon?.stop();
});

const pad = (n: number) => String(n).padStart(2, '0');

describe('drafts in Chromium', () => {
  test('Save as draft from the composer, then drag drafts onto days of the calendar', async () => {
    const org = await makeOrg('PRO', 'Drafts in Chromium');
    const email = `editor-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const password = 'correct horse battery';
    await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password, role: 'editor' });
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'Team',
      credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
    });
    const now = await stack.syncClock();
    // Days of next month's grid (the browser and the person are in UTC): the 10th, moved to the 12th.
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const day = (d: number) => `${month.getUTCFullYear()}-${pad(month.getUTCMonth() + 1)}-${pad(d)}`;
    const text = `A draft for the calendar ${crypto.randomUUID().slice(0, 8)}`;

    const { page, problems, context } = await signedInContext(browser, server.url, email, password);
    try {
      await page.goto('/posts/new');
      await page.locator(`[data-testid="channel-option"][data-channel-id="${channel.id}"]`).check();
      await page.getByTestId('composer-content').fill(text);
      await page.getByTestId('composer-publish-at').fill(`${day(10)}T14:30`);
      await Promise.all([
        page.waitForURL(/\/drafts\/drf_[0-9a-z]+\/edit\?notice=draft-saved$/, { waitUntil: 'load' }),
        page.getByTestId('composer-save-draft').click(),
      ]);
      expect(await page.getByTestId('notice').textContent()).toBe('Draft saved.');
      const id = (await page.getByTestId('composer-form').getAttribute('data-draft-id'))!;
      expect(await getDraft(stack.h.orm.em.fork(), org.id, id, 'all')).toMatchObject({
        content: text,
        channelIds: [channel.id],
        intendedAt: `${day(10)}T14:30:00.000Z`,
      });
      expect(mastodon.statuses.filter((s) => s.text === text)).toEqual([]);

      // Under Drafts in the navigation.
      await Promise.all([page.waitForURL(/\/drafts$/), page.getByTestId('nav-drafts').click()]);
      expect(await page.locator(`[data-testid="draft-item"][data-draft-id="${id}"] [data-testid="draft-text"]`).textContent()).toBe(text);
      await screenshot(page, 'drafts');
      // A second draft, without a time: saved with the time field emptied.
      await page.goto('/posts/new');
      await page.getByTestId('composer-content').fill('No day yet');
      await page.getByTestId('composer-publish-at').fill('');
      await Promise.all([page.waitForURL(/notice=draft-saved$/, { waitUntil: 'load' }), page.getByTestId('composer-save-draft').click()]);
      const timeless = (await page.getByTestId('composer-form').getAttribute('data-draft-id'))!;
      expect((await getDraft(stack.h.orm.em.fork(), org.id, timeless, 'all')).intendedAt).toBeNull();

      await page.goto(`/calendar?view=month&date=${day(10)}`);
      const message = page.getByTestId('calendar-message');
      const onDay = (d: number) => page.getByTestId(`day-${day(d)}`).locator(`[data-testid="calendar-draft"][data-draft-id="${id}"]`);
      expect(await onDay(10).getByTestId('calendar-draft-time').textContent()).toBe('14:30');
      await onDay(10).dragTo(page.getByTestId(`day-${day(12)}`));
      await until('the move to be announced', async () => (await message.textContent()) === `Draft moved to ${day(12)}.`);
      expect(await onDay(12).count()).toBe(1);
      expect(await onDay(10).count()).toBe(0);
      expect((await getDraft(stack.h.orm.em.fork(), org.id, id, 'all')).intendedAt).toBe(`${day(12)}T14:30:00.000Z`);

      // The one without a time, from beside the calendar onto the 14th: 09:00 there.
      const tray = page.getByTestId('calendar-unplaced-drafts');
      const loose = tray.locator(`[data-draft-id="${timeless}"]`);
      await loose.dragTo(page.getByTestId(`day-${day(14)}`));
      await until('the second move to be announced', async () => (await message.textContent()) === `Draft moved to ${day(14)}.`);
      const placed = page.getByTestId(`day-${day(14)}`).locator(`[data-draft-id="${timeless}"]`);
      expect(await placed.getByTestId('calendar-draft-time').textContent()).toBe('09:00');
      expect(await tray.isHidden()).toBe(true);
      expect((await getDraft(stack.h.orm.em.fork(), org.id, timeless, 'all')).intendedAt).toBe(`${day(14)}T09:00:00.000Z`);
      await screenshot(page, 'calendar-drafts');

      // Reloaded: from the server, where they went.
      await page.reload();
      expect(await onDay(12).getByTestId('calendar-draft-time').textContent()).toBe('14:30');
      expect(await placed.getByTestId('calendar-draft-time').textContent()).toBe('09:00');
      expect(await page.getByTestId('calendar-unplaced-drafts').count()).toBe(0);
      // Nothing was scheduled or published.
      expect((await listDrafts(stack.h.orm.em.fork(), org.id, 'all', { limit: 10, status: 'scheduled' })).data).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
