// A channel's credentials for a call to its platform, shared by the publish and the metrics
// activities: decrypted, refreshed first when the access token is about to expire, and the
// channel marked reauth_required (with its webhook event) when the platform refuses them.
import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { msUntilExpiry, PlatformError, type Connector } from '../platforms/types.ts';
import { FAILURE } from '../workflows/post-types.ts';
import type { WebhookEmitter } from './webhook-events.ts';

export function createChannelCredentials(deps: { orm: Orm; credentialsKey?: Buffer }, webhooks: WebhookEmitter) {
  /** channel.reauth_required, when the channel row moved to it in `em`'s transaction. */
  async function emitReauth(em: EntityManager, channelId: string): Promise<string[]> {
    const channel = await em.findOneOrFail(Channel, { id: channelId });
    return webhooks.write(em, channel.organization, 'channel.reauth_required', (views) => views.channel(em, channelId));
  }

  /** Refresh access tokens this long before they expire. */
  const REFRESH_MARGIN_MS = 5 * 60 * 1000;

  /**
   * The channel's credentials, refreshed first when the access token is about to expire. The
   * channel row is locked while refreshing, so two publishes never spend one refresh token
   * twice (platforms that rotate refresh tokens would reject the second); the new credentials
   * are merged over the old ones, so a refresh token the platform did not rotate is kept. A
   * rejected refresh marks the channel reauth_required and leaves the stored credentials as
   * they were.
   */
  async function currentCredentials(channelId: string, connector: Connector, signal: AbortSignal): Promise<Record<string, unknown>> {
    const key = deps.credentialsKey!;
    let reauth: PlatformError | undefined;
    const creds = await deps.orm.em.fork().transactional(async (em) => {
      // FOR NO KEY UPDATE, not FOR UPDATE: refreshes still queue behind each other, but inserting a
      // post for this channel (its foreign key takes FOR KEY SHARE) does not wait for the token call.
      await sql(em, 'select 1 from channels where id = ? for no key update', [channelId]);
      const channel = await em.findOneOrFail(Channel, { id: channelId });
      const stored = decryptJson<Record<string, unknown>>(key, channel.credentialsEncrypted);
      const left = msUntilExpiry(stored);
      if (!connector.refreshCredentials || left === undefined || left > REFRESH_MARGIN_MS) return stored;
      try {
        const fresh = { ...stored, ...(await connector.refreshCredentials(stored, signal)) };
        channel.credentialsEncrypted = encryptJson(key, fresh);
        return fresh;
      } catch (err) {
        if (err instanceof PlatformError && err.kind === 'reauth') {
          reauth = err;
          return stored;
        }
        throw err;
      }
    });
    if (reauth) {
      await markReauthRequired(channelId);
      throw ApplicationFailure.create({ type: FAILURE.reauth, message: `token refresh failed: ${reauth.message}`, nonRetryable: true });
    }
    return creds;
  }

  /** The platform refused the channel's token: reauth_required, and its event the first time. */
  async function markReauthRequired(channelId: string): Promise<void> {
    const events = await deps.orm.em.fork().transactional(async (em) => {
      const changed = await em.nativeUpdate(Channel, { id: channelId, status: { $ne: 'reauth_required' } }, { status: 'reauth_required' });
      return changed ? emitReauth(em, channelId) : [];
    });
    await webhooks.dispatch(deps.orm.em, events);
  }

  return { current: currentCredentials, emitReauth, markReauthRequired };
}
