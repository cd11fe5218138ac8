// The Inbox in real headless Chromium: an editor types a reply (its count follows, Mastodon's
// weighted count asked of the server) while people keep answering: the new comment appears at the
// top of the list by itself, a comment marked read elsewhere changes in place, and what is typed
// stays; the reply is then sent once. No console error. Screenshot: test-results/screenshots/inbox.png.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { updateComment } from '../domain/inbox/comments.ts';
import { MASTODON_URL_CHARS } from '../platforms/text-length.ts';
import { createUser } from '../services/users.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { closeAll, launchChromium, lateBoundServer, screenshot, signedInContext, type Browser, until } from './harness/browser.ts';
import { person, publishedOnMastodon, sweepComments } from './harness/comments.ts';
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

/** Someone of another instance, without an avatar: the page would load it from the internet, which these tests refuse. */
const someone = (id: string, name: string) => ({ ...person(id, name), avatar: '' });

async function commentId(postId: string, statusId: string): Promise<string> {
  const { rows } = await stack.h.pool.query<{ id: string }>('select id from comments where post_id = $1 and platform_comment_id = $2', [
    postId,
    statusId,
  ]);
  return rows[0]!.id;
}

describe('the Inbox in Chromium', () => {
  test('a reply is counted as typed; new comments and changes arrive by themselves; what is typed stays; the reply goes once', async () => {
    const s = await publishedOnMastodon(stack, mastodon);
    const alice = mastodon.reply(s.statusId, someone('81', 'alice'), 'Is this open on Sundays?');
    await sweepComments(stack);
    const aliceId = await commentId(s.postId, alice.id);
    const email = `editor-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await createUser(stack.h.orm.em.fork(), { organizationId: s.org.id, email, password: 'correct horse battery', role: 'editor' });
    const { page, problems, context } = await signedInContext(browser, server.url, email, 'correct horse battery');
    try {
      await page.goto('/calendar');
      await Promise.all([page.waitForURL(/\/inbox$/), page.getByTestId('nav-inbox').click()]);
      await page.goto(`/inbox?postId=${s.postId}`);
      const rows = page.getByTestId('inbox-item');
      expect(await rows.count()).toBe(1);

      const row = page.locator(`[data-testid="inbox-item"][data-comment-id="${aliceId}"]`);
      const input = row.getByTestId('inbox-reply-input');
      const count = row.getByTestId('inbox-reply-count');
      // Mastodon counts every link as MASTODON_URL_CHARS: the page asks the server.
      const text = 'Yes, see https://example.com/a/very/long/path/that/counts/as/twenty-three';
      await input.fill(text);
      await until(
        'the weighted count',
        async () => (await count.getAttribute('data-count')) === String('Yes, see '.length + MASTODON_URL_CHARS),
      );
      expect(await count.getAttribute('data-over')).toBe('false');
      await input.focus();

      // Someone else answers; someone marks Alice's comment read elsewhere.
      const erin = mastodon.reply(s.statusId, someone('85', 'erin'), 'And on holidays?');
      await stack.h.pool.query(
        'update comment_follows set next_at = now() where post_channel_id in (select id from post_channels where post_id = $1)',
        [s.postId],
      );
      await sweepComments(stack);
      const erinId = await commentId(s.postId, erin.id);
      await updateComment(stack.h.orm.em.fork(), s.org.id, aliceId, 'all', { status: 'read' }, new Date());
      await until('the new comment on top', async () => (await rows.first().getAttribute('data-comment-id')) === erinId, 15_000);
      expect(await rows.count()).toBe(2);
      expect(await page.getByTestId('inbox-message').textContent()).toBe('A new comment.');
      await until('Alice’s comment read', async () => (await row.getAttribute('data-status')) === 'read', 15_000);
      expect(await row.getByTestId('inbox-status').textContent()).toBe('Read');
      expect(await row.getByTestId('inbox-mark-unread').count()).toBe(1);
      expect(await input.inputValue()).toBe(text);
      await screenshot(page, 'inbox');

      await Promise.all([page.waitForURL(/notice=replied/), row.getByTestId('inbox-reply-submit').click()]);
      await until('published on Mastodon', () => mastodon.statuses.some((st) => st.in_reply_to_id === alice.id && !st.account), 30_000);
      await until(
        'the reply shown published',
        async () =>
          (await page.locator(`[data-comment-id="${aliceId}"] [data-testid="inbox-reply"]`).getAttribute('data-status')) === 'published',
        15_000,
      );
      expect(mastodon.statuses.filter((st) => st.in_reply_to_id === alice.id && !st.account).map((st) => st.text)).toEqual([text]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
