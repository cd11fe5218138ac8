// A feed held by the read that claimed it (domain/feeds/poll.ts), so that a read asked for and the
// sweep's claim exclude each other.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261128130000_feed_read_hold extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "feeds" add column "read_until" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "feeds" drop column "read_until";`);
  }
}
