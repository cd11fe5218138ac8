// The connectors the worker publishes with, configured from the environment (lib/config.ts,
// `platforms`): OAuth app credentials for token refresh, and base-URL overrides (tests and
// self-hosted servers). Media for platforms that fetch by URL (Instagram, Threads) is given as
// signed links from object storage. Mastodon and Bluesky reach hosts the tenant chose, through the
// outbound guard (lib/outbound.ts) with the given policy; without one, only public addresses.
import type { Config } from '../lib/config.ts';
import { DEFAULT_OUTBOUND, type OutboundPolicy } from '../lib/outbound.ts';
import { createBlueskyConnector } from './bluesky.ts';
import { createDiscordConnector } from './discord.ts';
import { createLinkedInConnector } from './linkedin.ts';
import { createMastodonConnector } from './mastodon.ts';
import { createFacebookConnector, createInstagramConnector, createThreadsConnector } from './meta/index.ts';
import { createPinterestConnector } from './pinterest.ts';
import { createRedditConnector } from './reddit.ts';
import { createTelegramConnector } from './telegram.ts';
import { createTikTokConnector } from './tiktok.ts';
import type { Connectors, MediaRef } from './types.ts';
import { createXConnector } from './x.ts';
import { createYouTubeConnector } from './youtube.ts';

type Settings = Config['platforms'];

const pair = (id?: string, secret?: string) => (id && secret ? { clientId: id, clientSecret: secret } : undefined);

/** Media for URL-fetching platforms: the signed link the activity attached to the item. */
async function mediaUrl(item: MediaRef): Promise<string> {
  if (!item.url) throw new Error(`media ${item.id} has no public URL (object storage must be configured)`);
  return item.url();
}

export function createConnectors(s: Settings = {}, outbound: OutboundPolicy = DEFAULT_OUTBOUND): Connectors {
  const graphVersion = s.META_GRAPH_API_VERSION;
  return {
    MASTODON: createMastodonConnector({ outbound }),
    BLUESKY: createBlueskyConnector({ outbound }),
    X: createXConnector({
      baseUrl: s.X_API_URL,
      oauth: s.X_CLIENT_ID ? { clientId: s.X_CLIENT_ID, clientSecret: s.X_CLIENT_SECRET } : undefined,
    }),
    LINKEDIN: createLinkedInConnector({
      baseUrl: s.LINKEDIN_API_URL,
      authBaseUrl: s.LINKEDIN_AUTH_URL,
      apiVersion: s.LINKEDIN_API_VERSION,
      oauth: pair(s.LINKEDIN_CLIENT_ID, s.LINKEDIN_CLIENT_SECRET),
    }),
    FACEBOOK: createFacebookConnector({ baseUrl: s.FACEBOOK_GRAPH_URL, apiVersion: graphVersion }),
    INSTAGRAM: createInstagramConnector({ baseUrl: s.INSTAGRAM_GRAPH_URL, apiVersion: graphVersion, mediaUrl }),
    THREADS: createThreadsConnector({ baseUrl: s.THREADS_GRAPH_URL, mediaUrl }),
    REDDIT: createRedditConnector({
      baseUrl: s.REDDIT_API_URL,
      authBaseUrl: s.REDDIT_AUTH_URL,
      userAgent: s.REDDIT_USER_AGENT,
      oauth: pair(s.REDDIT_CLIENT_ID, s.REDDIT_CLIENT_SECRET),
    }),
    PINTEREST: createPinterestConnector({ baseUrl: s.PINTEREST_API_URL, oauth: pair(s.PINTEREST_CLIENT_ID, s.PINTEREST_CLIENT_SECRET) }),
    TELEGRAM: createTelegramConnector({ baseUrl: s.TELEGRAM_API_URL }),
    DISCORD: createDiscordConnector({ baseUrl: s.DISCORD_API_URL }),
    YOUTUBE: createYouTubeConnector({
      baseUrl: s.YOUTUBE_API_URL,
      uploadBaseUrl: s.YOUTUBE_UPLOAD_URL,
      authBaseUrl: s.GOOGLE_AUTH_URL,
      oauth: pair(s.GOOGLE_CLIENT_ID, s.GOOGLE_CLIENT_SECRET),
    }),
    TIKTOK: createTikTokConnector({ baseUrl: s.TIKTOK_API_URL, oauth: pair(s.TIKTOK_CLIENT_KEY, s.TIKTOK_CLIENT_SECRET) }),
  };
}
