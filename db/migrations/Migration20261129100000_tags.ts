// Tags (db/entities/tag.ts; domain/tags.ts states the rules): an organization's tags, a post's as
// post_tags rows, a series' and a feed's as a list. post_page takes a tag to keep a tag's posts
// only and answers each post's tags; a post's tags written or removed (a tag deleted included)
// are announced to the kept pages of GET /v1/posts as its other rows are.
import { Migration } from '@mikro-orm/migrations';
import { Migration20261127100000_post_threads } from './Migration20261127100000_post_threads.ts';
import { Migration20261129020000_post_pages_notify } from './Migration20261129020000_post_pages_notify.ts';

/** The statement of `migration`'s up that (re)defines the function `name`: what a down puts back. */
async function functionOf(migration: Migration, name: string): Promise<string> {
  await migration.up();
  const query = migration.getQueries().find((q) => String(q).startsWith(`create or replace function ${name}(`));
  if (!query) throw new Error(`${migration.constructor.name} defines no function ${name}`);
  return String(query);
}

export class Migration20261129100000_tags extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "tags" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "name" text not null, "colour" varchar(7) not null, primary key ("id"));`,
    );
    this.addSql('create unique index "tags_organization_name_unique" on "tags" ("organization_id", lower("name"));');
    this.addSql(
      'alter table "tags" add constraint "tags_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;',
    );
    this.addSql(
      `create table "post_tags" ("post_id" varchar(255) not null, "tag_id" varchar(255) not null, primary key ("post_id", "tag_id"));`,
    );
    this.addSql('create index "post_tags_tag_id_index" on "post_tags" ("tag_id");');
    for (const [column, table] of [
      ['post_id', 'posts'],
      ['tag_id', 'tags'],
    ] as const) {
      this.addSql(
        `alter table "post_tags" add constraint "post_tags_${column}_foreign" foreign key ("${column}") references "${table}" ("id") on update cascade on delete cascade;`,
      );
    }
    this.addSql(`alter table "series" add "tag_ids" jsonb not null default '[]';`);
    this.addSql(`alter table "feeds" add "tag_ids" jsonb not null default '[]';`);

    // post_page with a tag among its filters (a new signature: the old one goes).
    this.addSql('drop function if exists post_page(text, text, text, timestamptz, timestamptz, jsonb, timestamptz, text, int);');
    this.addSql(`create or replace function post_page(
  p_org text, p_status text, p_channel text, p_tag text, p_from timestamptz, p_to timestamptz,
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
      and (p_tag is null or exists (select 1 from post_tags t where t.post_id = p.id and t.tag_id = p_tag))
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
      where m.id in (select jsonb_array_elements_text(page.media_ids) from page)),
    'tags', (select coalesce(json_agg(t), '[]') from post_tags t where t.post_id in (select id from page))
  )::text
  into answer;
  return answer;
end
$$;`);

    // The announcement of Migration20261129020000_post_pages_notify, post_tags rows included (found through their post).
    this.addSql(`create or replace function post_pages_notify() returns trigger language plpgsql as $$
declare
  r jsonb := case when tg_op = 'DELETE' then to_jsonb(old) else to_jsonb(new) end;
  org text;
begin
  org := case tg_table_name
    when 'post_channels' then (select p.organization_id from posts p where p.id = r ->> 'post_id')
    when 'post_tags' then (select p.organization_id from posts p where p.id = r ->> 'post_id')
    when 'post_channel_items' then (select p.organization_id from post_channels pc join posts p on p.id = pc.post_id
      where pc.id = r ->> 'post_channel_id')
    else r ->> 'organization_id' end;
  -- A row deleted with its post (the cascade) finds no post: the post's own row announced it.
  if org is not null then
    perform pg_notify('postpilot_posts', org);
  end if;
  return null;
end $$;`);
    // Every column of a post_tags row is shown (a post's tagIds).
    this.addSql(
      'create trigger post_tags_pages_change after insert or update or delete on post_tags for each row execute function post_pages_notify();',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists post_tags_pages_change on post_tags;');
    this.addSql(await functionOf(new Migration20261129020000_post_pages_notify(this.driver, this.config), 'post_pages_notify'));
    this.addSql('drop function if exists post_page(text, text, text, text, timestamptz, timestamptz, jsonb, timestamptz, text, int);');
    this.addSql(await functionOf(new Migration20261127100000_post_threads(this.driver, this.config), 'post_page'));
    this.addSql('alter table "feeds" drop column if exists "tag_ids";');
    this.addSql('alter table "series" drop column if exists "tag_ids";');
    this.addSql('drop table if exists "post_tags" cascade;');
    this.addSql('drop table if exists "tags" cascade;');
  }
}
