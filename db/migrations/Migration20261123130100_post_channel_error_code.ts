// Failures a program can act on (docs/decisions.md): a failed channel's class beside its human
// `error`. Nullable, no default: adding them rewrites no row, and channels that failed before
// have no class (the API shows them as `unknown`, services/posts.ts).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123130100_post_channel_error_code extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "post_channels" add column "error_code" text null, add column "retryable" boolean null;`);
    this.addSql(
      `alter table "post_channels" add constraint "post_channels_error_code_check" check ("error_code" in ('reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "post_channels" drop constraint if exists "post_channels_error_code_check";`);
    this.addSql(`alter table "post_channels" drop column if exists "retryable", drop column if exists "error_code";`);
  }
}
