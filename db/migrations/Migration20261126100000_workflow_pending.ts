// One protocol for every row that owns a workflow (docs/decisions.md "A row and its workflow"):
// posts, series and webhook deliveries each carry `workflow_pending`, set in the transaction that
// commits the row (or the change that needs a workflow) and cleared once the workflow is known to
// be started; the start reconciler starts a row still marked some seconds after it was marked.
// A delivery's `dispatched` is the same mark, inverted. An Idempotency-Key of a create names the
// post it created (`post_id`, claimed in the post's own transaction), so a create cut off after
// its commit answers its retry with that post, and a withdrawn post frees its key with it.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261126100000_workflow_pending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists "posts_workflow_pending_index";`);
    this.addSql(`create index "posts_workflow_pending_index" on "posts" ("updated_at") where "workflow_pending";`);
    this.addSql(`alter table "series" add column "workflow_pending" boolean not null default false;`);
    this.addSql(`create index "series_workflow_pending_index" on "series" ("updated_at") where "workflow_pending";`);
    this.addSql(`alter table "webhook_deliveries" add column "workflow_pending" boolean not null default false;`);
    this.addSql(`update "webhook_deliveries" set "workflow_pending" = true where not "dispatched";`);
    this.addSql(`drop index if exists "webhook_deliveries_undispatched_index";`);
    this.addSql(`alter table "webhook_deliveries" drop column "dispatched";`);
    this.addSql(
      `create index "webhook_deliveries_workflow_pending_index" on "webhook_deliveries" ("created_at") where "workflow_pending";`,
    );
    this.addSql(`alter table "idempotency_keys" add column "post_id" varchar(255) null;`);
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_post_id_foreign" foreign key ("post_id") references "posts" ("id") on delete cascade;`,
    );
    this.addSql(`create index "idempotency_keys_post_id_index" on "idempotency_keys" ("post_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "idempotency_keys" drop column if exists "post_id";`);
    this.addSql(`drop index if exists "webhook_deliveries_workflow_pending_index";`);
    this.addSql(`alter table "webhook_deliveries" add column "dispatched" boolean not null default false;`);
    this.addSql(`update "webhook_deliveries" set "dispatched" = not "workflow_pending";`);
    this.addSql(`alter table "webhook_deliveries" drop column "workflow_pending";`);
    this.addSql(`create index "webhook_deliveries_undispatched_index" on "webhook_deliveries" ("created_at") where not "dispatched";`);
    this.addSql(`drop index if exists "series_workflow_pending_index";`);
    this.addSql(`alter table "series" drop column if exists "workflow_pending";`);
    this.addSql(`drop index if exists "posts_workflow_pending_index";`);
    this.addSql(`create index "posts_workflow_pending_index" on "posts" ("created_at") where "workflow_pending";`);
  }
}
