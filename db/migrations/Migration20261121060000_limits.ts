// Limits and safety: idempotency keys, the rate-limit table (rate-limiter-flexible's layout),
// and an index for duplicate-post detection.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121060000_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "idempotency_keys" (
      "organization_id" varchar(255) not null references "organizations" ("id") on delete cascade,
      "endpoint" varchar(64) not null,
      "key" varchar(255) not null,
      "request_hash" varchar(64) not null,
      "status_code" int null,
      "response" jsonb null,
      "location" text null,
      "created_at" timestamptz not null,
      primary key ("organization_id", "endpoint", "key"));`);
    this.addSql(`create index "idempotency_keys_created_at_index" on "idempotency_keys" ("created_at");`);
    // Owned by rate-limiter-flexible (RateLimiterPostgres, tableCreated: true): key, points, expire (ms).
    this.addSql(`create table "rate_limits" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
    this.addSql(`create index "post_channels_channel_id_created_at_index" on "post_channels" ("channel_id", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "post_channels_channel_id_created_at_index";`);
    this.addSql(`drop table if exists "rate_limits";`);
    this.addSql(`drop table if exists "idempotency_keys";`);
  }
}
