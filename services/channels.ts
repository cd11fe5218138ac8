import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel, type IChannel } from '../db/entities/index.ts';
import { encryptJson } from '../lib/crypto.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import {
  isChannelStatus, isPlatform, missingCredentials, PLATFORMS, rulesFor, CHANNEL_STATUSES,
  type ChannelRules, type ChannelStatus, type Platform,
} from '../platforms/catalog.ts';
import { getOrganization } from './organizations.ts';

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
    settings: {},
    credentialsEncrypted: encryptJson(credentialsKey, input.credentials),
  });
  await em.flush();
  return channelView(channel);
}

/** Channels of an organization, oldest first; `only` limits them to a key's channel list. */
export async function listChannels(em: EntityManager, organizationId: string, only: 'all' | string[] = 'all'): Promise<IChannel[]> {
  if (only !== 'all' && only.length === 0) return [];
  return em.find(
    Channel,
    only === 'all' ? { organization: organizationId } : { organization: organizationId, id: { $in: only } },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
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
