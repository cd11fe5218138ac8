import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel, type IChannel } from '../db/entities/index.ts';
import { encryptJson } from '../lib/crypto.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { checkOutboundUrl, OutboundRefusedError, type OutboundPolicy } from '../lib/outbound.ts';
import {
  isChannelStatus,
  isPlatform,
  missingCredentials,
  PLATFORMS,
  rulesFor,
  CHANNEL_STATUSES,
  type ChannelRules,
  type ChannelStatus,
  type Platform,
} from '../platforms/catalog.ts';
import { PlatformError, type AccountLimits, type Connectors } from '../platforms/types.ts';
import { getOrganization } from './organizations.ts';
import { keySees } from './key-channels.ts';

/** The public Channel object of SPEC.md §2.2: credentials are never part of it. */
export interface ChannelView {
  id: string;
  platform: Platform;
  name: string;
  status: ChannelStatus;
  rules: ChannelRules;
}

export const channelView = (c: IChannel): ChannelView => ({
  id: c.id,
  platform: c.platform,
  name: c.name,
  status: c.status,
  rules: rulesFor(c.platform, c.maxChars),
});

export interface AddChannelInput {
  organizationId: string;
  platform: string;
  name: string;
  credentials: Record<string, unknown>;
  maxChars?: number | null;
  /** Read from the account (a Mastodon instance's characters_reserved_per_url); kept in `settings`. */
  charactersReservedPerUrl?: number;
}

export async function addChannel(em: EntityManager, credentialsKey: Buffer, input: AddChannelInput): Promise<ChannelView> {
  const platform = input.platform.toUpperCase();
  if (!isPlatform(platform)) throw errors.validation([{ path: 'platform', message: `must be one of ${PLATFORMS.join(', ')}` }]);
  const name = input.name.trim();
  if (!name || name.length > 200) throw errors.validation([{ path: 'name', message: 'must be 1 to 200 characters' }]);
  const missing = missingCredentials(platform, input.credentials);
  if (missing.length) {
    throw errors.validation(missing.map((k) => ({ path: `credentials.${k}`, message: 'required (non-empty string)' })));
  }
  if (input.maxChars !== undefined && input.maxChars !== null && !(Number.isInteger(input.maxChars) && input.maxChars > 0)) {
    throw errors.validation([{ path: 'maxChars', message: 'must be a positive integer' }]);
  }
  await getOrganization(em, input.organizationId);
  const channel = em.create(Channel, {
    id: newId('ch'),
    organization: input.organizationId,
    platform,
    name,
    status: 'active',
    maxChars: input.maxChars ?? null,
    settings: accountSettings(input.charactersReservedPerUrl),
    credentialsEncrypted: encryptJson(credentialsKey, input.credentials),
  });
  await em.flush();
  return channelView(channel);
}

/** The credential naming a host the tenant chose, per platform (contacted through lib/outbound.ts). */
export const TENANT_HOST_CREDENTIAL: Partial<Record<Platform, string>> = { MASTODON: 'instanceUrl', BLUESKY: 'service' };

const refusedCredential = (platform: Platform, message: string) =>
  errors.validation([{ path: `credentials.${TENANT_HOST_CREDENTIAL[platform]}`, message }]);

/**
 * Before a channel is added or reconnected (web form, `channel add`): credentials that would send
 * the service to a refused address (loopback, private, link-local, …; see lib/outbound.ts) are a
 * 422 on that credential. A name that does not resolve now is not refused (the instance may be
 * down for a while); every publish checks again.
 */
export async function checkChannelAddress(
  platformName: string,
  credentials: Record<string, unknown>,
  outbound: OutboundPolicy,
): Promise<void> {
  const platform = platformName.toUpperCase();
  if (!isPlatform(platform)) return; // addChannel reports it
  const key = TENANT_HOST_CREDENTIAL[platform];
  const raw = key ? credentials[key] : undefined;
  if (typeof raw !== 'string' || !raw.trim()) return; // addChannel reports a missing one
  // Read as the connectors read it: a bare host name means https.
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim()) ? raw.trim() : `https://${raw.trim()}`;
  try {
    await checkOutboundUrl(url, outbound);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw refusedCredential(platform, err.message);
  }
}

/**
 * checkChannelAddress, then the account's limits (a Mastodon instance's max_characters). An
 * instance that cannot be reached keeps the platform default, and `warn` says why.
 */
export async function probeChannel(
  connectors: Connectors,
  platformName: string,
  credentials: Record<string, unknown>,
  outbound: OutboundPolicy,
  warn: (message: string) => void = () => {},
): Promise<AccountLimits> {
  await checkChannelAddress(platformName, credentials, outbound);
  const platform = platformName.toUpperCase();
  const connector = isPlatform(platform) ? connectors[platform] : undefined;
  if (!connector?.accountLimits) return {};
  try {
    return await connector.accountLimits(credentials);
  } catch (err) {
    // The answer itself was refused: a redirect, or a DNS answer that changed since the check.
    if (err instanceof PlatformError && err.opts.platformCode === 'outbound_refused')
      throw refusedCredential(connector.platform, err.message);
    warn(err instanceof Error ? err.message : String(err));
    return {};
  }
}

/** The channel `settings` that feed platforms/text-length.ts (no schema change: settings is free JSON). */
export function accountSettings(charactersReservedPerUrl: number | undefined): Record<string, unknown> {
  return charactersReservedPerUrl !== undefined && Number.isInteger(charactersReservedPerUrl) && charactersReservedPerUrl > 0
    ? { charactersReservedPerUrl }
    : {};
}

/**
 * One channel of the organization, for a key with this channel list: not_found when the
 * organization has no such channel, forbidden_scope (naming it) when the key is limited to others.
 */
export async function channelForKey(
  em: EntityManager,
  organizationId: string,
  channelId: string,
  keyChannels: 'all' | string[],
): Promise<IChannel> {
  if (channelId.includes('\u0000')) throw errors.notFound('Channel');
  const channel = await em.findOne(Channel, { id: channelId, organization: organizationId });
  if (!channel) throw errors.notFound('Channel');
  if (!keySees(keyChannels, [channelId])) {
    throw new ApiError('forbidden_scope', 'This API key is limited to other channels.', { details: { channelIds: [channelId] } });
  }
  return channel;
}

/** Channels of an organization, oldest first; `only` limits them to a key's channel list. */
export async function listChannels(em: EntityManager, organizationId: string, only: 'all' | string[] = 'all'): Promise<IChannel[]> {
  if (only !== 'all' && only.length === 0) return [];
  return em.find(Channel, only === 'all' ? { organization: organizationId } : { organization: organizationId, id: { $in: only } }, {
    orderBy: { createdAt: 'asc', id: 'asc' },
  });
}

export async function setChannelStatus(em: EntityManager, id: string, status: string): Promise<ChannelView> {
  if (!isChannelStatus(status)) {
    throw errors.validation([{ path: 'status', message: `must be one of ${CHANNEL_STATUSES.join(', ')}` }]);
  }
  const channel = await em.findOne(Channel, { id });
  if (!channel) throw new ApiError('not_found', `Channel ${id} not found.`);
  channel.status = status;
  await em.flush();
  return channelView(channel);
}
