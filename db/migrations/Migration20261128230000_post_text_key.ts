// duplicate_post looks a channel's text up by its key, through an index, instead of normalizing
// every post of the channel's last and next 24 hours on each create (domain/posts/create.ts
// assertNotDuplicate). The key is the normalized text's MD5: trimmed, whitespace runs as one space,
// as normalizeText does; the text itself is still compared, so a collision changes nothing.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128230000_post_text_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function "post_text_key"(t text) returns text language sql immutable parallel safe
         as $$ select md5(btrim(regexp_replace(t, '[[:space:]]+', ' ', 'g'))) $$;`,
    );
    this.addSql(`create index "post_channels_channel_id_text_key_index" on "post_channels" ("channel_id", post_text_key("content"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "post_channels_channel_id_text_key_index";`);
    this.addSql(`drop function if exists "post_text_key"(text);`);
  }
}
