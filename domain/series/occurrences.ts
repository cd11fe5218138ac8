// The series workflow's side (activities/series.ts): the next occurrence of a series, and its
// creation as an ordinary post through createPost, idempotent per (series, occurrence number).
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Organization, Post, Series, type ISeries } from '../../db/entities/index.ts';
import { ApiError } from '../../lib/errors.ts';
import {
  OCCURRENCE_LEAD_MS,
  type CreateOccurrenceInput,
  type CreateOccurrenceResult,
  type PlannedOccurrence,
} from '../../workflows/series-types.ts';
import { createPost } from '../posts/create.ts';
import { makerStanding, pauseForMaker } from '../makers.ts';
import type { WebhookEvents } from '../webhooks/outbox.ts';
import { cancelPost } from '../posts/lifecycle.ts';
import { nextOccurrence } from './rule.ts';
import { occurrencePostId, ruleOf, seriesView } from './series.ts';

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
  events: WebhookEvents,
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
    // Its maker, now: one who may no longer make its posts pauses it, and nothing is created.
    const maker = await makerStanding(
      em.fork(),
      { organizationId: s.organization, apiKeyId: s.apiKeyId ?? null, createdByUserId: null },
      'series.write',
      now,
    );
    if (!maker.stands) {
      await pauseForMaker(
        em,
        events,
        {
          kind: 'series',
          id: s.id,
          organizationId: s.organization,
          data: async (tx) => ({ series: seriesView(await tx.findOneOrFail(Series, { id: s.id }, { refresh: true })) }),
        },
        maker.reason,
        now,
      );
      return { outcome: 'ended' };
    }
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
        options: s.options ?? {},
        mediaIds: s.mediaIds ?? [],
        tagIds: s.tagIds ?? [],
        // Late (a worker was down past its time): published at once rather than skipped.
        publishAt: at > now ? at.toISOString() : null,
        now,
        postId,
        seriesId: s.id,
        // Its maker's posts' approval (domain/posts/approval.ts), decided as each occurrence is made.
        requester: maker.requester,
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
