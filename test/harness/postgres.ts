// A throwaway embedded Postgres for one test run (lib/pg-server.ts: also as root from a private folder).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPgServer } from '../../lib/pg-server.ts';
import { freePort } from './ports.ts';

export interface TestPostgres {
  url: (database?: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-test-pg-'));
  // Our own temporary folder: as root without mount namespaces the `postgres` user must enter it.
  chmodSync(dir, 0o711);
  const pg = await startPgServer({
    dataDir: join(dir, 'data'),
    port: await freePort(),
    user: 'postgres',
    password: 'postgres',
    logFile: join(dir, 'postgres.log'),
  });
  return {
    url: pg.url,
    createDatabase: pg.createDatabase,
    stop: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
      if (pg.dataDir !== join(dir, 'data')) rmSync(join(pg.dataDir, '..'), { recursive: true, force: true });
    },
  };
}
