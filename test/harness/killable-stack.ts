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
import { eventTypeName, patchId } from './history-events.ts';
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

/**
 * Runs `call` (Temporal client calls) for at most `ms`, then cancels its calls. Past that the
 * test fails here, naming what it waited for, with what the stack shows then: whether the dev
 * server and the worker run, the workflow's pending activities, and their last log lines (a test
 * timeout says none of it, and leaves the test's body running into the next test).
 */
export async function within<T>(stack: KillableStack, call: () => Promise<T>, ms: number, what: string, workflowId?: string): Promise<T> {
  const abort = new AbortController();
  const p = stack.client.withAbortSignal(abort.signal, call);
  let timer: Timer | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)));
  try {
    const first = await Promise.race([p, late]);
    if (first !== 'late') return first;
  } finally {
    clearTimeout(timer);
  }
  p.catch(() => {});
  abort.abort();
  const facts = [
    `Temporal dev server ${stack.temporal.alive() ? 'running' : 'not running'}`,
    `worker ${stack.worker.current.alive() ? 'running' : 'not running'}`,
  ];
  if (workflowId && stack.temporal.alive()) {
    const d = await stack.client.workflow
      .getHandle(workflowId)
      .describe()
      .catch((e: Error) => e);
    facts.push(
      d instanceof Error
        ? `describe: ${d.message}`
        : `workflow ${d.status.name}; pending activities: ${JSON.stringify(
            (d.raw.pendingActivities ?? []).map((a) => ({
              type: a.activityType?.name,
              state: a.state,
              attempt: a.attempt,
              lastFailure: a.lastFailure?.message,
            })),
          )}`,
    );
    facts.push(`history:\n${await historyLines(stack.client, workflowId)}`);
  }
  throw new Error(
    `timed out after ${ms / 1000} s waiting for ${what}\n${facts.join('\n')}\n-- worker --\n${stack.worker.current.lines.slice(-30).join('\n')}\n-- Temporal --\n${stack.temporal.lines.slice(-20).join('\n')}`,
  );
}

/** A workflow's history, an event a line: its id, type and what tells it apart (marker, patch, update, attempt). */
async function historyLines(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow
    .getHandle(workflowId)
    .fetchHistory()
    .catch((e: Error) => e);
  if (history instanceof Error) return `  (not read: ${history.message})`;
  return (history.events ?? [])
    .map((e) => {
      const extra = [
        e.markerRecordedEventAttributes?.markerName,
        patchId(e),
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name,
        e.workflowTaskStartedEventAttributes ? `attempt ${e.workflowTaskScheduledEventAttributes?.attempt ?? ''}` : undefined,
        e.workflowTaskTimedOutEventAttributes ? 'timed out' : undefined,
        e.workflowTaskFailedEventAttributes?.failure?.message,
        e.activityTaskScheduledEventAttributes?.activityType?.name,
      ].filter(Boolean);
      return `  ${e.eventId} ${e.eventTime ? new Date(Number(e.eventTime.seconds) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6)).toISOString().slice(11, 23) : ''} ${eventTypeName(e)} ${extra.join(' ')}`;
    })
    .join('\n');
}
