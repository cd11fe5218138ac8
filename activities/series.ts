// Activities of the series workflow (workflows/series.ts): plan the next occurrence, create it
// through the normal create path of a post (domain/series/occurrences.ts). They run on the
// worker's main task queue, where the occurrences' post workflows run too.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.ts';
import type { WebhookEmitter } from './webhook-events.ts';
import { createOccurrence, planNextOccurrence } from '../domain/series/occurrences.ts';
import {
  SERIES_NOT_FOUND,
  type CreateOccurrenceInput,
  type CreateOccurrenceResult,
  type PlannedOccurrence,
} from '../workflows/series-types.ts';

export function createSeriesActivities(deps: { orm: Orm; webhooks: WebhookEmitter }) {
  return {
    async planSeriesOccurrence(input: { seriesId: string; waitForRow: boolean }): Promise<PlannedOccurrence | null> {
      const next = await planNextOccurrence(deps.orm.em.fork(), input.seriesId);
      if (next === undefined) {
        // A workflow started before its row was committed (histories recorded then): retried until it is.
        if (input.waitForRow) throw ApplicationFailure.create({ type: SERIES_NOT_FOUND, message: `series ${input.seriesId} not found` });
        return null;
      }
      return next;
    },
    async createSeriesOccurrence(input: CreateOccurrenceInput): Promise<CreateOccurrenceResult> {
      const ctx = Context.current();
      return createOccurrence(deps.orm.em.fork(), { client: ctx.client, taskQueue: ctx.info.taskQueue }, input, deps.webhooks);
    },
  };
}
