import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { POST_SOURCES } from './post.ts';
import type { PlatformOptions } from '../../platforms/options.ts';

// Recurring posts (docs/api.md "Recurring posts (series)"): a series is a post template and a rule;
// its workflow (workflows/series.ts) creates each occurrence as an ordinary post shortly before
// its time, so an edit of the series applies to every occurrence not yet created.

export const SERIES_FREQUENCIES = ['day', 'week', 'month'] as const;
export type SeriesFrequency = (typeof SERIES_FREQUENCIES)[number];
/**
 * active: occurrences to come; paused: its maker may no longer make its posts (pausedReason; a
 * current member resumes it); ended: its rule has no more (count or until reached); stopped: deleted.
 */
export const SERIES_STATUSES = ['active', 'paused', 'ended', 'stopped'] as const;
export type SeriesStatus = (typeof SERIES_STATUSES)[number];

export const Series = defineEntity({
  name: 'Series',
  tableName: 'series',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    status: p.enum(SERIES_STATUSES).default('active'),
    content: p.text(),
    contentByPlatform: p.json<Record<string, string>>().default('{}'),
    reddit: p.json<{ subreddit: string; title: string }>().nullable(),
    /** Per-platform post options (platforms/options.ts) each occurrence gets. */
    options: p.json<PlatformOptions>().default('{}'),
    mediaIds: p.json<string[]>().default('[]'),
    channelIds: p.json<string[]>(),
    /** The organization's tags (domain/tags.ts) each occurrence gets, in id order. */
    tagIds: p.json<string[]>().default('[]'),
    source: p.enum(POST_SOURCES),
    /** The key that created it (null for the web application); its channel list limits the occurrences. */
    apiKeyId: p.string().nullable(),
    /** The first occurrence; the rule repeats its local wall time in `timeZone`. */
    startAt: p.datetime(),
    timeZone: p.string().length(64),
    every: p.enum(SERIES_FREQUENCIES),
    interval: p.integer().default(1),
    until: p.datetime().nullable(),
    count: p.integer().nullable(),
    /** Occurrences created so far (also the number of the next one: its post id is derived from it). */
    occurrencesCreated: p.integer().default(0),
    /** The rule time of the last occurrence created; the next is the rule's first time after it. */
    lastOccurrenceAt: p.datetime().nullable(),
    /** Why the last occurrence could not be created (it was skipped), e.g. a channel to reconnect. */
    lastError: p.json<{ at: string; code: string; message: string }>().nullable(),
    /** Why it is paused (its maker left, lost the role, or its key was revoked or expired). */
    pausedReason: p.text().nullable(),
    workflowId: p.string(),
    /** Committed, its workflow not known to be started (domain/workflow-starts.ts). */
    workflowPending: p.boolean().default(false),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [
    {
      name: 'series_workflow_pending_index',
      expression: 'create index "series_workflow_pending_index" on "series" ("updated_at") where "workflow_pending"',
    },
  ],
});
export type ISeries = InferEntity<typeof Series>;
