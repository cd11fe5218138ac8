// Members of an organization with a role each (domain/access.ts). Every existing user becomes the
// owner of the organization they belong to, so every organization keeps working as it did.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127130000_memberships extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "memberships" (
      "id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "organization_id" varchar(255) not null, "user_id" varchar(255) not null,
      "role" text check ("role" in ('owner', 'admin', 'editor', 'contributor', 'viewer')) not null,
      primary key ("id"));`);
    this.addSql('create index "memberships_organization_id_index" on "memberships" ("organization_id");');
    this.addSql('create index "memberships_user_id_index" on "memberships" ("user_id");');
    this.addSql(
      'alter table "memberships" add constraint "memberships_organization_id_user_id_unique" unique ("organization_id", "user_id");',
    );
    this.addSql(
      'alter table "memberships" add constraint "memberships_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "memberships" add constraint "memberships_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;',
    );
    this.addSql(`insert into "memberships" ("id", "created_at", "updated_at", "organization_id", "user_id", "role")
      select 'mem_' || substr("id", 5), "created_at", now(), "organization_id", "id", 'owner' from "users";`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "memberships" cascade;');
  }
}
