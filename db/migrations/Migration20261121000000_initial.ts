// Initial schema: organizations, API keys, channels, posts, post channels, media items, usage counters.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "organizations" ("id" varchar(255) not null, "name" varchar(255) not null, "plan" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql(
      "alter table \"organizations\" add constraint \"organizations_plan_check\" check (\"plan\" in ('FREE', 'PRO', 'TEAM', 'ENTERPRISE'));",
    );
    this.addSql(
      'create table "media_items" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "type" text not null, "status" text not null default \'pending\', "file_name" varchar(255) not null, "mime_type" varchar(255) not null, "size_bytes" bigint not null, "storage_key" varchar(255) not null, "thumbnail_key" varchar(255) null, "width" int null, "height" int null, "duration_seconds" int null, "alt_text" text null, "description" text null, "failure_reason" text null, "upload_expires_at" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql('create index "media_items_organization_id_index" on "media_items" ("organization_id");');
    this.addSql(
      "alter table \"media_items\" add constraint \"media_items_type_check\" check (\"type\" in ('image', 'gif', 'video', 'document', 'audio'));",
    );
    this.addSql(
      'alter table "media_items" add constraint "media_items_status_check" check ("status" in (\'pending\', \'ready\', \'failed\'));',
    );
    this.addSql(
      'create table "channels" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "platform" text not null, "name" varchar(255) not null, "status" text not null default \'active\', "max_chars" int null, "settings" jsonb not null default \'{}\', "credentials_encrypted" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql('create index "channels_organization_id_index" on "channels" ("organization_id");');
    this.addSql(
      "alter table \"channels\" add constraint \"channels_platform_check\" check (\"platform\" in ('X', 'BLUESKY', 'THREADS', 'LINKEDIN', 'MASTODON', 'INSTAGRAM', 'FACEBOOK', 'TIKTOK', 'YOUTUBE', 'PINTEREST', 'REDDIT', 'TELEGRAM', 'DISCORD'));",
    );
    this.addSql(
      'alter table "channels" add constraint "channels_status_check" check ("status" in (\'active\', \'reauth_required\', \'disabled\'));',
    );
    this.addSql(
      'create table "api_keys" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "name" varchar(255) not null, "hash" varchar(64) not null, "prefix" varchar(16) not null, "scopes" text[] not null, "channel_ids" jsonb null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql('create index "api_keys_organization_id_index" on "api_keys" ("organization_id");');
    this.addSql('alter table "api_keys" add constraint "api_keys_hash_unique" unique ("hash");');
    this.addSql(
      'create table "posts" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "status" text not null, "content" text not null, "content_by_platform" jsonb not null default \'{}\', "reddit" jsonb null, "media_ids" jsonb not null default \'[]\', "source" varchar(8) not null, "api_key_id" varchar(255) null, "scheduled_at" timestamptz not null, "published_at" timestamptz null, "workflow_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql('create index "posts_organization_id_scheduled_at_id_index" on "posts" ("organization_id", "scheduled_at", "id");');
    this.addSql(
      'create index "posts_organization_id_status_scheduled_at_id_index" on "posts" ("organization_id", "status", "scheduled_at", "id");',
    );
    this.addSql(
      "alter table \"posts\" add constraint \"posts_status_check\" check (\"status\" in ('scheduled', 'publishing', 'published', 'failed'));",
    );
    this.addSql(
      'create table "post_channels" ("id" varchar(255) not null, "post_id" varchar(255) not null, "channel_id" varchar(255) not null, "platform" text not null, "status" text not null default \'draft\', "content" text not null, "platform_post_id" varchar(255) null, "url" text null, "published_at" timestamptz null, "error" text null, "attempts" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));',
    );
    this.addSql('create index "post_channels_channel_id_index" on "post_channels" ("channel_id");');
    this.addSql('alter table "post_channels" add constraint "post_channels_post_id_channel_id_unique" unique ("post_id", "channel_id");');
    this.addSql(
      "alter table \"post_channels\" add constraint \"post_channels_platform_check\" check (\"platform\" in ('X', 'BLUESKY', 'THREADS', 'LINKEDIN', 'MASTODON', 'INSTAGRAM', 'FACEBOOK', 'TIKTOK', 'YOUTUBE', 'PINTEREST', 'REDDIT', 'TELEGRAM', 'DISCORD'));",
    );
    this.addSql(
      "alter table \"post_channels\" add constraint \"post_channels_status_check\" check (\"status\" in ('draft', 'publishing', 'published', 'failed'));",
    );
    this.addSql(
      'create table "usage_counters" ("organization_id" varchar(255) not null, "period" varchar(7) not null, "requests" int not null default 0, primary key ("organization_id", "period"));',
    );
    this.addSql(
      'alter table "media_items" add constraint "media_items_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "channels" add constraint "channels_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "posts" add constraint "posts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "post_channels" add constraint "post_channels_post_id_foreign" foreign key ("post_id") references "posts" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "post_channels" add constraint "post_channels_channel_id_foreign" foreign key ("channel_id") references "channels" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "usage_counters" add constraint "usage_counters_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
  }

  override async down(): Promise<void> {
    for (const table of ['usage_counters', 'post_channels', 'posts', 'api_keys', 'channels', 'media_items', 'organizations']) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
