// Deleting a post keeps its row (docs/decisions.md "Cancel, delete and retry"): `deleted_at` marks
// it removed from the API, the web app and the plan's counts. Nullable, no default: adding it
// rewrites no row.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123130000_post_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "posts" add column "deleted_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "posts" drop column if exists "deleted_at";`);
  }
}
