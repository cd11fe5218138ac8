// Tracked links (db/entities/tracked-link.ts; domain/links/ states the rules): the short links of
// published texts and the clicks counted through them, a post's links choice and an
// organization's default for posts that give none.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261129110000_tracked_links extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "tracked_links" ("code" varchar(32) not null, "created_at" timestamptz not null, "post_channel_id" varchar(255) not null, "url" text not null, "target" text not null, "short_url" text not null, primary key ("code"));`,
    );
    this.addSql('alter table "tracked_links" add constraint "tracked_links_post_channel_id_url_unique" unique ("post_channel_id", "url");');
    this.addSql(
      'alter table "tracked_links" add constraint "tracked_links_post_channel_id_foreign" foreign key ("post_channel_id") references "post_channels" ("id") on delete cascade;',
    );
    this.addSql(
      `create table "link_clicks" ("link_code" varchar(32) not null, "address_hash" varchar(64) not null, "minute" timestamptz not null, primary key ("link_code", "address_hash", "minute"));`,
    );
    this.addSql(
      'alter table "link_clicks" add constraint "link_clicks_link_code_foreign" foreign key ("link_code") references "tracked_links" ("code") on delete cascade;',
    );
    this.addSql(`alter table "posts" add "links" jsonb not null default '{"shorten":false}';`);
    this.addSql(`alter table "organizations" add "links" jsonb not null default '{"shorten":false}';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "organizations" drop column if exists "links";');
    this.addSql('alter table "posts" drop column if exists "links";');
    this.addSql('drop table if exists "link_clicks" cascade;');
    this.addSql('drop table if exists "tracked_links" cascade;');
  }
}
