// The inbox's storage (db/entities/comment.ts): comments, one per (channel, platform comment id);
// per published channel post, when its comments are read next (comment_follows, created by the
// comments sweep for the published posts it finds through post_channels_published_index).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261129050000_comments extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "comment_follows" ("post_channel_id" varchar(255) not null, "next_at" timestamptz null, "last_read_at" timestamptz null, "error" text null, primary key ("post_channel_id"));',
    );
    this.addSql('create index "comment_follows_due_index" on "comment_follows" ("next_at") where "next_at" is not null;');
    this.addSql(
      `create table "comments" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "post_id" varchar(255) not null, "post_channel_id" varchar(255) not null, "channel_id" varchar(255) not null, "platform_comment_id" text not null, "parent_platform_id" text not null, "author_name" text null, "author_handle" text null, "author_avatar_url" text null, "author_profile_url" text null, "text" text not null, "written_at" timestamptz not null, "url" text null, "ours" boolean not null, "status" text not null default 'unread', "assignee_user_id" varchar(255) null, primary key ("id"));`,
    );
    this.addSql('create index "comments_post_id_index" on "comments" ("post_id");');
    this.addSql('create index "comments_post_channel_id_index" on "comments" ("post_channel_id");');
    this.addSql('create index "comments_organization_id_written_at_id_index" on "comments" ("organization_id", "written_at", "id");');
    this.addSql(
      'alter table "comments" add constraint "comments_channel_id_platform_comment_id_unique" unique ("channel_id", "platform_comment_id");',
    );
    this.addSql(`create index "post_channels_published_index" on "post_channels" ("published_at") where "status" = 'published';`);
    this.addSql(
      'alter table "comment_follows" add constraint "comment_follows_post_channel_id_foreign" foreign key ("post_channel_id") references "post_channels" ("id") on update cascade on delete cascade;',
    );
    for (const [column, table, rule] of [
      ['organization_id', 'organizations', 'cascade'],
      ['post_id', 'posts', 'cascade'],
      ['post_channel_id', 'post_channels', 'cascade'],
      ['channel_id', 'channels', 'cascade'],
      ['assignee_user_id', 'users', 'set null'],
    ] as const) {
      this.addSql(
        `alter table "comments" add constraint "comments_${column}_foreign" foreign key ("${column}") references "${table}" ("id") on delete ${rule};`,
      );
    }
    this.addSql(
      `alter table "comments" add constraint "comments_status_check" check ("status" in ('unread', 'read', 'replied', 'hidden'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "comments" cascade;');
    this.addSql('drop table if exists "comment_follows" cascade;');
    this.addSql('drop index if exists "post_channels_published_index";');
  }
}
