// Invitations to join an organization with a role (domain/invitations.ts).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127150000_invitations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "invitations" (
      "id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "organization_id" varchar(255) not null, "email" varchar(320) not null,
      "role" text check ("role" in ('owner', 'admin', 'editor', 'contributor', 'viewer')) not null,
      "token_hash" varchar(64) not null, "invited_by_user_id" varchar(255) not null, "expires_at" timestamptz not null,
      "accepted_at" timestamptz null, "declined_at" timestamptz null, "revoked_at" timestamptz null,
      primary key ("id"));`);
    this.addSql('create index "invitations_organization_id_index" on "invitations" ("organization_id");');
    this.addSql('alter table "invitations" add constraint "invitations_token_hash_unique" unique ("token_hash");');
    this.addSql(
      'alter table "invitations" add constraint "invitations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "invitations" cascade;');
  }
}
