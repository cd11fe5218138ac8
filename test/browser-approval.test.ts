// Approval in real headless Chromium, with two people of one organization in two browser
// contexts: a contributor writes a post to publish now; it waits ("Waiting for approval") and
// nothing reaches Mastodon; it appears on the editor's Approvals page; the editor approves it; it
// is published once and the contributor's post page shows it published. No console error.
// Screenshot: test-results/screenshots/approvals.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createUser } from '../services/users.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import {
  closeAll,
  launchChromium,
  lateBoundServer,
  signedInContext,
  screenshot,
  type Browser,
  type Page,
  type PageProblem,
  until,
} from './harness/browser.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let server: ReturnType<typeof lateBoundServer>;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let browser: Browser;
let channelId: string;
const people: Record<'editor' | 'contributor', { email: string; page?: Page; problems?: PageProblem[] }> = {
  editor: { email: `editor-${crypto.randomUUID().slice(0, 8)}@example.com` },
  contributor: { email: `contributor-${crypto.randomUUID().slice(0, 8)}@example.com` },
};
const password = 'correct horse battery staple';

beforeAll(async () => {
  server = lateBoundServer();
  fake = await startFakeMastodon();
  stack = await startPostStack({ publicBaseUrl: server.url, web: {} });
  server.setHandler((request) => stack.app.handle(request));
  const org = await makeOrg('PRO', 'Approval org');
  for (const role of ['editor', 'contributor'] as const) {
    await createUser(stack.h.orm.em.fork(), { organizationId: org.id, email: people[role].email, password, role });
  }
  channelId = (
    await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'Team Mastodon',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    })
  ).id;
  browser = await launchChromium();
  for (const role of ['editor', 'contributor'] as const) {
    const { page, problems } = await signedInContext(browser, server.url, people[role].email, password);
    Object.assign(people[role], { page, problems });
  }
}, 120_000);

afterAll(async () => {
  for (const p of Object.values(people)) await p.page?.context().close();
  await closeAll(undefined, browser);
  server?.stop();
  await stack?.stop();
  await fake?.stop();
});

describe('approval in Chromium: a contributor and an editor', () => {
  test('the contributor’s post waits; it appears for approval; the editor approves; it is published once', async () => {
    const contributor = people.contributor.page!;
    const editor = people.editor.page!;
    // The contributor's navigation has no Approvals; the editor's has.
    expect(await contributor.locator('nav a[href="/approvals"]').count()).toBe(0);
    expect(await editor.locator('nav a[href="/approvals"]').count()).toBe(1);

    await stack.syncClock();
    const text = `Kites at dawn ${crypto.randomUUID().slice(0, 8)}`;
    await contributor.goto('/posts/new');
    await contributor.locator(`[data-testid="channel-option"][data-channel-id="${channelId}"]`).check();
    await contributor.getByTestId('composer-content').fill(text);
    await contributor.getByTestId('composer-when-now').check();
    await Promise.all([
      contributor.waitForURL(/\/posts\/post_[0-9a-z]+\?notice=created$/),
      contributor.getByTestId('composer-submit').click(),
    ]);
    const postId = /\/posts\/(post_[0-9a-z]+)/.exec(contributor.url())![1]!;
    expect(await contributor.getByTestId('approval-status').getAttribute('data-approval')).toBe('pending');
    expect(await contributor.getByTestId('approval-actions').count()).toBe(0);
    // Due now, yet nothing is sent while it waits.
    await stack.env.sleep('10 minutes');
    expect(fake.statuses.filter((s) => s.text === text)).toHaveLength(0);

    await editor.goto('/approvals');
    const item = editor.locator(`[data-testid="approval-item"][data-post-id="${postId}"]`);
    expect(await item.getAttribute('data-approval')).toBe('pending');
    expect(await item.getByTestId('approval-post-link').textContent()).toBe(text);
    await screenshot(editor, 'approvals');
    await item.getByTestId('approval-comment-input').fill('Lovely');
    await Promise.all([editor.waitForURL(/\/approvals\?notice=approved$/), item.getByTestId('approval-approve').click()]);
    expect(await editor.locator(`[data-testid="approval-item"][data-post-id="${postId}"]`).count()).toBe(0);

    await until('published on Mastodon', () => fake.statuses.some((s) => s.text === text), 30_000);
    await until(
      'the post is published',
      async () => (await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId })).status === 'published',
    );
    expect(fake.statuses.filter((s) => s.text === text)).toHaveLength(1);
    await contributor.goto(`/posts/${postId}`);
    expect(await contributor.getByTestId('post-detail').getAttribute('data-status')).toBe('published');
    expect(await contributor.getByTestId('approval-status').getAttribute('data-approval')).toBe('approved');
    expect(await contributor.getByTestId('approval-decided-by').textContent()).toBe(people.editor.email);
    expect(await contributor.getByTestId('approval-comment').textContent()).toBe('Lovely');
    expect(people.contributor.problems).toEqual([]);
    expect(people.editor.problems).toEqual([]);
  }, 90_000);
});
