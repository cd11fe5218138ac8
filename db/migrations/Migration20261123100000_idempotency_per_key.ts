// Idempotency-Key replays per API key, not per organization: another key of the organization
// (possibly limited to other channels) must never receive a response stored for this one.
// Rows stored before this migration are attributed where the database knows the key (the post a
// stored 201 created records its key; an organization with a single key); the rest is forgotten,
// as it would be after its 24 h: a retry with such a key runs again.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123100000_idempotency_per_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "idempotency_keys" add column "api_key_id" varchar(255) null;`);
    this.addSql(`update "idempotency_keys" i set "api_key_id" = p."api_key_id" from "posts" p
      where i."endpoint" = 'POST /v1/posts' and i."status_code" between 200 and 299
        and p."id" = i."response"->>'id' and p."organization_id" = i."organization_id";`);
    this.addSql(`update "idempotency_keys" i set "api_key_id" = k."id" from "api_keys" k
      where i."api_key_id" is null and k."organization_id" = i."organization_id"
        and (select count(*) from "api_keys" k2 where k2."organization_id" = i."organization_id") = 1;`);
    this.addSql(`delete from "idempotency_keys" where "api_key_id" is null;`);
    this.addSql(`alter table "idempotency_keys" alter column "api_key_id" set not null;`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_api_key_id_foreign"
      foreign key ("api_key_id") references "api_keys" ("id") on delete cascade;`);
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_pkey";`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_pkey" primary key ("api_key_id", "endpoint", "key");`);
    this.addSql(`create index "idempotency_keys_organization_id_index" on "idempotency_keys" ("organization_id");`);
  }

  override async down(): Promise<void> {
    // Per organization again: of the responses several keys stored under one key, the oldest stays.
    this.addSql(`drop index if exists "idempotency_keys_organization_id_index";`);
    this.addSql(`delete from "idempotency_keys" i using "idempotency_keys" j
      where i."organization_id" = j."organization_id" and i."endpoint" = j."endpoint" and i."key" = j."key"
        and (i."created_at", i."api_key_id") > (j."created_at", j."api_key_id");`);
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_pkey";`);
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_pkey" primary key ("organization_id", "endpoint", "key");`,
    );
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_api_key_id_foreign";`);
    this.addSql(`alter table "idempotency_keys" drop column "api_key_id";`);
  }
}
