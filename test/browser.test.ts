// End to end in real headless Chromium: the app (API + web pages) on a loopback socket, wired to
// the time-skipping Temporal server, a worker with the Mastodon connector, a disk object store
// and the rate limiter (test/harness/post-stack.ts); a local fake OAuth provider standing in for
// X and a fake Mastodon instance. One person of a fresh organization goes through the main
// flows in order: sign in, connect channels, create an API key, an API post in the calendar, a
// post composed and published from the app, a reschedule, revoking the key; then a keyboard-focus
// check, a 375 px calendar, and no console errors on any page visited.
// Screenshots: test-results/screenshots/*.png, overwritten each run. post-failed and webhooks are
// the README's too: with UPDATE_SCREENSHOTS=1 the run copies them to docs/screenshots/
// (calendar.png there comes from browser-time-zones.test.ts, composer.png from
// browser-composer-preview.test.ts, analytics.png from browser-analytics.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createUser } from '../services/users.ts';
import { postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import { dayKey, formatDateTime, formatTime, localInputValue } from '../web/time.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeOAuth, type FakeOAuth } from './fakes/oauth.ts';
import {
  closeAll,
  docsScreenshot,
  lateBoundServer,
  launchChromium,
  newRecordedContext,
  screenshot,
  visitedPaths,
  type Browser,
  type BrowserContext,
  type Page,
  type PageProblem,
  until,
} from './harness/browser.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;

let server: ReturnType<typeof lateBoundServer>;
let stack: Stack;
let oauthX: FakeOAuth;
let mastodon: FakeMastodon;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: PageProblem[];
let duplicateIds: Map<string, string[]>;
let visited: Set<string>;

const email = `browser-${crypto.randomUUID().slice(0, 8)}@example.com`;
const password = 'correct horse battery staple';

// Filled in as the flows go; later tests build on earlier ones.
const state: {
  xChannelId?: string;
  mastodonChannelId?: string;
  apiKey?: string;
  keyId?: string;
  apiPostId?: string;
  apiPostAt?: Date;
  publishedPostId?: string;
} = {};

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const graphemes = (s: string) => [...segmenter.segment(s)].length;

/** The API, from outside the browser, on the same socket. */
async function api(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Clicks something that navigates, and waits for the new page to have loaded. */
async function clickAndWait(testId: string | ReturnType<Page['getByTestId']>, url: RegExp) {
  const target = typeof testId === 'string' ? page.getByTestId(testId) : testId;
  await Promise.all([page.waitForURL(url, { waitUntil: 'load' }), target.click()]);
}

const attr = (testId: string, name: string) => page.getByTestId(testId).getAttribute(name);

beforeAll(async () => {
  server = lateBoundServer();
  oauthX = await startFakeOAuth({ clientId: 'x-app', clientSecret: 'x-secret' });
  mastodon = await startFakeMastodon();
  stack = await startPostStack({
    storage: 'disk',
    publicBaseUrl: server.url,
    web: {
      platforms: { X_CLIENT_ID: 'x-app', X_CLIENT_SECRET: 'x-secret', X_AUTHORIZE_URL: oauthX.authorizeUrl, X_TOKEN_URL: oauthX.tokenUrl },
    },
  });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Browser test org');
  await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email, password });
  browser = await launchChromium();
  ({ context, page, problems, duplicateIds } = await newRecordedContext(browser, server.url));
  visited = visitedPaths(page);
});

afterAll(async () => {
  await closeAll(context, browser);
  server?.stop();
  await stack?.stop();
  await oauthX?.stop();
  await mastodon?.stop();
});

