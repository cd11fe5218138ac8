// Activities of the series workflow (workflows/series.ts). What they do is the services layer's
// (services/series.ts: the rule, the normal create path of a post), above the activities: the
// worker passes it in (worker/series-occurrences.ts), as it passes webhook views.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm.ts';
import {
  SERIES_NOT_FOUND,
  type CreateOccurrenceInput,
  type CreateOccurrenceResult,
  type PlannedOccurrence,
} from '../workflows/series-types.ts';

/** What the services layer provides for the series activities. */
export interface SeriesOccurrences {
  /** The next occurrence of the series; null when it has none left (ended, stopped); undefined when the row does not exist. */
  plan(em: EntityManager, seriesId: string): Promise<PlannedOccurrence | null | undefined>;
  /** Creates occurrence `index` through the normal create path, idempotently (see CreateOccurrenceResult). */
  create(em: EntityManager, temporal: { client: Client; taskQueue: string }, input: CreateOccurrenceInput): Promise<CreateOccurrenceResult>;
}

export interface SeriesActivityDeps {
  orm: Orm;
  occurrences?: SeriesOccurrences;
  /** The worker's main task queue: the occurrences' post workflows run there. */
  taskQueue?: string;
}

export function createSeriesActivities(deps: SeriesActivityDeps) {
  const need = () => {
    if (!deps.occurrences || !deps.taskQueue) throw new Error('series activities are not configured on this worker');
    return { occurrences: deps.occurrences, taskQueue: deps.taskQueue };
  };
  return {
    async planSeriesOccurrence(input: { seriesId: string; waitForRow: boolean }): Promise<PlannedOccurrence | null> {
      const next = await need().occurrences.plan(deps.orm.em.fork(), input.seriesId);
      if (next === undefined) {
        // Not committed yet (the API starts the workflow just before its commit): retried until it is.
        if (input.waitForRow) throw ApplicationFailure.create({ type: SERIES_NOT_FOUND, message: `series ${input.seriesId} not found` });
        return null;
      }
      return next;
    },
    async createSeriesOccurrence(input: CreateOccurrenceInput): Promise<CreateOccurrenceResult> {
      const { occurrences, taskQueue } = need();
      return occurrences.create(deps.orm.em.fork(), { client: Context.current().client, taskQueue }, input);
    },
  };
}
