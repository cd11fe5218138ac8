import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { PLATFORMS, CHANNEL_STATUSES } from '../../platforms/catalog.ts';
import { Organization } from './organization.ts';

export const Channel = defineEntity({
  name: 'Channel',
  tableName: 'channels',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    platform: p.enum(PLATFORMS),
    name: p.string(),
    status: p.enum(CHANNEL_STATUSES).default('active'),
    /** Rule inputs read from the account (e.g. a Mastodon instance's max_characters); null = platform default. */
    maxChars: p.integer().nullable(),
    /** Non-secret account settings (e.g. the instance URL shown in the UI). */
    settings: p.json<Record<string, unknown>>().default('{}'),
    /** AES-256-GCM encrypted JSON credentials (lib/crypto.ts); never returned by the API. */
    credentialsEncrypted: p.text().hidden(),
    /** IANA zone of the channel's posting queue; null = the organization's. */
    timeZone: p.string().length(64).nullable(),
  },
});
export type IChannel = InferEntity<typeof Channel>;
