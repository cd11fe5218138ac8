// What a feed may target and how many an organization may have: a feed's posts are text only, so
// a channel whose platform requires media or extra fields (Instagram, TikTok, YouTube, Pinterest,
// Reddit) is refused at `channelIds.N` when the feed is saved or edited, through the API and the
// web form; and MAX_FEEDS holds against concurrent creates (counted under the organization's lock
// in the transaction that inserts the feed).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Feed } from '../db/entities/index.ts';
import { MAX_FEEDS } from '../domain/feeds/feeds.ts';
import { newId } from '../lib/ids.ts';
import { PLATFORMS, type Platform } from '../platforms/catalog.ts';
import { feedItem, startFeedServer, type FeedServer } from './fakes/feed-server.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { query, signedInUser } from './harness/web-browser.ts';

let app: Awaited<ReturnType<typeof testApp>>;
let server: FeedServer;

beforeAll(async () => {
  const h = await harness();
  // The feed server listens on 127.0.0.1: the API's and the web app's outbound guards let it through.
  app = await testApp({
    outbound: { allowPrivate: true },
    web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {}, outbound: { allowPrivate: true } },
  });
  server = startFeedServer([feedItem(2), feedItem(1)]);
});
afterAll(() => server?.stop());

const TEXT_ONLY_REFUSED: Platform[] = ['INSTAGRAM', 'TIKTOK', 'YOUTUBE', 'PINTEREST', 'REDDIT'];
const ACCEPTED = PLATFORMS.filter((p) => !TEXT_ONLY_REFUSED.includes(p));

type Field = { path: string; message: string };
const fieldsOf = (body: any): Field[] => body?.error?.details?.fields ?? [];

async function account() {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const mastodon = await makeChannel(org.id, 'MASTODON');
  return { org, key, mastodon };
}

const feedsOf = (organizationId: string) => harness().then((h) => h.orm.em.fork().find(Feed, { organization: organizationId }));

describe('channels a feed cannot post to', () => {
  test('each of Instagram, TikTok, YouTube, Pinterest and Reddit is refused at its index, with why', async () => {
    const { org, key, mastodon } = await account();
    for (const platform of TEXT_ONLY_REFUSED) {
      const refused = await makeChannel(org.id, platform);
      // After a channel a feed can post to: the index is the refused one's place in the list.
      const r = await call(app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [mastodon.id, refused.id] } });
      expect({ platform, status: r.status, code: r.body?.error?.code }).toEqual({ platform, status: 422, code: 'validation_failed' });
      const fields = fieldsOf(r.body);
      expect({ platform, paths: fields.map((f) => f.path) }).toEqual({ platform, paths: ['channelIds.1'] });
      expect(fields[0]!.message).toContain(refused.id);
      expect(fields[0]!.message).toMatch(
        platform === 'REDDIT'
          ? /REDDIT needs reddit\.subreddit and reddit\.title/
          : new RegExp(`${platform} needs an image or video; a feed's posts are text only`),
      );
    }
    expect(await feedsOf(org.id)).toEqual([]);
  });

  test('several refused channels are each named at their own index', async () => {
    const { org, key, mastodon } = await account();
    const instagram = await makeChannel(org.id, 'INSTAGRAM');
    const reddit = await makeChannel(org.id, 'REDDIT');
    const r = await call(app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [instagram.id, mastodon.id, reddit.id] } });
    expect(r.status).toBe(422);
    expect(fieldsOf(r.body).map((f) => f.path)).toEqual(['channelIds.0', 'channelIds.2']);
  });

  test('every other platform is accepted', async () => {
    const { org, key } = await account();
    const channels = await Promise.all(ACCEPTED.map((p) => makeChannel(org.id, p)));
    const r = await call(app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: channels.map((c) => c.id) } });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
    expect(r.body.channelIds).toEqual(channels.map((c) => c.id));
    expect(ACCEPTED).toEqual(expect.arrayContaining(['MASTODON', 'BLUESKY', 'X', 'TELEGRAM', 'DISCORD']));
  });

  test('an edit that adds such a channel is refused, and the feed keeps its channels', async () => {
    const { org, key, mastodon } = await account();
    const created = await call(app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [mastodon.id] } });
    expect(created.status).toBe(201);
    const tiktok = await makeChannel(org.id, 'TIKTOK');
    const r = await call(app, 'PATCH', `/v1/feeds/${created.body.id}`, { key, body: { channelIds: [mastodon.id, tiktok.id] } });
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 422, code: 'validation_failed' });
    expect(fieldsOf(r.body)).toEqual([{ path: 'channelIds.1', message: expect.stringContaining('TIKTOK needs an image or video') }]);
    const after = await call(app, 'GET', `/v1/feeds/${created.body.id}`, { key });
    expect(after.body.channelIds).toEqual([mastodon.id]);
    // An edit that leaves the channels alone is not asked about them.
    const renamed = await call(app, 'PATCH', `/v1/feeds/${created.body.id}`, { key, body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
  });

  test('the web form shows the refusal at the refused channel', async () => {
    const { org, browser } = await signedInUser(app);
    const mastodon = await makeChannel(org.id, 'MASTODON');
    const pinterest = await makeChannel(org.id, 'PINTEREST');
    const page = await browser.get('/feeds');
    expect(page.status).toBe(200);
    // The form says beforehand which channels a feed cannot post to.
    const hinted = await page.query('[data-testid="feed-channel-text-only"]');
    expect(hinted.length).toBe(1);
    const form = new URLSearchParams({ url: server.url, template: '{title} {link}', mode: 'now', pollMinutes: '15', backfill: '0' });
    form.append('channelIds', mastodon.id);
    form.append('channelIds', pinterest.id);
    const res = await browser.post('/feeds', form);
    expect(res.status).toBe(422);
    const errors = await query(res.html, '[data-testid="feed-field-error"]');
    expect(errors.map((e) => e.attrs['data-path'])).toEqual(['channelIds.1']);
    expect(errors[0]!.text).toContain("PINTEREST needs an image or video; a feed's posts are text only");
    // Next to the Pinterest channel's box, which says it is in error.
    const box = await res.one(`input[data-channel-id="${pinterest.id}"]`);
    expect(box.attrs['aria-invalid']).toBe('true');
    expect(box.attrs['aria-describedby']).toBe('feed-channelIds-1-error');
    expect(await feedsOf(org.id)).toEqual([]);
  });
});

describe('the feed limit', () => {
  test('concurrent creates for the last place: exactly one succeeds, the others get the limit', async () => {
    const { org, key, mastodon } = await account();
    // MAX_FEEDS - 1 feeds, written straight to the table (paused: nothing reads them).
    const h = await harness();
    const em = h.orm.em.fork();
    const now = new Date();
    for (let i = 0; i < MAX_FEEDS - 1; i++) {
      em.create(Feed, {
        id: newId('feed'),
        organization: org.id,
        name: `Filler ${i}`,
        url: server.url,
        channelIds: [mastodon.id],
        template: '{title}',
        status: 'paused',
        nextPollAt: now,
        source: 'api',
      });
    }
    await em.flush();

    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call(app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [mastodon.id] } })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((a) => a.status === 409)) {
      expect(a.body.error).toMatchObject({ code: 'conflict', details: { limit: MAX_FEEDS } });
    }
    expect((await feedsOf(org.id)).length).toBe(MAX_FEEDS);
  });
});
