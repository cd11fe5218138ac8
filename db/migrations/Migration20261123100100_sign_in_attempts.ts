// The sign-in throttle's counters (services/sign-in-throttle.ts), in Postgres so every API
// process shares them: one row per (email, client address) and per client address, each a fixed
// window of failed attempts.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123100100_sign_in_attempts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "sign_in_attempts" (
      "key" varchar(255) not null primary key,
      "failures" integer not null,
      "window_ends_at" timestamptz not null);`);
    this.addSql(`create index "sign_in_attempts_window_ends_at_index" on "sign_in_attempts" ("window_ends_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sign_in_attempts";`);
  }
}
