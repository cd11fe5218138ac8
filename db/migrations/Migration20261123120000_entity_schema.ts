// Brings the database to exactly the schema the entities describe (test/schema-diff.test.ts):
// `posts.source` becomes an enum like the other status columns (text + check, 'api' | 'app'), and
// the foreign keys created inline in the limits and web migrations get MikroORM's names
// (`<table>_<column>_foreign` instead of Postgres's `_fkey`). No row is rewritten: varchar → text
// is binary-compatible, the new check only reads `posts` once, and a rename re-checks nothing.
import { Migration } from '@mikro-orm/migrations';

const INLINE_FOREIGN_KEYS = [
  ['idempotency_keys', 'organization_id'],
  ['users', 'organization_id'],
  ['sessions', 'user_id'],
  ['sessions', 'organization_id'],
  ['oauth_grants', 'user_id'],
  ['oauth_grants', 'organization_id'],
] as const;

export class Migration20261123120000_entity_schema extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "posts" alter column "source" type text using "source"::text;`);
    this.addSql(`alter table "posts" add constraint "posts_source_check" check ("source" in ('api', 'app'));`);
    for (const [table, column] of INLINE_FOREIGN_KEYS) {
      this.addSql(`alter table "${table}" rename constraint "${table}_${column}_fkey" to "${table}_${column}_foreign";`);
    }
  }

  override async down(): Promise<void> {
    for (const [table, column] of INLINE_FOREIGN_KEYS) {
      this.addSql(`alter table "${table}" rename constraint "${table}_${column}_foreign" to "${table}_${column}_fkey";`);
    }
    this.addSql(`alter table "posts" drop constraint "posts_source_check";`);
    this.addSql(`alter table "posts" alter column "source" type varchar(8) using "source"::varchar(8);`);
  }
}
