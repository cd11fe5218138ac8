// Each person's time zone (#17): the web app shows and takes times in it. Null until set — on
// the first sign-in the browser's zone is stored (web/settings.ts), later on the settings page.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261124170000_user_time_zone extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "users" add column "time_zone" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "users" drop column if exists "time_zone";`);
  }
}
