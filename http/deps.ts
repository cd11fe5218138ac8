// What the routes of the API and of the web app need from the outside. The web app's own settings
// are added by web/context.ts (WebDeps); server/app.ts takes both (ServerDeps).
import type { Connectors } from '../platforms/types.ts';
import type { Orm } from '../db/orm.ts';
import type { TemporalDeps } from '../domain/posts/create.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { RateLimiter } from '../services/rate-limit.ts';
import type { PostPageCache } from '../domain/posts/page-cache.ts';
import { createLogger, type LogSink } from '../lib/log.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import type { VisionConfig } from '../activities/vision.ts';
import type { GenerateConfig } from '../services/generate.ts';

/** What the HTTP app needs from the outside; the server and the tests build it. */
export interface AppDeps {
  orm: Orm;
  /** Starts and updates post workflows; routes that need it fail without it. */
  temporal?: TemporalDeps;
  /** Per-minute limits per key; built by the entry points from a pg pool (createRateLimiter). */
  rateLimiter?: RateLimiter;
  /** GET /v1/posts's pages kept in memory (domain/posts/page-cache.ts); absent: every page is read. */
  postPages?: PostPageCache;
  /** Object storage of the media library. */
  storage?: ObjectStorage;
  /** Webhook secrets are encrypted with the credentials key; URLs are checked with the outbound policy. */
  webhooks?: { credentialsKey: Buffer; outbound: OutboundPolicy };
  /** The generate scope's text generator (services/generate.ts); its routes answer 501 without it. */
  generate?: GenerateConfig;
  /** The media library's vision pass, also behind POST /v1/generate/alt-text; 501 there without it. */
  vision?: VisionConfig;
  /** Reads the API makes from the platforms themselves (a channel's capabilities); absent: fixed facts only. */
  platforms?: { connectors: Connectors; credentialsKey: Buffer };
  /** Media fetched by URL (the MCP server's upload_media_from_url); production's policy when absent. */
  outbound?: OutboundPolicy;
  /** Injectable clock (quota periods, key expiry). */
  now?: () => Date;
  /** Proxies in front whose X-Forwarded-For is trusted (TRUST_PROXY): the audit log's client address. 0 or absent: the socket's peer. */
  trustProxyHops?: number;
  /**
   * Receives every log entry of the app (one per request, errors, failed readiness checks),
   * redacted — by the app, or by the sink itself when it says so (lib/log.ts sinkRedacts). The
   * entry points pass createLogger(LOG_LEVEL).sink; tests capture entries.
   */
  log?: LogSink;
}

/** JSON lines on stdout at level info and above (lib/log.ts). */
export const defaultLog: LogSink = createLogger().sink;
