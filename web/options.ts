// What the web application needs beyond the API's dependencies, made from the loaded
// configuration by the entry points (server/run.ts: `createApp({ …, web: webOptions(config) })`);
// tests pass their own. Nothing here reads the environment: lib/config.ts does, once.
import { loadConfig, type Config } from '../lib/config.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';

export interface WebOptions {
  /** Where browsers reach the service; https makes the cookies `Secure`; OAuth redirect URIs start here. */
  publicBaseUrl: string;
  /** Encrypts channel credentials (the same key the worker decrypts them with). */
  credentialsKey?: Buffer;
  /** OAuth app credentials and authorize/token URL overrides (lib/config.ts PLATFORM_SETTINGS). */
  platforms: Config['platforms'];
  /** Which addresses a channel's instance may have (lib/outbound.ts); public ones only when absent. */
  outbound?: OutboundPolicy;
  /** Trusted proxies in front (TRUST_PROXY): the sign-in throttle's client address comes from X-Forwarded-For. */
  trustProxyHops?: number;
  /** Outgoing mail (invitations); absent: the inviter shares the link shown to them. */
  mail?: Config['mail'];
}

export function webOptions(
  config: Pick<Config, 'publicBaseUrl' | 'credentialsKey' | 'platforms' | 'outbound' | 'trustProxyHops' | 'mail'>,
): WebOptions {
  return {
    publicBaseUrl: config.publicBaseUrl,
    credentialsKey: config.credentialsKey,
    platforms: config.platforms,
    outbound: config.outbound,
    trustProxyHops: config.trustProxyHops,
    mail: config.mail,
  };
}

/** An app built without them (tests): the configuration's defaults, no environment read. */
export function defaultWebOptions(): WebOptions {
  return webOptions(loadConfig({}));
}
