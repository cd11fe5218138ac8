// A stack whose processes a test kills for real: a Temporal dev server (SIGKILL; restartable with
// its state when persistent), the worker as its own process (SIGKILL and replace), the API in
// this process, and a fake Mastodon the worker publishes to.
import { afterAll, beforeAll } from 'bun:test';
import type { Client } from '@temporalio/client';
import { loadConfig } from '../../lib/config.ts';
import { createMastodonConnector } from '../../platforms/mastodon.ts';
import { createApp } from '../../server/app.ts';
import { lazyClient } from '../../worker/temporal.ts';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.ts';
import { harness } from './index.ts';
import { startKillableTemporal, startKillableWorker, type KillableTemporal, type KillableWorker } from './processes.ts';

export interface KillableStack {
  fake: FakeMastodon;
  temporal: KillableTemporal;
  worker: KillableWorker;
  client: Client;
  app: ReturnType<typeof createApp>;
}

/** Registers the file's set-up and tear-down; `ready` receives the stack once started. */
export function useKillableStack(
  o: { name: string; persistentTemporal?: boolean; requestTimeoutMs: number },
  ready: (stack: KillableStack) => Promise<void> | void,
): void {
  let stack: Partial<KillableStack> = {};
  beforeAll(async () => {
    const h = await harness();
    const fake = await startFakeMastodon();
    stack.fake = fake;
    // Persistent: a server started again after a kill has the workflows the killed one had.
    const temporal = await startKillableTemporal(o.persistentTemporal ? { persistent: true } : undefined);
    stack.temporal = temporal;
    const env = {
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `${o.name}-${crypto.randomUUID()}`,
      CREDENTIALS_KEY: h.credentialsKey.toString('hex'),
      // The fake listens on 127.0.0.1: a private address the connector refuses otherwise.
      OUTBOUND_ALLOW_PRIVATE: 'true',
    };
    stack.worker = await startKillableWorker(env);
    const config = loadConfig({ TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: env.TEMPORAL_TASK_QUEUE });
    const client = lazyClient(config.temporal);
    stack.client = client;
    const connectors = { MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }) };
    stack.app = createApp({
      orm: h.orm,
      log: () => {},
      rateLimiter: h.rateLimiter,
      temporal: { client, taskQueue: config.temporal.taskQueue, requestTimeoutMs: o.requestTimeoutMs },
      webhooks: { credentialsKey: h.credentialsKey, outbound: { allowPrivate: true } },
      platforms: { connectors, credentialsKey: h.credentialsKey },
    });
    await ready(stack as KillableStack);
  }, 120_000);
  afterAll(async () => {
    await stack.worker?.stop();
    await stack.temporal?.kill();
    await stack.fake?.stop();
    // After the server: a connection closed while the SDK has a retry timer pending throws.
    await stack.client?.connection.close().catch(() => {});
    stack = {};
  });
}
