// Tracked links end to end: a post with `links.shorten` is published on the fake Mastodon with a
// short link of the service in place of each link (its thread's too), the same text on a retried
// attempt; the short link, followed over a real socket by an ordinary HTTP client, lands on the
// target with the channel's UTM parameters; the click shows in the post's analytics, counted once
// per address and minute, never for a crawler or a HEAD; an unknown or malformed code is a 404
// without Location; the length checks count each link as the short link it becomes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../lib/config.ts';
import { LinkClick, TrackedLink } from '../db/entities/index.ts';
import { COMMANDS } from '../cli/commands.ts';
import { setLinkDefaults } from '../domain/links/choice.ts';
import { metricsOf, withServiceClicks } from '../domain/analytics/metrics.ts';
import { CRAWLERS, isCrawler } from '../domain/links/clicks.ts';
import { httpLinks, SHORT_CODE_CHARS, useShortLinkBase, withUtm } from '../domain/links/rewrite.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel } from './harness/fixtures.ts';
import { mastodonAccount, useMastodonStack, type PostStack } from './harness/mastodon-stack.ts';

let stack: PostStack;
let fake: FakeMastodon;
// The behind-a-proxy setting: each test names its client's address in X-Forwarded-For.
useMastodonStack({ appDeps: { trustProxyHops: 1 } }, (s, f) => {
  stack = s;
  fake = f;
});

let base: string;
let server: { stop: (force?: boolean) => Promise<unknown> } | undefined;
/** Where the links of the posts lead: answers 200 and records what it was asked. */
let landing: ReturnType<typeof Bun.serve>;
const landed: URL[] = [];

beforeAll(async () => {
  const listening = stack.app.listen({ port: 0, hostname: '127.0.0.1' });
  server = { stop: (force) => listening.stop(force) };
  base = `http://127.0.0.1:${listening.server!.port}`;
  // Short links on the socket the app listens on, as SHORT_LINK_BASE_URL would make them.
  useShortLinkBase(base);
  landing = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      landed.push(new URL(req.url));
      return new Response('landed');
    },
  });
});
afterAll(async () => {
  useShortLinkBase(loadConfig({}).shortLinkBaseUrl);
  await server?.stop(true);
  landing?.stop(true);
});

const target = (path: string) => `http://127.0.0.1:${landing.port}${path}`;
const SHORT = new RegExp(`^${'http://127\\.0\\.0\\.1:\\d+'}/l/[0-9A-Za-z]{${SHORT_CODE_CHARS}}$`);

async function publish(key: string, body: Record<string, unknown>) {
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', { key, body });
  expect(created.status).toBe(201);
  await stack.settle(created.body.id);
  return created.body.id as string;
}

const analytics = async (key: string, postId: string) => {
  const r = await call(stack.app, 'GET', `/v1/posts/${postId}/analytics`, { key });
  expect(r.status).toBe(200);
  return r.body;
};

