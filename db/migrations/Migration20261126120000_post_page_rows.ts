// GET /v1/posts in one statement whose plan Postgres keeps: a PL/pgSQL function caches the plan of
// its query per session, where the same query sent as text is planned again for every request
// (planning takes longer than running it). post_page answers the page's rows as they are stored
// (posts, their post_channels, their media_items, by column name); domain/posts/view.ts
// listPostsForKey reads them by name and shows each post through postView, the one definition of
// the post view, so a field added to the view needs no change here.
import { Migration } from '@mikro-orm/migrations';
import { Migration20261124110000_post_page } from './Migration20261124110000_post_page.ts';

export class Migration20261126120000_post_page_rows extends Migration {
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
  with page as (
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
  )
  select json_build_object(
    'posts', (select coalesce(json_agg(page order by page.scheduled_at desc, page.id desc), '[]') from page),
    'channels', (select coalesce(json_agg(pc), '[]') from post_channels pc where pc.post_id in (select id from page)),
    'media', (select coalesce(json_agg(m), '[]') from media_items m
      where m.id in (select jsonb_array_elements_text(page.media_ids) from page))
  )::text
  into answer;
  return answer;
end
$$;`);
  }

  override async down(): Promise<void> {
    // The definition this one replaced, as its own migration writes it.
    const previous = new Migration20261124110000_post_page(this.driver, this.config);
    await previous.up();
    for (const query of previous.getQueries()) this.addSql(query);
  }
}
