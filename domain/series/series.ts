// Recurring posts (docs/api.md "Recurring posts"): a series is a post template and a rule
// (every day, week or month, `interval`, until and/or count) in an IANA zone. Its workflow
// (workflows/series.ts) creates each occurrence as an ordinary post OCCURRENCE_LEAD_MS before its
// time through createPost (so validation, webhooks, PATCH, DELETE and retry all apply), with a
// post id fixed per (series, occurrence number): a repeated create finds the post instead of
// making a second one. Edits apply to occurrences not yet created.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import { Post, Series, type ISeries, type SeriesFrequency, type SeriesStatus } from '../../db/entities/index.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { parseInstant } from '../../lib/date-time.ts';
import { checkTimeZone } from '../../lib/zoned-time.ts';
import { ORGANIZATION_ID } from '../../workflows/search-attributes.ts';
import { SERIES_WORKFLOW_TYPE, seriesChangedSignal, seriesWorkflowId, type SeriesWorkflowInput } from '../../workflows/series-types.ts';
import { sql } from '../../db/sql.ts';
import { type PendingKind, startAfterCommit } from '../workflow-starts.ts';
import type { MediaViewer } from '../media.ts';
import { cancelPost } from '../posts/lifecycle.ts';
import {
  assertChannelsUsable,
  channelTexts,
  LATEST_PUBLISH_AT,
  loadPostMedia,
  loadTargetChannels,
  parsePublishAt,
} from '../posts/checks.ts';
import { assertKeyUnclaimed, type IdempotencyClaim, recordClaim } from '../idempotency-claim.ts';
import { keySees } from '../key-channels.ts';
import type { PostTemplateRequest } from '../posts/create.ts';
import { liveOptionProblems, optionProblems, redditFromOptions, type OptionsInput } from '../posts/options.ts';
import type { PlatformOptions } from '../../platforms/options.ts';
import { liveCapabilitiesOf, type CapabilityDeps } from '../capabilities.ts';
import { organizationTimeZone } from '../queues/queues.ts';
import { nextOccurrence, occurrencesBetween, type SeriesRule } from './rule.ts';
import { withTemporalDeadline, type TemporalDeps } from '../temporal-calls.ts';
import { checkTagIds } from '../tags.ts';

/** The columns of a series the start protocol reads. */
export interface SeriesStartRow {
  id: string;
  organization_id: string;
  status: string;
  deleted_at: Date | null;
}

/** A series as a row of the start protocol (domain/workflow-starts.ts): one workflow per series, for as long as it is active. */
export const SERIES_STARTS: PendingKind<SeriesStartRow> = {
  table: 'series',
  markedAt: 'updated_at',
  columns: 'id, organization_id, status, deleted_at',
  startFor: (row) =>
    row.status !== 'active' || row.deleted_at !== null
      ? null
      : {
          workflowType: SERIES_WORKFLOW_TYPE,
          options: {
            workflowId: seriesWorkflowId(row.id),
            // Committed before the start: the workflow need not wait for its row.
            args: [{ seriesId: row.id, organizationId: row.organization_id, confirmed: true } satisfies SeriesWorkflowInput],
            // A resumed series starts again under its id once its paused run has closed.
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
            typedSearchAttributes: [{ key: ORGANIZATION_ID, value: row.organization_id }],
          },
        },
  async withdraw(tx, row) {
    await sql(tx, 'delete from series where id = ?', [row.id]);
  },
};

export const MAX_INTERVAL = 365;
export const MAX_COUNT = 1000;

export interface RepeatInput {
  every: SeriesFrequency;
  /** Every `interval` days/weeks/months; default 1. */
  interval?: number;
  /** ISO 8601 with an offset: no occurrence after it. */
  until?: string | null;
  /** At most this many occurrences (the first included). */
  count?: number | null;
}