/** A GET (or HEAD) of a short link over the socket, from `address` (the proxy's X-Forwarded-For). */
const follow = (url: string, address: string, init: RequestInit & { agent?: string } = {}) =>
  fetch(url, {
    redirect: 'manual',
    ...init,
    headers: { 'x-forwarded-for': address, 'user-agent': init.agent ?? 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
  });

describe('a published post’s links', () => {
  let key: string;
  let postId: string;
  let shortUrl: string;

  test('are sent as short links (the thread’s too); a retried attempt sends the same text', async () => {
    const acct = await mastodonAccount(stack, fake);
    key = acct.key;
    const link = target('/spring?ref=blog&x=1#top');
    // The first send is accepted but its answer never comes: the retry sends again (with the
    // same Idempotency-Key) and must send the very same text.
    fake.failNext(1, 'accept-then-hang');
    const sendsBefore = fake.sends.length;
    postId = await publish(key, {
      content: `Spring sale: ${link}. Also (${target('/faq')})`,
      channelIds: [acct.channelId],
      thread: [{ content: `Once more: ${link}` }],
      links: { shorten: true, utm: { campaign: 'spring-2026' } },
    });
    const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
    expect(post.status).toBe('published');
    expect(post.links).toEqual({ shorten: true, utm: { campaign: 'spring-2026' } });
    // The post keeps its text as written; the platform got the short links.
    expect(post.channels[0].content).toContain(link);

    const sends = fake.sends.slice(sendsBefore);
    expect(sends.length).toBe(3); // the post twice (accepted, then re-sent), its reply once
    expect(sends[1]!.text).toBe(sends[0]!.text);
    const sent = sends[0]!.text;
    expect(sent).not.toContain(target('/'));
    const shorts = httpLinks(sent).map((l) => l.url);
    expect(shorts).toHaveLength(2);
    for (const s of shorts) expect(s).toMatch(SHORT);
    expect(sent).toBe(`Spring sale: ${shorts[0]}. Also (${shorts[1]})`);
    // One short link per (post, channel, link): the reply's is the post's.
    expect(sends[2]!.text).toBe(`Once more: ${shorts[0]}`);
    const rows = await stack.h.orm.em.fork().find(TrackedLink, { shortUrl: { $in: shorts } });
    expect(rows).toHaveLength(2);
    shortUrl = shorts[0]!;
  }, 60_000);

  test('followed by an ordinary HTTP client: 302 to the target with UTM parameters, its own query and fragment kept', async () => {
    const r = await follow(shortUrl, '198.51.100.1');
    expect(r.status).toBe(302);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('x-request-id')).toBeTruthy();
    const location = r.headers.get('location')!;
    expect(location).toBe(target('/spring?ref=blog&x=1&utm_source=mastodon&utm_medium=social&utm_campaign=spring-2026#top'));

    const before = landed.length;
    const landedOn = await fetch(shortUrl, { headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(landedOn.status).toBe(200);
    expect(await landedOn.text()).toBe('landed');
    const at = landed[before]!;
    expect(at.pathname).toBe('/spring');
    expect(Object.fromEntries(at.searchParams)).toEqual({
      ref: 'blog',
      x: '1',
      utm_source: 'mastodon',
      utm_medium: 'social',
      utm_campaign: 'spring-2026',
    });
  });

  test('the analytics show the click, with its source: the two requests of one address in one minute count once', async () => {
    const body = await analytics(key, postId);
    const [channel] = body.channels;
    // Mastodon reports no clicks: the service's own count, marked as such.
    expect(channel.metrics.clicks).toBe(1);
    expect(channel.clicksSource).toBe('service');
    expect(channel.measuredAt.clicks).not.toBeNull();
    const byUrl = (a: { url: string }, b: { url: string }) => a.url.localeCompare(b.url);
    expect([...body.links].sort(byUrl)).toEqual(
      [
        { url: target('/spring?ref=blog&x=1#top'), shortUrl, channelId: channel.channelId, clicks: 1 },
        { url: target('/faq'), shortUrl: expect.stringMatching(SHORT), channelId: channel.channelId, clicks: 0 },
      ].sort(byUrl),
    );
  });

  test('across posts (GET /v1/analytics) the channel post counts the same clicks, with its source', async () => {
    const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
    const at = new Date(post.publishedAt).getTime();
    const range = `from=${encodeURIComponent(new Date(at - 3_600_000).toISOString())}&to=${encodeURIComponent(new Date(at + 3_600_000).toISOString())}`;
    const r = await call(stack.app, 'GET', `/v1/analytics?${range}`, { key });
    expect(r.status).toBe(200);
    expect(r.body.totals.clicks).toBe(1);
    const top = r.body.topPosts.find((t: { postId: string }) => t.postId === postId);
    expect(top).toMatchObject({ clicksSource: 'service', metrics: { clicks: 1 } });
  });

  test('1,000 requests from one address within a minute count once; the next minute counts again; another address counts', async () => {
    const clicks = async () =>
      (await analytics(key, postId)).links.find((l: { shortUrl: string }) => l.shortUrl === shortUrl).clicks as number;
    const start = await clicks();
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 1000) {
          next++;
          const r = await follow(shortUrl, '203.0.113.7');
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 302: 1000 });
    expect(await clicks()).toBe(start + 1);
    expect((await follow(shortUrl, '203.0.113.8')).status).toBe(302);
    expect(await clicks()).toBe(start + 2);
    await stack.env.sleep('1 minute');
    await stack.syncClock();
    expect((await follow(shortUrl, '203.0.113.7')).status).toBe(302);
    expect(await clicks()).toBe(start + 3);
    // Each client address is kept as a hash only.
    const hashes = await stack.h.orm.em.fork().find(LinkClick, {});
    for (const h of hashes) expect(h.addressHash).toMatch(/^[0-9a-f]{64}$/);
  }, 60_000);

  test('a crawler’s User-Agent and a HEAD count none, and are still answered 302', async () => {
    const clicks = async () =>
      (await analytics(key, postId)).links.find((l: { shortUrl: string }) => l.shortUrl === shortUrl).clicks as number;
    const start = await clicks();
    const agents = [
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'Twitterbot/1.0',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'http.rb/5.1.1 (Mastodon/4.3.0; +https://mastodon.social/)',
      'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)',
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
      'TelegramBot (like TwitterBot)',
      'WhatsApp/2.23.20.0 A',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    ];
    for (const [i, agent] of agents.entries()) {
      const r = await follow(shortUrl, `192.0.2.${i + 1}`, { agent });
      expect(r.status).toBe(302);
    }
    const head = await follow(shortUrl, '192.0.2.100', { method: 'HEAD' });
    expect(head.status).toBe(302);
    expect(head.headers.get('location')).toContain('utm_source=mastodon');
    expect(await clicks()).toBe(start);
    for (const agent of agents) expect(isCrawler(agent)).toBe(true);
    // No User-Agent at all is no browser either.
    expect(isCrawler(null)).toBe(true);
    expect(isCrawler(' ')).toBe(true);
    expect(isCrawler('Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1')).toBe(false);
    expect(CRAWLERS.length).toBeGreaterThan(20);
  });

  test('the same links of another channel are its own short links, with its own utm_source', async () => {
    const acct = await mastodonAccount(stack, fake);
    const sendsBefore = fake.sends.length;
    const link = target('/spring');
    await publish(acct.key, { content: `Again ${link}`, channelIds: [acct.channelId], links: { shorten: true } });
    const sent = fake.sends[sendsBefore]!.text;
    const [short] = httpLinks(sent).map((l) => l.url);
    expect(short).toMatch(SHORT);
    expect(short).not.toBe(shortUrl);
    // No `utm`: the target as written.
    expect((await follow(short!, '198.51.100.9')).headers.get('location')).toBe(link);
  }, 60_000);
});

