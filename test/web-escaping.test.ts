// A post's text is the user's, not markup: the post page, the public preview page and the thread's
// items show it escaped (web/html.ts), so a post whose text holds a script tag, quotes and an
// ampersand runs nothing and reads as written.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { type Browser, signedInUserWithChannel } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let owner: Browser;
let postId: string;

const HOSTILE = `<script>alert(1)</script> & "quoted" 'single'`;
const ESCAPED = `&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &#39;single&#39;`;
const TEXT = `post ${HOSTILE}`;
const REPLY = `reply ${HOSTILE}`;

beforeAll(async () => {
  fake = await startFakeMastodon();
  stack = await startPostStack({ publicBaseUrl: 'http://localhost' });
  const user = await signedInUserWithChannel(stack.app, fake.url);
  owner = user.browser;
  const { key } = await makeKey(user.org.id);
  const at = await stack.syncClock();
  const made = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: {
      content: TEXT,
      channelIds: [user.channel.id],
      publishAt: new Date(at.getTime() + 2 * 86_400_000).toISOString(),
      thread: [{ content: REPLY }],
    },
  });
  expect(made.status).toBe(201);
  postId = made.body.id;
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
});

/** The raw markup is absent from the page; the escaped text is there. */
function expectEscaped(page: string, label: string) {
  expect({ label, raw: page.includes('<script>alert(1)</script>') }).toEqual({ label, raw: false });
  expect({ label, escaped: page.includes(ESCAPED) }).toEqual({ label, escaped: true });
}

describe('a post whose text holds markup', () => {
  test('the post page shows its text escaped, and reads as written', async () => {
    const page = await owner.get(`/posts/${postId}`);
    expect(page.status).toBe(200);
    expectEscaped(page.html, 'post page');
    expect(page.html).toContain(`post ${ESCAPED}`);
    expect((await page.one('[data-testid="post-content"]')).text).toBe(TEXT);
  });

  test('the thread items show the post and its reply escaped', async () => {
    const page = await owner.get(`/posts/${postId}`);
    const texts = await page.query('[data-testid="post-item-text"]');
    expect(texts.map((t) => t.text)).toEqual([TEXT, REPLY]);
    const items = page.html.slice(page.html.indexOf('data-testid="post-channel-items"'));
    expect(items).toContain(`reply ${ESCAPED}`);
    expectEscaped(items, 'thread items');
  });

  test('the preview page shows the text and the reply escaped', async () => {
    const made = await owner.post(`/posts/${postId}/preview-link`, { days: '3' });
    expect(made.status).toBe(200);
    const url = new URL((await made.one('[data-testid="preview-link"]')).attrs.value!);
    const preview = await owner.get(url.pathname);
    expect(preview.status).toBe(200);
    expectEscaped(preview.html, 'preview page');
    expect(preview.html).toContain(`post ${ESCAPED}`);
    expect(preview.html).toContain(`reply ${ESCAPED}`);
    expect((await preview.one('[data-testid="preview-text"]')).text).toBe(TEXT);
  });
});
