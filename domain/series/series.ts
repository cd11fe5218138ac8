// Recurring posts (issue 17, README "Recurring posts"): a series is a post template and a rule
// (every day, week or month, `interval`, until and/or count) in an IANA zone. Its workflow
// (workflows/series.ts) creates each occurrence as an ordinary post OCCURRENCE_LEAD_MS before its
// time through createPost (so validation, webhooks, PATCH, DELETE and retry all apply), with a
// post id fixed per (series, occurrence number): a repeated create finds the post instead of
// making a second one. Edits apply to occurrences not yet created.
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  Organization,
  Post,
  Series,
  type IOrganization,
  type ISeries,
  type SeriesFrequency,
  type SeriesStatus,
} from '../../db/entities/index.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { canonicalTimeZone, isTimeZone } from '../../lib/zoned-time.ts';
import { ORGANIZATION_ID } from '../../workflows/search-attributes.ts';
import {
  OCCURRENCE_LEAD_MS,
  SERIES_WORKFLOW_TYPE,
  seriesChangedSignal,
  seriesWorkflowId,
  type CreateOccurrenceInput,
  type CreateOccurrenceResult,
  type PlannedOccurrence,
  type SeriesWorkflowInput,
} from '../../workflows/series-types.ts';
import type { MediaViewer } from '../media.ts';
import { cancelPost } from '../posts/lifecycle.ts';
import { createPost } from '../posts/create.ts';
import {
  assertChannelsUsable,
  channelTexts,
  LATEST_PUBLISH_AT,
  loadPostMedia,
  loadTargetChannels,
  parsePublishAt,
} from '../posts/checks.ts';
import { organizationTimeZone } from '../queues/queues.ts';
import { nextOccurrence, occurrencesBetween, type SeriesRule } from './rule.ts';
import { startWorkflowInRequest, terminateInBackground, withTemporalDeadline, type TemporalDeps } from '../temporal-calls.ts';

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
  reddit: { subreddit: string; title: string } | null;
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
  createdAt: string;
  updatedAt: string;
}

export interface CreateSeriesRequest {
  organization: Pick<IOrganization, 'id' | 'plan'>;
  source: 'api' | 'app';
  /** The API key creating it (its channel list limits channels and media); null: the web app. */
  key: MediaViewer | null;
  channelIds: string[];
  content: string;
  contentByPlatform: Record<string, string>;
  reddit: { subreddit: string; title: string } | null;
  mediaIds: string[];
  /** The first occurrence, ISO 8601 with an offset. */
  publishAt: string;
  repeat: RepeatInput;
  /** IANA zone of the rule; default: the organization's. */
  timeZone?: string;
  now: Date;
}

/** The fields PATCH /v1/series/{id} may change; each applies to occurrences not yet created. */
export interface SeriesEdit {
  content?: string;
  contentByPlatform?: Record<string, string>;
  channelIds?: string[];
  mediaIds?: string[];
  reddit?: { subreddit: string; title: string } | null;
  /** Moves the first occurrence (the rule's anchor): only before any occurrence was created. */
  publishAt?: string;
  repeat?: RepeatInput;
  timeZone?: string;
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
    reddit: s.reddit ?? null,
    publishAt: s.startAt.toISOString(),
    timeZone: s.timeZone,
    repeat: { every: s.every, interval: s.interval, until: iso(s.until), count: s.count ?? null },
    occurrencesCreated: s.occurrencesCreated,
    nextOccurrenceAt: iso(next),
    lastError: s.lastError ?? null,
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
    until = new Date(repeat.until);
    if (Number.isNaN(until.getTime())) {
      fields.push({ path: 'repeat.until', message: 'must be an ISO 8601 date-time with an offset' });
      until = null;
    } else if (until >= LATEST_PUBLISH_AT) {
      // Postgres cannot store an instant past year 9999 (a 500 otherwise).
      fields.push({ path: 'repeat.until', message: `must be before ${LATEST_PUBLISH_AT.toISOString()}` });
      until = null;
    } else if (startAt && until < startAt)
      fields.push({ path: 'repeat.until', message: 'must not be before publishAt (the first occurrence)' });
  }
  return { interval, until, count };
}

function checkZone(tz: string, fields: FieldError[]): string {
  if (isTimeZone(tz)) return canonicalTimeZone(tz);
  fields.push({ path: 'timeZone', message: 'must be an IANA time zone, e.g. America/New_York' });
  return 'UTC';
}

