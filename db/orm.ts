// MikroORM setup shared by the API, the worker, the CLI and the tests.
import { MikroORM, PostgreSqlConnection, PostgreSqlDriver, defineConfig, type Configuration } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { isStaleBeforeEffect, isStaleConnection } from './connection-errors.ts';
import { ALL_ENTITIES } from './entities/index.ts';
import { MIGRATIONS } from './migrations/index.ts';

export type Orm = MikroORM;

/**
 * After Postgres drops its sessions (restart, failover, pg_terminate_backend) the pool may still
 * hold idle clients whose "terminating connection" has not been read yet, and the first
 * statements fail on them one by one. MikroORM already listens for the pool's `error` events (the
 * process does not crash) and pg-pool discards a dead client on release, so the statement is sent
 * again, on the next client or a new connection: at most once per client the pool can hold.
 * Only outside a transaction (inside one, the unit of work is lost with its connection), and only
 * when the statement surely did not run — or is a read.
 */
class ReconnectingConnection extends PostgreSqlConnection {
  /** A dead client can fail twice (its socket's end may come after its error), so twice the pool, plus one. */
  private get attempts(): number {
    return 2 * (this.config.get('pool')?.max ?? 10) + 1;
  }

  /**
   * Kysely keeps a connection checked out for ever when its BEGIN or its ROLLBACK fails (it only
   * releases after they succeed), which on a dead connection is every time: each Postgres restart
   * would leak pool slots until the pool is empty and every query waits for ever. Release it here;
   * pg-pool then drops the dead client.
   */
  override createKyselyDialect(overrides: Parameters<PostgreSqlConnection['createKyselyDialect']>[0]) {
    const dialect = super.createKyselyDialect(overrides);
    const createDriver = dialect.createDriver.bind(dialect);
    dialect.createDriver = () => {
      const driver = createDriver();
      const releaseOnFailure =
        <A extends unknown[]>(fn: (connection: any, ...rest: A) => Promise<void>, when: (err: unknown) => boolean) =>
        async (connection: any, ...rest: A) => {
          try {
            await fn.call(driver, connection, ...rest);
          } catch (err) {
            if (when(err)) await driver.releaseConnection(connection);
            throw err;
          }
        };
      // A failed BEGIN opened nothing: the connection may go back whatever broke it. A failed
      // ROLLBACK leaves an unknown state: only a dead connection is released (pg-pool drops it).
      driver.beginTransaction = releaseOnFailure(driver.beginTransaction, () => true);
      driver.rollbackTransaction = releaseOnFailure(driver.rollbackTransaction, isStaleConnection);
      return driver;
    };
    return dialect;
  }

  override async execute(...args: Parameters<PostgreSqlConnection['execute']>): Promise<any> {
    const [query, , , ctx] = args;
    for (let attempt = 1; ; attempt++) {
      try {
        return await super.execute(...args);
      } catch (err) {
        const read = typeof query === 'string' && /^\s*select\b/i.test(query);
        if (ctx || attempt >= this.attempts || !isStaleConnection(err) || !(read || isStaleBeforeEffect(err))) throw err;
      }
    }
  }

  override async begin(...args: Parameters<PostgreSqlConnection['begin']>): ReturnType<PostgreSqlConnection['begin']> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await super.begin(...args);
      } catch (err) {
        // A BEGIN (not a savepoint) that failed on a dead connection changed nothing.
        if (args[0]?.ctx || attempt >= this.attempts || !isStaleConnection(err)) throw err;
      }
    }
  }
}

class ReconnectingDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // PostgreSqlDriver hard-wires its connection class; swap it before anything connects.
    (this as unknown as { connection: PostgreSqlConnection }).connection = new ReconnectingConnection(this.config);
  }
}

export function ormConfig(databaseUrl: string, poolMax = 10) {
  return defineConfig({
    driver: ReconnectingDriver,
    clientUrl: databaseUrl,
    entities: ALL_ENTITIES,
    extensions: [Migrator],
    // Migrations are listed explicitly so they work from a bundled or compiled build as well.
    migrations: { migrationsList: MIGRATIONS, path: 'db/migrations', snapshot: false, transactional: true, silent: true },
    // Tables with no entity, written with plain SQL (services/rate-limit.ts, services/sign-in-throttle.ts):
    // the schema generator must neither drop them nor report them (test/schema-diff.test.ts).
    schemaGenerator: {
      skipTables: ['rate_limits', 'sign_in_attempts'],
      // Hand-written functions (post_page: db/migrations/Migration20261126120000_post_page_rows.ts) are the migrations' own.
      ignoreRoutines: true,
      // Hand-written triggers (the admission NOTIFYs: Migration20261126200000_admission_notify.ts) likewise.
      ignoreTriggers: true,
    },
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