describe('the redirect never goes anywhere it did not record', () => {
  test('an unknown code and malformed ones are 404 without Location', async () => {
    for (const code of [
      'unknown',
      'A'.repeat(SHORT_CODE_CHARS),
      'a'.repeat(SHORT_CODE_CHARS - 1),
      `${'b'.repeat(15)}-`,
      '..%2F..%2Fv1',
      'https%3A%2F%2Fevil.example',
      'x'.repeat(4000),
    ]) {
      const r = await fetch(`${base}/l/${code}`, { redirect: 'manual' });
      expect(r.status).toBe(404);
      expect(r.headers.get('location')).toBeNull();
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('x-request-id')).toBeTruthy();
      const body = (await r.json()) as { error: { code: string } };
      expect(body.error.code).toBe('not_found');
    }
    const viaApp = await call(stack.app, 'GET', '/l/unknown');
    expect(viaApp.status).toBe(404);
    expect(viaApp.headers.get('location')).toBeNull();
    const head = await fetch(`${base}/l/unknown`, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(404);
    expect(head.headers.get('location')).toBeNull();
  });
});

describe('the organization’s default and the UTM campaign', () => {
  test('a post without `links` takes the default as it was when the post was made; the campaign defaults to its first tag', async () => {
    const acct = await mastodonAccount(stack, fake);
    await setLinkDefaults(stack.h.orm.em.fork(), acct.orgId, { shorten: true, utm: {} });
    const tag = await call(stack.app, 'POST', '/v1/tags', { key: acct.key, body: { name: 'Autumn launch' } });
    expect(tag.status).toBe(201);
    const sendsBefore = fake.sends.length;
    const link = target('/autumn?utm_source=newsletter');
    const postId = await publish(acct.key, { content: `New: ${link}`, channelIds: [acct.channelId], tagIds: [tag.body.id] });
    const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key: acct.key })).body;
    expect(post.links).toEqual({ shorten: true, utm: {} });
    const [short] = httpLinks(fake.sends[sendsBefore]!.text).map((l) => l.url);
    expect(short).toMatch(SHORT);
    // The author's own utm_source stays; the others are added, the campaign the tag's name.
    expect((await follow(short!, '198.51.100.10')).headers.get('location')).toBe(
      target('/autumn?utm_source=newsletter&utm_medium=social&utm_campaign=Autumn%20launch'),
    );

    // A post made after the default changed back sends its links as written.
    await setLinkDefaults(stack.h.orm.em.fork(), acct.orgId, { shorten: false });
    const plainBefore = fake.sends.length;
    await publish(acct.key, { content: `Plain: ${link}`, channelIds: [acct.channelId] });
    expect(fake.sends[plainBefore]!.text).toBe(`Plain: ${link}`);
  }, 60_000);

  test('the default is checked: a malformed one is refused with its path; the CLI sets it', async () => {
    const acct = await mastodonAccount(stack, fake);
    const ctx = { em: stack.h.orm.em.fork(), credentialsKey: () => stack.h.credentialsKey };
    const setLinks = COMMANDS['org set-links']!;
    expect(await setLinks.run(ctx, { org: acct.orgId, shorten: 'yes', campaign: 'fall' })).toEqual({
      id: acct.orgId,
      links: { shorten: true, utm: { campaign: 'fall' } },
    });
    expect(await setLinks.run(ctx, { org: acct.orgId, shorten: 'no', utm: 'no' })).toEqual({ id: acct.orgId, links: { shorten: false } });
    await expect(setLinks.run(ctx, { org: acct.orgId, shorten: 'yes', utm: 'no', campaign: 'x' })).rejects.toThrow('--campaign');
    await expect(setLinkDefaults(stack.h.orm.em.fork(), acct.orgId, { shorten: 'yes' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});

describe('length checks count each link as the short link it becomes', () => {
  const longLink = `https://shop.example.com/${'a'.repeat(180)}`;
  const validate = (key: string, body: Record<string, unknown>) => call(stack.app, 'POST', '/v1/posts/validate', { key, body });

  test('on a platform that counts every character, a text over the limit only for its long link passes once shortened', async () => {
    useShortLinkBase('https://go.postpilot.example.com');
    try {
      const acct = await mastodonAccount(stack, fake);
      const bluesky = await makeChannel(acct.orgId, 'BLUESKY');
      const text = `${'x'.repeat(200)} ${longLink}`;
      const refused = await validate(acct.key, { content: text, channelIds: [bluesky.id] });
      expect(refused.status).toBe(422);
      const ok = await validate(acct.key, { content: text, channelIds: [bluesky.id], links: { shorten: true } });
      expect(ok.status).toBe(200);
      const shortLength = 'https://go.postpilot.example.com/l/'.length + SHORT_CODE_CHARS;
      expect(ok.body.channels[0].characters).toBe(201 + shortLength);
      // A thread item is counted the same way.
      const thread = await validate(acct.key, {
        content: 'hi',
        channelIds: [bluesky.id],
        thread: [{ content: text }],
        links: { shorten: true },
      });
      expect(thread.status).toBe(200);
      expect(thread.body.channels[0].items[0].characters).toBe(201 + shortLength);
    } finally {
      useShortLinkBase(base);
    }
  });

  test('an edit is checked with the links choice it gives, else the post’s; it stores the one it gives', async () => {
    useShortLinkBase('https://go.postpilot.example.com');
    try {
      const acct = await mastodonAccount(stack, fake);
      const bluesky = await makeChannel(acct.orgId, 'BLUESKY');
      const publishAt = new Date((await stack.syncClock()).getTime() + 30 * 86_400_000).toISOString();
      const text = `${'x'.repeat(200)} ${longLink}`;
      const created = await call(stack.app, 'POST', '/v1/posts', {
        key: acct.key,
        body: { content: 'short for now', channelIds: [bluesky.id], publishAt, links: { shorten: true } },
      });
      expect(created.status).toBe(201);
      const path = `/v1/posts/${created.body.id}`;
      // The post's own choice (shorten) counts the new text's link as a short link.
      const edited = await call(stack.app, 'PATCH', path, { key: acct.key, body: { content: text } });
      expect(edited.status).toBe(200);
      // Without shortening the same text is over Bluesky's 300.
      const refused = await call(stack.app, 'PATCH', path, { key: acct.key, body: { links: { shorten: false } } });
      expect(refused.status).toBe(422);
      expect(refused.body.error.details.fields[0].path).toBe('content');
      const utm = await call(stack.app, 'PATCH', path, { key: acct.key, body: { links: { shorten: true, utm: { campaign: 'later' } } } });
      expect(utm.status).toBe(200);
      expect(utm.body.links).toEqual({ shorten: true, utm: { campaign: 'later' } });
    } finally {
      useShortLinkBase(base);
    }
  });

  test('on X and Mastodon the short link counts 23, as they count every link', async () => {
    useShortLinkBase('https://go.postpilot.example.com');
    try {
      const acct = await mastodonAccount(stack, fake);
      const x = await makeChannel(acct.orgId, 'X');
      const mastodon = await makeChannel(acct.orgId, 'MASTODON');
      const text = `${'x'.repeat(250)} ${longLink}`;
      const ok = await validate(acct.key, { content: text, channelIds: [x.id, mastodon.id], links: { shorten: true } });
      expect(ok.status).toBe(200);
      expect(ok.body.channels.map((c: { characters: number }) => c.characters)).toEqual([274, 274]);
      const over = await validate(acct.key, {
        content: `${'x'.repeat(257)} ${longLink}`,
        channelIds: [x.id],
        links: { shorten: true },
      });
      expect(over.status).toBe(422);
      expect(over.body.error.details.fields[0].message).toContain('with its links as short links');
    } finally {
      useShortLinkBase(base);
    }
  });
});

describe('the rewrite’s parts', () => {
  test('clicks: the platform’s figure wins; the service’s only where the platform has none', () => {
    const none = metricsOf({});
    expect(withServiceClicks(metricsOf({ clicks: 7 }), 3)).toEqual({ metrics: metricsOf({ clicks: 7 }), clicksSource: 'platform' });
    expect(withServiceClicks(none, 3)).toEqual({ metrics: metricsOf({ clicks: 3 }), clicksSource: 'service' });
    expect(withServiceClicks(none, null)).toEqual({ metrics: none, clicksSource: null });
  });

  test('links: http(s) only, without the punctuation after them, brackets balanced', () => {
    const text =
      'See https://a.example.com/x?y=1. Or (http://b.example.org/p_(q)) and https://c.example.net/z, example.com/nope ftp://d.example/f "https://e.example.com/q"! xhttps://no.example';
    expect(httpLinks(text).map((l) => l.url)).toEqual([
      'https://a.example.com/x?y=1',
      'http://b.example.org/p_(q)',
      'https://c.example.net/z',
      'https://e.example.com/q',
    ]);
    expect(httpLinks('https:// nothing, http://')).toEqual([]);
  });

  test('UTM parameters: appended before the fragment, none the link already has', () => {
    const utm = { source: 'x', medium: 'social', campaign: 'c d' };
    expect(withUtm('https://a.example/p', utm)).toBe('https://a.example/p?utm_source=x&utm_medium=social&utm_campaign=c%20d');
    expect(withUtm('https://a.example/p?', utm)).toBe('https://a.example/p?utm_source=x&utm_medium=social&utm_campaign=c%20d');
    expect(withUtm('https://a.example/p?q=1&utm_medium=mail#f', { ...utm, campaign: null })).toBe(
      'https://a.example/p?q=1&utm_medium=mail&utm_source=x#f',
    );
  });
});
