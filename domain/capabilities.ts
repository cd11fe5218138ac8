// What a channel's account can do: the platform's fixed facts (platforms/catalog.ts: text length,
// media, follow-ups) and what the platform says of this account now (Connector.readCapabilities).
//
// Rules:
// - The live part is read with the channel's current credentials (refreshed as for a publish)
//   and kept for CACHE_MS per channel and question (a Reddit subreddit): the platforms count
//   these reads against the app's limits, and the answers change seldom.
// - A read that fails answers 200 with `live: null` and `liveError` (its class and the
//   platform's words): the fixed facts stay useful. A read never changes the channel: a refused
//   token is reported, and the channel is marked reauth_required by the next publish, as always.
// - A channel that must be reconnected, or a platform that reports nothing of the kind, is not
//   asked. Reddit is asked about one subreddit (`?subreddit=`); without one there is no live part.
// - A post's checks (domain/posts/options.ts) read the same answers, each under POST_READ_MS: a
//   platform slower than that leaves its checks to the publish rather than holding the request.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm.ts';
import { errors } from '../lib/errors.ts';
import { COMMENTS, FOLLOW_UPS, MEDIA_LIMITS, rulesFor, type CommentsFact, type FollowUps, type MediaLimits } from '../platforms/catalog.ts';
import { remember } from '../platforms/recent.ts';
import { PlatformError, type Connectors, type LiveCapabilities } from '../platforms/types.ts';
import { currentChannelCredentials } from './channel-credentials.ts';
import { channelForKey } from './channels.ts';

export const CAPABILITIES_CACHE_MS = 5 * 60 * 1000;
export const POST_READ_MS = 5_000;

export interface ChannelCapabilities {
  channelId: string;
  platform: string;
  fixed: {
    maxChars: number;
    requiresMedia: boolean;
    media: MediaLimits;
    followUps: FollowUps;
    comments: CommentsFact;
  };
  live: LiveCapabilities | null;
  /** When the live part was read (it may come from the cache); null without one. */
  readAt: string | null;
  liveError: { kind: 'reauth' | 'transient' | 'permanent'; message: string } | null;
}

export interface CapabilityDeps {
  orm: Orm;
  connectors?: Connectors;
  credentialsKey?: Buffer;
  now?: () => Date;
}

type Live = Pick<ChannelCapabilities, 'live' | 'readAt' | 'liveError'>;
const cache = new Map<string, { at: number; live: Live }>();

/** GET /v1/channels/{id}/capabilities (domain/channels.ts channelForKey: not_found, forbidden_scope). */
export async function channelCapabilities(
  em: EntityManager,
  deps: CapabilityDeps,
  organizationId: string,
  channelId: string,
  keyChannels: 'all' | string[],
  query: { subreddit?: string },
): Promise<ChannelCapabilities> {
  const channel = await channelForKey(em, organizationId, channelId, keyChannels);
  const rules = rulesFor(channel.platform, channel.maxChars);
  return {
    channelId: channel.id,
    platform: channel.platform,
    fixed: {
      maxChars: rules.maxChars,
      requiresMedia: rules.requiresMedia,
      media: MEDIA_LIMITS[channel.platform],
      followUps: FOLLOW_UPS[channel.platform],
      comments: COMMENTS[channel.platform],
    },
    ...(await liveCapabilities(deps, channel, query)),
  };
}

/**
 * What each of a post's channels can do now, for the post's checks: by channel id, null where
 * nothing was read (no live part, not asked, or a read that failed).
 */
export async function liveCapabilitiesOf(
  deps: CapabilityDeps,
  channels: { id: string; platform: keyof Connectors; status: string }[],
  subreddit: string | undefined,
): Promise<Map<string, LiveCapabilities | null>> {
  const read = await Promise.all(
    channels.map(async (c) => {
      if (c.platform === 'REDDIT' && subreddit === undefined) return [c.id, null] as const;
      const query = c.platform === 'REDDIT' ? { subreddit } : {};
      const got = await liveCapabilities(deps, c, query, AbortSignal.timeout(POST_READ_MS));
      return [c.id, got.live] as const;
    }),
  );
  return new Map(read);
}

async function liveCapabilities(
  deps: CapabilityDeps,
  channel: { id: string; platform: keyof Connectors; status: string },
  query: { subreddit?: string },
  signal?: AbortSignal,
): Promise<Live> {
  const none: Live = { live: null, readAt: null, liveError: null };
  if (channel.platform !== 'REDDIT' && query.subreddit !== undefined)
    throw errors.validation([{ path: 'subreddit', message: 'applies to REDDIT channels only' }]);
  const connector = deps.connectors?.[channel.platform];
  if (!connector?.readCapabilities || !deps.credentialsKey) return none;
  if (channel.platform === 'REDDIT' && query.subreddit === undefined) return none;
  if (channel.status !== 'active') {
    return { ...none, liveError: { kind: 'reauth', message: `channel ${channel.id} is ${channel.status}; reconnect it` } };
  }
  const now = (deps.now ?? (() => new Date()))().getTime();
  const key = `${channel.id}\u0000${query.subreddit?.toLowerCase() ?? ''}`;
  const kept = cache.get(key);
  if (kept && now - kept.at < CAPABILITIES_CACHE_MS) return kept.live;
  let live: Live;
  try {
    const got = await currentChannelCredentials(deps.orm, deps.credentialsKey, channel.id, connector, signal);
    if ('refused' in got) throw got.refused;
    live = { live: await connector.readCapabilities(got.credentials, query, signal), readAt: new Date(now).toISOString(), liveError: null };
  } catch (err) {
    if (!(err instanceof PlatformError)) throw err;
    // Not kept: the next read asks again.
    return { ...none, liveError: { kind: err.kind, message: err.message } };
  }
  remember(cache, key, { at: now, live });
  return live;
}
