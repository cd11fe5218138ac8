// The connectors the worker publishes with, configured from the environment (lib/config.ts,
// `platforms`): OAuth app credentials for token refresh, and base-URL overrides (tests and
// self-hosted servers). Media for platforms that fetch by URL (Instagram, Threads) is given as
// signed links from object storage. Mastodon and Bluesky reach hosts the tenant chose, through the
// outbound guard (lib/outbound.ts) with the given policy; without one, only public addresses.
import type { Config } from '../lib/config.ts';
import { DEFAULT_OUTBOUND, type OutboundPolicy } from '../lib/outbound.ts';
import { apiVersionOf } from './api-versions.ts';
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

export function createConnectors(settings: Settings = {}, outbound: OutboundPolicy = DEFAULT_OUTBOUND): Connectors {
  const graphVersion = apiVersionOf('FACEBOOK', settings);
  return {
    MASTODON: createMastodonConnector({ outbound }),
    BLUESKY: createBlueskyConnector({ outbound }),
    X: createXConnector({
      baseUrl: settings.X_API_URL,
      oauth: settings.X_CLIENT_ID ? { clientId: settings.X_CLIENT_ID, clientSecret: settings.X_CLIENT_SECRET } : undefined,
    }),
    LINKEDIN: createLinkedInConnector({
      baseUrl: settings.LINKEDIN_API_URL,
      authBaseUrl: settings.LINKEDIN_AUTH_URL,
      apiVersion: apiVersionOf('LINKEDIN', settings),
      oauth: pair(settings.LINKEDIN_CLIENT_ID, settings.LINKEDIN_CLIENT_SECRET),
    }),
    FACEBOOK: createFacebookConnector({ baseUrl: settings.FACEBOOK_GRAPH_URL, apiVersion: graphVersion }),
    INSTAGRAM: createInstagramConnector({ baseUrl: settings.INSTAGRAM_GRAPH_URL, apiVersion: graphVersion, mediaUrl }),
    THREADS: createThreadsConnector({ baseUrl: settings.THREADS_GRAPH_URL, mediaUrl }),
    REDDIT: createRedditConnector({
      baseUrl: settings.REDDIT_API_URL,
      authBaseUrl: settings.REDDIT_AUTH_URL,
      userAgent: settings.REDDIT_USER_AGENT,
      oauth: pair(settings.REDDIT_CLIENT_ID, settings.REDDIT_CLIENT_SECRET),
    }),
    PINTEREST: createPinterestConnector({
      baseUrl: settings.PINTEREST_API_URL,
      oauth: pair(settings.PINTEREST_CLIENT_ID, settings.PINTEREST_CLIENT_SECRET),
    }),
    TELEGRAM: createTelegramConnector({ baseUrl: settings.TELEGRAM_API_URL }),
    DISCORD: createDiscordConnector({ baseUrl: settings.DISCORD_API_URL }),
    YOUTUBE: createYouTubeConnector({
      baseUrl: settings.YOUTUBE_API_URL,
      uploadBaseUrl: settings.YOUTUBE_UPLOAD_URL,
      authBaseUrl: settings.GOOGLE_AUTH_URL,
      oauth: pair(settings.GOOGLE_CLIENT_ID, settings.GOOGLE_CLIENT_SECRET),
    }),
    TIKTOK: createTikTokConnector({
      baseUrl: settings.TIKTOK_API_URL,
      oauth: pair(settings.TIKTOK_CLIENT_KEY, settings.TIKTOK_CLIENT_SECRET),
    }),
  };
}
