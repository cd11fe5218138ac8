// Uploaded bytes are copied to a key no upload URL names before they are checked and served
// (docs/decisions.md "Uploaded bytes"): the upload's own key gets its column. Rows from before
// keep serving their upload key (their URLs expired 15 minutes after creation). Also which API
// key created the upload, for what a channel-limited key may see.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123110000_media_final_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "media_items" add column "upload_key" varchar(255) null;`);
    this.addSql(`update "media_items" set "upload_key" = "storage_key";`);
    this.addSql(`alter table "media_items" alter column "upload_key" set not null;`);
    this.addSql(`alter table "media_items" add column "api_key_id" varchar(255) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "media_items" drop column if exists "api_key_id";`);
    this.addSql(`alter table "media_items" drop column if exists "upload_key";`);
  }
}
