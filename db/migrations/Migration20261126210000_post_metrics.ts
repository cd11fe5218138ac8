// Metrics of published channel posts (domain/analytics/metrics.ts): each reading a row of
// post_metrics, and on post_channels the step and time of the next scheduled reading. Posts
// published before this migration are followed from their next step's time. posts.metrics_refreshed_at:
// the last reading asked for (domain/analytics/refresh.ts).
import { Migration } from '@mikro-orm/migrations';

export class Migration20261126210000_post_metrics extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create table "post_metrics" ("id" varchar(255) not null, "post_channel_id" varchar(255) not null, "step" int null, "measured_at" timestamptz not null, "metrics" jsonb not null, primary key ("id"));',
    );
    this.addSql('create index "post_metrics_post_channel_id_measured_at_index" on "post_metrics" ("post_channel_id", "measured_at");');
    this.addSql('alter table "post_metrics" add constraint "post_metrics_post_channel_id_step_unique" unique ("post_channel_id", "step");');
    this.addSql(
      'alter table "post_metrics" add constraint "post_metrics_post_channel_id_foreign" foreign key ("post_channel_id") references "post_channels" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "post_channels" add "metrics_step" int not null default 0, add "metrics_next_at" timestamptz null, add "metrics_error" text null;',
    );
    this.addSql('create index "post_channels_metrics_next_at_index" on "post_channels" ("metrics_next_at");');
    this.addSql('alter table "posts" add "metrics_refreshed_at" timestamptz null;');
    // Already published: the first reading an hour after publishing, or now if that has passed.
    this.addSql(`update "post_channels" set "metrics_next_at" = greatest("published_at" + interval '1 hour', now())
      where "status" = 'published' and "published_at" is not null and "published_at" > now() - interval '30 days'
        and "platform" not in ('TELEGRAM', 'DISCORD');`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "post_metrics" cascade;');
    this.addSql('drop index if exists "post_channels_metrics_next_at_index";');
    this.addSql('alter table "posts" drop column if exists "metrics_refreshed_at";');
    this.addSql(
      'alter table "post_channels" drop column if exists "metrics_step", drop column if exists "metrics_next_at", drop column if exists "metrics_error";',
    );
  }
}
