// Every migration, in order. Add new ones at the end (name = class name).
import { Migration20261121000000_initial } from './Migration20261121000000_initial.ts';
import { Migration20261121060000_limits } from './Migration20261121060000_limits.ts';
import { Migration20261121070000_web } from './Migration20261121070000_web.ts';
import { Migration20261123100000_idempotency_per_key } from './Migration20261123100000_idempotency_per_key.ts';
import { Migration20261123100100_sign_in_attempts } from './Migration20261123100100_sign_in_attempts.ts';
import { Migration20261123110000_media_final_key } from './Migration20261123110000_media_final_key.ts';
import { Migration20261123120000_entity_schema } from './Migration20261123120000_entity_schema.ts';
import { Migration20261123130000_post_lifecycle } from './Migration20261123130000_post_lifecycle.ts';
import { Migration20261123130100_post_channel_error_code } from './Migration20261123130100_post_channel_error_code.ts';
import { Migration20261123140000_webhooks } from './Migration20261123140000_webhooks.ts';
import { Migration20261124170000_user_time_zone } from './Migration20261124170000_user_time_zone.ts';
import { Migration20261124160000_queues_and_series } from './Migration20261124160000_queues_and_series.ts';
import { Migration20261124120000_post_workflow_pending } from './Migration20261124120000_post_workflow_pending.ts';
import { Migration20261124110000_post_page } from './Migration20261124110000_post_page.ts';
import { Migration20261124100000_webhook_auto_disable } from './Migration20261124100000_webhook_auto_disable.ts';
import { Migration20261126100000_workflow_pending } from './Migration20261126100000_workflow_pending.ts';
import { Migration20261126100100_media_workflow_pending } from './Migration20261126100100_media_workflow_pending.ts';
import { Migration20261126100200_idempotency_series_claim } from './Migration20261126100200_idempotency_series_claim.ts';
import { Migration20261126120000_post_page_rows } from './Migration20261126120000_post_page_rows.ts';
import { Migration20261126200000_admission_notify } from './Migration20261126200000_admission_notify.ts';
import { Migration20261126210000_post_metrics } from './Migration20261126210000_post_metrics.ts';
import { Migration20261127100000_post_threads } from './Migration20261127100000_post_threads.ts';

export const MIGRATIONS = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261121060000_limits', class: Migration20261121060000_limits },
  { name: 'Migration20261121070000_web', class: Migration20261121070000_web },
  { name: 'Migration20261123100000_idempotency_per_key', class: Migration20261123100000_idempotency_per_key },
  { name: 'Migration20261123100100_sign_in_attempts', class: Migration20261123100100_sign_in_attempts },
  { name: 'Migration20261123110000_media_final_key', class: Migration20261123110000_media_final_key },
  { name: 'Migration20261123120000_entity_schema', class: Migration20261123120000_entity_schema },
  { name: 'Migration20261123130000_post_lifecycle', class: Migration20261123130000_post_lifecycle },
  { name: 'Migration20261123130100_post_channel_error_code', class: Migration20261123130100_post_channel_error_code },
  { name: 'Migration20261123140000_webhooks', class: Migration20261123140000_webhooks },
  { name: 'Migration20261124170000_user_time_zone', class: Migration20261124170000_user_time_zone },
  { name: 'Migration20261124160000_queues_and_series', class: Migration20261124160000_queues_and_series },
  { name: 'Migration20261124120000_post_workflow_pending', class: Migration20261124120000_post_workflow_pending },
  { name: 'Migration20261124110000_post_page', class: Migration20261124110000_post_page },
  { name: 'Migration20261124100000_webhook_auto_disable', class: Migration20261124100000_webhook_auto_disable },
  { name: 'Migration20261126100000_workflow_pending', class: Migration20261126100000_workflow_pending },
  { name: 'Migration20261126100100_media_workflow_pending', class: Migration20261126100100_media_workflow_pending },
  { name: 'Migration20261126100200_idempotency_series_claim', class: Migration20261126100200_idempotency_series_claim },
  { name: 'Migration20261126120000_post_page_rows', class: Migration20261126120000_post_page_rows },
  { name: 'Migration20261126200000_admission_notify', class: Migration20261126200000_admission_notify },
  { name: 'Migration20261126210000_post_metrics', class: Migration20261126210000_post_metrics },
  { name: 'Migration20261127100000_post_threads', class: Migration20261127100000_post_threads },
];
