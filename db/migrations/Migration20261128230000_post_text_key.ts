// duplicate_post looks a channel's text up by its key, through an index, instead of normalizing
// every post of the channel's last and next 24 hours on each create (domain/posts/create.ts
// assertNotDuplicate). post_text_normalized is the rule in SQL (trimmed, whitespace runs as one
// space, as normalizeText does); the index holds its MD5 as the key, and the text itself is still
// compared, so a collision changes nothing.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128230000_post_text_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function "post_text_normalized"(t text) returns text language sql immutable parallel safe
         as $$ select btrim(regexp_replace(t, '[[:space:]]+', ' ', 'g')) $$;`,
    );
    // The key in the index is md5(post_text_normalized(content)): a function called by name inside
    // another function's body would be looked up on the search path, which index maintenance narrows.
    this.addSql(
      `create index "post_channels_channel_id_text_key_index" on "post_channels" ("channel_id", md5(post_text_normalized("content")));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "post_channels_channel_id_text_key_index";`);
    this.addSql(`drop function if exists "post_text_normalized"(text);`);
  }
}
