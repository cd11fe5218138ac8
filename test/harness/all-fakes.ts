// Every platform at once, for end-to-end tests of the whole fan-out: the local fake of each
// platform's HTTP contract (test/fakes/*.ts), an account on the run's real Bluesky PDS
// (test/harness/pds.ts), the settings that point createConnectors() at them, the credentials
// each fake accepts, and per platform what the fake received for a given text.
import type { Platform } from '../../platforms/catalog.ts';
import type { Config } from '../../lib/config.ts';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord.ts';
import { startFakeLinkedIn, type FakeLinkedIn } from '../fakes/linkedin.ts';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.ts';
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts';
import { BOARD_ID, startFakePinterest, type FakePinterest } from '../fakes/pinterest.ts';
import { startFakeReddit, type FakeReddit } from '../fakes/reddit.ts';
import { PUBLIC_CHANNEL, startFakeTelegram, type FakeTelegram } from '../fakes/telegram.ts';
import { FAKE_APP, startFakeTikTok, type FakeTikTok } from '../fakes/tiktok.ts';
import { startFakeX, type FakeX } from '../fakes/x.ts';
import { FAKE_CLIENT, startFakeYouTube, type FakeYouTube } from '../fakes/youtube.ts';
import { pds, type TestAccount, type TestPds } from './pds.ts';

/** What one platform received: a post (or message, pin, video…) whose text contains `marker`. */
export interface Received {
  id: string;
  text: string;
}

export interface AllFakes {
  x: FakeX;
  linkedin: FakeLinkedIn;
  mastodon: FakeMastodon;
  facebook: FakeMeta;
  instagram: FakeMeta;
  threads: FakeMeta;
  reddit: FakeReddit;
  pinterest: FakePinterest;
  telegram: FakeTelegram;
  discord: FakeDiscord;
  youtube: FakeYouTube;
  tiktok: FakeTikTok;
  pds: TestPds;
  bluesky: TestAccount;
  /** The createConnectors() settings (lib/config.ts `platforms`) aimed at the fakes. */
  settings: Config['platforms'];
  /** Channel credentials each fake (and the PDS account) accepts. */
  credentials: Record<Platform, Record<string, unknown>>;
  /** The posts the platform holds whose text contains `marker`. */
  received(platform: Platform, marker: string): Promise<Received[]>;
  stop(): Promise<void>;
}

