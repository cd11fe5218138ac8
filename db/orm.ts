// MikroORM setup shared by the API, the worker, the CLI and the tests.
import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ALL_ENTITIES } from './entities/index.ts';
import { MIGRATIONS } from './migrations/index.ts';

export type Orm = MikroORM;

export function ormConfig(databaseUrl: string, poolMax = 10) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ALL_ENTITIES,
    extensions: [Migrator],
    // Migrations are listed explicitly so they work from a bundled or compiled build as well.
    migrations: { migrationsList: MIGRATIONS, path: 'db/migrations', snapshot: false, transactional: true, silent: true },
    pool: { min: 0, max: poolMax },
    // Every unit of work forks its own EntityManager (request handlers, activities, CLI commands).
    allowGlobalContext: false,
    debug: false,
  });
}

export async function createOrm(databaseUrl: string, poolMax = 10): Promise<Orm> {
  return MikroORM.init(ormConfig(databaseUrl, poolMax));
}

/** Applies pending migrations; safe to call at every start (and from several processes: the migrator locks). */
export async function migrate(orm: Orm): Promise<string[]> {
  const done = await orm.migrator.up();
  return done.map((m) => m.name);
}
