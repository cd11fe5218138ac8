// X and Mastodon count text their own way (platforms/text-length.ts): X weighs with twitter-text (most
// CJK characters and emoji 2, every URL 23), Mastodon counts every http(s) URL as the instance's
// `characters_reserved_per_url` and `@user@domain` as `@user`. For CJK, emoji, URLs and a mix, at
// the limit and one over: the API (POST /v1/posts → 201 / 422), the platform fakes (accept /
// refuse with the platform's error), `channel add` reading the per-URL count, and the composer.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { COMMANDS } from '../cli/commands.ts';
import { Channel, Post } from '../db/entities/index.ts';
import { mastodonLength, measureText, xLength } from '../platforms/text-length.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { createXConnector } from '../platforms/x.ts';
import { addChannel } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeX, type FakeX } from './fakes/x.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { signedInUser } from './harness/web-browser.ts';
import { failure } from './harness/platform-failure.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let stack: Stack;
let fakeX: FakeX;
let fakeMastodon: FakeMastodon;
let serial = 0;

beforeAll(async () => {
  stack = await startPostStack();
  fakeX = await startFakeX();
  fakeMastodon = await startFakeMastodon();
});
afterAll(async () => {
  await stack?.stop();
  await fakeX?.stop();
  await fakeMastodon?.stop();
});

const family = '👨‍👩‍👧‍👦'; // one grapheme, one emoji: 11 UTF-16 code units
const longUrl = (n: number) => `https://example.com/${'p'.repeat(n)}`; // any length: 23

/** Texts exactly at the limit (`fits`) and one over (`over`), with the count the platform gives. */
interface Case {
  name: string;
  fits: string;
  over: string;
}

// X: 280 weighted.
const X_CASES: Case[] = [
  { name: 'CJK (2 each)', fits: 'あ'.repeat(140), over: 'あ'.repeat(141) },
  { name: 'emoji (2 each)', fits: '😀'.repeat(140), over: '😀'.repeat(141) },
  { name: 'ZWJ emoji sequences (2 each)', fits: family.repeat(140), over: family.repeat(141) },
  { name: 'a 220-character URL (23)', fits: `${'a'.repeat(256)} ${longUrl(200)}`, over: `${'a'.repeat(257)} ${longUrl(200)}` },
  {
    name: 'a URL without scheme (23)',
    fits: `${'b'.repeat(256)} example.org/${'q'.repeat(80)}`,
    over: `${'b'.repeat(257)} example.org/${'q'.repeat(80)}`,
  },
  // 'こんにちは' 10 + ' ' + '🎉' 2 + ' ' + URL 23 + ' ' + n ASCII → 38 + n.
  {
    name: 'a mix of CJK, emoji, a URL and ASCII',
    fits: `こんにちは 🎉 ${longUrl(60)} ${'c'.repeat(242)}`,
    over: `こんにちは 🎉 ${longUrl(60)} ${'c'.repeat(243)}`,
  },
];

// Mastodon: 500 graphemes after the rewrite (the fake instance's max_characters).
const MASTODON_CASES: Case[] = [
  { name: 'CJK (1 each)', fits: 'あ'.repeat(500), over: 'あ'.repeat(501) },
  { name: 'emoji sequences (1 grapheme each)', fits: family.repeat(500), over: family.repeat(501) },
  { name: 'a 520-character URL (23)', fits: `${'a'.repeat(476)} ${longUrl(500)}`, over: `${'a'.repeat(477)} ${longUrl(500)}` },
  {
    name: '@user@domain counts as @user',
    fits: `@alice@mastodon.example ${'d'.repeat(493)}`,
    over: `@alice@mastodon.example ${'d'.repeat(494)}`,
  },
  // 'こんにちは' 5 + ' ' + '🎉' 1 + ' ' + URL 23 + ' ' + '@bob' 4 + ' ' + n → 37 + n.
  {
    name: 'a mix of CJK, emoji, a URL, a remote mention and ASCII',
    fits: `こんにちは 🎉 ${longUrl(90)} @bob@social.example ${'e'.repeat(463)}`,
    over: `こんにちは 🎉 ${longUrl(90)} @bob@social.example ${'e'.repeat(464)}`,
  },
];

