// The composer's live preview in real headless Chromium: typing updates each chosen channel's
// preview (its own text or the main one), a long link shows as the short link it becomes while the
// organization shortens links and the counters count it as sent (23 on X and Mastodon, the short
// link's length on Bluesky), both following the Links section's "Shorten links" box as it
// changes; the thread's replies and the first comment show as each platform gets them, media as
// thumbnails, and markup typed shows as text. No console error and no request leaves the app.
// Screenshot: the README's composer.png (a thread, X's options, the preview, Save as draft, and the
// navigation with Drafts, Import, Approvals, Inbox and Feeds): test-results/screenshots/composer.png,
// copied to docs/screenshots/ with UPDATE_SCREENSHOTS=1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Locator } from 'playwright-core';
import { setLinkDefaults } from '../domain/links/choice.ts';
import { placeholderShortUrl, useShortLinkBase } from '../domain/links/rewrite.ts';
import { loadConfig } from '../lib/config.ts';
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
  until,
} from './harness/browser.ts';
import { makeChannel, makeOrg, readyMedia } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: PageProblem[];
let duplicateIds: Map<string, string[]>;
let x: Channel;
let mastodon: Channel;
let bluesky: Channel;
let facebook: Channel;

// The same length every run: the header (and so the screenshot) keeps its size.
const email = `composer-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';
const LINK = 'https://example.com/blog/2030/how-we-plan-a-week-of-posts-without-losing-the-thread';
const SHORTEN = { shorten: true };

type Channel = Awaited<ReturnType<typeof makeChannel>>;

beforeAll(async () => {
  server = lateBoundServer();
  stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url, web: {} });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Kite Club');
  // The owner: the navigation shows every page.
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  await setLinkDefaults(stack.h.orm.em.fork(), org.id, SHORTEN);
  x = await makeChannel(org.id, 'X', { name: 'Kite Club' });
  mastodon = await makeChannel(org.id, 'MASTODON', { name: 'kites@mastodon' });
  bluesky = await makeChannel(org.id, 'BLUESKY', { name: 'kiteclub.bsky' });
  facebook = await makeChannel(org.id, 'FACEBOOK', { name: 'Kite Club Page' });
  await readyMedia(stack.storage!, org.id, { background: '#2f6fdd' });
  // Short links on a domain, as a deployment's SHORT_LINK_BASE_URL: X and Mastodon count a URL
  // only where its host has a top-level domain (localhost's is not one).
  useShortLinkBase('https://go.kites.example.com');
  ({ browser, context, page, problems, duplicateIds } = await signedInChromium(server.url, email, password));
}, 120_000);

afterAll(async () => {
  useShortLinkBase(loadConfig({}).shortLinkBaseUrl);
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
});

const box = (c: Channel) => page.locator(`[data-testid="channel-option"][data-channel-id="${c.id}"]`);
const previewOf = (c: Channel) =>
  page.locator(`[data-testid="composer-preview"] [data-testid="preview-channel"][data-channel-id="${c.id}"]`);
const counter = (c: Channel) => page.locator(`[data-testid="char-count"][data-channel-id="${c.id}"]`);
const texts = (l: Locator) => l.evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));

/** Waits until the locator's text is `want` (the preview is redrawn a moment after typing stops). */
async function untilText(what: string, l: Locator, want: string) {
  await until(what, async () => (await l.count()) === 1 && (await l.textContent())?.trim() === want, 10_000);
}

async function untilCount(c: Channel, want: number) {
  await until(
    `${c.platform}'s counter at ${want}`,
    async () => (await counter(c).getAttribute('data-count')) === String(want) && (await counter(c).getAttribute('data-pending')) === null,
    10_000,
  );
}

