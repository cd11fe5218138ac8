// Per-platform post options (platforms/options.ts) on a series' template, given to each occurrence.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127120000_series_options extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "series" add "options" jsonb not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "series" drop column if exists "options";');
  }
}