function unique(text: string): string {
  // Same length everywhere: the last ASCII character becomes a digit (X refuses duplicate text).
  const n = String(++serial % 10);
  return /[a-e]$/.test(text) ? text.slice(0, -1) + n : text;
}

describe('the counting rules (platforms/text-length.ts)', () => {
  test('X: twitter-text weights; Mastodon: URLs and remote mentions shortened, graphemes', () => {
    for (const c of X_CASES)
      expect({ name: c.name, fits: xLength(c.fits), over: xLength(c.over) }).toEqual({
        name: c.name,
        fits: 280,
        over: c.over.startsWith('あ') || c.over.startsWith('😀') || c.over.startsWith(family) ? 282 : 281,
      });
    for (const c of MASTODON_CASES)
      expect({ name: c.name, fits: mastodonLength(c.fits), over: mastodonLength(c.over) }).toEqual({ name: c.name, fits: 500, over: 501 });
    // What graphemes alone would say: a grapheme count lets the CJK text through X and refuses the URL text on Mastodon.
    expect([...new Intl.Segmenter().segment('あ'.repeat(141))].length).toBeLessThan(280);
    expect(mastodonLength(longUrl(500), 30)).toBe(30);
    expect(mastodonLength('mail me at bob@example.org')).toBe(26); // an e-mail address is no mention
    expect(mastodonLength('@bob@example.org')).toBe(4);
  });

  test('a text certainly over the limit is not run through twitter-text (its URL pattern backtracks on "a.a.a.…")', () => {
    const hostile = 'a.'.repeat(200_000);
    expect(measureText('X', hostile, { max: 280 })).toEqual({ length: Math.floor(hostile.length / 179), exact: false });
    expect(measureText('MASTODON', `${hostile}:`, { max: 500 }).exact).toBe(false);
    // Under an X Premium-sized limit it is measured, and a long dotted run is no URL.
    expect(measureText('X', 'a.'.repeat(20_000), { max: 100_000 })).toEqual({ length: 40_000, exact: true });
    expect(measureText('X', `${'a.'.repeat(20)} ${longUrl(10)}`, { max: 280 })).toEqual({ length: 41 + 23, exact: true });
  });
});

describe('POST /v1/posts counts as the platform does', () => {
  async function setup() {
    const org = await makeOrg();
    const x = await makeChannel(org.id, 'X');
    const m = await makeChannel(org.id, 'MASTODON');
    const { key } = await makeKey(org.id);
    const publishAt = new Date((await stack.syncClock()).getTime() + 30 * 86_400_000).toISOString();
    const post = (channelId: string, content: string) =>
      call(stack.app, 'POST', '/v1/posts', { key, body: { content: unique(content), channelIds: [channelId], publishAt } });
    return { org, x, m, post };
  }

  test('X: at 280 weighted → 201, one over → 422 naming the weighted count', async () => {
    const { org, x, post } = await setup();
    for (const c of X_CASES) {
      const ok = await post(x.id, c.fits);
      expect({ name: c.name, status: ok.status }).toEqual({ name: c.name, status: 201 });
      const refused = await post(x.id, c.over);
      expect({ name: c.name, status: refused.status, path: refused.body.error?.details?.fields?.[0]?.path }).toEqual({
        name: c.name,
        status: 422,
        path: 'content',
      });
      expect(refused.body.error.details.fields[0].message).toStartWith(
        `is ${xLength(c.over)} characters (X counts most CJK characters and emoji as 2 and every URL as 23); X channel ${x.id} allows 280`,
      );
    }
    expect(await stack.h.orm.em.fork().count(Post, { organization: org.id })).toBe(X_CASES.length);
  });

  test('Mastodon: at 500 → 201, one over → 422; the per-URL count comes from the channel', async () => {
    const { m, post, org } = await setup();
    for (const c of MASTODON_CASES) {
      const ok = await post(m.id, c.fits);
      expect({ name: c.name, status: ok.status }).toEqual({ name: c.name, status: 201 });
      const refused = await post(m.id, c.over);
      expect({ name: c.name, status: refused.status, message: refused.body.error?.details?.fields?.[0]?.message }).toEqual({
        name: c.name,
        status: 422,
        message: `is 501 characters (Mastodon counts every URL as 23 and @user@domain as @user); MASTODON channel ${m.id} allows 500`,
      });
    }
    // An instance that counts a URL as 30: 469 + 1 + 30 = 500 fits there, 470 does not.
    const wide = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'Wide URLs',
      credentials: { instanceUrl: 'https://wide.example', accessToken: 't' },
      charactersReservedPerUrl: 30,
    });
    expect((await post(wide.id, `${'f'.repeat(469)} ${longUrl(300)}`)).status).toBe(201);
    const over = await post(wide.id, `${'f'.repeat(470)} ${longUrl(300)}`);
    expect(over.status).toBe(422);
    expect(over.body.error.details.fields[0].message).toStartWith('is 501 characters');
    // The same text on a 23-per-URL channel is 494.
    expect((await post(m.id, `${'f'.repeat(470)} ${longUrl(300)}`)).status).toBe(201);
  });

  test('an X text far over the limit is refused at once with a lower bound', async () => {
    const { x, post } = await setup();
    const r = await post(x.id, 'a.'.repeat(45_000));
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields[0].message).toStartWith(`is at least ${Math.floor(90_000 / 179)} characters`);
  });
});

