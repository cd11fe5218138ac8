// A series create claims its Idempotency-Key inside its own transaction, as a post create does:
// the claim names the series it made and goes with it.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261126100200_idempotency_series_claim extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "idempotency_keys" add column "series_id" varchar(255) null;`);
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_series_id_foreign" foreign key ("series_id") references "series" ("id") on delete cascade;`,
    );
    this.addSql(`create index "idempotency_keys_series_id_index" on "idempotency_keys" ("series_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "idempotency_keys" drop column if exists "series_id";`);
  }
}
