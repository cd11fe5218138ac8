// Approval before publishing (domain/posts/approval.ts): the organization's setting, a key that
// asks for approval of its posts, and each post's approval. Existing organizations get `none`
// and existing posts no approval: nothing changes for them.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127170000_approval extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "organizations" add "approval" text check ("approval" in ('none', 'contributors', 'everyone')) not null default 'contributors';`,
    );
    this.addSql(`alter table "organizations" add "preview_decisions" boolean not null default false;`);
    this.addSql('alter table "api_keys" add "requires_approval" boolean not null default false;');
    this.addSql('alter table "posts" add "approval" jsonb null;');
    // A post whose approval did not come in time fails its channels with not_approved.
    for (const table of ['post_channels', 'post_channel_items']) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_error_code_check";`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_error_code_check" check ("error_code" in ('reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown', 'not_approved'));`,
      );
    }
    // The Approvals view: the organization's scheduled posts that need approval.
    this.addSql(
      `create index "posts_approval_pending_index" on "posts" ("organization_id", "scheduled_at") where "approval" is not null and "status" = 'scheduled';`,
    );
  }

  override async down(): Promise<void> {
    for (const table of ['post_channels', 'post_channel_items']) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_error_code_check";`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_error_code_check" check ("error_code" in ('reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown'));`,
      );
    }
    this.addSql('drop index if exists "posts_approval_pending_index";');
    this.addSql('alter table "posts" drop column if exists "approval";');
    this.addSql('alter table "api_keys" drop column if exists "requires_approval";');
    this.addSql('alter table "organizations" drop column if exists "preview_decisions";');
    this.addSql('alter table "organizations" drop column if exists "approval";');
  }
}
