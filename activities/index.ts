// Activities are built from a factory that takes their dependencies (DESIGN.md §5); each forks
// its own EntityManager.
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import type { Connectors } from '../platforms/types.ts';
import { createPostActivities } from './posts.ts';
import { createMediaActivities } from './media.ts';
import type { VisionConfig } from './vision.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createWebhookEmitter } from './webhook-events.ts';
import { createReconcileActivities } from './reconcile.ts';
import { createSeriesActivities } from './series.ts';
import { createMetricsActivities } from './metrics.ts';
import { createFeedActivities } from './feeds.ts';
import { createCommentsActivities } from './comments.ts';
import { createCommentActionActivities } from './comment-actions.ts';

export interface ActivityDeps {
  orm: Orm;
  connectors?: Connectors;
  /** Decrypts channel credentials; required to publish. */
  credentialsKey?: Buffer;
  storage?: ObjectStorage;
  /** The optional vision pass (an OpenAI-compatible chat-completions endpoint). */
  vision?: VisionConfig;
  now?: () => Date;
  /** Webhook URLs are tenant-chosen hosts (lib/outbound.ts); production's policy when unset. */
  outbound?: OutboundPolicy;
  /** Per-attempt webhook timeout (tests shorten it); 15 s when unset. */
  webhookTimeoutMs?: number;
  /**
   * The worker's main task queue, where webhook delivery workflows run. Activities emit webhook
   * events of the changes they make only when it is set (worker/index.ts sets it); activities
   * built alone for a test emit none.
   */
  taskQueue?: string;
  /** The transport under the outbound guard for feed reads (tests); the global fetch when unset. */
  feedTransport?: typeof fetch;
}

export function createActivities(deps: ActivityDeps) {
  const webhooks = createWebhookEmitter(deps.taskQueue ? { taskQueue: deps.taskQueue, storage: deps.storage } : undefined);
  return {
    async ping(message: string): Promise<{ echo: string; database: string }> {
      const rows = await sql<{ v: string }>(deps.orm.em.fork(), 'select version() as v');
      return {
        echo: message,
        database: String(rows[0]?.v ?? '')
          .split(' ')
          .slice(0, 2)
          .join(' '),
      };
    },
    ...createPostActivities({
      orm: deps.orm,
      connectors: deps.connectors ?? {},
      credentialsKey: deps.credentialsKey,
      storage: deps.storage,
      now: deps.now,
      webhooks,
    }),
    ...createMediaActivities({ orm: deps.orm, storage: deps.storage, vision: deps.vision, webhooks }),
    ...createReconcileActivities({ orm: deps.orm }),
    ...createWebhookActivities({
      orm: deps.orm,
      credentialsKey: deps.credentialsKey,
      outbound: deps.outbound ?? { allowPrivate: false },
      timeoutMs: deps.webhookTimeoutMs,
    }),
    ...createSeriesActivities({ orm: deps.orm, webhooks }),
    ...createMetricsActivities(
      { orm: deps.orm, connectors: deps.connectors ?? {}, credentialsKey: deps.credentialsKey, now: deps.now },
      webhooks,
    ),
    ...createCommentsActivities(
      { orm: deps.orm, connectors: deps.connectors ?? {}, credentialsKey: deps.credentialsKey, now: deps.now },
      webhooks,
    ),
    ...createCommentActionActivities(
      { orm: deps.orm, connectors: deps.connectors ?? {}, credentialsKey: deps.credentialsKey, storage: deps.storage, now: deps.now },
      webhooks,
    ),
    ...createFeedActivities({
      orm: deps.orm,
      outbound: deps.outbound ?? { allowPrivate: false },
      webhooks,
      taskQueue: deps.taskQueue,
      now: deps.now,
      transport: deps.feedTransport,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
