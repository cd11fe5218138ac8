// The audit log (domain/audit.ts): one row per change made to an organization. Rows are only
// inserted: the trigger below refuses every UPDATE, a DELETE of a row younger than 90 days and a
// TRUNCATE, so the log cannot be edited through the service even by a bug. An operator may prune
// rows older than 90 days with plain SQL (docs/decisions.md "Audit log").
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127160000_audit_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "audit_events" (
      "id" varchar(255) not null, "organization_id" varchar(255) not null,
      "occurred_at" timestamptz(3) not null default now(),
      "actor_type" text check ("actor_type" in ('member', 'api_key', 'reviewer', 'operator', 'invitee')) not null,
      "actor_id" text null, "actor_name" text not null, "action" text not null,
      "resource_type" text not null, "resource_id" text null, "ip" text null, "user_agent" text null,
      "details" jsonb not null default '{}',
      primary key ("id"));`);
    this.addSql(
      'create index "audit_events_organization_occurred_index" on "audit_events" ("organization_id", "occurred_at" desc, "id" desc);',
    );
    this.addSql(
      'alter table "audit_events" add constraint "audit_events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id");',
    );
    this.addSql(`create function audit_events_immutable() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    if old.occurred_at < now() - interval '90 days' then
      return old;
    end if;
  end if;
  raise exception 'audit_events rows cannot be changed (% refused; rows older than 90 days may be deleted)', tg_op
    using errcode = 'insufficient_privilege';
end $$;`);
    this.addSql(
      'create trigger audit_events_immutable before update or delete on "audit_events" for each row execute function audit_events_immutable();',
    );
    this.addSql(
      'create trigger audit_events_no_truncate before truncate on "audit_events" for each statement execute function audit_events_immutable();',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "audit_events" cascade;');
    this.addSql('drop function if exists audit_events_immutable();');
  }
}
