// Who may do what: preview links as rows (revocable, deciding once), series that pause when their
// maker may no longer post, and the service itself as an audit actor.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128120000_access extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "preview_links" ("id" varchar(255) not null, "organization_id" varchar(255) not null, "post_id" varchar(255) not null, "created_by_user_id" varchar(255) not null, "decide" boolean not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, "revoked_at" timestamptz null, "decision" text check ("decision" in ('approve', 'reject')) null, "reviewer_name" varchar(100) null, "decided_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "preview_links_post_id_index" on "preview_links" ("post_id");`);
    this.addSql(
      `alter table "preview_links" add constraint "preview_links_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "series" drop constraint if exists "series_status_check";`);
    this.addSql(`alter table "series" add constraint "series_status_check" check ("status" in ('active', 'paused', 'ended', 'stopped'));`);
    this.addSql(`alter table "series" add column "paused_reason" text null;`);
    this.addSql(`alter table "audit_events" drop constraint if exists "audit_events_actor_type_check";`);
    this.addSql(
      `alter table "audit_events" add constraint "audit_events_actor_type_check" check ("actor_type" in ('member', 'api_key', 'reviewer', 'operator', 'invitee', 'system'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "audit_events" drop constraint if exists "audit_events_actor_type_check";`);
    this.addSql(
      `alter table "audit_events" add constraint "audit_events_actor_type_check" check ("actor_type" in ('member', 'api_key', 'reviewer', 'operator', 'invitee'));`,
    );
    this.addSql(`alter table "series" drop column "paused_reason";`);
    this.addSql(`alter table "series" drop constraint if exists "series_status_check";`);
    this.addSql(`alter table "series" add constraint "series_status_check" check ("status" in ('active', 'ended', 'stopped'));`);
    this.addSql('drop table if exists "preview_links" cascade;');
  }
}
