// The worker's part of a process, started and stopped the same way by `bun run worker`
// (worker/main.ts) and by the embedded stack (scripts/dev.ts): connect, register the search
// attributes, build the workers from the configuration, poll; stop() lets running activities
// finish (a publish in progress is completed, not cut off), then closes the connection.
import type { Orm } from '../db/orm.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { useMediaBinaries } from '../media/exec.ts';
import { useShortLinkBase } from '../domain/links/rewrite.ts';
import { createConnectors } from '../platforms/index.ts';
import { createStorage } from '../storage/index.ts';
import { createWorker, installRuntime } from './index.ts';
import { ensureSchedules, SERVICE_SCHEDULES } from './schedules.ts';
import { connectClient, connectWorker, ensureSearchAttributes } from './temporal.ts';

/** After stop(), running activities may take this long to finish (orchestrators usually allow 30 s). */
export const SHUTDOWN_GRACE_TIME = '25 seconds';
/** Past this, the worker gives up draining (GracefulShutdownPeriodExpiredError): `done` rejects. */
export const SHUTDOWN_FORCE_TIME = '28 seconds';

export interface RunningWorker {
  /** Settles once every worker has stopped: after stop(), or rejected when the worker fails. */
  done: Promise<void>;
  /** No new tasks; running activities finish (up to SHUTDOWN_GRACE_TIME); then the connection closes. Once; never rejects. */
  stop: () => Promise<void>;
}

/**
 * Starts polling with the configuration's Temporal address, platforms, storage, vision pass and
 * media binaries. The ORM is the caller's (the embedded stack shares it with the API) and is not
 * closed here. Installs the SDK runtime, so once per process.
 */
export async function startWorker(config: Config, deps: { orm: Orm; logger: Logger }): Promise<RunningWorker> {
  installRuntime(config.logLevel);
  useMediaBinaries(config.media);
  // The short links the publish activities write (the API's process checks lengths with the same base).
  useShortLinkBase(config.shortLinkBaseUrl);
  const connection = await connectWorker(config.temporal);
  // Also here, not only in the API: an API started while Temporal was down could not register them.
  await ensureSearchAttributes(connection, config.temporal.namespace).catch((err) => {
    deps.logger.warn('could not register search attributes; an operator must create PostId and OrganizationId (Keyword)', { error: err });
  });
  // The service's Temporal Schedules (worker/schedules.ts): created or updated at every start.
  if (SERVICE_SCHEDULES.length > 0) {
    const client = await connectClient(config.temporal);
    await ensureSchedules(client, { taskQueue: config.temporal.taskQueue, logger: deps.logger })
      .catch((err: unknown) => deps.logger.warn('could not set up the Temporal schedules', { error: err }))
      .finally(() => client.connection.close());
  }
  const group = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: {
      orm: deps.orm,
      connectors: createConnectors(config.platforms, config.outbound),
      credentialsKey: config.credentialsKey,
      storage: createStorage(config),
      vision: config.vision,
      outbound: config.outbound,
    },
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
    shutdownForceTime: SHUTDOWN_FORCE_TIME,
  }).catch(async (e: unknown) => {
    await connection.close().catch(() => {});
    throw e;
  });
  const done = group.run();
  done.catch(() => {}); // the caller watches `done`; stop() must not see an unhandled rejection
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      group.shutdown();
      await done.catch(() => {});
      await connection.close().catch((err) => deps.logger.warn('error while closing the Temporal connection', { error: err }));
    })());
  return { done, stop };
}