describe("the platform fakes count the same way and refuse with the platform's error", () => {
  const x = () => createXConnector({ baseUrl: fakeX.url, timeoutMs: 5_000, oauth: { clientId: fakeX.clientId } });
  const mastodon = () => createMastodonConnector({ timeoutMs: 5_000, outbound: { allowPrivate: true } });

  test('X: every text our validation accepts is posted; every one it refuses, X refuses (403)', async () => {
    for (const c of X_CASES) {
      const fits = unique(c.fits);
      const posted = await x().publish({
        text: fits,
        media: [],
        idempotencyKey: `wl-x-${++serial}`,
        credentials: { accessToken: 'good-token' },
      });
      expect(fakeX.tweets.find((t) => t.id === posted.platformPostId)?.text).toBe(fits);
      const err = await failure(
        x().publish({ text: unique(c.over), media: [], idempotencyKey: `wl-x-${++serial}`, credentials: { accessToken: 'good-token' } }),
      );
      expect({ name: c.name, kind: err.kind, status: err.opts.status, message: err.message }).toEqual({
        name: c.name,
        kind: 'permanent',
        status: 403,
        message: 'X 403: You are not permitted to perform this action.',
      });
    }
  });

  test('Mastodon: the same texts; over the limit → 422 "Text character limit of 500 exceeded"', async () => {
    const credentials = { instanceUrl: fakeMastodon.url, accessToken: 'good-token' };
    for (const c of MASTODON_CASES) {
      const posted = await mastodon().publish({ text: c.fits, media: [], idempotencyKey: `wl-m-${++serial}`, credentials });
      expect(fakeMastodon.statuses.find((s) => s.id === posted.platformPostId)?.text).toBe(c.fits);
      const err = await failure(mastodon().publish({ text: c.over, media: [], idempotencyKey: `wl-m-${++serial}`, credentials }));
      expect({ name: c.name, kind: err.kind, message: err.message }).toEqual({
        name: c.name,
        kind: 'permanent',
        message: 'Mastodon 422: Validation failed: Text character limit of 500 exceeded',
      });
    }
  });
});

