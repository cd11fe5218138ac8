// `npm start`: the whole service on the embedded default, no Docker and nothing to set up.
// Embedded Postgres (DATA_DIR/pg) + Temporal dev server (DATA_DIR/temporal.sqlite, UI on
// TEMPORAL_UI_PORT) + migrations + the worker + the API on PORT. Ctrl-C stops all of it, in this
// order: the API (requests in flight are answered), the worker (running activities finish), the
// Temporal clients and the database pools, the Temporal dev server, Postgres. Postgres and Temporal
// run in process groups of their own (scripts/embedded/), so a terminal's Ctrl-C reaches only this
// launcher and they are still there while the worker drains. Should the launcher die without
// stopping them (SIGKILL, out of memory), they get a signal and stop too where the system allows it
// (lib/process-lifetime.ts); where not, the next start stops what is left for this data folder
// (scripts/embedded/leftovers.ts).
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import {
  EMBEDDED_TEMPORAL_SQLITE_PRAGMAS,
  embeddedDatabaseUrl,
  embeddedPaths,
  ensureCredentialsKey,
  writeSecret,
} from '../lib/embedded.ts';
import { findTemporalCli } from '../lib/temporal-binaries.ts';
import { authenticateKey, createApiKey } from '../services/api-keys.ts';
import { SCOPES } from '../lib/scopes.ts';
import { createOrganization } from '../domain/organizations.ts';
import { startServer, temporalDeps } from '../server/run.ts';
import { startWorker } from '../worker/run.ts';
import { connectClient } from '../worker/temporal.ts';
import { startEmbeddedPostgres } from './embedded/postgres.ts';
import { startTemporalDevServer } from './embedded/temporal.ts';
import { assertPortsFree } from './embedded/ports.ts';
import { stopLeftovers } from './embedded/leftovers.ts';
import { postgresDataDirs } from '../lib/pg-server.ts';
import { createLogger } from '../lib/log.ts';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { User } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { authenticateUser, createUser, findUserByEmail, setUserPassword } from '../services/users.ts';

const t0 = performance.now();
const say = (m: string) => console.log(`[postpilot] ${m}`);
const stops: (() => Promise<void>)[] = [];
let stopping: Promise<never> | undefined;

/** Stops everything in reverse start order, once; a repeated Ctrl-C waits for the same stop. */
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    say('stopping…');
    // Nothing else may hold the event loop open while the worker drains (the SDK's native calls do
    // not): this handle keeps the launcher alive until every stop has finished.
    const keepAlive = setInterval(() => {}, 1000);
    for (const stop of stops.reverse()) await stop().catch((e) => console.error(`[postpilot] stop: ${(e as Error).message}`));
    clearInterval(keepAlive);
    say('stopped');
    process.exit(code);
  })();
  return stopping;
}
// An error while stopping (a late callback of a connection being closed) must not cut the orderly
// stop short; before that, it stops everything.
const fatal = (e: unknown) => {
  if (stopping) return;
  console.error(`[postpilot] fatal: ${(e as Error)?.stack ?? String(e)}`);
  void shutdown(1);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);
// SIGHUP: the terminal was closed; the children, in their own sessions, do not get it themselves.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(0));

