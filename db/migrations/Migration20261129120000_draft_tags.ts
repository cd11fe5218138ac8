// A draft's tags (domain/posts/drafts.ts): a list of the organization's tag ids, as a series and a
// feed keep theirs, given to the post it becomes.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261129120000_draft_tags extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "drafts" add "tag_ids" jsonb not null default '[]';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "drafts" drop column if exists "tag_ids";');
  }
}
