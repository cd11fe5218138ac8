// Threads and first comments (domain/posts/thread.ts): what a post asks for on posts (thread,
// thread_by_platform, first_comment), and each channel's follow-up items as rows of
// post_channel_items, published and recorded one by one. post_page answers the page's items too.
import { Migration } from '@mikro-orm/migrations';
import { Migration20261126120000_post_page_rows } from './Migration20261126120000_post_page_rows.ts';

export class Migration20261127100000_post_threads extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "posts" add "thread" jsonb null, add "thread_by_platform" jsonb not null default '{}', add "first_comment" jsonb null;`,
    );
    this.addSql(`create table "post_channel_items" (
      "id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "post_channel_id" varchar(255) not null, "position" int not null, "kind" text check ("kind" in ('reply', 'comment')) not null,
      "content" text not null, "media_ids" jsonb not null default '[]',
      "status" text check ("status" in ('draft', 'publishing', 'published', 'failed')) not null default 'draft',
      "platform_post_id" varchar(255) null, "url" text null, "published_at" timestamptz null, "error" text null,
      "error_code" text check ("error_code" in ('reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown')) null, "retryable" boolean null, "attempts" int not null default 0,
      primary key ("id"));`);
    this.addSql(
      'alter table "post_channel_items" add constraint "post_channel_items_post_channel_id_position_unique" unique ("post_channel_id", "position");',
    );
    this.addSql(
      'alter table "post_channel_items" add constraint "post_channel_items_post_channel_id_foreign" foreign key ("post_channel_id") references "post_channels" ("id") on delete cascade;',
    );
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
    'items', (select coalesce(json_agg(i), '[]') from post_channel_items i
      where i.post_channel_id in (select pc.id from post_channels pc where pc.post_id in (select id from page))),
    'media', (select coalesce(json_agg(m), '[]') from media_items m
      where m.id in (select jsonb_array_elements_text(page.media_ids) from page))
  )::text
  into answer;
  return answer;
end
$$;`);
  }

  override async down(): Promise<void> {
    const previous = new Migration20261126120000_post_page_rows(this.driver, this.config);
    await previous.up();
    for (const query of previous.getQueries()) this.addSql(query);
    this.addSql('drop table if exists "post_channel_items" cascade;');
    this.addSql(
      'alter table "posts" drop column if exists "thread", drop column if exists "thread_by_platform", drop column if exists "first_comment";',
    );
  }
}