describe('the composer preview in Chromium', () => {
  test('typing updates each channel’s preview; a long link is the short link, counted as sent; markup shows as text', async () => {
    await page.goto('/posts/new');
    expect(await page.getByTestId('preview-empty').isVisible()).toBe(true);
    for (const c of [x, mastodon, bluesky]) await box(c).check();
    await until(
      'three previews',
      async () => (await page.locator('[data-testid="composer-preview"] [data-testid="preview-channel"]').count()) === 3,
    );
    expect(await page.getByTestId('composer-links-shorten').isChecked()).toBe(true);

    const content = page.getByTestId('composer-content');
    await content.pressSequentially('Hello <b>kites</b> & friends');
    for (const c of [x, mastodon, bluesky])
      await untilText(`${c.platform}'s preview`, previewOf(c).getByTestId('preview-text'), 'Hello <b>kites</b> & friends');
    // Escaped by the server: the text holds no element of the user's.
    expect(await page.locator('[data-testid="preview-text"] b').count()).toBe(0);

    const prefix = 'Hello <b>kites</b> & friends ';
    await content.pressSequentially(` ${LINK}`);
    const short = placeholderShortUrl();
    for (const c of [x, mastodon, bluesky])
      await untilText(`${c.platform}'s short link`, previewOf(c).getByTestId('preview-text'), `${prefix}${short}`);
    expect(await previewOf(x).getByTestId('preview-short-link').getAttribute('data-url')).toBe(LINK);
    expect(await page.getByTestId('composer-preview').textContent()).not.toContain('example.com/blog');

    // The counters count the text as sent, by the server's measure: a link is 23 on X and Mastodon.
    const text = `${prefix.trimEnd()} ${LINK}`;
    expect(await content.inputValue()).toBe(text);
    await untilCount(x, prefix.length + 23);
    await untilCount(mastodon, prefix.length + 23);
    // Bluesky counts characters: the short link's, not the long link's.
    expect(await counter(bluesky).getAttribute('data-count-rule')).toBe('server');
    await untilCount(bluesky, prefix.length + short.length);
    // "Shorten links" unticked: the preview and the counters follow the box at once.
    await page.getByTestId('composer-links-shorten').uncheck();
    await untilText("X's link as written", previewOf(x).getByTestId('preview-text'), text);
    await untilCount(bluesky, text.length);
    await page.getByTestId('composer-links-shorten').check();
    await untilCount(bluesky, prefix.length + short.length);

    // A text of its own on Bluesky: only its preview changes.
    await page.getByTestId('platform-text-BLUESKY').locator('summary').click();
    await page.getByTestId('platform-text-input-BLUESKY').fill('Sky only');
    await untilText("Bluesky's own text", previewOf(bluesky).getByTestId('preview-text'), 'Sky only');
    expect((await previewOf(x).getByTestId('preview-text').textContent())?.trim()).toBe(`${prefix}${short}`);
    await untilCount(bluesky, 'Sky only'.length);
    await page.getByTestId('platform-text-input-BLUESKY').fill('');
    await untilText('Bluesky back to the main text', previewOf(bluesky).getByTestId('preview-text'), `${prefix}${short}`);
    await page.getByTestId('platform-text-BLUESKY').locator('summary').click();
    expect(problems).toEqual([]);
  }, 60_000);

  test('a thread and a first comment show as each platform gets them; media as thumbnails; the README’s composer', async () => {
    await box(facebook).check();
    await page.locator('[data-testid="media-option"]').first().check();
    await page.getByTestId('thread-add').click();
    await page
      .locator('[data-testid="thread-items"] [data-testid="thread-item"]:last-child textarea')
      .fill('Reply: the kites we fly on Sundays');
    await page.getByTestId('first-comment').fill('Photos from the last meet-up are in the album.');
    const thread = ['Photos from the last meet-up are in the album.', 'Reply: the kites we fly on Sundays'];
    for (const c of [x, mastodon, bluesky]) {
      await until(
        `${c.platform}'s thread in the preview`,
        async () => JSON.stringify(await texts(previewOf(c).getByTestId('preview-follow-up-text'))) === JSON.stringify(thread),
        10_000,
      );
      // The first comment is the first reply on a thread platform.
      expect(
        await previewOf(c)
          .getByTestId('preview-follow-up')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-kind'))),
      ).toEqual(['reply', 'reply']);
    }
    // Facebook: the comment under the post, no thread.
    await until('Facebook’s comment', async () => (await previewOf(facebook).getByTestId('preview-follow-up').count()) === 1, 10_000);
    expect(await previewOf(facebook).getByTestId('preview-follow-up').getAttribute('data-kind')).toBe('comment');
    expect((await previewOf(facebook).getByTestId('preview-follow-up-text').textContent())?.trim()).toBe(thread[0]!);
    for (const c of [x, mastodon, bluesky, facebook]) {
      await until(`${c.platform}'s thumbnail`, async () => (await previewOf(c).getByTestId('preview-media').count()) === 1, 10_000);
      expect(
        await previewOf(c)
          .locator('img[data-testid="preview-media"]')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0);
    }

    // The README's composer: a thread, X's options, the preview and Save as draft.
    const announcement = 'Kite meet-up on Sunday at 10, north beach. Bring a spare line!';
    await page.getByTestId('composer-content').fill(`${announcement} ${LINK}`);
    await untilText(
      'the announcement in the preview',
      previewOf(x).getByTestId('preview-text'),
      `${announcement} ${placeholderShortUrl()}`,
    );
    await page.getByTestId('option-x-replySettings').selectOption('following');
    await page.getByTestId('composer-when-later').check();
    await page.getByTestId('composer-publish-at').fill('2030-05-04T10:30');
    await page.getByTestId('composer-publish-at').blur();
    expect(await page.getByTestId('options-X').isVisible()).toBe(true);
    expect(await page.getByTestId('composer-save-draft').isVisible()).toBe(true);
    expect(await page.getByTestId('composer-preview').isVisible()).toBe(true);
    for (const nav of ['nav-drafts', 'nav-import', 'nav-approvals', 'nav-inbox', 'nav-feeds'])
      expect(await page.getByTestId(nav).isVisible()).toBe(true);
    await until(
      'the previews and counters settled',
      async () => (await page.locator('[data-testid="preview-channels"][aria-busy], [data-pending]').count()) === 0,
    );
    // From the top: the preview (kept in view as the form scrolls) beside the channels and the text,
    // on a screen tall enough to show every channel's.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.setViewportSize({ width: 1280, height: 2200 });
    await docsScreenshot(page, 'composer');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(problems).toEqual([]);
    expect(Object.fromEntries(duplicateIds)).toEqual({});
  }, 60_000);
});