/** The template checked as a post would be (channels, key's list, media, each channel's text). */
async function checkTemplate(
  em: EntityManager,
  organizationId: string,
  key: MediaViewer | null,
  t: { channelIds: string[]; content: string; contentByPlatform: Record<string, string>; mediaIds: string[]; reddit: ISeries['reddit'] },
  newChannelsOnly?: string[],
): Promise<void> {
  const channels = await loadTargetChannels(em, organizationId, t.channelIds, key?.channels ?? 'all');
  assertChannelsUsable(newChannelsOnly ? channels.filter((c) => !newChannelsOnly.includes(c.id)) : channels);
  const media = await loadPostMedia(em, organizationId, t.mediaIds, key ?? undefined);
  channelTexts(channels, { content: t.content, contentByPlatform: t.contentByPlatform, media, reddit: t.reddit });
}

/**
 * POST /v1/series: the template is checked as a post would be, then the row and its workflow are
 * written together (the workflow is started inside the transaction; if the commit fails, the
 * workflow finds no row and ends within two minutes).
 */
export async function createSeries(em: EntityManager, temporal: TemporalDeps | undefined, r: CreateSeriesRequest): Promise<SeriesView> {
  const fields: FieldError[] = [];
  const startAt = parsePublishAt(r.publishAt, r.now, fields);
  const rule = checkRepeat(r.repeat, startAt, fields);
  const timeZone = r.timeZone !== undefined ? checkZone(r.timeZone, fields) : await organizationTimeZone(em, r.organization.id);
  if (fields.length) throw errors.validation(fields);
  await checkTemplate(em, r.organization.id, r.key, r);
  if (!temporal) throw new Error('Temporal is not configured');
  const id = newId('ser');
  const workflowId = seriesWorkflowId(id);
  let started = false;
  try {
    await em.transactional(async (tx) => {
      tx.create(Series, {
        id,
        organization: r.organization.id,
        status: 'active',
        content: r.content,
        contentByPlatform: r.contentByPlatform,
        reddit: r.reddit,
        mediaIds: r.mediaIds,
        channelIds: r.channelIds,
        source: r.source,
        apiKeyId: r.key?.apiKeyId ?? null,
        startAt: startAt!,
        timeZone,
        every: r.repeat.every,
        interval: rule.interval,
        until: rule.until,
        count: rule.count,
        workflowId,
      });
      await tx.flush();
      const input: SeriesWorkflowInput = { seriesId: id, organizationId: r.organization.id };
      await startWorkflowInRequest(
        temporal,
        SERIES_WORKFLOW_TYPE,
        { workflowId, args: [input], typedSearchAttributes: [{ key: ORGANIZATION_ID, value: r.organization.id }] },
        'Scheduling is unavailable right now; the series was not created. Retry shortly.',
      );
      started = true;
    });
  } catch (err) {
    if (started) terminateInBackground(temporal, workflowId, 'series row was not committed');
    throw err;
  }
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
  if (!s || (keyChannels !== 'all' && !s.channelIds.every((c) => keyChannels.includes(c)))) throw errors.notFound('Series');
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

/** GET /v1/series: the organization's series (not deleted), oldest first. */
export async function listSeries(
  em: EntityManager,
  organizationId: string,
  opts: { keyChannels?: 'all' | string[]; status?: SeriesStatus } = {},
): Promise<SeriesView[]> {
  const rows = await em.find(
    Series,
    { organization: organizationId, deletedAt: null, ...(opts.status ? { status: opts.status } : {}) },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  const keyChannels = opts.keyChannels ?? 'all';
  return rows.filter((s) => keyChannels === 'all' || s.channelIds.every((c) => keyChannels.includes(c))).map(seriesView);
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
 * PATCH /v1/series/{id}: text, per-platform text, channels, media, reddit, the rule, its zone; for
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
): Promise<SeriesView> {
  const view = await em.transactional(async (tx) => {
    const s = await findSeries(tx, organizationId, id, key?.channels ?? 'all', true);
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
    const template = {
      channelIds,
      content: edit.content ?? s.content,
      contentByPlatform: edit.contentByPlatform ?? s.contentByPlatform ?? {},
      mediaIds: edit.mediaIds ?? s.mediaIds ?? [],
      reddit: edit.reddit !== undefined ? edit.reddit : (s.reddit ?? null),
    };
    await checkTemplate(tx, organizationId, edit.channelIds ? key : null, template, edit.channelIds ? s.channelIds : undefined);
    Object.assign(s, template, { startAt, timeZone });
    if (edit.repeat && repeat)
      Object.assign(s, { every: edit.repeat.every, interval: repeat.interval, until: repeat.until, count: repeat.count });
    // The rule may have no occurrence left now.
    if (!nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null)) s.status = 'ended';
    await tx.flush();
    return seriesView(s);
  });
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
    if (keyChannels !== 'all' && !s.channelIds.every((c) => keyChannels.includes(c))) continue;
    for (const o of occurrencesBetween(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null, from, to)) {
      out.push({ seriesId: s.id, index: o.index, at: o.at.toISOString(), content: s.content, channelIds: s.channelIds });
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// The series workflow's side (activities/series.ts → worker/series-occurrences.ts).

/** The next occurrence; null when none is left (ended, stopped); undefined when the row does not exist. */
export async function planNextOccurrence(em: EntityManager, seriesId: string): Promise<PlannedOccurrence | null | undefined> {
  const s = await em.findOne(Series, { id: seriesId });
  if (!s) return undefined;
  if (s.status !== 'active' || s.deletedAt) return null;
  const at = nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null);
  if (!at) {
    await em.nativeUpdate(Series, { id: seriesId, status: 'active' }, { status: 'ended' });
    return null;
  }
  return { index: s.occurrencesCreated, at: at.toISOString() };
}

/** Occurrence `index` is counted as done (created or skipped): the series moves on to the next. */
async function advance(em: EntityManager, s: ISeries, index: number, at: Date, lastError: ISeries['lastError'] | undefined): Promise<void> {
  await em.nativeUpdate(
    Series,
    { id: s.id, occurrencesCreated: index },
    { occurrencesCreated: index + 1, lastOccurrenceAt: at, ...(lastError !== undefined ? { lastError } : {}) },
  );
}

/**
 * Creates occurrence `index` of the series through createPost (the normal create path: the same
 * checks, the post.scheduled webhook, its own workflow), idempotently: the post id is
 * occurrencePostId(series, index), so a retry (or a second worker) finds the post instead of
 * creating another. A create the checks refuse (a channel to reconnect, a plan limit, the same
 * text posted elsewhere) is skipped and recorded in lastError; the series moves on.
 */
export async function createOccurrence(
  em: EntityManager,
  temporal: { client: Client; taskQueue: string },
  input: CreateOccurrenceInput,
): Promise<CreateOccurrenceResult> {
  const now = new Date(input.now);
  const s = await em.findOne(Series, { id: input.seriesId });
  if (s?.status !== 'active' || s.deletedAt) return { outcome: 'ended' };
  const postId = occurrencePostId(s.id, input.index);
  if (s.occurrencesCreated > input.index) return { outcome: 'created', postId };
  if (s.occurrencesCreated < input.index) return { outcome: 'not_due' };
  const at = nextOccurrence(ruleOf(s), s.occurrencesCreated, s.lastOccurrenceAt ?? null);
  if (!at) return { outcome: 'ended' };
  // Edited since it was planned: no longer due (the workflow plans again).
  if (at.getTime() - OCCURRENCE_LEAD_MS > now.getTime() + 1000) return { outcome: 'not_due' };
  if (!(await em.findOne(Post, { id: postId }))) {
    const org = await em.findOneOrFail(Organization, { id: s.organization });
    try {
      await createPost(em.fork(), temporal, {
        organization: { id: org.id, plan: org.plan },
        source: s.source,
        // Attributed to the key that created the series; its channels were checked then and at each edit.
        key: s.apiKeyId ? { apiKeyId: s.apiKeyId, channels: 'all' } : null,
        channelIds: s.channelIds,
        content: s.content,
        contentByPlatform: s.contentByPlatform ?? {},
        reddit: s.reddit ?? null,
        mediaIds: s.mediaIds ?? [],
        // Late (a worker was down past its time): published at once rather than skipped.
        publishAt: at > now ? at.toISOString() : null,
        now,
        postId,
        seriesId: s.id,
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        // A concurrent attempt created it first.
      } else if (err instanceof ApiError && err.status < 500) {
        await advance(em, s, input.index, at, { at: at.toISOString(), code: err.code, message: err.message });
        return { outcome: 'skipped' };
      } else throw err;
    }
  }
  await advance(em, s, input.index, at, undefined);
  // Deleted while this occurrence was being created: cancel it (deleteSeries cancels those it saw).
  const after = await em.fork().findOne(Series, { id: s.id });
  if (!after || after.status === 'stopped') {
    await cancelPost(em.fork(), temporal, s.organization, postId, 'all', now).catch(() => {});
    return { outcome: 'ended' };
  }
  return { outcome: 'created', postId };
}
