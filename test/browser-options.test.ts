// The composer's TikTok options in real headless Chromium: choosing a TikTok channel shows its
// panel, whose privacy select is filled from the account's creator_info (the fake's levels, none
// chosen) and whose interactions the creator turned off are checked and locked; sending without a
// level shows the refusal at the field; choosing one and publishing now sends exactly that level to
// TikTok. No console error and no request leaves the app.
// Screenshot: test-results/screenshots/composer-options.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MediaItem, Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createTikTokConnector } from '../platforms/tiktok.ts';
import { createUser } from '../services/users.ts';
import { FAKE_APP, startFakeTikTok, type FakeTikTok } from './fakes/tiktok.ts';
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
import { makeChannel, makeOrg, readyMedia } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let tiktok: FakeTikTok;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: PageProblem[];
let duplicateIds: Map<string, string[]>;
let channelId: string;
let videoId: string;

const email = `options-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';

beforeAll(async () => {
  server = lateBoundServer();
  tiktok = await startFakeTikTok({ processingPolls: 0 });
  // Levels TikTok's full list has but not all of them, and comments off: what the page shows is the account's.
  tiktok.creator.privacy_level_options = ['MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];
  tiktok.creator.comment_disabled = true;
  const connectors = {
    TIKTOK: createTikTokConnector({ baseUrl: tiktok.url, oauth: FAKE_APP, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 5_000 }),
  };
  stack = await startPostStack({ storage: 'disk', publicBaseUrl: server.url, web: {}, connectors });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Options org');
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  // Two channels, so nothing is chosen when the composer opens.
  await makeChannel(org.id, 'LINKEDIN', { name: 'Our LinkedIn' });
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'TIKTOK',
    name: 'Kites on TikTok',
    credentials: { accessToken: 'good-token', refreshToken: 'good-refresh' },
  });
  channelId = channel.id;
  // A ready video in the library (TikTok takes one video); the fake takes any bytes.
  videoId = await readyMedia(stack.storage!, org.id);
  const em = stack.h.orm.em.fork();
  Object.assign(await em.findOneOrFail(MediaItem, { id: videoId }), {
    type: 'video',
    mimeType: 'video/mp4',
    fileName: 'clip.mp4',
    durationSeconds: 2,
    width: 160,
    height: 120,
  });
  await em.flush();
  ({ browser, context, page, problems, duplicateIds } = await signedInChromium(server.url, email, password));
}, 120_000);

afterAll(async () => {
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
  await tiktok?.stop();
});

/** The privacy select's choices (value, chosen) as the page has them. */
const privacyChoices = () =>
  page
    .getByTestId('option-tiktok-privacyLevel')
    .evaluate((el) =>
      Array.from((el as unknown as { options: { value: string; selected: boolean }[] }).options, (o) => [o.value, o.selected]),
    );

describe('TikTok options in Chromium', () => {
  test('privacy filled from creator_info with nothing chosen; refused without one, at the field; the level chosen is the one TikTok gets', async () => {
    await stack.syncClock();
    await page.goto('/posts/new');
    const panel = page.getByTestId('options-TIKTOK');
    expect(await panel.isVisible()).toBe(false);
    await page.locator(`[data-testid="channel-option"][data-channel-id="${channelId}"]`).check();
    expect(await panel.isVisible()).toBe(true);
    const filled = [
      ['', true],
      ['MUTUAL_FOLLOW_FRIENDS', false],
      ['SELF_ONLY', false],
    ];
    await until('the privacy levels of the account', async () => JSON.stringify(await privacyChoices()) === JSON.stringify(filled));
    expect(await page.getByTestId('option-tiktok-privacyLevel').inputValue()).toBe('');
    expect(await page.locator('#opt-tiktok-privacyLevel option').first().textContent()).toBe('Choose who can see it');
    // Comments are off for this creator: checked and locked; duets are the creator's to choose.
    const comments = page.getByTestId('option-tiktok-disableComment');
    expect([await comments.isChecked(), await comments.isDisabled()]).toEqual([true, true]);
    expect(await page.getByTestId('option-tiktok-disableDuet').isDisabled()).toBe(false);
    expect(await panel.locator('[data-live-info]').textContent()).toBe('Posting as @kite.maker, videos up to 600 s.');

    const tag = crypto.randomUUID().slice(0, 8);
    await page.getByTestId('composer-content').fill(`Kites in a storm ${tag}`);
    await page.locator(`[data-testid="media-option"][value="${videoId}"]`).check();
    await page.getByTestId('composer-when-now').check();
    await Promise.all([page.waitForURL(/\/posts$/), page.getByTestId('composer-submit').click()]);
    const error = page.locator('#opt-tiktok-privacyLevel-error');
    expect(await error.getAttribute('data-testid')).toBe('option-error');
    expect(await error.textContent()).toContain('is required');
    expect(await page.getByTestId('option-tiktok-privacyLevel').getAttribute('aria-invalid')).toBe('true');
    expect(tiktok.publishes).toHaveLength(0);

    // The form came back as sent; the select is filled again, still with nothing chosen.
    await until('the privacy levels again', async () => JSON.stringify(await privacyChoices()) === JSON.stringify(filled));
    await page.getByTestId('option-tiktok-privacyLevel').selectOption('SELF_ONLY');
    await screenshot(page, 'composer-options');
    await Promise.all([page.waitForURL(/\/posts\/post_[0-9a-z]+\?notice=created$/), page.getByTestId('composer-submit').click()]);
    const postId = /\/posts\/(post_[0-9a-z]+)/.exec(page.url())![1]!;
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId });
    expect(row.options).toEqual({ tiktok: { privacyLevel: 'SELF_ONLY' } });
    await until('published on TikTok', () => tiktok.publishes.some((p) => p.post !== null), 30_000);
    expect(tiktok.publishes).toHaveLength(1);
    expect(tiktok.publishes[0]!.postInfo).toMatchObject({
      title: `Kites in a storm ${tag}`,
      privacy_level: 'SELF_ONLY',
      disable_comment: true,
      disable_duet: false,
    });
    await until(
      'the post page shows it published',
      async () => (await page.getByTestId('post-detail').getAttribute('data-status')) === 'published',
    );
    // Chromium logs the refused form's own 422 answer; nothing else went wrong.
    expect(problems).toEqual([
      {
        kind: 'console',
        url: `${server.url}/posts`,
        text: 'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      },
    ]);
    expect(Object.fromEntries(duplicateIds)).toEqual({});
  }, 60_000);
});
