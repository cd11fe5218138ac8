// An upload's media item owns its upload workflow and follows the protocol of every such row
// (docs/decisions.md "A row and its workflow"): `workflow_pending` from its commit until its
// workflow is known to be started.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261126100100_media_workflow_pending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_items" add column "workflow_pending" boolean not null default false;`);
    this.addSql(`create index "media_items_workflow_pending_index" on "media_items" ("created_at") where "workflow_pending";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "media_items_workflow_pending_index";`);
    this.addSql(`alter table "media_items" drop column if exists "workflow_pending";`);
  }
}