export interface SeriesView {
  id: string;
  status: SeriesStatus;
  content: string;
  contentByPlatform: Record<string, string>;
  channelIds: string[];
  mediaIds: string[];
  /** The organization's tags each occurrence gets (domain/tags.ts), in id order. */
  tagIds: string[];
  reddit: { subreddit: string; title: string } | null;
  /** Per-platform post options each occurrence gets (as on a post). */
  options: Record<string, Record<string, unknown>>;
  /** The first occurrence. */
  publishAt: string;
  /** The zone the rule keeps the local time of day in. */
  timeZone: string;
  repeat: { every: SeriesFrequency; interval: number; until: string | null; count: number | null };
  /** Occurrences created (or skipped) so far. */
  occurrencesCreated: number;
  /** When the next occurrence is due; null when none is left. */
  nextOccurrenceAt: string | null;
  /** Why the last occurrence that could not be created was skipped; null when none was. */
  lastError: { at: string; code: string; message: string } | null;
  /** Why it is paused (its maker may no longer make its posts); null when it is not. */
  pausedReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateSeriesRequest extends PostTemplateRequest {
  /** The first occurrence, ISO 8601 with an offset. */
  publishAt: string;
  repeat: RepeatInput;
  /** IANA zone of the rule; default: the organization's. */
  timeZone?: string;
  now: Date;
  /** The request's Idempotency-Key, claimed in the series' own transaction (domain/idempotency-claim.ts). */
  claim?: IdempotencyClaim;
}

/** The fields PATCH /v1/series/{id} may change; each applies to occurrences not yet created. */
export interface SeriesEdit {
  content?: string;
  contentByPlatform?: Record<string, string>;
  channelIds?: string[];
  mediaIds?: string[];
  reddit?: { subreddit: string; title: string } | null;
  /** Replaces the options. */
  options?: OptionsInput;
  /** Replaces the tags. */
  tagIds?: string[];
  /** Moves the first occurrence (the rule's anchor): only before any occurrence was created. */
  publishAt?: string;
  repeat?: RepeatInput;
  timeZone?: string;
  /** `active` resumes a paused series: the key that resumes it becomes its maker (domain/makers.ts). */
  status?: 'active';
}

export interface FutureOccurrence {
  seriesId: string;
  /** The occurrence's number (0 = the first); null when not worked out (a long-running series without a count). */
  index: number | null;
  at: string;
  content: string;
  channelIds: string[];
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function ruleOf(s: ISeries): SeriesRule {
  return { startAt: s.startAt, timeZone: s.timeZone, every: s.every, interval: s.interval, until: s.until ?? null, count: s.count ?? null };
}

/** The post id of a series' occurrence: fixed per (series, number), so creating it twice finds the first. */
export const occurrencePostId = (seriesId: string, index: number) => `post_${seriesId.replace(/^ser_/, '')}_${index}`;

export function seriesView(s: ISeries): SeriesView {
  const next = s.status === 'active' ? nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null) : null;
  return {
    id: s.id,
    status: s.status,
    content: s.content,
    contentByPlatform: s.contentByPlatform ?? {},
    channelIds: s.channelIds,
    mediaIds: s.mediaIds ?? [],
    tagIds: s.tagIds ?? [],
    reddit: s.reddit ?? null,
    options: (s.options ?? {}) as Record<string, Record<string, unknown>>,
    publishAt: s.startAt.toISOString(),
    timeZone: s.timeZone,
    repeat: { every: s.every, interval: s.interval, until: iso(s.until), count: s.count ?? null },
    occurrencesCreated: s.occurrencesCreated,
    nextOccurrenceAt: iso(next),
    lastError: s.lastError ?? null,
    pausedReason: s.status === 'paused' ? (s.pausedReason ?? null) : null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** The rule's fields checked; `fields` collects every problem (path under `repeat.`). */
function checkRepeat(
  repeat: RepeatInput,
  startAt: Date | undefined,
  fields: FieldError[],
): { interval: number; until: Date | null; count: number | null } {
  const interval = repeat.interval ?? 1;
  if (!Number.isInteger(interval) || interval < 1 || interval > MAX_INTERVAL)
    fields.push({ path: 'repeat.interval', message: `must be an integer from 1 to ${MAX_INTERVAL}` });
  const count = repeat.count ?? null;
  if (count !== null && (!Number.isInteger(count) || count < 1 || count > MAX_COUNT))
    fields.push({ path: 'repeat.count', message: `must be an integer from 1 to ${MAX_COUNT}` });
  let until: Date | null = null;
  if (repeat.until !== undefined && repeat.until !== null) {
    until = parseInstant(repeat.until, 'repeat.until', fields) ?? null;
    if (until && until >= LATEST_PUBLISH_AT) {
      // Postgres cannot store an instant past year 9999 (a 500 otherwise).
      fields.push({ path: 'repeat.until', message: `must be before ${LATEST_PUBLISH_AT.toISOString()}` });
      until = null;
    } else if (until && startAt && until < startAt)
      fields.push({ path: 'repeat.until', message: 'must not be before publishAt (the first occurrence)' });
  }
  return { interval, until, count };
}

/** The rule's zone (lib/zoned-time.ts checkTimeZone); UTC stands in for a refused one until the 422 is thrown. */
function checkZone(tz: string, fields: FieldError[]): string {
  return checkTimeZone(tz, 'timeZone', fields) ?? 'UTC';
}

/** Whether options carry the Reddit target (then they replace the stored one). */
const namesSubreddit = (o: OptionsInput | undefined) => o?.reddit?.subreddit !== undefined || o?.reddit?.title !== undefined;

interface Template {
  channelIds: string[];
  content: string;
  contentByPlatform: Record<string, string>;
  mediaIds: string[];
  reddit: ISeries['reddit'];
  options: OptionsInput;
}

/**
 * The template checked as a post would be (channels, key's list, media, each channel's text, the
 * options: domain/posts/options.ts); returns its Reddit target and options as stored.
 */
async function checkTemplate(
  em: EntityManager,
  organizationId: string,
  key: MediaViewer | null,
  t: Template,
  newChannelsOnly?: string[],
  capabilities?: CapabilityDeps,
): Promise<{ reddit: ISeries['reddit']; options: PlatformOptions }> {
  const channels = await loadTargetChannels(em, organizationId, t.channelIds, key?.channels ?? 'all');
  assertChannelsUsable(newChannelsOnly ? channels.filter((c) => !newChannelsOnly.includes(c.id)) : channels);
  const media = await loadPostMedia(em, organizationId, t.mediaIds, key ?? undefined);
  const fields: FieldError[] = [];
  const { reddit, options } = redditFromOptions(t.reddit ?? null, t.options, fields);
  fields.push(...optionProblems(channels, options, media));
  channelTexts(channels, { content: t.content, contentByPlatform: t.contentByPlatform, media, reddit }, fields);
  if (capabilities) {
    const problems = liveOptionProblems(channels, await liveCapabilitiesOf(capabilities, channels, reddit?.subreddit), {
      options,
      media,
      reddit,
    });
    if (problems.length) throw errors.validation(problems);
  }
  return { reddit, options };
}

/**
 * POST /v1/series: the template is checked as a post would be; the row is committed, then its
 * workflow started (domain/workflow-starts.ts).
 */
export async function createSeries(em: EntityManager, temporal: TemporalDeps | undefined, r: CreateSeriesRequest): Promise<SeriesView> {
  const fields: FieldError[] = [];
  const startAt = parsePublishAt(r.publishAt, r.now, fields);
  const rule = checkRepeat(r.repeat, startAt, fields);
  const timeZone = r.timeZone !== undefined ? checkZone(r.timeZone, fields) : await organizationTimeZone(em, r.organization.id);
  if (fields.length) throw errors.validation(fields);
  const { reddit, options } = await checkTemplate(
    em,
    r.organization.id,
    r.key,
    { ...r, options: r.options ?? {} },
    undefined,
    r.capabilities,
  );
  const tagIds = await checkTagIds(em, r.organization.id, r.tagIds ?? []);
  if (!temporal) throw new Error('Temporal is not configured');
  const id = newId('ser');
  await em.transactional(async (tx) => {
    if (r.claim) await assertKeyUnclaimed(tx, r.claim);
    tx.create(Series, {
      id,
      organization: r.organization.id,
      status: 'active',
      content: r.content,
      contentByPlatform: r.contentByPlatform,
      reddit,
      options,
      mediaIds: r.mediaIds,
      channelIds: r.channelIds,
      tagIds,
      source: r.source,
      apiKeyId: r.key?.apiKeyId ?? null,
      startAt: startAt!,
      timeZone,
      every: r.repeat.every,
      interval: rule.interval,
      until: rule.until,
      count: rule.count,
      workflowId: seriesWorkflowId(id),
      workflowPending: true,
    });
    await tx.flush();
    if (r.claim) await recordClaim(tx, r.claim, { table: 'series', id });
  });
  const row = { id, organization_id: r.organization.id, status: 'active', deleted_at: null };
  await startAfterCommit(em, temporal, SERIES_STARTS, row, {
    withdrawn: 'Scheduling is unavailable right now; the series was not created. Retry shortly.',
    kept: 'Scheduling is unavailable right now; the series was saved and starts once it is back. Check GET /v1/series before retrying.',
  });
  return seriesView(await em.fork().findOneOrFail(Series, { id }));
}

async function findSeries(
  em: EntityManager,
  organizationId: string,
  id: string,
  keyChannels: 'all' | string[],
  lock = false,
): Promise<ISeries> {
  if (id.includes('\u0000')) throw errors.notFound('Series');
  const s = await em.findOne(
    Series,
    { id, organization: organizationId, deletedAt: null },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!s || !keySees(keyChannels, s.channelIds)) throw errors.notFound('Series');
  return s;
}

/** GET /v1/series/{id}: a series the key may see (all its channels within the key's list); a deleted one is gone. */
export async function getSeries(
  em: EntityManager,
  organizationId: string,
  id: string,
  keyChannels: 'all' | string[] = 'all',
): Promise<SeriesView> {
  return seriesView(await findSeries(em, organizationId, id, keyChannels));
}

/**
 * GET /v1/series: the organization's series (not deleted), oldest first; with `tagId`, those with
 * that tag (an id that is none of the organization's tags matches none).
 */
export async function listSeries(
  em: EntityManager,
  organizationId: string,
  opts: { keyChannels?: 'all' | string[]; status?: SeriesStatus; tagId?: string } = {},
): Promise<SeriesView[]> {
  const rows = await em.find(
    Series,
    {
      organization: organizationId,
      deletedAt: null,
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.tagId !== undefined ? { tagIds: { $contains: [opts.tagId] } } : {}),
    },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  const keyChannels = opts.keyChannels ?? 'all';
  return rows.filter((s) => keySees(keyChannels, s.channelIds)).map(seriesView);
}

/** Tells the series' workflow to plan again (best effort: it re-reads the series before each occurrence anyway). */
async function nudge(temporal: TemporalDeps | undefined, seriesId: string): Promise<void> {
  if (!temporal) return;
  await withTemporalDeadline(temporal, () => temporal.client.workflow.getHandle(seriesWorkflowId(seriesId)).signal(seriesChangedSignal))
    .catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    })
    .catch(() => {});
}

/**
 * PATCH /v1/series/{id}: text, per-platform text, channels, media, reddit, tags, the rule, its zone; for
 * occurrences not yet created (those already created are posts of their own: edit them there).
 * The template is checked as a post would be. `publishAt` (the first occurrence) only until the
 * first occurrence is created. A changed rule continues from the last occurrence created.
 */
export async function updateSeries(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  id: string,
  edit: SeriesEdit,
  key: MediaViewer | null,
  now: Date,
  capabilities?: CapabilityDeps,
): Promise<SeriesView> {
  let resumed = false;
  const view = await em.transactional(async (tx) => {
    const s = await findSeries(tx, organizationId, id, key?.channels ?? 'all', true);
    if (s.status === 'paused' && edit.status === 'active') {
      // Resuming is a take-over: the key that resumes it makes its occurrences from now on; its workflow starts again.
      s.status = 'active';
      s.pausedReason = null;
      s.apiKeyId = key?.apiKeyId ?? null;
      s.workflowPending = true;
      // Occurrences that fell due while it was paused are skipped, not published late.
      for (let at = nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null); at && at < now; ) {
        s.occurrencesCreated++;
        s.lastOccurrenceAt = at;
        at = nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt);
      }
      resumed = true;
    } else if (s.status === 'paused')
      throw new ApiError('conflict', `The series is paused: ${s.pausedReason ?? ''} Set its status to active to resume it.`, {
        details: { status: s.status, pausedReason: s.pausedReason ?? null },
      });
    if (s.status !== 'active')
      throw new ApiError('conflict', `The series has ${s.status}; it can no longer be edited.`, { details: { status: s.status } });
    const fields: FieldError[] = [];
    let startAt = s.startAt;
    if (edit.publishAt !== undefined) {
      if (s.occurrencesCreated > 0)
        fields.push({ path: 'publishAt', message: 'cannot change once an occurrence was created; change repeat instead' });
      else startAt = parsePublishAt(edit.publishAt, now, fields) ?? startAt;
    }
    const repeat = edit.repeat ? checkRepeat(edit.repeat, startAt, fields) : undefined;
    const timeZone = edit.timeZone !== undefined ? checkZone(edit.timeZone, fields) : s.timeZone;
    if (fields.length) throw errors.validation(fields);
    const channelIds = edit.channelIds ?? s.channelIds;
    // New channels without new per-platform texts: the texts of platforms no longer targeted go (as PATCH /v1/posts does).
    let contentByPlatform = edit.contentByPlatform ?? s.contentByPlatform ?? {};
    // Options of platforms no longer targeted go too, unless new options are given.
    let options: OptionsInput = edit.options ?? s.options ?? {};
    if (edit.channelIds) {
      // The same lookup (and errors) as checkTemplate's below with this key.
      const channels = await loadTargetChannels(tx, organizationId, channelIds, key?.channels ?? 'all');
      const targets = (p: string) => channels.some((c) => c.platform === p || c.platform.toLowerCase() === p);
      if (!edit.contentByPlatform) contentByPlatform = Object.fromEntries(Object.entries(contentByPlatform).filter(([p]) => targets(p)));
      if (!edit.options) options = Object.fromEntries(Object.entries(options).filter(([p]) => targets(p)));
    }
    const template = {
      channelIds,
      content: edit.content ?? s.content,
      contentByPlatform,
      mediaIds: edit.mediaIds ?? s.mediaIds ?? [],
      reddit: edit.reddit !== undefined ? edit.reddit : namesSubreddit(edit.options) ? null : (s.reddit ?? null),
      options,
    };
    // New options may carry the subreddit and title; without them the stored target stays.
    const checked = await checkTemplate(
      tx,
      organizationId,
      edit.channelIds ? key : null,
      template,
      edit.channelIds ? s.channelIds : undefined,
      capabilities,
    );
    if (edit.tagIds !== undefined) s.tagIds = await checkTagIds(tx, organizationId, edit.tagIds);
    Object.assign(s, template, checked, { startAt, timeZone });
    if (edit.repeat && repeat)
      Object.assign(s, { every: edit.repeat.every, interval: repeat.interval, until: repeat.until, count: repeat.count });
    // The rule may have no occurrence left now.
    if (!nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null)) s.status = 'ended';
    await tx.flush();
    return seriesView(s);
  });
  if (resumed && temporal) {
    const row = { id, organization_id: organizationId, status: 'active', deleted_at: null };
    // Never withdrawn: a start that fails leaves the row marked for the reconciler.
    await startAfterCommit(em, temporal, { ...SERIES_STARTS, withdraw: undefined }, row, {
      withdrawn: '',
      kept: 'Scheduling is unavailable right now; the series was resumed and starts once it is back.',
    });
    return getSeries(em.fork(), organizationId, id, key?.channels ?? 'all');
  }
  await nudge(temporal, id);
  return view;
}

