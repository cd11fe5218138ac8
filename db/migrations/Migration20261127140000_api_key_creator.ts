// The member who made an API key (domain/members.ts revokes a member's keys when they leave, and
// those whose scopes their new role no longer allows).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127140000_api_key_creator extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "api_keys" add "created_by_user_id" varchar(255) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "api_keys" drop column if exists "created_by_user_id";');
  }
}
