import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created } from './base.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/**
 * One OAuth 2.0 authorization-code flow started in the web application. The `state` sent to the
 * platform is stored only as a hash and is spent by the callback (set to null, atomically), so a
 * state works once. When the platform's account id must be asked for after the code exchange,
 * the tokens wait here (encrypted) until the follow-up form completes the channel.
 */
export const OAuthGrant = defineEntity({
  name: 'OAuthGrant',
  tableName: 'oauth_grants',
  extends: Created,
  properties: {
    id: p.string().length(64).primary(),
    stateHash: p.string().length(64).nullable().unique(),
    user: () => p.manyToOne(User).mapToPk().deleteRule('cascade').index(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    platform: p.enum(PLATFORMS),
    /** Set when the flow reconnects an existing channel. */
    channelId: p.string().nullable(),
    channelName: p.string(),
    /** PKCE code_verifier (null for platforms without PKCE); useless without the code. */
    codeVerifier: p.string().length(128).nullable().hidden(),
    redirectUri: p.text(),
    /** AES-256-GCM credentials after the exchange, while the follow-up form is pending. */
    credentialsEncrypted: p.text().nullable().hidden(),
    expiresAt: p.datetime(),
  },
});
export type IOAuthGrant = InferEntity<typeof OAuthGrant>;
