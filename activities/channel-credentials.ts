// A channel's credentials for the publish and the metrics activities (domain/channel-credentials.ts),
// and the channel marked reauth_required (with its webhook event) when the platform refuses them.
import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { currentChannelCredentials } from '../domain/channel-credentials.ts';
import type { Connector } from '../platforms/types.ts';
import { FAILURE } from '../workflows/post-types.ts';
import type { WebhookEmitter } from './webhook-events.ts';

export function createChannelCredentials(deps: { orm: Orm; credentialsKey?: Buffer }, webhooks: WebhookEmitter) {
  /** channel.reauth_required, when the channel row moved to it in `em`'s transaction. */
  async function emitReauth(em: EntityManager, channelId: string): Promise<string[]> {
    const channel = await em.findOneOrFail(Channel, { id: channelId });
    return webhooks.write(em, channel.organization, 'channel.reauth_required', (views) => views.channel(em, channelId));
  }

  /**
   * The channel's credentials (domain/channel-credentials.ts: refreshed first under the row's
   * lock when about to expire). A rejected refresh marks the channel reauth_required and fails
   * the activity for good. `read`: the row's credentials_encrypted as the caller just read it.
   */
  async function currentCredentials(
    channelId: string,
    connector: Connector,
    signal: AbortSignal,
    read?: string,
  ): Promise<Record<string, unknown>> {
    const got = await currentChannelCredentials(deps.orm, deps.credentialsKey!, channelId, connector, signal, read);
    if ('credentials' in got) return got.credentials;
    await markReauthRequired(channelId);
    throw ApplicationFailure.create({ type: FAILURE.reauth, message: `token refresh failed: ${got.refused.message}`, nonRetryable: true });
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
