// A worker on its own task queue (real connectors pointed at local fakes) and an app wired to
// the shared time-skipping Temporal server.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VisionConfig } from '../../activities/vision.ts';
import { createDiskStorage } from '../../storage/disk.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { seaweed } from './seaweed.ts';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalCli, findTemporalTestServer } from '../../lib/temporal-binaries.ts';
import { ensureSearchAttributes } from '../../worker/temporal.ts';
import { createApp, type ServerDeps } from '../../server/app.ts';
import { createMastodonConnector } from '../../platforms/mastodon.ts';
import type { Connectors } from '../../platforms/types.ts';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { createWorker } from '../../worker/index.ts';
import { Post } from '../../db/entities/index.ts';
import { postStateQuery, postWorkflowId, type PostWorkflowState } from '../../workflows/post-types.ts';
import type { WebOptions } from '../../web/options.ts';
import { harness } from './index.ts';
import { startDevServerTries } from './processes.ts';

export interface PostStackOptions {
  connectors?: Connectors;
  /**
   * 'dev': a real Temporal dev server (`temporal server start-dev`, in memory) instead of the
   * time-skipping test server, for races that must meet the real server's handling of Updates
   * and local activities. Its clock is the wall clock: env.sleep really sleeps.
   */
  server?: 'time-skipping' | 'dev';
  maxCachedWorkflows?: number;
  /** Object storage: 'disk' (a throwaway directory, served by the app), 's3' (the run's SeaweedFS). */
  storage?: 'disk' | 's3';
  vision?: VisionConfig;
  /**
   * Where clients reach the app (a real socket, in the browser tests): the disk store signs its
   * URLs with it, and it becomes the web application's public base URL. Default http://localhost.
   */
  publicBaseUrl?: string;
  /**
   * The web application's settings (OAuth apps, URL overrides). Given (or with publicBaseUrl), the
   * app gets them — with the harness's credentials key — instead of reading the environment.
   */
  web?: Partial<WebOptions>;
  /** Wraps the publish activities (a test losing an attempt's completion on its way to Temporal). */
  publishInterceptors?: ActivityInterceptorsFactory[];
  /** Per-attempt webhook timeout (a hanging receiver's test); 15 s by default. */
  webhookTimeoutMs?: number;
  /** Wrap the calls of the app's Temporal client (a test observing what the workflows answered). */
  clientInterceptors?: WorkflowClientInterceptor[];
  /** More of the app's dependencies (the generate scope's model endpoints). */
  appDeps?: Partial<ServerDeps>;
}

/** A dev server through the SDK, its start tried again as startDevServerTries says (the SDK picks its port). */
const startDevServer = () =>
  startDevServerTries(
    () => TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: findTemporalCli() } } }),
    () => true,
  );

