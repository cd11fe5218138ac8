// Announces the changes a kept page of GET /v1/posts must not outlive (domain/posts/page-cache.ts):
// a post of the organization, one of its channels or follow-ups, or a media item of the
// organization, written, changed or deleted. The payload is the organization's id. An update that
// changes only columns no page shows (bookkeeping: stamps, the workflow's flag, metrics
// scheduling, attempt counts) is not announced; a column added later is, until it is named here.
import { Migration } from '@mikro-orm/migrations';

/** Per table: the columns no post's view reads. */
const UNSHOWN: Record<string, string[]> = {
  posts: ['updated_at', 'workflow_id', 'workflow_pending', 'metrics_refreshed_at', 'api_key_id'],
  post_channels: ['updated_at', 'attempts', 'metrics_step', 'metrics_next_at', 'metrics_error'],
  post_channel_items: ['updated_at', 'attempts'],
  media_items: [
    'updated_at',
    'status',
    'file_name',
    'mime_type',
    'size_bytes',
    'thumbnail_key',
    'width',
    'height',
    'duration_seconds',
    'alt_text',
    'description',
    'failure_reason',
    'upload_expires_at',
  ],
};

export class Migration20261129020000_post_pages_notify extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function post_pages_notify() returns trigger language plpgsql as $$
declare
  r jsonb := case when tg_op = 'DELETE' then to_jsonb(old) else to_jsonb(new) end;
  org text;
begin
  org := case tg_table_name
    when 'post_channels' then (select p.organization_id from posts p where p.id = r ->> 'post_id')
    when 'post_channel_items' then (select p.organization_id from post_channels pc join posts p on p.id = pc.post_id
      where pc.id = r ->> 'post_channel_id')
    else r ->> 'organization_id' end;
  -- A channel deleted with its post (the cascade) finds no post: the post's own row announced it.
  if org is not null then
    perform pg_notify('postpilot_posts', org);
  end if;
  return null;
end $$;`);
    for (const [table, unshown] of Object.entries(UNSHOWN)) {
      const minus = `array[${unshown.map((c) => `'${c}'`).join(', ')}]`;
      this.addSql(
        `create trigger ${table}_pages_insert_delete after insert or delete on ${table} for each row execute function post_pages_notify();`,
      );
      this.addSql(`create trigger ${table}_pages_update after update on ${table} for each row
when ((to_jsonb(old) - ${minus}) is distinct from (to_jsonb(new) - ${minus}))
execute function post_pages_notify();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of Object.keys(UNSHOWN)) {
      this.addSql(`drop trigger if exists ${table}_pages_insert_delete on ${table};`);
      this.addSql(`drop trigger if exists ${table}_pages_update on ${table};`);
    }
    this.addSql('drop function if exists post_pages_notify();');
  }
}
