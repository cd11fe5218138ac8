// The composer's preview per chosen channel (POST /web/api/composer/preview, web/composer-preview.ts)
// drawn by the preview links' renderer (web/channel-preview.ts), and the counters of the text as it
// will be sent (POST /web/api/text-lengths with the post's links choice): each channel's own text,
// its thread and first comment as that platform gets them, links as the short links they become
// while the post shortens links (the form's Links section, starting as the organization's default,
// a draft's or an edited post's own choice, and sent with the post or the draft), a long text
// folded where the platform's feed folds it (platforms/feed-fold.ts; the preview links' page too),
// the user's text escaped; the composer page draws the same preview with the page.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { setLinkDefaults } from '../domain/links/choice.ts';
import { placeholderShortUrl, useShortLinkBase } from '../domain/links/rewrite.ts';
import { loadConfig } from '../lib/config.ts';
import { FEED_FOLD } from '../platforms/feed-fold.ts';
import { localInputValue } from '../web/time.ts';
import { call, makeChannel, makeKey, readyMedia } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { type Browser, query, signedInUser } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;

beforeAll(async () => {
  // Web options with the credentials key: preview links are signed with it.
  stack = await startPostStack({ storage: 'disk', web: {} });
  // Short links on a domain, as a deployment's SHORT_LINK_BASE_URL: X and Mastodon count a URL
  // only where its host has a top-level domain (localhost's is not one).
  useShortLinkBase(SHORT_LINK_BASE);
}, 60_000);
afterAll(async () => {
  useShortLinkBase(loadConfig({}).shortLinkBaseUrl);
  await stack?.stop();
});

const SHORT_LINK_BASE = 'https://go.kites.example.com';
const LONG = `https://example.com/articles/2030/a-very-long-path-${'x'.repeat(80)}?utm=none`;
const HOSTILE = `<b>bold</b> & "quoted"`;

/** An owner whose organization shortens links by default, with X, Mastodon, Bluesky and Facebook channels. */
async function setup(o: { shorten?: boolean } = {}) {
  const user = await signedInUser(stack.app);
  await setLinkDefaults(stack.h.orm.em.fork(), user.org.id, { shorten: o.shorten ?? true });
  const x = await makeChannel(user.org.id, 'X', { name: 'Brand on X' });
  const mastodon = await makeChannel(user.org.id, 'MASTODON', { name: 'Team Mastodon' });
  const bluesky = await makeChannel(user.org.id, 'BLUESKY', { name: 'Sky' });
  const facebook = await makeChannel(user.org.id, 'FACEBOOK', { name: 'Our Page' });
  return { ...user, x, mastodon, bluesky, facebook };
}

async function preview(browser: Browser, form: Record<string, string | string[]>, more: Record<string, string> = {}) {
  const fields = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) fields.append(k, one);
  const res = await browser.json('POST', '/web/api/composer/preview', { form: fields.toString(), ...more });
  return { status: res.status, res, html: res.status === 200 ? (res.json().html as string) : '' };
}

/** The previews of an answer's fragment, by platform: text, follow-ups (kind and text), media count. */
async function previewsOf(fragment: string) {
  const channels = await query(fragment, '[data-testid="preview-channel"]');
  const out: Record<string, { text: string; followUps: { kind: string; text: string }[]; media: number; over: number }> = {};
  for (const c of channels) {
    const id = c.attrs['data-channel-id']!;
    const scope = fragment.slice(fragment.indexOf(`data-channel-id="${id}"`));
    const own = scope.slice(0, scope.indexOf('</article>'));
    const text = (await query(own, '[data-testid="preview-text"]'))[0]?.text ?? '';
    const items = await query(own, '[data-testid="preview-follow-up"]');
    const itemTexts = await query(own, '[data-testid="preview-follow-up-text"]');
    out[c.attrs['data-platform']!] = {
      text,
      followUps: items.map((i, n) => ({ kind: i.attrs['data-kind']!, text: itemTexts[n]?.text ?? '' })),
      media: (await query(own, '[data-testid="preview-media"]')).length,
      over: (await query(own, '[data-testid="preview-over"]')).length,
    };
  }
  return out;
}

