// A thread composed in real headless Chromium: three replies added in the composer, reordered
// (each counter moves with its reply and counts what is typed), published now on a fake Mastodon
// instance, and the post's page showing each item's outcome as it changes; no console error and no
// request leaves the app. Screenshots: test-results/screenshots/composer-thread.png, post-thread.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { addChannel } from '../domain/channels.ts';
import { createUser } from '../services/users.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import {
  closeAll,
  lateBoundServer,
  signedInChromium,
  screenshot,
  type Browser,
  type BrowserContext,
  type Page,
  type PageProblem,
  until,
} from './harness/browser.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: PageProblem[];
let duplicateIds: Map<string, string[]>;
let channelId: string;

const email = `threads-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';

beforeAll(async () => {
  server = lateBoundServer();
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url, web: {} });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Threads org');
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'Team Mastodon',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  channelId = channel.id;
  ({ browser, context, page, problems, duplicateIds } = await signedInChromium(server.url, email, password));
}, 120_000);

afterAll(async () => {
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
  await mastodon?.stop();
});

describe('a thread in Chromium', () => {
  test('add three replies, reorder them, counters follow; published now, the post page shows each item', async () => {
    await stack.syncClock();
    await page.goto('/posts/new');
    const items = page.locator('[data-testid="thread-items"] [data-testid="thread-item"]');
    // The blank slots a form without JavaScript offers are gone; "Add a reply" makes each item.
    expect(await items.count()).toBe(0);
    expect(await page.locator('[data-testid="follow-up-target"][data-follow-platform="MASTODON"]').isVisible()).toBe(true);
    const tag = crypto.randomUUID().slice(0, 8);
    const replies = [`one ${tag}`, `two two ${tag}`, `three three three ${tag}`];
    for (const reply of replies) {
      await page.getByTestId('thread-add').click();
      await page.locator('[data-testid="thread-items"] [data-testid="thread-item"]:last-child textarea').fill(reply);
    }
    expect(await items.count()).toBe(3);
    const count = (slot: number) => page.locator(`[data-count-source="thread-${slot}"][data-channel-id="${channelId}"]`);
    for (const [i, reply] of replies.entries()) {
      await until(`reply ${i + 1} counted`, async () => (await count(i).getAttribute('data-count')) === String(reply.length));
    }
    // The counter changes as the reply is typed (Mastodon's count, asked of the server).
    const withLink = String(replies[0]!.length + 1 + 23);
    await page.locator('#thread-0').pressSequentially(' https://example.com/a-long-link-counted-as-23');
    await until('reply 1 counted with its URL as 23', async () => (await count(0).getAttribute('data-count')) === withLink);
    replies[0] = `${replies[0]} https://example.com/a-long-link-counted-as-23`;

    // First down, then the (new) last up: two, three, one.
    await items.nth(0).getByTestId('thread-move-down').click();
    await items.nth(2).getByTestId('thread-move-up').click();
    const order = [replies[1]!, replies[2]!, replies[0]!];
    expect(
      await page
        .locator('[data-testid="thread-items"] textarea')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('name'), (e as unknown as { value: string }).value])),
    ).toEqual(order.map((r, i) => [`thread_${i}`, r]));
    // Each counter moved with its reply.
    expect(await count(2).getAttribute('data-count')).toBe(withLink);
    expect(await count(0).getAttribute('data-count')).toBe(String(replies[1]!.length));
    expect(await items.nth(0).getByTestId('thread-move-up').isDisabled()).toBe(true);
    expect(await items.nth(0).locator('label').first().textContent()).toBe('Reply 1');

    // A fourth, removed again.
    await page.getByTestId('thread-add').click();
    await items.nth(3).getByTestId('thread-remove').click();
    expect(await items.count()).toBe(3);

    const content = `The post ${tag}`;
    await page.getByTestId('composer-content').fill(content);
    await page.getByTestId('composer-when-now').check();
    await screenshot(page, 'composer-thread');
    await Promise.all([page.waitForURL(/\/posts\/post_[0-9a-z]+\?notice=created$/), page.getByTestId('composer-submit').click()]);

    const rows = page.locator(`[data-pc-items="${channelId}"] [data-testid="post-channel-item"]`);
    expect(await rows.count()).toBe(4);
    expect(await page.getByTestId('post-item-text').allTextContents()).toEqual([content, ...order]);
    // The page's live feed turns every item published, each with its own link.
    await until(
      'every item published',
      async () => (await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))).every((s) => s === 'published'),
      30_000,
    );
    const sent = mastodon.statuses.filter((s) => s.text.includes(tag));
    expect(sent.map((s) => s.text)).toEqual([content, ...order]);
    expect(await page.getByTestId('post-item-url').evaluateAll((els) => els.map((e) => e.getAttribute('href')))).toEqual(
      sent.map((s) => s.url),
    );
    await screenshot(page, 'post-thread');
    expect(problems).toEqual([]);
    expect(Object.fromEntries(duplicateIds)).toEqual({});
  }, 60_000);
});
