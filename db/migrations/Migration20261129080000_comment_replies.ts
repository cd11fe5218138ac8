// Replies to comments sent through the service (db/entities/comment.ts CommentReply), the claim of
// an Idempotency-Key by the reply it made, and a comment's last hide or show-again.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261129080000_comment_replies extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "comment_replies" ("id" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" varchar(255) not null, "comment_id" varchar(255) not null, "channel_id" varchar(255) not null, "content" text not null, "status" text not null, "approval" jsonb null, "created_by" jsonb not null, "platform_reply_id" text null, "url" text null, "published_at" timestamptz null, "error" text null, "error_code" text null, "retryable" boolean null, "attempts" int not null default 0, "workflow_pending" boolean not null default true, primary key ("id"));`,
    );
    this.addSql('create index "comment_replies_comment_id_index" on "comment_replies" ("comment_id");');
    this.addSql('create index "comment_replies_pending_index" on "comment_replies" ("created_at") where "workflow_pending";');
    this.addSql('alter table "comments" add "moderation" jsonb null;');
    this.addSql('alter table "idempotency_keys" add "reply_id" varchar(255) null;');
    this.addSql(
      'alter table "idempotency_keys" add constraint "idempotency_keys_reply_id_foreign" foreign key ("reply_id") references "comment_replies" ("id") on delete cascade;',
    );
    this.addSql('create index "idempotency_keys_reply_id_index" on "idempotency_keys" ("reply_id");');
    for (const [column, table] of [
      ['organization_id', 'organizations'],
      ['comment_id', 'comments'],
      ['channel_id', 'channels'],
    ] as const) {
      this.addSql(
        `alter table "comment_replies" add constraint "comment_replies_${column}_foreign" foreign key ("${column}") references "${table}" ("id") on delete cascade;`,
      );
    }
    this.addSql(
      `alter table "comment_replies" add constraint "comment_replies_status_check" check ("status" in ('pending_approval', 'publishing', 'published', 'failed', 'rejected', 'deleting', 'deleted'));`,
    );
    this.addSql(
      `alter table "comment_replies" add constraint "comment_replies_error_code_check" check ("error_code" in ('reauth_required', 'rate_limited', 'rejected_content', 'media_rejected', 'platform_unavailable', 'may_have_posted', 'unknown', 'not_approved'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table "idempotency_keys" drop column if exists "reply_id";');
    this.addSql('alter table "comments" drop column if exists "moderation";');
    this.addSql('drop table if exists "comment_replies" cascade;');
  }
}
