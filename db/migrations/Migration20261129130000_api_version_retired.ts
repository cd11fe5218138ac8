// A channel (or a reply) fails with api_version_retired when the platform no longer serves the
// API version the connector sent (platforms/api-versions.ts).
import { Migration } from '@mikro-orm/migrations';

const TABLES = ['post_channels', 'post_channel_items', 'comment_replies'];
const BEFORE = `'reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown', 'not_approved'`;

export class Migration20261129130000_api_version_retired extends Migration {
  override async up(): Promise<void> {
    for (const table of TABLES) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_error_code_check";`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_error_code_check" check ("error_code" in (${BEFORE}, 'api_version_retired'));`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of TABLES) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_error_code_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_error_code_check" check ("error_code" in (${BEFORE}));`);
    }
  }
}
