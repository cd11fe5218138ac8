// RSS and Atom feeds that post by themselves (domain/feeds/feeds.ts): the feeds, and every item
// each has seen, keyed by the hash of its identity so that an item is posted at most once.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128100000_feeds extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "feeds" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "name" varchar(200) not null, "url" text not null, "channel_ids" jsonb not null, "template" text not null, "template_by_platform" jsonb not null default '{}', "mode" text check ("mode" in ('now', 'queue')) not null default 'now', "filter" jsonb null, "poll_minutes" int not null default 15, "status" text check ("status" in ('active', 'paused')) not null default 'active', "paused_reason" text null, "consecutive_failures" int not null default 0, "last_polled_at" timestamptz null, "last_success_at" timestamptz null, "last_error" jsonb null, "etag" text null, "last_modified" text null, "next_poll_at" timestamptz not null, "source" text check ("source" in ('api', 'app')) not null, "api_key_id" varchar(255) null, "created_by_user_id" varchar(255) null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "feeds_organization_id_index" on "feeds" ("organization_id");`);
    this.addSql(`create index "feeds_due_index" on "feeds" ("next_poll_at") where "status" = 'active' and "deleted_at" is null;`);
    this.addSql(
      `alter table "feeds" add constraint "feeds_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `create table "feed_items" ("feed_id" varchar(255) not null, "key_hash" varchar(64) not null, "created_at" timestamptz not null, "item_key" text not null, "link" text null, "title" text null, "outcome" text check ("outcome" in ('posted', 'backlog', 'filtered', 'refused')) not null, "post_id" varchar(255) null, "error" jsonb null, primary key ("feed_id", "key_hash"));`,
    );
    this.addSql(`create index "feed_items_link_index" on "feed_items" ("feed_id", "link");`);
    this.addSql(
      `alter table "feed_items" add constraint "feed_items_feed_id_foreign" foreign key ("feed_id") references "feeds" ("id") on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "feed_items" cascade;');
    this.addSql('drop table if exists "feeds" cascade;');
  }
}
