// Announces the changes an API process's admission cache must not outlive
// (services/admission-cache.ts): a key's row, an organization's, and a monthly count set back.
// The payload names what changed (`key:<id>`, `org:<id>`); the cache drops it. The last-used stamp
// and counts going up, which the cache itself writes, are not announced.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261126200000_admission_notify extends Migration {
  override async up(): Promise<void> {
    // One function for the three tables: the row read as JSON, since a PL/pgSQL record has only its own table's fields.
    this.addSql(`create or replace function admission_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('postpilot_admission', case tg_table_name
    when 'api_keys' then 'key:' || (to_jsonb(old) ->> 'id')
    when 'organizations' then 'org:' || (to_jsonb(old) ->> 'id')
    else 'org:' || (to_jsonb(old) ->> 'organization_id') end);
  return null;
end $$;`);
    // A WHEN clause of a delete trigger cannot read NEW: updates and deletes are two triggers each.
    this.addSql(`create trigger api_keys_admission_update after update on api_keys for each row
when ((old.revoked_at, old.expires_at, old.scopes, old.channel_ids, old.name, old.organization_id, old.hash)
  is distinct from (new.revoked_at, new.expires_at, new.scopes, new.channel_ids, new.name, new.organization_id, new.hash))
execute function admission_notify();`);
    this.addSql('create trigger api_keys_admission_delete after delete on api_keys for each row execute function admission_notify();');
    this.addSql(`create trigger organizations_admission_update after update on organizations for each row
when ((old.plan, old.name, old.time_zone) is distinct from (new.plan, new.name, new.time_zone))
execute function admission_notify();`);
    this.addSql(
      'create trigger organizations_admission_delete after delete on organizations for each row execute function admission_notify();',
    );
    this.addSql(`create trigger usage_counters_admission_update after update on usage_counters for each row
when (new.requests < old.requests)
execute function admission_notify();`);
    this.addSql(
      'create trigger usage_counters_admission_delete after delete on usage_counters for each row execute function admission_notify();',
    );
  }

  override async down(): Promise<void> {
    for (const table of ['usage_counters', 'organizations', 'api_keys']) {
      this.addSql(`drop trigger if exists ${table}_admission_update on ${table};`);
      this.addSql(`drop trigger if exists ${table}_admission_delete on ${table};`);
    }
    this.addSql('drop function if exists admission_notify();');
  }
}
