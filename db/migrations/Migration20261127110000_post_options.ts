// Per-platform post options (platforms/options.ts) on posts, by lower-case platform name.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127110000_post_options extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "posts" add "options" jsonb not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "posts" drop column if exists "options";');
  }
}
