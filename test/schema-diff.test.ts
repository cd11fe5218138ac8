// The migrations and the entities describe the same schema: every migration, run on an empty
// database, leaves nothing for MikroORM's schema diff to change. An entity changed without a
// migration (or a migration without its entity change) fails here, not on a deployed database.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createOrm, migrate, type Orm } from '../db/orm.ts';
import { MIGRATIONS } from '../db/migrations/index.ts';
import { harness } from './harness/index.ts';

let orm: Orm;
let applied: string[];

beforeAll(async () => {
  const h = await harness();
  // A database of its own: the shared one is migrated too, but other test files write to it.
  await h.pg.createDatabase('postpilot_schema_diff');
  orm = await createOrm(h.pg.url('postpilot_schema_diff'), 2);
  applied = await migrate(orm);
});

afterAll(async () => {
  await orm?.close(true);
});

describe('migrations and entities', () => {
  test('every listed migration runs on an empty database', () => {
    expect(applied).toEqual(MIGRATIONS.map((m) => m.name));
  });

  test('leave no difference between the database and the entity metadata', async () => {
    const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false });
    // On failure the SQL shown is what the missing migration has to do.
    expect(diff.trim()).toBe('');
  });

  test('constrain posts.source to the sources the entity names', async () => {
    const conn = orm.em.fork().getConnection();
    const [org] = await conn.execute<{ id: string }[]>(
      `insert into organizations (id, name, plan, created_at, updated_at) values ('org_schema_diff', 'o', 'FREE', now(), now()) returning id`,
    );
    const insert = (source: string) =>
      conn.execute(
        `insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
         values (?, ?, 'scheduled', 'x', ?, now(), now(), now())`,
        [`post_${source}`, org!.id, source],
      );
    await insert('api');
    await insert('app');
    await expect(insert('cli')).rejects.toThrow(/posts_source_check/);
  });
});
