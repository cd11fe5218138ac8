// Builds the Temporal worker: this project's workflows plus activities from createActivities().
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker, type NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Prebuilt workflow bundle (tests share one to avoid rebundling per worker). */
  workflowBundle?: { code: string };
  /** Cached (sticky) workflows; 0 turns workflow caching off. Default: the SDK's. */
  maxCachedWorkflows?: number;
}

export async function createWorker(opts: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: createActivities(opts.deps),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
  });
}

/** Routes the SDK's own logs at the configured level (its INFO level prints whole webpack reports). */
export function installRuntime(level: 'debug' | 'info' | 'warn' | 'error'): void {
  const sdkLevel = level === 'debug' ? 'DEBUG' : level === 'error' ? 'ERROR' : 'WARN';
  // Signals are handled by our own entry points (orderly shutdown of API, worker, children);
  // the SDK's handler removal under Bun can reset SIGINT to its default and kill the process.
  Runtime.install({ logger: new DefaultLogger(sdkLevel), shutdownSignals: [] });
}
