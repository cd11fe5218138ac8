// Webhooks, rest of issue 14: when an endpoint was disabled (by its owner, a 410 Gone, or days of
// failed deliveries), and a partial index for the outbox sweep (rows whose workflow was not started).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124100000_webhook_auto_disable extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "disabled_at" timestamptz null, add column "resumed_at" timestamptz null;`);
    this.addSql(`create index "webhook_deliveries_undispatched_index" on "webhook_deliveries" ("created_at") where not "dispatched";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_undispatched_index";`);
    this.addSql(`alter table "webhook_endpoints" drop column if exists "disabled_at", drop column if exists "resumed_at";`);
  }
}