/**
 * DELETE /v1/series/{id}: no occurrence is created any more, and occurrences already created but
 * still scheduled are cancelled (as DELETE /v1/posts/{id}); published ones stay. The series is
 * then gone (404). An occurrence being created at that very moment cancels itself (createOccurrence).
 */
export async function deleteSeries(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  id: string,
  keyChannels: 'all' | string[],
  now: Date,
): Promise<void> {
  await em.transactional(async (tx) => {
    const s = await findSeries(tx, organizationId, id, keyChannels, true);
    s.status = 'stopped';
    s.deletedAt = now;
  });
  await cancelScheduledOccurrences(em, temporal, organizationId, id, now);
  await nudge(temporal, id);
}

async function cancelScheduledOccurrences(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  seriesId: string,
  now: Date,
): Promise<void> {
  const posts = await em.fork().find(Post, { seriesId, organization: organizationId, status: 'scheduled', deletedAt: null });
  for (const p of posts) {
    // Already publishing, or cancelled meanwhile: it stays as it is.
    await cancelPost(em.fork(), temporal, organizationId, p.id, 'all', now).catch((err: unknown) => {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
    });
  }
}

/** The calendar's marks: occurrences not created yet, in [from, to), of the organization's active series. */
export async function listFutureOccurrences(
  em: EntityManager,
  organizationId: string,
  from: Date,
  to: Date,
  keyChannels: 'all' | string[] = 'all',
): Promise<FutureOccurrence[]> {
  const rows = await em.find(Series, { organization: organizationId, deletedAt: null, status: 'active' });
  const out: FutureOccurrence[] = [];
  for (const s of rows) {
    if (!keySees(keyChannels, s.channelIds)) continue;
    for (const o of occurrencesBetween(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null, from, to)) {
      out.push({ seriesId: s.id, index: o.index, at: o.at.toISOString(), content: s.content, channelIds: s.channelIds });
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}
