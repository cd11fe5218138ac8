// Builds the Temporal worker: this project's workflows plus activities from createActivities(),
// and one activity worker per platform (publishToChannel runs on `<queue>-<platform>`), so a
// slow or rate-limited platform uses up only its own slots and never starves the others.
import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type LogEntry,
  type ActivityInterceptorsFactory,
  type NativeConnection,
  type State,
} from '@temporalio/worker';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { createActivities, type ActivityDeps } from '../activities/index.ts';
import { createLogger, type LogLevel } from '../lib/log.ts';
import { PLATFORMS } from '../platforms/catalog.ts';
import { platformTaskQueue } from '../workflows/post-types.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Prebuilt workflow bundle (tests share one to avoid rebundling per worker). */
  workflowBundle?: { code: string };
  /** Cached (sticky) workflows; 0 turns workflow caching off. Default: WORKFLOW_TUNING's. */
  maxCachedWorkflows?: number;
  /** Publish activities running at once per platform, in this process. */
  publishConcurrencyPerPlatform?: number;
  /**
   * After shutdown(), how long running activities may take to finish before they are cancelled
   * (SDK default: 0, cancelled at once). The entry points set it; tests keep the SDK default.
   */
  shutdownGraceTime?: Duration;
  /** After shutdown(), when to give up draining altogether (must exceed shutdownGraceTime). */
  shutdownForceTime?: Duration;
  /** Wrap the publish activities (tests: an attempt whose completion never reaches Temporal). */
  publishInterceptors?: ActivityInterceptorsFactory[];
  /** Wrap the calls of the client the activities start and signal workflows with. */
  clientInterceptors?: WorkflowClientInterceptor[];
}

/**
 * The main worker's workflow settings (figures in bench/worker-memory.ts and
 * bench/burst-lateness.ts, decisions in docs/decisions.md):
 * - a bounded cache: a post's workflow sleeps for days, and a cached one costs the worker about
 *   0.1 MiB, so sleeping workflows must fall out of it (least recently used first) and be replayed
 *   from their short history when they wake. The SDK's default is sized from the V8 heap limit,
 *   which Bun reports differently (500+ here), and grows the RSS by ~80 MiB per 1,000 asleep.
 * - more workflow-task pollers, half of them on the shared (non-sticky) queue: new workflows, and
 *   those woken after they left the cache, come through it (the SDK's default gives it 2 of 10).
 * - a shorter sticky schedule-to-start timeout: after a worker restarts, the workflows that were
 *   cached by the old one move to the shared queue after 5 s instead of 10 (burst max ≤ 5 s).
 */
export const WORKFLOW_TUNING = {
  maxCachedWorkflows: 200,
  maxConcurrentWorkflowTaskExecutions: 40,
  maxConcurrentWorkflowTaskPolls: 20,
  nonStickyToStickyPollRatio: 0.5,
  stickyQueueScheduleToStartTimeout: '5 seconds',
} as const;

/** Publish activities at once per platform, per worker process (each platform has its own queue and slots). */
export const PUBLISH_CONCURRENCY_PER_PLATFORM = 20;

/** The main worker and the per-platform publish workers, run and stopped together. */
export class WorkerGroup {
  constructor(readonly workers: Worker[]) {}
  getState(): State {
    return this.workers[0]!.getState();
  }
  run(): Promise<void> {
    return Promise.all(this.workers.map((w) => w.run())).then(() => undefined);
  }
  shutdown(): void {
    for (const w of this.workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
  async runUntil<T>(fn: Promise<T>): Promise<T> {
    const running = this.run();
    try {
      return await fn;
    } finally {
      this.shutdown();
      await running;
    }
  }
}

export async function createWorker(opts: WorkerOptions): Promise<WorkerGroup> {
  const activities = createActivities({
    ...opts.deps,
    taskQueue: opts.deps.taskQueue ?? opts.taskQueue,
  });
  const shutdown = {
    ...(opts.shutdownGraceTime !== undefined ? { shutdownGraceTime: opts.shutdownGraceTime } : {}),
    ...(opts.shutdownForceTime !== undefined ? { shutdownForceTime: opts.shutdownForceTime } : {}),
  };
  const main = await Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities,
    ...shutdown,
    ...WORKFLOW_TUNING,
    // The metrics sweep's heartbeats carry its progress and bring it its cancellation: sent within
    // a second (not 0.8 × its 1-minute heartbeat timeout), a retry resumes from the last channel
    // recorded and a cancelled sweep stops within seconds, not up to 48 s later.
    maxHeartbeatThrottleInterval: '1 second',
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    ...(opts.clientInterceptors ? { interceptors: { client: { workflow: opts.clientInterceptors } } } : {}),
  });
  const publishers = await Promise.all(
    PLATFORMS.map((platform) =>
      Worker.create({
        connection: opts.connection,
        namespace: opts.namespace,
        taskQueue: platformTaskQueue(opts.taskQueue, platform),
        activities: {
          publishToChannel: activities.publishToChannel,
          publishFollowUp: activities.publishFollowUp,
          publishCommentReply: activities.publishCommentReply,
          moderateComment: activities.moderateComment,
        },
        maxConcurrentActivityTaskExecutions: opts.publishConcurrencyPerPlatform ?? PUBLISH_CONCURRENCY_PER_PLATFORM,
        // The publish activities keep the platform's answer in their heartbeat details; sending them within
        // a second (not 0.8 × the 10 s heartbeat timeout) keeps the window a crash can lose small.
        maxHeartbeatThrottleInterval: '1 second',
        ...shutdown,
        ...(opts.publishInterceptors ? { interceptors: { activity: opts.publishInterceptors } } : {}),
      }),
    ),
  );
  return new WorkerGroup([main, ...publishers]);
}

/**
 * What the SDK says at WARN that is no warning here: each per-platform publish worker runs
 * activities only, by design, and says so once as it starts (thirteen lines). Logged at debug.
 */
const EXPECTED_NOTICES = new Set(['No workflows registered, not polling for workflow tasks']);

/**
 * Routes the SDK's own logs (its core's included) at the configured level through lib/log.ts:
 * JSON lines like the rest, redacted — an "Activity failed" line carries the platform's error,
 * and a platform may echo a credential into it. (The SDK's INFO level prints whole webpack
 * reports, so `info` keeps it at WARN.)
 */
export function installRuntime(level: LogLevel, write?: (line: string) => void): void {
  const sdkLevel = level === 'debug' ? 'DEBUG' : level === 'error' ? 'ERROR' : 'WARN';
  const logger = createLogger({ level, base: { service: 'worker', source: 'temporal' }, write });
  const toOurs = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
  const forward = (e: LogEntry) => {
    const ours = EXPECTED_NOTICES.has(e.message) ? 'debug' : toOurs[e.level];
    logger.sink({ time: new Date(Number(e.timestampNanos / 1_000_000n)).toISOString(), level: ours, msg: e.message, ...e.meta });
  };
  Runtime.install({
    logger: new DefaultLogger(sdkLevel, forward),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: sdkLevel }), forward: {} } },
    // Signals are handled by our own entry points (orderly shutdown of API, worker, children);
    // the SDK's handler removal under Bun can reset SIGINT to its default and kill the process.
    shutdownSignals: [],
  });
}