describe('the composer preview', () => {
  test('each chosen channel: its own text or the main one, links as short links, thread and first comment as the platform gets them, escaped', async () => {
    const { browser, org, x, mastodon, bluesky, facebook } = await setup();
    const media = await readyMedia(stack.storage!, org.id);
    const short = placeholderShortUrl();
    const { status, html } = await preview(browser, {
      channelIds: [x.id, mastodon.id, bluesky.id, facebook.id],
      content: `Read ${HOSTILE} ${LONG}`,
      text_BLUESKY: `Sky's own ${LONG}`,
      text_X: '   ',
      mediaIds: media,
      thread_0: 'the first reply',
      thread_1: '',
      firstComment: `a comment ${LONG}`,
      followUps: '1',
    });
    expect(status).toBe(200);
    // The user's text is escaped by the server; no markup of theirs reaches the page.
    expect(html).not.toContain('<b>bold</b>');
    expect(html).toContain('&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;');
    const shown = await previewsOf(html);
    expect(Object.keys(shown)).toEqual(['X', 'MASTODON', 'BLUESKY', 'FACEBOOK']);
    const followUps = [
      { kind: 'reply', text: `a comment ${short}` },
      { kind: 'reply', text: 'the first reply' },
    ];
    expect(shown.X).toEqual({ text: `Read ${HOSTILE} ${short}`, followUps, media: 1, over: 0 });
    expect(shown.MASTODON).toEqual({ text: `Read ${HOSTILE} ${short}`, followUps, media: 1, over: 0 });
    expect(shown.BLUESKY).toEqual({ text: `Sky's own ${short}`, followUps, media: 1, over: 0 });
    // A comment platform: the first comment under the post, no thread.
    expect(shown.FACEBOOK).toEqual({
      text: `Read ${HOSTILE} ${short}`,
      followUps: [{ kind: 'comment', text: `a comment ${short}` }],
      media: 1,
      over: 0,
    });
    const links = await query(html, '[data-testid="preview-short-link"]');
    expect(new Set(links.map((l) => l.attrs['data-url']))).toEqual(new Set([LONG]));
  });

  test('without shortening the links show as written; a text too long says so; no channel: a hint', async () => {
    const { browser, x } = await setup({ shorten: false });
    const { html } = await preview(browser, { channelIds: [x.id], content: `${'a'.repeat(290)} ${LONG}` });
    const shown = await previewsOf(html);
    expect(shown.X!.text).toBe(`${'a'.repeat(290)} ${LONG}`);
    expect(shown.X!.over).toBe(1);
    expect(html).toContain('Too long for X: 314 of 280 characters');
    const none = await preview(browser, { content: 'hello' });
    expect(none.status).toBe(200);
    expect(none.html).toContain('data-testid="preview-empty"');
  });

  test('the counters count the text as sent: X and Mastodon 23 a link, Bluesky and a comment the short link', async () => {
    const { browser, x, mastodon, bluesky, facebook } = await setup();
    const text = `Read ${LONG}`;
    const res = await browser.json('POST', '/web/api/text-lengths', {
      texts: [
        { channelId: x.id, text },
        { channelId: mastodon.id, text },
        { channelId: bluesky.id, text },
        { channelId: facebook.id, text, kind: 'comment' },
      ],
      links: { shorten: true },
    });
    expect(res.status).toBe(200);
    const sent = 'Read '.length + placeholderShortUrl().length;
    expect(res.json().counts.map((c: { length: number }) => c.length)).toEqual([5 + 23, 5 + 23, sent, sent]);
    // Without the choice: as written.
    const plain = await browser.json('POST', '/web/api/text-lengths', { texts: [{ channelId: bluesky.id, text }] });
    expect(plain.json().counts[0].length).toBe(text.length);
  });

  test('the composer page: the form says the choice, every counter is the server’s, the preview is drawn with the page', async () => {
    const { browser, x, bluesky } = await setup();
    const page = await browser.get(`/posts/new?channel=${x.id}`);
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeDefined();
    const counts = await page.query('[data-testid="char-count"]');
    expect(counts.map((c) => [c.attrs['data-channel-id'], c.attrs['data-count-rule']])).toContainEqual([bluesky.id, 'server']);
    expect((await page.one('[data-testid="composer-preview"] [data-testid="preview-channel"]')).attrs['data-channel-id']).toBe(x.id);
    expect((await page.one('[data-testid="preview-channels"]')).attrs['data-preview-url']).toBe('/web/api/composer/preview');
    // A form sent back (422) shows its preview again, as typed.
    const refused = await browser.post('/posts', { channelIds: [x.id], content: `<i>x</i> ${'b'.repeat(300)}`, when: 'now', tz: 'UTC' });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="preview-text"]')).text).toBe(`<i>x</i> ${'b'.repeat(300)}`);
    expect(refused.html).not.toContain('<i>x</i>');
  });

  test('an edit previews its post’s channels and links choice; a draft its own choice; another organization’s post is not found', async () => {
    const { browser, org, mastodon } = await setup();
    const { key } = await makeKey(org.id);
    const at = await stack.syncClock();
    const made = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: `Edit me ${LONG}`,
        channelIds: [mastodon.id],
        publishAt: new Date(at.getTime() + 3 * 86_400_000).toISOString(),
        links: { shorten: false },
      },
    });
    expect(made.status).toBe(201);
    // The edit form's channel boxes are disabled, so it sends none: the post's are used.
    const edit = await preview(browser, { content: `Edited ${LONG}` }, { postId: made.body.id });
    expect(edit.status).toBe(200);
    expect((await previewsOf(edit.html)).MASTODON!.text).toBe(`Edited ${LONG}`);
    const page = await browser.get(`/posts/${made.body.id}/edit`);
    expect((await page.one('[data-testid="composer-form"]')).attrs['data-post-id']).toBe(made.body.id);
    expect((await page.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeUndefined();

    const draft = await call(stack.app, 'POST', '/v1/drafts', {
      key,
      body: { content: 'a draft', channelIds: [mastodon.id], links: { shorten: false } },
    });
    expect(draft.status).toBe(201);
    const fromDraft = await preview(browser, { channelIds: mastodon.id, content: `Draft ${LONG}` }, { draftId: draft.body.id });
    expect((await previewsOf(fromDraft.html)).MASTODON!.text).toBe(`Draft ${LONG}`);
    // The same form as a new post: the organization's default shortens.
    const asNew = await preview(browser, { channelIds: mastodon.id, content: `Draft ${LONG}` });
    expect((await previewsOf(asNew.html)).MASTODON!.text).toBe(`Draft ${placeholderShortUrl()}`);

    const stranger = await setup();
    expect((await preview(stranger.browser, { content: 'x' }, { postId: made.body.id })).status).toBe(404);
    expect((await preview(stranger.browser, { content: 'x' }, { draftId: draft.body.id })).status).toBe(404);
  });

  test('the Links section: starts as the default, a post’s or a draft’s choice; the preview follows it; a create, an edit and a draft keep it', async () => {
    const { browser, org, mastodon, bluesky } = await setup();
    const { key } = await makeKey(org.id);
    const short = placeholderShortUrl();
    const page = await browser.get('/posts/new');
    expect((await page.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeDefined();
    expect((await page.one('[data-testid="composer-links-utm"]')).attrs.checked).toBeUndefined();

    // The form's box, not the default, decides the preview: unticked, the link as written.
    const form = { channelIds: [mastodon.id, bluesky.id], content: `Read ${LONG}`, linkFields: '1' };
    const plain = await previewsOf((await preview(browser, form)).html);
    expect([plain.MASTODON!.text, plain.BLUESKY!.text]).toEqual([`Read ${LONG}`, `Read ${LONG}`]);
    const ticked = await previewsOf((await preview(browser, { ...form, shorten: 'yes' })).html);
    expect([ticked.MASTODON!.text, ticked.BLUESKY!.text]).toEqual([`Read ${short}`, `Read ${short}`]);

    // A create keeps the form's choice (unticked), not the organization's default (shorten).
    const at = await stack.syncClock();
    const when = { when: 'later', tz: 'UTC', publishAt: localInputValue(new Date(at.getTime() + 3 * 86_400_000), 'UTC') };
    const created = await browser.post('/posts', { channelIds: [mastodon.id], content: `Links ${LONG}`, linkFields: '1', ...when });
    expect(created.status).toBe(303);
    const id = /^\/posts\/(post_[0-9a-z]+)\?/.exec(created.location ?? '')![1]!;
    const linksOf = async () => (await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).body.links;
    expect(await linksOf()).toEqual({ shorten: false });
    const edit = await browser.get(`/posts/${id}/edit`);
    expect((await edit.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeUndefined();
    // An edit replaces it; the edit page then shows the post's choice.
    const saved = await browser.post(`/posts/${id}/edit`, {
      content: `Links ${LONG}`,
      linkFields: '1',
      shorten: 'yes',
      utm: 'yes',
      campaign: 'spring-sale',
      publishAt: when.publishAt,
      tz: 'UTC',
    });
    expect(saved.status).toBe(303);
    expect(await linksOf()).toEqual({ shorten: true, utm: { campaign: 'spring-sale' } });
    const again = await browser.get(`/posts/${id}/edit`);
    expect((await again.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeDefined();
    expect((await again.one('[data-testid="composer-links-utm"]')).attrs.checked).toBeDefined();
    expect((await again.one('[data-testid="composer-links-campaign"]')).attrs.value).toBe('spring-sale');

    // A campaign without UTM parameters is refused at its field, the form shown again as sent.
    const refused = await browser.post('/posts', { channelIds: [mastodon.id], content: 'x', linkFields: '1', campaign: 'lost', ...when });
    expect(refused.status).toBe(422);
    expect((await refused.one('[data-testid="composer-links-error"] p')).attrs['data-path']).toBe('links.utm.campaign');
    expect((await refused.one('[data-testid="composer-links-campaign"]')).attrs).toMatchObject({ value: 'lost', 'aria-invalid': 'true' });

    // A draft keeps the form's choice, and opens with it.
    const draft = await browser.post('/drafts', {
      channelIds: [mastodon.id],
      content: 'a draft',
      linkFields: '1',
      publishAt: '',
      tz: 'UTC',
    });
    expect(draft.status).toBe(303);
    const draftId = /\/drafts\/(drf_[0-9a-z]+)\/edit/.exec(draft.location ?? '')![1]!;
    expect((await call(stack.app, 'GET', `/v1/drafts/${draftId}`, { key })).body.links).toEqual({ shorten: false });
    const opened = await browser.get(`/drafts/${draftId}/edit`);
    expect((await opened.one('[data-testid="composer-links-shorten"]')).attrs.checked).toBeUndefined();
  });

  test('a long text folds where the platform’s feed folds it, counted as sent, never inside a grapheme or a link; the preview link’s page too', async () => {
    const { browser, org, x, facebook } = await setup();
    const instagram = await makeChannel(org.id, 'INSTAGRAM', { name: 'Grid' });
    const linkedin = await makeChannel(org.id, 'LINKEDIN', { name: 'Company' });
    const ig = FEED_FOLD.INSTAGRAM!;
    const short = placeholderShortUrl();
    /** A channel's fold in a fragment: the text shown, the rest, the control's words; null when unfolded. */
    const foldOf = async (fragment: string, channelId: string) => {
      const scope = fragment.slice(fragment.indexOf(`data-channel-id="${channelId}"`));
      const own = scope.slice(0, scope.indexOf('</article>'));
      const fold = (await query(own, '[data-testid="preview-fold"]'))[0];
      if (!fold) return null;
      const one = async (testId: string) => (await query(own, `[data-testid="${testId}"]`))[0]?.text;
      return {
        chars: Number(fold.attrs['data-fold-chars']),
        shown: await one('preview-text-shown'),
        rest: await one('preview-text-rest'),
        more: await one('preview-fold-more'),
      };
    };
    // Shortened, the link counts as the short link and shows before the fold; as written, it is
    // longer than what is left before the fold and goes after it whole.
    const head = 'a'.repeat(70);
    const tail = 'b'.repeat(200);
    const content = `${head} ${LONG} ${tail}`;
    const channelIds = [x.id, instagram.id, linkedin.id, facebook.id];
    const shortened = (await preview(browser, { channelIds, content })).html;
    const before = `${head} ${short} `;
    expect(await foldOf(shortened, instagram.id)).toEqual({
      chars: ig.chars,
      shown: `${before}${'b'.repeat(ig.chars - before.length)}`,
      rest: 'b'.repeat(tail.length - (ig.chars - before.length)),
      more: expect.stringContaining(ig.more),
    });
    expect((await foldOf(shortened, linkedin.id))?.shown).toBe(`${before}${'b'.repeat(FEED_FOLD.LINKEDIN!.chars - before.length)}`);
    // Within Facebook's fold; X shows the whole text.
    expect(await foldOf(shortened, facebook.id)).toBeNull();
    expect(await foldOf(shortened, x.id)).toBeNull();
    const written = (await preview(browser, { channelIds, content, linkFields: '1' })).html;
    expect(await foldOf(written, instagram.id)).toMatchObject({ shown: head, rest: `${LONG} ${tail}` });

    // An emoji of several code points at the fold is one grapheme: shown whole.
    const astronaut = '👩🏽‍🚀';
    const emoji = (
      await preview(browser, { channelIds: [instagram.id], content: `${'a'.repeat(ig.chars - 1)}${astronaut}${'c'.repeat(10)}` })
    ).html;
    expect(await foldOf(emoji, instagram.id)).toMatchObject({ shown: `${'a'.repeat(ig.chars - 1)}${astronaut}`, rest: 'c'.repeat(10) });

    // The preview link's page draws the same fold.
    const { key } = await makeKey(org.id);
    const at = await stack.syncClock();
    const made = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content,
        channelIds: [linkedin.id],
        publishAt: new Date(at.getTime() + 3 * 86_400_000).toISOString(),
        links: { shorten: true },
      },
    });
    expect(made.status).toBe(201);
    const link = await browser.post(`/posts/${made.body.id}/preview-link`, { days: '3' });
    const url = new URL((await link.one('[data-testid="preview-link"]')).attrs.value!);
    const page = await browser.get(url.pathname);
    expect(page.status).toBe(200);
    expect((await foldOf(page.html, linkedin.id))?.shown).toBe(`${before}${'b'.repeat(FEED_FOLD.LINKEDIN!.chars - before.length)}`);
  });

  test('refused without the CSRF header, and for a viewer', async () => {
    const { browser } = await setup();
    const res = await browser.json('POST', '/web/api/composer/preview', { form: 'content=x' }, { csrf: false });
    expect(res.status).toBe(403);
    const viewer = await signedInUser(stack.app, { role: 'viewer' });
    const refused = await viewer.browser.json('POST', '/web/api/composer/preview', { form: 'content=x' });
    expect(refused.status).toBe(403);
    expect(refused.json().error.code).toBe('forbidden_role');
  });
});