export async function startPostStack(opts: PostStackOptions = {}) {
  const h = await harness();
  // Each stack has its own time-skipping server: the clock of a shared one is held back by any
  // workflow another test file left waiting on a worker that is gone.
  const env =
    opts.server === 'dev'
      ? await startDevServer()
      : await TestWorkflowEnvironment.createTimeSkipping({
          server: { executable: { type: 'existing-path', path: findTemporalTestServer() } },
        });
  await ensureSearchAttributes(env.connection, env.namespace ?? 'default');
  const taskQueue = `test-${randomUUID()}`;
  const connectors = opts.connectors ?? { MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }) };
  let clock = new Date(await env.currentTimeMs());
  const now = () => clock;
  let storage: ObjectStorage | undefined;
  let storageDir: string | undefined;
  if (opts.storage === 'disk') {
    storageDir = mkdtempSync(join(tmpdir(), 'postpilot-test-media-'));
    storage = createDiskStorage({
      root: storageDir,
      publicBaseUrl: opts.publicBaseUrl ?? 'http://localhost',
      signingKey: randomBytes(32),
      now,
    });
  } else if (opts.storage === 's3') {
    storage = (await seaweed()).storage({ now });
  }
  const bundle = await h.workflowBundle();
  // Without a workflow cache the SDK drops a local activity still running when it evicts the
  // workflow after each task, and the task is retried when it times out: a short task timeout
  // keeps that wait to a second instead of the server's default ten.
  const shortTasks: WorkflowClientInterceptor[] =
    opts.maxCachedWorkflows === 0
      ? [{ start: (input, next) => next({ ...input, options: { ...input.options, workflowTaskTimeout: msToTs('1 second') } }) }]
      : [];
  const newWorker = () =>
    createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      deps: {
        orm: h.orm,
        connectors,
        credentialsKey: h.credentialsKey,
        storage,
        vision: opts.vision,
        outbound: { allowPrivate: true },
        webhookTimeoutMs: opts.webhookTimeoutMs,
      },
      workflowBundle: bundle,
      maxCachedWorkflows: opts.maxCachedWorkflows,
      publishInterceptors: opts.publishInterceptors,
      clientInterceptors: shortTasks,
    });
  let worker = await newWorker();
  let running = worker.run();
  // The time-skipping server's clock is shared by every test: workflows left running (with no
  // worker once this stack stops) would hold it back, so the stack records what it starts and
  // terminates the leftovers when it stops.
  const started: string[] = [];
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    interceptors: {
      workflow: [
        {
          async start(input, next) {
            started.push(input.options.workflowId);
            return next(input);
          },
        },
        ...shortTasks,
        ...(opts.clientInterceptors ?? []),
      ],
    },
  });
  // A client that never unlocks time skipping (the test env's own client does while it waits).
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  const web: WebOptions | undefined =
    opts.web || opts.publicBaseUrl
      ? {
          publicBaseUrl: opts.publicBaseUrl ?? 'http://localhost',
          credentialsKey: h.credentialsKey,
          platforms: {},
          outbound: { allowPrivate: true },
          ...opts.web,
        }
      : undefined;
  const app = createApp({
    orm: h.orm,
    log: process.env.STACK_LOG ? (...a: unknown[]) => console.error(...a) : () => {},
    now,
    temporal: { client, taskQueue },
    storage,
    rateLimiter: h.rateLimiter,
    postPages: h.postPages,
    webhooks: { credentialsKey: h.credentialsKey, outbound: { allowPrivate: true } },
    platforms: { connectors, credentialsKey: h.credentialsKey },
    ...(web ? { web } : {}),
    ...opts.appDeps,
  });
  return {
    h,
    env,
    client,
    app,
    storage,
    taskQueue,
    /**
     * Waits until the post's workflow has finished, or, for a failed post, waits for a retry
     * (phase 'failed': it would wait 30 days). Never lets the server jump to "the next
     * timer" (other tests leave timers years ahead): it polls in real time and moves the
     * shared clock forward in bounded steps only when nothing happens (retry backoffs).
     */
    async settle(postId: string, opts: { step?: string; maxSteps?: number } = {}): Promise<PostWorkflowState> {
      const handle = plain.workflow.getHandle(postWorkflowId(postId));
      const awaitingRetry = async () => {
        const row = await h.orm.em.fork().findOne(Post, { id: postId });
        return row?.status === 'failed' && (await handle.query(postStateQuery)).phase === 'failed';
      };
      for (let step = 0; step <= (opts.maxSteps ?? 40); step++) {
        for (let i = 0; i < 20; i++) {
          const { status } = await handle.describe();
          if (status.name !== 'RUNNING') return handle.result();
          if (await awaitingRetry()) return handle.query(postStateQuery);
          await Bun.sleep(15);
        }
        await env.sleep(opts.step ?? '30 seconds');
      }
      throw new Error(`workflow of ${postId} did not finish`);
    },
    /** Stops the worker mid-flight (its running activities are cancelled) and starts a fresh one. */
    async restartWorker() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => {});
      worker = await newWorker();
      running = worker.run();
    },
    /** The ids of the workflows started through `client` (the app's creates among them), in order. */
    startedWorkflowIds: (): readonly string[] => started,
    /** Activities the worker is running now (a cancelled one counts until its function has returned). */
    activitiesInFlight: () => worker.workers.reduce((n, w) => n + w.getStatus().numInFlightActivities, 0),
    /** Moves the API's clock to the test server's current time. */
    async syncClock() {
      clock = new Date(await env.currentTimeMs());
      return clock;
    },
    async stop() {
      await Promise.all(
        started.map((id) =>
          client.workflow
            .getHandle(id)
            .terminate('test finished')
            .catch(() => {}),
        ),
      );
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => {});
      if (storageDir) rmSync(storageDir, { recursive: true, force: true });
      await env.teardown();
    },
  };
}
