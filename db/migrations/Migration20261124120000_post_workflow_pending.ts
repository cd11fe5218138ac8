// Create commits the post first and starts its workflow after (docs/decisions.md "Creates not
// serialised behind Temporal"): `workflow_pending` marks a committed post whose workflow is not
// known to be started, for the create reconciler. Existing rows all have their workflow: false.
// A constant default adds the column without rewriting the table.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124120000_post_workflow_pending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "posts" add column "workflow_pending" boolean not null default false;`);
    this.addSql(`create index "posts_workflow_pending_index" on "posts" ("created_at") where "workflow_pending";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "posts_workflow_pending_index";`);
    this.addSql(`alter table "posts" drop column if exists "workflow_pending";`);
  }
}