describe('channel add reads characters_reserved_per_url with max_characters', () => {
  test('kept in the channel settings and used by validation', async () => {
    const instance = await startFakeMastodon({ maxCharacters: 100, charactersReservedPerUrl: 30 });
    try {
      const org = await makeOrg();
      const em = stack.h.orm.em.fork();
      const added = (await COMMANDS['channel add']!.run(
        { em, credentialsKey: () => stack.h.credentialsKey, outbound: { allowPrivate: true } },
        {
          org: org.id,
          platform: 'MASTODON',
          name: 'Small instance',
          credentials: JSON.stringify({ instanceUrl: instance.url, accessToken: 'good-token' }),
        },
      )) as { id: string; rules: { maxChars: number } };
      expect(added.rules.maxChars).toBe(100);
      const row = await stack.h.orm.em.fork().findOneOrFail(Channel, { id: added.id });
      expect(row.settings).toEqual({ charactersReservedPerUrl: 30 });
      const { key } = await makeKey(org.id);
      const publishAt = new Date((await stack.syncClock()).getTime() + 30 * 86_400_000).toISOString();
      const post = (content: string) => call(stack.app, 'POST', '/v1/posts', { key, body: { content, channelIds: [added.id], publishAt } });
      expect((await post(`${'g'.repeat(69)} ${longUrl(40)}`)).status).toBe(201);
      expect((await post(`${'g'.repeat(70)} ${longUrl(40)}`)).status).toBe(422);
      // And the instance agrees.
      const connector = createMastodonConnector({ timeoutMs: 5_000, outbound: { allowPrivate: true } });
      const credentials = { instanceUrl: instance.url, accessToken: 'good-token' };
      await connector.publish({ text: `${'g'.repeat(69)} ${longUrl(40)}`, media: [], idempotencyKey: 'wl-small-1', credentials });
      expect(
        (
          await failure(
            connector.publish({ text: `${'g'.repeat(70)} ${longUrl(40)}`, media: [], idempotencyKey: 'wl-small-2', credentials }),
          )
        ).message,
      ).toBe('Mastodon 422: Validation failed: Text character limit of 100 exceeded');
    } finally {
      await instance.stop();
    }
  });
});

describe('the composer shows the same counts', () => {
  test('POST /web/api/text-lengths: X and Mastodon weighted, others in graphemes; the form re-rendered after a 422 too', async () => {
    const { browser, org } = await signedInUser(stack.app);
    const x = await makeChannel(org.id, 'X');
    const m = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'BLUESKY');
    const other = await makeChannel((await makeOrg()).id, 'X');
    const texts = [
      { channelId: x.id, text: 'あ'.repeat(141) },
      { channelId: x.id, text: X_CASES[5]!.fits },
      { channelId: m.id, text: MASTODON_CASES[4]!.over },
      { channelId: b.id, text: 'あ'.repeat(141) },
    ];
    const res = await browser.json('POST', '/web/api/text-lengths', { texts });
    expect(res.status).toBe(200);
    expect(res.json().counts).toEqual([
      { channelId: x.id, length: 282, exact: true, maxChars: 280, over: true },
      { channelId: x.id, length: 280, exact: true, maxChars: 280, over: false },
      { channelId: m.id, length: 501, exact: true, maxChars: 500, over: true },
      { channelId: b.id, length: 141, exact: true, maxChars: 300, over: false },
    ]);
    const foreign = await browser.json('POST', '/web/api/text-lengths', { texts: [{ channelId: other.id, text: 'x' }] });
    expect(foreign.status).toBe(422);
    expect(foreign.json().error.details.fields).toEqual([{ path: 'texts.0.channelId', message: `unknown channel ${other.id}` }]);
    expect((await browser.json('POST', '/web/api/text-lengths', { texts }, { csrf: false })).status).toBe(403);

    // The page itself: counted on the server, marked for composer.js to ask again as the text changes.
    const at = new Date((await stack.syncClock()).getTime() + 86_400_000);
    const refused = await browser.post('/posts', {
      channelIds: [x.id, m.id],
      content: 'あ'.repeat(141),
      when: 'later',
      publishAt: at.toISOString().slice(0, 16),
      tz: 'UTC',
    });
    expect(refused.status).toBe(422);
    const counts = await refused.query('[data-testid="char-count"]');
    expect(counts.map((c) => [c.attrs['data-platform'], c.attrs['data-count-rule'], c.attrs['data-count'], c.attrs['data-over']])).toEqual([
      ['X', 'server', '282', 'true'],
      ['MASTODON', 'server', '141', 'false'],
      ['BLUESKY', 'graphemes', '141', 'false'],
    ]);
  });
});
