// The web application: people who sign in (users), their sessions, and OAuth flows in progress.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261121070000_web extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "users" (
      "id" varchar(255) not null primary key,
      "organization_id" varchar(255) not null references "organizations" ("id") on delete cascade,
      "email" varchar(320) not null,
      "password_hash" text not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null);`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`create index "users_organization_id_index" on "users" ("organization_id");`);
    this.addSql(`create table "sessions" (
      "id" varchar(64) not null primary key,
      "user_id" varchar(255) not null references "users" ("id") on delete cascade,
      "organization_id" varchar(255) not null references "organizations" ("id") on delete cascade,
      "csrf_token" varchar(64) not null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz not null,
      "last_seen_at" timestamptz not null);`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`create index "sessions_expires_at_index" on "sessions" ("expires_at");`);
    this.addSql(`create table "oauth_grants" (
      "id" varchar(64) not null primary key,
      "state_hash" varchar(64) null,
      "user_id" varchar(255) not null references "users" ("id") on delete cascade,
      "organization_id" varchar(255) not null references "organizations" ("id") on delete cascade,
      "platform" text not null,
      "channel_id" varchar(255) null,
      "channel_name" varchar(255) not null,
      "code_verifier" varchar(128) null,
      "redirect_uri" text not null,
      "credentials_encrypted" text null,
      "expires_at" timestamptz not null,
      "created_at" timestamptz not null);`);
    this.addSql(`alter table "oauth_grants" add constraint "oauth_grants_state_hash_unique" unique ("state_hash");`);
    this.addSql(`create index "oauth_grants_user_id_index" on "oauth_grants" ("user_id");`);
    this.addSql(
      `alter table "oauth_grants" add constraint "oauth_grants_platform_check" check ("platform" in ('X', 'BLUESKY', 'THREADS', 'LINKEDIN', 'MASTODON', 'INSTAGRAM', 'FACEBOOK', 'TIKTOK', 'YOUTUBE', 'PINTEREST', 'REDDIT', 'TELEGRAM', 'DISCORD'));`,
    );
  }

  override async down(): Promise<void> {
    for (const table of ['oauth_grants', 'sessions', 'users']) this.addSql(`drop table if exists "${table}" cascade;`);
  }
}