describe('the web application in Chromium', () => {
  test('1. sign in with the form: lands on the calendar, signed in as the user', async () => {
    await page.goto('/');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.getByTestId('sign-in-email').fill(email);
    await page.getByTestId('sign-in-password').fill(password);
    await clickAndWait('sign-in-submit', /\/calendar$/);
    expect(await page.getByTestId('current-user').textContent()).toBe(email);
    expect(await page.getByTestId('calendar-month').count()).toBe(1);
    expect(await page.getByTestId('calendar-tz').textContent()).toBe('UTC');
    expect(await attr('nav-calendar', 'aria-current')).toBe('page');
  });

  test('2. connect X through the OAuth provider (authorize → callback) and Mastodon with credentials: both listed as active', async () => {
    await clickAndWait('nav-channels', /\/channels$/);
    expect(await page.getByTestId('no-channels').count()).toBe(1);

    await clickAndWait('connect-X', /\/channels\/connect\/x$/);
    const oauthForm = page.getByTestId('oauth-start-form');
    await oauthForm.getByTestId('channel-name-input').fill('Brand on X');
    // The browser is sent to the provider, which approves at once and redirects back to the callback.
    const hops: string[] = [];
    const onNav = (f: { url: () => string }) => hops.push(f.url());
    page.on('framenavigated', onNav);
    const toProvider = page.waitForRequest((r) => r.url().startsWith(oauthX.authorizeUrl));
    await clickAndWait(oauthForm.getByTestId('oauth-start'), /\/channels\?notice=connected$/);
    page.off('framenavigated', onNav);
    const authorize = new URL((await toProvider).url());
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${server.url}/channels/oauth/x/callback`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(oauthX.authorizations).toHaveLength(1);
    expect(oauthX.exchanges).toEqual([expect.objectContaining({ grantType: 'authorization_code', ok: true, pkceVerified: true })]);
    expect(hops.at(-1)).toBe(`${server.url}/channels?notice=connected`);
    expect(await page.getByTestId('notice').textContent()).toBe('Channel connected.');
    const xRow = page.locator('[data-testid="channel-row"][data-platform="X"]');
    expect(await xRow.getAttribute('data-status')).toBe('active');
    expect(await xRow.getByTestId('channel-name').textContent()).toBe('Brand on X');
    expect(await xRow.getByTestId('channel-status').textContent()).toBe('Active');
    state.xChannelId = (await xRow.getAttribute('data-channel-id'))!;

    await clickAndWait('connect-MASTODON', /\/channels\/connect\/mastodon$/);
    await page.getByTestId('channel-name-input').fill('Team Mastodon');
    await page.getByTestId('credential-instanceUrl').fill(mastodon.url);
    await page.getByTestId('credential-accessToken').fill('good-token');
    await clickAndWait('credentials-submit', /\/channels\?notice=connected$/);
    const mRow = page.locator('[data-testid="channel-row"][data-platform="MASTODON"]');
    expect(await mRow.getAttribute('data-status')).toBe('active');
    expect(await mRow.getByTestId('channel-status').textContent()).toBe('Active');
    state.mastodonChannelId = (await mRow.getAttribute('data-channel-id'))!;
    expect(await page.getByTestId('channel-row').count()).toBe(2);
  });

  test('3. Settings → API keys: the full key is shown once with a copy button, only the prefix when the page is opened again; GET /v1/me with it → 200', async () => {
    await clickAndWait('nav-keys', /\/settings\/api-keys$/);
    expect(await page.getByTestId('no-keys').count()).toBe(1);
    await page.getByTestId('key-name').fill('Browser e2e');
    expect(await page.getByTestId('key-scope-read').isChecked()).toBe(true);
    expect(await page.getByTestId('key-scope-publish').isChecked()).toBe(true);
    expect(await page.getByTestId('key-channels-all').isChecked()).toBe(true);
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/settings/api-keys');
    await page.getByTestId('key-create').click();
    // POST-redirect-GET: the key is shown by the GET that follows (a reload cannot create another).
    expect((await created).status()).toBe(303);
    await page.getByTestId('new-key-panel').waitFor();
    const keyInput = page.getByTestId('new-api-key');
    const key = await keyInput.inputValue();
    expect(key.length).toBeGreaterThan(20);
    expect(await keyInput.getAttribute('readonly')).not.toBeNull();
    const prefix = (await page.getByTestId('key-prefix').textContent())!.replace(/…$/, '');
    expect(prefix.length).toBeGreaterThan(4);
    expect(key.startsWith(prefix)).toBe(true);
    // Exactly once on the page: in the input, nowhere else.
    expect((await page.content()).split(key).length - 1).toBe(1);
    const copy = page.getByTestId('copy-api-key');
    expect(await copy.textContent()).toBe('Copy');
    await copy.click();
    await until('the copy button to say Copied', async () => (await copy.getAttribute('data-copied')) === 'true');
    expect(await copy.textContent()).toBe('Copied');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await screenshot(page, 'api-keys');

    await page.goto('/settings/api-keys');
    expect(await page.getByTestId('new-key-panel').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    const row = page.getByTestId('key-row');
    expect(await row.count()).toBe(1);
    expect(await row.getAttribute('data-status')).toBe('active');
    expect(await row.getByTestId('key-prefix').textContent()).toBe(`${prefix}…`);
    expect(await row.getByTestId('key-row-name').textContent()).toBe('Browser e2e');
    state.apiKey = key;
    state.keyId = (await row.getAttribute('data-key-id'))!;

    const me = await api('GET', '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.body.organization.name).toBe('Browser test org');
  });

  test('3b. reloading the page that shows a new key sends no form again: no second key, the full key not shown again', async () => {
    await page.goto('/settings/api-keys');
    const before = await page.getByTestId('key-row').count();
    await page.getByTestId('key-name').fill('Reload check');
    await page.getByTestId('key-create').click();
    await page.getByTestId('new-key-panel').waitFor();
    const shown = await page.getByTestId('new-api-key').inputValue();
    expect(await page.getByTestId('key-row').count()).toBe(before + 1);
    const navigation = page.waitForRequest((r) => r.isNavigationRequest());
    await page.reload();
    const method = (await navigation).method();
    const after = await page.getByTestId('key-row').count();
    const panels = await page.getByTestId('new-key-panel').count();
    // As a person would see it: one key more than before, and the key just created not shown again.
    expect({ keys: after, newKeyPanels: panels, reloadMethod: method }).toEqual({ keys: before + 1, newKeyPanels: 0, reloadMethod: 'GET' });
    expect(await page.content()).not.toContain(shown);
  });

  test('4. a post created through the API shows in the month view on its day, with time, channel, source and status', async () => {
    const t0 = await stack.syncClock();
    const day = new Date(t0.getTime() + 2 * 86_400_000);
    const at = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 10, 30));
    const content = `From the API ${crypto.randomUUID()}`;
    const created = await api('POST', '/v1/posts', state.apiKey!, {
      content,
      channelIds: [state.mastodonChannelId],
      publishAt: at.toISOString(),
    });
    expect(created.status).toBe(201);
    state.apiPostId = created.body.id;
    state.apiPostAt = at;

    await clickAndWait('nav-calendar', /\/calendar$/);
    const key = dayKey(at, 'UTC');
    // The day may be in next month's grid.
    if ((await page.getByTestId(`day-${key}`).count()) === 0) await clickAndWait('calendar-next', /\/calendar\?view=month/);
    const item = page.getByTestId(`day-${key}`).locator(`[data-testid="post-item"][data-post-id="${created.body.id}"]`);
    expect(await item.count()).toBe(1);
    expect(await item.getAttribute('data-source')).toBe('api');
    expect(await item.getAttribute('data-status')).toBe('scheduled');
    expect(await item.getByTestId('post-status').textContent()).toBe('Scheduled');
    expect(await item.getByTestId('post-source').textContent()).toBe('API');
    expect(await item.getByTestId('post-time').textContent()).toBe(formatTime(at, 'UTC'));
    expect(await item.getByTestId('post-excerpt').textContent()).toBe(content);
    expect(await item.getByRole('img', { name: 'Mastodon: Team Mastodon' }).count()).toBe(1);
    expect(await page.locator(`[data-testid="post-item"][data-post-id="${created.body.id}"]`).count()).toBe(1);
  });

  test('5. compose in the app: check the Mastodon channel, live character count, publish now → published on the fake Mastodon', async () => {
    await stack.syncClock();
    await clickAndWait('nav-compose', /\/posts\/new$/);
    const mastodonBox = page.locator('[data-testid="channel-option"][data-platform="MASTODON"]');
    const count = page.locator(`[data-testid="char-count"][data-channel-id="${state.mastodonChannelId}"]`);
    const xCount = page.locator(`[data-testid="char-count"][data-channel-id="${state.xChannelId}"]`);
    // Two active channels: none is preselected.
    expect(await mastodonBox.isChecked()).toBe(false);
    expect(await count.isVisible()).toBe(false);
    await mastodonBox.check();
    expect(await count.isVisible()).toBe(true);
    expect(await xCount.isVisible()).toBe(false);
    expect(await count.getAttribute('data-count')).toBe('0');
    const max = Number(await count.getAttribute('data-max-chars'));
    expect(max).toBe(500);

    const content = page.getByTestId('composer-content');
    await content.click();
    await content.pressSequentially('Hello');
    await until('the count to reach 5', async () => (await count.getAttribute('data-count')) === '5');
    expect(await count.getByTestId('char-count-value').textContent()).toBe(`5 / ${max}`);
    // "café" with a combining accent: 5 code units, 4 characters (graphemes), as the server counts.
    const text = `Hello from Chromium, cafe\u0301 ${crypto.randomUUID()}`;
    await content.pressSequentially(text.slice('Hello'.length));
    expect(await content.inputValue()).toBe(text);
    const n = graphemes(text);
    expect(n).toBe(text.length - 1);
    await until(`the count to reach ${n}`, async () => (await count.getAttribute('data-count')) === String(n));
    expect(await count.getByTestId('char-count-value').textContent()).toBe(`${n} / ${max}`);
    expect(await count.getAttribute('data-over')).toBe('false');

    await page.getByTestId('composer-when-now').check();
    expect(await page.getByTestId('composer-publish-at').isDisabled()).toBe(true);
    expect(await page.getByTestId('composer-submit').isVisible()).toBe(true);
    await screenshot(page, 'composer-publish');

    await clickAndWait('composer-submit', /\/posts\/post_[0-9a-z]+\?notice=created$/);
    expect(await page.getByTestId('notice').textContent()).toBe('Post created.');
    const detail = page.getByTestId('post-detail');
    const id = (await detail.getAttribute('data-post-id'))!;
    state.publishedPostId = id;
    expect(await page.getByTestId('post-content').textContent()).toBe(text);
    expect(await page.getByTestId('post-source').textContent()).toBe('the app');
    // The page's live status (polled every 3 s) turns published without a reload.
    await until('the post page to show published', async () => (await detail.getAttribute('data-status')) === 'published', 60_000, 250);
    expect(await detail.getByTestId('post-status').first().textContent()).toBe('Published');
    const row = page.getByTestId('post-channel-row');
    expect(await row.getAttribute('data-status')).toBe('published');
    expect(await row.getByTestId('post-channel-status').textContent()).toBe('Published');
    expect(await row.getByTestId('post-channel-url').getAttribute('href')).toStartWith(`${mastodon.url}/@`);
    expect(await page.getByTestId('post-edit').isVisible()).toBe(false);
    expect(mastodon.statuses.filter((s) => s.text === text)).toHaveLength(1);
    expect(mastodon.statuses).toHaveLength(1);
  });

  test('5b. the counters count as the platforms do: X weighs CJK 2, Mastodon counts a long URL as 23 (asked of the server)', async () => {
    await page.goto('/posts/new');
    const xCount = page.locator(`[data-testid="char-count"][data-channel-id="${state.xChannelId}"]`);
    const mCount = page.locator(`[data-testid="char-count"][data-channel-id="${state.mastodonChannelId}"]`);
    await page.locator('[data-testid="channel-option"][data-platform="X"]').check();
    await page.locator('[data-testid="channel-option"][data-platform="MASTODON"]').check();
    expect(await xCount.getAttribute('data-count-rule')).toBe('server');
    // 141 CJK characters: 141 graphemes, 282 as X counts; then a 120-character URL.
    const url = `https://example.com/${'p'.repeat(100)}`;
    await page.getByTestId('composer-content').fill(`${'あ'.repeat(141)} ${url}`);
    await until('X to count 141 × 2 + 1 + 23', async () => (await xCount.getAttribute('data-count')) === '306');
    expect(await xCount.getAttribute('data-over')).toBe('true');
    expect(await xCount.getByTestId('char-count-value').textContent()).toBe('306 / 280');
    await until('Mastodon to count 141 + 1 + 23', async () => (await mCount.getAttribute('data-count')) === '165');
    expect(await mCount.getAttribute('data-over')).toBe('false');
  });

  test('6. reschedule by editing: the post page, the calendar, GET /v1/posts/{id} and the workflow all have the new time', async () => {
    const id = state.apiPostId!;
    const before = state.apiPostAt!;
    await stack.syncClock();
    await page.goto(`/calendar?view=month&date=${dayKey(before, 'UTC')}`);
    await clickAndWait(
      page.locator(`[data-testid="post-item"][data-post-id="${id}"]`).getByTestId('post-link'),
      new RegExp(`/posts/${id}$`),
    );
    expect(await page.getByTestId('post-scheduled-at').getAttribute('datetime')).toBe(before.toISOString());
    await clickAndWait('post-edit', new RegExp(`/posts/${id}/edit$`));
    expect(await page.getByTestId('composer-form').getAttribute('data-mode')).toBe('edit');
    const when = page.getByTestId('composer-publish-at');
    expect(await when.inputValue()).toBe(localInputValue(before, 'UTC'));
    const after = new Date(before.getTime() + 86_400_000 + 5 * 3600_000 + 15 * 60_000); // next day, 15:45
    await when.fill(localInputValue(after, 'UTC'));
    await clickAndWait('composer-submit', new RegExp(`/posts/${id}\\?notice=saved$`));
    expect(await page.getByTestId('notice').textContent()).toBe('Changes saved.');
    const shown = page.getByTestId('post-scheduled-at');
    expect(await shown.getAttribute('datetime')).toBe(after.toISOString());
    expect(await shown.textContent()).toBe(formatDateTime(after, 'UTC'));

    const viaApi = await api('GET', `/v1/posts/${id}`, state.apiKey!);
    expect(viaApi.status).toBe(200);
    expect(Date.parse(viaApi.body.scheduledAt)).toBe(after.getTime());
    expect(viaApi.body.status).toBe('scheduled');
    const wf = await stack.env.client.workflow.getHandle(postWorkflowId(id)).query(postStateQuery);
    expect(wf).toMatchObject({ phase: 'scheduled', publishAt: after.toISOString() });

    await page.goto(`/calendar?view=month&date=${dayKey(after, 'UTC')}`);
    const item = page.getByTestId(`day-${dayKey(after, 'UTC')}`).locator(`[data-testid="post-item"][data-post-id="${id}"]`);
    expect(await item.count()).toBe(1);
    expect(await item.getByTestId('post-time').textContent()).toBe('15:45');
    expect(
      await page
        .getByTestId(`day-${dayKey(before, 'UTC')}`)
        .locator(`[data-post-id="${id}"]`)
        .count(),
    ).toBe(0);
    await screenshot(page, 'calendar-utc');
  });

  test('7. revoke the key in the app: the list says revoked and the API answers 401', async () => {
    await clickAndWait('nav-keys', /\/settings\/api-keys$/);
    const row = page.locator(`[data-testid="key-row"][data-key-id="${state.keyId}"]`);
    await clickAndWait(row.getByTestId('key-revoke'), /\/settings\/api-keys\?notice=revoked$/);
    expect(await page.getByTestId('notice').textContent()).toBe('Key revoked.');
    expect(await row.getAttribute('data-status')).toBe('revoked');
    expect(await row.getByTestId('key-status').textContent()).toBe('revoked');
    expect(await row.getByTestId('key-revoke').count()).toBe(0);
    const me = await api('GET', '/v1/me', state.apiKey!);
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('unauthorized');
  });

  test('7b. delete a scheduled post: Delete → confirm → it leaves the calendar (live, in another tab too), its page is gone (404), and it is never published', async () => {
    const t0 = await stack.syncClock();
    const at = new Date(Math.ceil((t0.getTime() + 2 * 3600_000) / 60_000) * 60_000);
    const content = `Delete me ${crypto.randomUUID()}`;
    await page.goto('/posts/new');
    await page.locator('[data-testid="channel-option"][data-platform="MASTODON"]').check();
    await page.getByTestId('composer-content').fill(content);
    await page.getByTestId('composer-when-later').check();
    await page.getByTestId('composer-publish-at').fill(localInputValue(at, 'UTC'));
    await clickAndWait('composer-submit', /\/posts\/post_[0-9a-z]+\?notice=created$/);
    const id = (await page.getByTestId('post-detail').getAttribute('data-post-id'))!;
    const calendarUrl = `/calendar?view=month&date=${dayKey(at, 'UTC')}`;

    // Other tabs keep the calendar and the post open: the deletion reaches them without a reload.
    // The post's tab is in a second window of the same person (its cookies), outside the recorded
    // context: the browser logs its 404s, which are expected there.
    const other = await context.newPage();
    const side = await browser.newContext({ baseURL: server.url, timezoneId: 'UTC', locale: 'en-US' });
    await side.addCookies(await context.cookies());
    const postTab = await side.newPage();
    try {
      await postTab.goto(`/posts/${id}`);
      expect(await postTab.getByTestId('post-deleted').isVisible()).toBe(false);
      await other.goto(calendarUrl);
      const item = other.locator(`[data-testid="post-item"][data-post-id="${id}"]`);
      expect(await item.getAttribute('data-status')).toBe('scheduled');
      await other.evaluate('window.__notReloaded = true');

      await clickAndWait('post-delete', new RegExp(`/posts/${id}/delete$`));
      expect(await page.getByTestId('delete-confirm').getAttribute('data-status')).toBe('scheduled');
      expect(await page.getByTestId('delete-explain').textContent()).toContain('will not be published');
      expect(await page.getByTestId('delete-excerpt').textContent()).toBe(content);
      await screenshot(page, 'delete-confirm');
      // "Keep it" goes back and changes nothing.
      await clickAndWait('delete-keep', new RegExp(`/posts/${id}$`));
      expect(await page.getByTestId('post-detail').getAttribute('data-status')).toBe('scheduled');
      await clickAndWait('post-delete', new RegExp(`/posts/${id}/delete$`));
      await clickAndWait('delete-confirm-submit', /\/calendar\?date=\d{4}-\d{2}-\d{2}&notice=deleted$/);
      expect(await page.getByTestId('notice').textContent()).toBe('Post deleted: it will not be published.');
      expect(await page.locator(`[data-post-id="${id}"]`).count()).toBe(0);

      await until('the open calendar to drop the post', async () => (await item.count()) === 0, 20_000, 250);
      expect(await other.getByTestId('calendar-message').textContent()).toBe('A post was removed.');
      expect(await other.evaluate('window.__notReloaded')).toBe(true);
      expect(await other.getByTestId('calendar-stale').isVisible()).toBe(false);
      // The open post page says it is gone and offers nothing more.
      await until('the open post page to say deleted', () => postTab.getByTestId('post-deleted').isVisible(), 20_000, 250);
      expect(await postTab.getByTestId('post-detail').getAttribute('data-deleted')).toBe('true');
      expect(await postTab.getByTestId('post-delete').isVisible()).toBe(false);
      expect(await postTab.getByTestId('post-edit').isVisible()).toBe(false);
      // Opened again, the post's page answers 404.
      const gone = await postTab.goto(`/posts/${id}`);
      expect(gone!.status()).toBe(404);
      expect(await postTab.getByTestId('error-page').count()).toBe(1);
      expect((await postTab.request.get(`/web/api/posts/${id}`)).status()).toBe(404);
    } finally {
      await other.close();
      await side.close();
    }
    // Past its time: nothing was sent.
    await stack.env.sleep('3 hours');
    await stack.syncClock();
    expect(mastodon.statuses.filter((s) => s.text === content)).toHaveLength(0);
    const wf = await stack.env.client.workflow.getHandle(postWorkflowId(id)).describe();
    expect(wf.status.name).not.toBe('RUNNING');
  });

  test('7c. retry a failed post: disabled with "Reconnect … first" while the channel needs it; reconnect → Retry → published in the open calendar; one copy on the platform', async () => {
    await stack.syncClock();
    const content = `Retry me ${crypto.randomUUID()}`;
    // Mastodon rejects the token once: the channel becomes reauth_required and the post fails.
    mastodon.failNext(1, { status: 401, body: { error: 'The access token is invalid' } });
    await page.goto('/posts/new');
    await page.locator('[data-testid="channel-option"][data-platform="MASTODON"]').check();
    await page.getByTestId('composer-content').fill(content);
    await page.getByTestId('composer-when-now').check();
    await clickAndWait('composer-submit', /\/posts\/post_[0-9a-z]+\?notice=created$/);
    const detail = page.getByTestId('post-detail');
    const id = (await detail.getAttribute('data-post-id'))!;
    await until('the post page to show failed', async () => (await detail.getAttribute('data-status')) === 'failed', 60_000, 250);
    expect(mastodon.statuses.filter((s) => s.text === content)).toHaveLength(0);

    await page.reload();
    const retry = page.getByTestId('post-retry');
    expect(await retry.isDisabled()).toBe(true);
    expect(await page.getByTestId('retry-blocked').textContent()).toBe('Reconnect Mastodon (Team Mastodon) first.');
    await screenshot(page, 'retry-blocked');

    // The hint's link is the channel's reconnect page.
    await clickAndWait('retry-reconnect', new RegExp(`/channels/connect/mastodon\\?channel=${state.mastodonChannelId}$`));
    expect(await page.getByTestId('reauth-notice').count()).toBe(1);
    await page.getByTestId('credential-instanceUrl').fill(mastodon.url);
    await page.getByTestId('credential-accessToken').fill('good-token');
    await clickAndWait('credentials-submit', /\/channels\?notice=reconnected$/);
    expect(
      await page.locator(`[data-testid="channel-row"][data-channel-id="${state.mastodonChannelId}"]`).getAttribute('data-status'),
    ).toBe('active');

    // The calendar and the post's page, open in other tabs, show the failed post and follow it live.
    const other = await context.newPage();
    const postTab = await context.newPage();
    try {
      await postTab.goto(`/posts/${id}`);
      expect(await postTab.getByTestId('post-retry-form').isVisible()).toBe(true);
      await other.goto(`/calendar?view=month&date=${dayKey(await stack.syncClock(), 'UTC')}`);
      const item = other.locator(`[data-testid="post-item"][data-post-id="${id}"]`);
      expect(await item.getAttribute('data-status')).toBe('failed');
      expect(await item.getByTestId('post-error').isVisible()).toBe(true);
      await other.evaluate(`(() => {
        window.__statuses = [];
        const el = document.querySelector('[data-testid="post-item"][data-post-id="${id}"]');
        let last = el.getAttribute('data-status');
        new MutationObserver(() => {
          const now = el.getAttribute('data-status');
          if (now !== last) window.__statuses.push((last = now));
        }).observe(el, { attributeFilter: ['data-status'] });
      })()`);

      await page.goto(`/posts/${id}`);
      expect(await retry.isEnabled()).toBe(true);
      expect(await page.getByTestId('retry-blocked').count()).toBe(0);
      // The failed post's page as the README shows it: the failed channel, its error and Retry.
      expect(await retry.isVisible()).toBe(true);
      expect(await detail.getAttribute('data-status')).toBe('failed');
      const failedRow = page.getByTestId('post-channel-row');
      expect(await failedRow.getAttribute('data-status')).toBe('failed');
      expect(await failedRow.getByTestId('post-channel-error').isVisible()).toBe(true);
      expect(await failedRow.getByTestId('post-channel-error').textContent()).toContain('access token is invalid');
      await docsScreenshot(page, 'post-failed');
      await clickAndWait('post-retry', new RegExp(`/posts/${id}\\?notice=retrying$`));
      expect(await page.getByTestId('notice').textContent()).toBe('Publishing again on the channels that failed.');
      await until('the post page to show published', async () => (await detail.getAttribute('data-status')) === 'published', 60_000, 250);
      expect(await page.getByTestId('post-retry').isVisible()).toBe(false);

      await until('the calendar to show published', async () => (await item.getAttribute('data-status')) === 'published', 20_000, 250);
      expect(await item.getByTestId('post-status').textContent()).toBe('Published');
      expect(await item.getByTestId('post-error').isVisible()).toBe(false);
      // Changed in place (no reload): failed → (publishing, if a poll caught it) → published.
      const statuses = (await other.evaluate('window.__statuses')) as string[];
      expect(statuses.at(-1)).toBe('published');
      expect(statuses.every((s) => s === 'publishing' || s === 'published')).toBe(true);
      await screenshot(other, 'calendar-after-retry');
      // The other tab's post page: Retry goes away once the post is publishing again; published, it may be removed from the lists.
      const tabDetail = postTab.getByTestId('post-detail');
      await until(
        'the other post tab to show published',
        async () => (await tabDetail.getAttribute('data-status')) === 'published',
        20_000,
        250,
      );
      expect(await postTab.getByTestId('post-retry-form').isVisible()).toBe(false);
      expect(await postTab.getByTestId('post-delete').isVisible()).toBe(true);
      expect(await postTab.getByTestId('post-channel-row').getAttribute('data-status')).toBe('published');
    } finally {
      await other.close();
      await postTab.close();
    }
    expect(mastodon.statuses.filter((s) => s.text === content)).toHaveLength(1);
  });

  test("8a. keyboard: the skip link comes first, and Tab reaches the composer's submit button with a visible focus ring", async () => {
    await page.goto('/posts/new');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.className')).toBe('skip-link');
    let reached = false;
    for (let i = 0; i < 120 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate('document.activeElement && document.activeElement.getAttribute("data-testid")')) === 'composer-submit';
    }
    expect(reached).toBe(true);
    const focus = (await page.evaluate(`(() => {
      const el = document.activeElement;
      const s = getComputedStyle(el);
      return { focusVisible: el.matches(':focus-visible'), style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor, shadow: s.boxShadow };
    })()`)) as { focusVisible: boolean; style: string; width: number; color: string; shadow: string };
    expect(focus.focusVisible).toBe(true);
    expect(focus.style !== 'none' && focus.width >= 2 ? 'outline' : focus.shadow !== 'none' ? 'shadow' : 'none').not.toBe('none');
  });

  test('8b. at 375 px the month calendar fits: no horizontal scroll', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      // This month (today's published post) and the rescheduled post's month.
      for (const date of [dayKey(await stack.syncClock(), 'UTC'), dayKey(new Date(state.apiPostAt!.getTime() + 86_400_000), 'UTC')]) {
        await page.goto(`/calendar?view=month&date=${date}`);
        expect(await page.getByTestId('calendar-month').isVisible()).toBe(true);
        const size = (await page.evaluate(`({
          doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, viewport: document.documentElement.clientWidth,
        })`)) as { doc: number; body: number; viewport: number };
        expect(size.viewport).toBe(375);
        expect(size.doc).toBeLessThanOrEqual(size.viewport);
        expect(size.body).toBeLessThanOrEqual(size.viewport);
      }
      expect(await page.locator('[data-testid="post-item"]').first().isVisible()).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  test('8c. no console errors, uncaught exceptions, failed or external requests on any page visited', () => {
    for (const p of [
      '/sign-in',
      '/calendar',
      '/channels',
      '/channels/connect/x',
      '/channels/connect/mastodon',
      '/settings/api-keys',
      '/posts/new',
    ]) {
      expect(visited.has(p)).toBe(true);
    }
    expect([...visited].some((p) => /^\/posts\/post_[0-9a-z]+$/.test(p))).toBe(true);
    expect([...visited].some((p) => /^\/posts\/post_[0-9a-z]+\/edit$/.test(p))).toBe(true);
    expect(problems).toEqual([]);
  });

  test('8d. every id is unique on each page visited (each label points at its own field)', () => {
    expect(visited.size).toBeGreaterThan(8);
    expect(Object.fromEntries(duplicateIds)).toEqual({});
  });

  test('9. Webhooks: add an endpoint, its secret shown once, send a test, the delivery in the log with status 200', async () => {
    const receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') });
    try {
      await clickAndWait('nav-webhooks', /\/settings\/webhooks$/);
      expect(await page.getByTestId('no-webhooks').count()).toBe(1);
      await page.getByTestId('webhook-url').fill(`http://127.0.0.1:${receiver.port}/hooks`);
      await page.getByTestId('webhook-events-some').check();
      await page.getByTestId('webhook-type-webhook.test').check();
      await page.getByTestId('webhook-description').fill('Browser e2e');
      await clickAndWait('webhook-create', /\/settings\/webhooks\/wh_[0-9a-z]+\?notice=created$/);
      const secret = await page.getByTestId('new-webhook-secret').inputValue();
      expect(secret).toMatch(/^whsec_/);
      expect((await page.content()).split(secret).length - 1).toBe(1);
      expect(await page.getByTestId('webhook-events').textContent()).toBe('webhook.test');
      await clickAndWait('webhook-test', /\?notice=test-sent$/);
      expect(await page.getByTestId('new-webhook-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      await until(
        'the delivery with status 200 in the log',
        async () => {
          await page.reload();
          return (await page.locator('[data-testid="delivery-row"][data-status="delivered"]').count()) === 1;
        },
        30_000,
        250,
      );
      expect(await page.getByTestId('delivery-event').textContent()).toBe('webhook.test');
      expect(await page.getByTestId('delivery-code').textContent()).toBe('200');
      expect(await page.getByTestId('delivery-redeliver').isVisible()).toBe(true);
      expect(await page.getByTestId('delivery-row').isVisible()).toBe(true);
      expect(await page.getByTestId('webhook-test').isVisible()).toBe(true);
      await docsScreenshot(page, 'webhooks');
      expect(problems).toEqual([]);
      expect(Object.fromEntries(duplicateIds)).toEqual({});
    } finally {
      receiver.stop(true);
    }
  });
});
