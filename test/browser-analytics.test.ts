// Analytics in the app, in real headless Chromium: the Analytics page (totals, the chart drawn by
// uPlot served from the app, per channel, top posts), a post's figures on its page, and the best
// times heat map on a channel's queue editor; no console error and no request leaves the app.
// Screenshot: docs/screenshots/analytics.png (with UPDATE_SCREENSHOTS=1).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { zonedToUtc } from '../lib/zoned-time.ts';
import { createUser } from '../services/users.ts';
import {
  closeAll,
  docsScreenshot,
  lateBoundServer,
  signedInChromium,
  type Browser,
  type BrowserContext,
  type Page,
  type PageProblem,
} from './harness/browser.ts';
import { makeChannel, makeOrg, publishedPostWithReadings } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: PageProblem[];

const email = `analytics-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';
const ids: { channelA: string; channelB: string; best: string } = { channelA: '', channelB: '', best: '' };

const _db = (text: string, values: unknown[] = []) => stack.h.pool.query(text, values);

const publishedPost = publishedPostWithReadings;

beforeAll(async () => {
  server = lateBoundServer();
  stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url, web: {} });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Analytics org');
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  const a = await makeChannel(org.id, 'MASTODON', { name: 'Brand Mastodon' });
  const b = await makeChannel(org.id, 'MASTODON', { name: 'Support Mastodon' });
  ids.channelA = a.id;
  ids.channelB = b.id;
  // Two weeks of posts on channel A at 09:xx UTC on the same weekday twice, and a few on B.
  const day = 86_400_000;
  const now = Date.now();
  for (let i = 1; i <= 12; i++) {
    const at = new Date(now - i * day - ((now - i * day) % day) + 9 * 3_600_000 + i * 60_000);
    const read = new Date(at.getTime() + 3_600_000);
    const later = new Date(at.getTime() + 6 * 3_600_000);
    const id = await publishedPost(org.id, i % 3 === 0 ? b.id : a.id, at, [
      [read, { likes: 2 * i, replies: i % 4, reposts: 1, impressions: 100 * i }],
      [later, { likes: 3 * i, replies: i % 5, reposts: 2, impressions: 150 * i }],
    ]);
    if (i === 12) ids.best = id;
  }
  const wall = zonedToUtc({ year: 2020, month: 1, day: 1, hour: 0, minute: 0 }, 'UTC'); // an unrelated, older post: not counted
  await publishedPost(org.id, a.id, wall, [[new Date(wall.getTime() + 3_600_000), { likes: 999 }]]);
  ({ browser, context, page, problems } = await signedInChromium(server.url, email, password));
}, 120_000);

afterAll(async () => {
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
});

describe('analytics in Chromium', () => {
  test('the Analytics page: totals, the chart drawn from the app’s own uPlot, per channel and top posts', async () => {
    await Promise.all([page.waitForURL(/\/analytics$/), page.getByTestId('nav-analytics').click()]);
    expect(await page.getByTestId('nav-analytics').getAttribute('aria-current')).toBe('page');
    // Latest figures of the 12 posts of the last 30 days: likes 3 × (1 + … + 12) = 234.
    expect(await page.getByTestId('analytics-total-likes').textContent()).toBe('234');
    expect(await page.getByTestId('analytics-total-reposts').textContent()).toBe('24');
    expect(await page.getByTestId('analytics-total-views').textContent()).toBe('—');
    // uPlot drew a canvas with a line for each series.
    await page.waitForSelector('[data-testid="analytics-chart"] [data-drawn="true"] canvas');
    expect(await page.locator('[data-testid="analytics-chart"] .u-legend .u-series').count()).toBe(4);
    const rows = page.getByTestId('analytics-channel-row');
    expect(await rows.count()).toBe(2);
    const top = page.getByTestId('analytics-top-post');
    expect(await top.count()).toBe(10);
    expect(await top.first().getAttribute('data-post-id')).toBe(ids.best);
    await docsScreenshot(page, 'analytics');

    // One channel, by week.
    await page.getByTestId('analytics-channel').selectOption(ids.channelB);
    await page.getByTestId('analytics-group-by').selectOption('week');
    await Promise.all([page.waitForURL(/channel=/), page.getByTestId('analytics-apply').click()]);
    expect(await page.getByTestId('analytics-channel-row').count()).toBe(1);
    // B has posts 3, 6, 9, 12: likes 3 × 30 = 90.
    expect(await page.getByTestId('analytics-total-likes').textContent()).toBe('90');
  });

  test('a post’s page shows its figures per channel and a chart of its readings', async () => {
    await page.goto('/analytics');
    await Promise.all([page.waitForURL(/\/posts\/post_/), page.getByTestId('analytics-top-post').first().locator('a').click()]);
    const section = page.getByTestId('post-figures-channel');
    expect(await section.count()).toBe(1);
    expect(await page.getByTestId(`post-figure-${ids.channelB}-likes`).textContent()).toBe('36');
    await page.waitForSelector('[data-testid="post-figures"] [data-drawn="true"] canvas');
  });

  test('the queue editor shows the channel’s best times as a heat map and suggests slots', async () => {
    await page.goto(`/channels/${ids.channelA}/queue`);
    const cells = page.getByTestId('best-times-cell');
    expect(await cells.count()).toBeGreaterThan(0);
    expect(await page.getByTestId('best-times-suggested').textContent()).toMatch(/Suggested slots: .*09:00/);
  });

  test('no console errors, failed or external requests on any page', () => {
    expect(problems).toEqual([]);
  });
});
