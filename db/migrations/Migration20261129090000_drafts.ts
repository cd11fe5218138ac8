// Drafts (db/entities/draft.ts): a post's content not yet scheduled, and the post it became.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261129090000_drafts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "drafts" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "content" jsonb not null, "channel_ids" jsonb not null, "intended_at" timestamptz null, "created_by" jsonb not null, "post_id" varchar(255) null, "scheduled_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql('create index "drafts_organization_id_updated_at_id_index" on "drafts" ("organization_id", "updated_at", "id");');
    this.addSql(
      'alter table "drafts" add constraint "drafts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "drafts" add constraint "drafts_post_id_foreign" foreign key ("post_id") references "posts" ("id") on delete set null;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "drafts" cascade;');
  }
}
