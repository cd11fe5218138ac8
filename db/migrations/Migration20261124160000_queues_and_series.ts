// Posting queues and recurring posts (issue 17): weekly slots per channel and the slot instants
// queued posts have claimed; series (a post template and a rule) and each occurrence's series id;
// a time zone per organization (UTC unless set) and per channel (null = the organization's).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124160000_queues_and_series extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "queue_claims" ("channel_id" varchar(255) not null, "slot_at" timestamptz not null, "created_at" timestamptz not null, "post_id" varchar(255) not null, primary key ("channel_id", "slot_at"));`,
    );
    this.addSql(`create index "queue_claims_post_id_index" on "queue_claims" ("post_id");`);
    this.addSql(
      `create table "queue_slots" ("channel_id" varchar(255) not null, "weekday" smallint not null, "time" varchar(5) not null, primary key ("channel_id", "weekday", "time"));`,
    );
    this.addSql(
      `create table "series" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "status" text not null default 'active', "content" text not null, "content_by_platform" jsonb not null default '{}', "reddit" jsonb null, "media_ids" jsonb not null default '[]', "channel_ids" jsonb not null, "source" text not null, "api_key_id" varchar(255) null, "start_at" timestamptz not null, "time_zone" varchar(64) not null, "every" text not null, "interval" int not null default 1, "until" timestamptz null, "count" int null, "occurrences_created" int not null default 0, "last_occurrence_at" timestamptz null, "last_error" jsonb null, "workflow_id" varchar(255) not null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "series_organization_id_index" on "series" ("organization_id");`);
    this.addSql(`alter table "organizations" add "time_zone" varchar(64) not null default 'UTC';`);
    this.addSql(`alter table "channels" add "time_zone" varchar(64) null;`);
    this.addSql(`alter table "posts" add "series_id" varchar(255) null;`);
    this.addSql(`create index "posts_series_id_index" on "posts" ("series_id");`);
    this.addSql(
      `alter table "queue_claims" add constraint "queue_claims_channel_id_foreign" foreign key ("channel_id") references "channels" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "queue_slots" add constraint "queue_slots_channel_id_foreign" foreign key ("channel_id") references "channels" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "series" add constraint "series_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "series" add constraint "series_status_check" check ("status" in ('active', 'ended', 'stopped'));`);
    this.addSql(`alter table "series" add constraint "series_source_check" check ("source" in ('api', 'app'));`);
    this.addSql(`alter table "series" add constraint "series_every_check" check ("every" in ('day', 'week', 'month'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "posts_series_id_index";`);
    this.addSql(`alter table "posts" drop column if exists "series_id";`);
    this.addSql(`alter table "channels" drop column if exists "time_zone";`);
    this.addSql(`alter table "organizations" drop column if exists "time_zone";`);
    this.addSql(`drop table if exists "series" cascade;`);
    this.addSql(`drop table if exists "queue_slots" cascade;`);
    this.addSql(`drop table if exists "queue_claims" cascade;`);
  }
}
