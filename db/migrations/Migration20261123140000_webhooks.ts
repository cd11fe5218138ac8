// Webhooks (issue 14): endpoints, the event outbox and one delivery row per (event, endpoint).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123140000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "webhook_endpoints" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "url" text not null, "description" text null, "events" jsonb null, "enabled" boolean not null default true, "disabled_reason" text null, "secret_encrypted" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_endpoints_organization_id_index" on "webhook_endpoints" ("organization_id");`);
    this.addSql(
      `create table "webhook_events" ("id" varchar(255) not null, "created_at" timestamptz not null, "organization_id" varchar(255) not null, "type" varchar(255) not null, "payload" jsonb not null, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_events_organization_id_index" on "webhook_events" ("organization_id");`);
    this.addSql(
      `create table "webhook_deliveries" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "event_id" varchar(255) not null, "endpoint_id" varchar(255) not null, "status" text not null default 'pending', "attempts" int not null default 0, "last_status_code" int null, "last_duration_ms" int null, "last_error" text null, "last_attempt_at" timestamptz null, "next_retry_at" timestamptz null, "dispatched" boolean not null default false, primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_id_index" on "webhook_deliveries" ("endpoint_id", "id");`);
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_events" add constraint "webhook_events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "webhook_events" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'delivered', 'failed'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_events" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
  }
}
