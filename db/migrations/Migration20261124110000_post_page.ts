// GET /v1/posts in one statement whose plan Postgres keeps (issue 15): a PL/pgSQL function caches
// the plan of its query per session, where the same query sent as text was planned again for
// every request (planning took longer than running it). services/posts.ts listPostsForKey calls
// it; the columns it returns are PageRow there: a field added to the post view is added in both,
// by a migration that replaces the function.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124110000_post_page extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function post_page(
  p_org text, p_status text, p_channel text, p_from timestamptz, p_to timestamptz,
  p_key_channels jsonb, p_cursor_at timestamptz, p_cursor_id text, p_limit int
) returns text language plpgsql stable
-- The generic plan: bounds that may be absent are written so that it still seeks the index, and
-- a custom plan per call would be planned again each time, which is what this function avoids.
set plan_cache_mode = force_generic_plan
as $$
declare
  key_channels text[] := case when p_key_channels is null then null else array(select jsonb_array_elements_text(p_key_channels)) end;
  answer text;
begin
  -- Newest first by (scheduled_at, id), keyset pagination; an absent bound is an infinite one,
  -- so the organization's (scheduled_at, id) index serves every combination of filters.
  select coalesce(json_agg(json_build_array(
      p.id, p.status, p.content, p.scheduled_at, p.published_at, p.created_at, p.source, p.reddit, p.series_id, p.media_ids,
      (select coalesce(json_agg(json_build_array(pc.channel_id, pc.platform, pc.status, pc.content, pc.platform_post_id, pc.url,
          pc.published_at, pc.error, pc.error_code, pc.retryable) order by pc.id collate "C"), '[]')
        from post_channels pc where pc.post_id = p.id),
      (select coalesce(json_agg(json_build_array(m.id, m.type, m.storage_key)), '[]')
        from media_items m where m.id = any (array(select jsonb_array_elements_text(p.media_ids))))
    ) order by p.scheduled_at desc, p.id desc), '[]')::text
  into answer
  from (
    select p.* from posts p
    where p.organization_id = p_org and p.deleted_at is null
      and (p_status is null or p.status = p_status)
      and (p_channel is null or exists (select 1 from post_channels c where c.post_id = p.id and c.channel_id = p_channel))
      and p.scheduled_at >= coalesce(p_from, '-infinity') and p.scheduled_at < coalesce(p_to, 'infinity')
      -- A key limited to some channels sees the posts none of whose channels is outside its list.
      and (key_channels is null or not exists (select 1 from post_channels c where c.post_id = p.id and c.channel_id <> all(key_channels)))
      and (p.scheduled_at, p.id) < (coalesce(p_cursor_at, 'infinity'), coalesce(p_cursor_id, ''))
    order by p.scheduled_at desc, p.id desc
    limit p_limit
  ) p;
  return answer;
end
$$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists post_page(text, text, text, timestamptz, timestamptz, jsonb, timestamptz, text, int);`);
  }
}
