// A channel's credentials for a call to its platform, for every reader (the publish and metrics
// activities, the API's capabilities read): decrypted, and refreshed first when the access token
// is about to expire, under the channel row's lock.
import { Channel } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { msUntilExpiry, PlatformError, type Connector } from '../platforms/types.ts';

/** Refresh access tokens this long before they expire. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/**
 * The channel's credentials, refreshed first when the access token is about to expire. The
 * channel row is locked while refreshing, so two callers never spend one refresh token twice
 * (platforms that rotate refresh tokens would reject the second); the new credentials are merged
 * over the old ones, so a refresh token the platform did not rotate is kept. A refresh the
 * platform rejects leaves the stored credentials as they were and is answered as `refused`: what
 * follows (marking the channel) is the caller's.
 */
export async function currentChannelCredentials(
  orm: Orm,
  credentialsKey: Buffer,
  channelId: string,
  connector: Connector,
  signal?: AbortSignal,
  /** The row's credentials_encrypted as the caller just read it: spares the first read. */
  read?: string,
): Promise<{ credentials: Record<string, unknown> } | { refused: PlatformError }> {
  // Credentials that need no refresh need no lock: the lock only keeps two refreshes apart, and a
  // refresher reading the same expiry would leave them as they are. Most publishes end here.
  const encrypted =
    read ?? (await sql<{ c: string }>(orm.em.fork(), 'select credentials_encrypted as c from channels where id = ?', [channelId]))[0]?.c;
  if (encrypted !== undefined) {
    const stored = decryptJson<Record<string, unknown>>(credentialsKey, encrypted);
    if (!needsRefresh(connector, stored)) return { credentials: stored };
  }
  let refused: PlatformError | undefined;
  const credentials = await orm.em.fork().transactional(async (em) => {
    // FOR NO KEY UPDATE, not FOR UPDATE: refreshes still queue behind each other, but inserting a
    // post for this channel (its foreign key takes FOR KEY SHARE) does not wait for the token call.
    await sql(em, 'select 1 from channels where id = ? for no key update', [channelId]);
    const channel = await em.findOneOrFail(Channel, { id: channelId });
    const stored = decryptJson<Record<string, unknown>>(credentialsKey, channel.credentialsEncrypted);
    if (!needsRefresh(connector, stored)) return stored;
    try {
      const fresh = { ...stored, ...(await connector.refreshCredentials!(stored, signal)) };
      channel.credentialsEncrypted = encryptJson(credentialsKey, fresh);
      return fresh;
    } catch (err) {
      if (err instanceof PlatformError && err.kind === 'reauth') {
        refused = err;
        return stored;
      }
      throw err;
    }
  });
  return refused ? { refused } : { credentials };
}

/** The connector can refresh the access token and it expires within REFRESH_MARGIN_MS. */
function needsRefresh(connector: Connector, stored: Record<string, unknown>): boolean {
  const left = msUntilExpiry(stored);
  return connector.refreshCredentials !== undefined && left !== undefined && left <= REFRESH_MARGIN_MS;
}