export async function startAllFakes(): Promise<AllFakes> {
  const [x, linkedin, mastodon, facebook, instagram, threads, reddit, pinterest, telegram, discord, youtube, tiktok, p] = await Promise.all(
    [
      startFakeX(),
      startFakeLinkedIn(),
      startFakeMastodon(),
      startFakeMeta('facebook'),
      startFakeMeta('instagram'),
      startFakeMeta('threads'),
      startFakeReddit(),
      startFakePinterest(),
      startFakeTelegram(),
      startFakeDiscord(),
      startFakeYouTube(),
      startFakeTikTok(),
      pds(),
    ],
  );
  const bluesky = await p.newAccount('all');

  const settings: Config['platforms'] = {
    X_API_URL: x.url,
    X_CLIENT_ID: x.clientId,
    X_CLIENT_SECRET: x.clientSecret ?? undefined,
    LINKEDIN_API_URL: linkedin.url,
    LINKEDIN_AUTH_URL: linkedin.url,
    LINKEDIN_CLIENT_ID: linkedin.clientId,
    LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
    FACEBOOK_GRAPH_URL: facebook.url,
    INSTAGRAM_GRAPH_URL: instagram.url,
    THREADS_GRAPH_URL: threads.url,
    REDDIT_API_URL: reddit.url,
    REDDIT_AUTH_URL: reddit.url,
    REDDIT_CLIENT_ID: 'client-id',
    REDDIT_CLIENT_SECRET: 'client-secret',
    REDDIT_USER_AGENT: 'server:postpilot-test:v1 (by /u/poster)',
    PINTEREST_API_URL: pinterest.url,
    PINTEREST_CLIENT_ID: 'pin-client',
    PINTEREST_CLIENT_SECRET: 'pin-secret',
    TELEGRAM_API_URL: telegram.url,
    DISCORD_API_URL: discord.apiBase,
    YOUTUBE_API_URL: youtube.url,
    YOUTUBE_UPLOAD_URL: youtube.url,
    GOOGLE_AUTH_URL: youtube.url,
    GOOGLE_CLIENT_ID: FAKE_CLIENT.clientId,
    GOOGLE_CLIENT_SECRET: FAKE_CLIENT.clientSecret,
    TIKTOK_API_URL: tiktok.url,
    TIKTOK_CLIENT_KEY: FAKE_APP.clientId,
    TIKTOK_CLIENT_SECRET: FAKE_APP.clientSecret,
  };

  const credentials: Record<Platform, Record<string, unknown>> = {
    X: { accessToken: 'good-token' },
    BLUESKY: { service: p.url, identifier: bluesky.handle, appPassword: bluesky.appPassword },
    THREADS: { accessToken: 'THAA-user-token', threadsUserId: threads.accountId },
    LINKEDIN: { accessToken: 'good-token', authorUrn: linkedin.member },
    MASTODON: { instanceUrl: mastodon.url, accessToken: 'good-token' },
    INSTAGRAM: { accessToken: 'IGAA-user-token', igUserId: instagram.accountId },
    FACEBOOK: { accessToken: 'EAAG-page-token', pageId: facebook.accountId },
    TIKTOK: { accessToken: 'good-token', refreshToken: 'good-refresh' },
    YOUTUBE: { accessToken: 'good-token', refreshToken: 'good-refresh' },
    PINTEREST: { accessToken: 'pina_good', boardId: BOARD_ID },
    REDDIT: { accessToken: 'good-token' },
    TELEGRAM: { botToken: telegram.token, chatId: String(PUBLIC_CHANNEL.id) },
    DISCORD: { webhookUrl: discord.webhookUrl() },
  };

  async function blueskyPosts(): Promise<Received[]> {
    const r = await p.xrpc('GET', 'com.atproto.repo.listRecords', {
      params: { repo: bluesky.did, collection: 'app.bsky.feed.post', limit: '100' },
    });
    if (r.status !== 200) throw new Error(`listRecords → ${r.status}`);
    return (r.body.records as { uri: string; value: { text?: string } }[]).map((rec) => ({ id: rec.uri, text: rec.value.text ?? '' }));
  }

  async function all(platform: Platform): Promise<Received[]> {
    switch (platform) {
      case 'X':
        return x.tweets.map((t) => ({ id: t.id, text: t.text }));
      case 'BLUESKY':
        return blueskyPosts();
      case 'THREADS':
        return threads.posts.map((q) => ({ id: q.id, text: q.text }));
      case 'INSTAGRAM':
        return instagram.posts.map((q) => ({ id: q.id, text: q.text }));
      case 'FACEBOOK':
        return facebook.posts.map((q) => ({ id: q.id, text: q.text }));
      case 'LINKEDIN':
        return linkedin.posts.map((q) => ({ id: q.urn, text: q.rendered }));
      case 'MASTODON':
        return mastodon.statuses.map((s) => ({ id: s.id, text: s.text }));
      case 'TIKTOK':
        return tiktok.posts.map((q) => ({ id: q.id, text: q.caption }));
      case 'YOUTUBE':
        return youtube.videos.map((v) => ({ id: v.id, text: `${v.title}\n${v.description}` }));
      case 'PINTEREST':
        return pinterest.pins.map((q) => ({ id: q.id, text: q.description ?? '' }));
      case 'REDDIT':
        return reddit.posts.map((q) => ({ id: q.name, text: `${q.title}\n${q.text}` }));
      case 'TELEGRAM':
        return telegram.messages.map((m) => ({ id: String(m.message_id), text: m.caption ?? m.text ?? '' }));
      case 'DISCORD':
        return discord.messages.map((m) => ({ id: m.id, text: m.content }));
    }
  }

  return {
    x,
    linkedin,
    mastodon,
    facebook,
    instagram,
    threads,
    reddit,
    pinterest,
    telegram,
    discord,
    youtube,
    tiktok,
    pds: p,
    bluesky,
    settings,
    credentials,
    async received(platform, marker) {
      return (await all(platform)).filter((r) => r.text.includes(marker));
    },
    async stop() {
      // The PDS belongs to the run (stopped by the preload's teardown or stopPds()); only the fakes stop here.
      await Promise.all(
        [x, linkedin, mastodon, facebook, instagram, threads, reddit, pinterest, telegram, discord, youtube, tiktok].map((f) => f.stop()),
      );
    },
  };
}