try {
  const env = { ...process.env };
  const base = loadConfig(env);
  const paths = embeddedPaths(base);
  mkdirSync(paths.logs, { recursive: true });
  env.CREDENTIALS_KEY ??= ensureCredentialsKey(base);
  env.DATABASE_URL ??= embeddedDatabaseUrl(base);
  // The embedded stack is for one machine: instances on it or its network are reachable (lib/outbound.ts).
  env.OUTBOUND_ALLOW_PRIVATE ??= 'true';
  const config = loadConfig(env, ['DATABASE_URL', 'CREDENTIALS_KEY']);

  const temporalPort = Number(config.temporal.address.split(':').pop() ?? 7233);
  await stopLeftovers({
    dataRoot: paths.root,
    pgDataDirs: postgresDataDirs(paths.pg),
    temporalDb: paths.temporalDb,
    temporalPidFile: paths.temporalPid,
    ports: [config.embeddedPgPort, temporalPort, config.temporal.uiPort],
    say,
  });
  // What is still taken belongs to someone else.
  await assertPortsFree({
    API: config.port,
    Postgres: config.embeddedPgPort,
    Temporal: temporalPort,
    'Temporal UI': config.temporal.uiPort,
  });

  say(`starting Postgres on 127.0.0.1:${config.embeddedPgPort} (data in ${paths.pg})`);
  const pg = await startEmbeddedPostgres({ dir: paths.pg, port: config.embeddedPgPort, logFile: `${paths.logs}/postgres.log` });
  stops.push(pg.stop);
  // As root where mount namespaces are not allowed, the data may live elsewhere (lib/pg-server.ts).
  if (pg.dataDir !== paths.pg) say(`Postgres data is in ${pg.dataDir} (the \`postgres\` user cannot reach ${paths.pg})`);

  say(`starting the Temporal dev server on 127.0.0.1:${temporalPort} (UI on http://localhost:${config.temporal.uiPort})`);
  const temporal = await startTemporalDevServer({
    cli: findTemporalCli(config.temporal.cliPath),
    dbFile: paths.temporalDb,
    port: temporalPort,
    uiPort: config.temporal.uiPort,
    namespace: config.temporal.namespace,
    logFile: `${paths.logs}/temporal.log`,
    pidFile: paths.temporalPid,
    // WAL, synchronous=FULL: faster commits than the CLI's default journal, as durable (lib/embedded.ts).
    sqlitePragmas: EMBEDDED_TEMPORAL_SQLITE_PRAGMAS,
  });
  stops.push(temporal.stop);
  // The worker and the API reach the dev server where it listens.
  const stack = { ...config, temporal: { ...config.temporal, address: temporal.address } };

  const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
  stops.push(() => orm.close());
  const applied = await migrate(orm);
  if (applied.length) say(`applied migrations: ${applied.join(', ')}`);

  // First start: a demo organization and an all-scopes key, shown once and kept in .data.
  const existing = existsSync(paths.devApiKey) ? readFileSync(paths.devApiKey, 'utf8').trim() : undefined;
  const principal = existing ? await authenticateKey(orm.em.fork(), existing).catch(() => null) : null;
  let demoOrgId = principal?.organization.id;
  if (!principal) {
    const em = orm.em.fork();
    const org = await createOrganization(em, { name: 'Demo organization', plan: 'PRO' });
    demoOrgId = org.id;
    const key = await createApiKey(em, {
      organizationId: org.id,
      name: 'dev key',
      scopes: [...SCOPES],
      channels: 'all',
    });
    writeSecret(paths.devApiKey, key.key);
    say(`created demo organization ${org.id} (plan PRO) and an API key with all scopes:`);
    console.log(`\n    ${key.key}\n`);
    say(`the key is saved in ${paths.devApiKey} (mode 0600); it is not shown again`);
  } else {
    say(`reusing the API key in ${paths.devApiKey}`);
  }
  // …and a member of it who signs in to the web app, its password likewise shown once.
  await ensureDemoUser(orm, demoOrgId!, resolve(paths.root, 'dev-login'));

  const client = await connectClient(stack.temporal);
  stops.push(() => client.connection.close());
  // Its own JSON lines at LOG_LEVEL (lib/log.ts); it also registers the search attributes, which
  // the dev server's --search-attribute flags only do for a new database.
  const worker = await startWorker(stack, { orm, logger: createLogger({ level: config.logLevel, base: { service: 'worker' } }) });
  stops.push(worker.stop);
  worker.done.catch((e) => {
    console.error(`[postpilot] worker failed: ${(e as Error).message}`);
    void shutdown(1);
  });
  // Request lines and errors as JSON on stdout, at LOG_LEVEL (lib/log.ts).
  const server = startServer(stack, {
    orm,
    temporal: temporalDeps(stack, client),
    logger: createLogger({ level: config.logLevel, base: { service: 'api' } }),
  });
  stops.push(async () => void (await server.stop()));
  say(`API on http://localhost:${config.port}/v1 — ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  say(`try: curl -H "Authorization: Bearer $(cat ${paths.devApiKey})" http://localhost:${config.port}/v1/me`);
  say(`web app on http://localhost:${config.port}/ — sign in with the login in ${resolve(paths.root, 'dev-login')}`);
} catch (e) {
  console.error(`[postpilot] failed to start: ${(e as Error).message}`);
  await shutdown(1);
}

/**
 * The web app's demo login (demo@postpilot.local) in the demo organization: reused while the
 * password saved in DATA_DIR/dev-login still signs in, else (re)set to a new random password that
 * is printed once and saved there (mode 0600), as the dev API key is.
 */
async function ensureDemoUser(orm: Orm, organizationId: string, file: string): Promise<void> {
  const email = 'demo@postpilot.local';
  const saved = existsSync(file) ? /password: (\S+)/.exec(readFileSync(file, 'utf8'))?.[1] : undefined;
  const current = saved ? await authenticateUser(orm.em.fork(), email, saved) : null;
  if (current && current.organization === organizationId) {
    say(`reusing the web login in ${file}`);
    return;
  }
  const em = orm.em.fork();
  const password = randomBytes(15).toString('base64url');
  const user = await findUserByEmail(em, email);
  if (user) {
    // The demo organization was made anew (its key file was removed): the demo user moves to it.
    if (user.organization !== organizationId) await em.nativeUpdate(User, { id: user.id }, { organization: organizationId });
    await setUserPassword(em, user.id, password);
  } else {
    await createUser(em, { organizationId, email, password });
  }
  writeSecret(file, `email: ${email}\npassword: ${password}`);
  say(`web app login for the demo organization (${email}):`);
  console.log(`\n    email:    ${email}\n    password: ${password}\n`);
  say(`the login is saved in ${file} (mode 0600); the password is not shown again`);
}
