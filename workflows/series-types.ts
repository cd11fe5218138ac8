// The series workflow's contract (docs/api.md "Recurring posts (series)"): one workflow per series,
// id `series-<seriesId>`, shared by the workflow, its activities, the worker and the API.
// The names here are durable: sleeping executions and recorded histories carry them — never rename.
import { defineSignal } from '@temporalio/workflow';

export const SERIES_WORKFLOW_TYPE = 'seriesWorkflow';

export const seriesWorkflowId = (seriesId: string) => `series-${seriesId}`;

export interface SeriesWorkflowInput {
  seriesId: string;
  organizationId: string;
  /**
   * Set by continue-as-new: the row is known to exist. A first run waits (up to two minutes) for
   * the row the API commits just after starting it, and ends if it never appears.
   */
  confirmed?: boolean;
  /** Occurrences per run before continue-as-new (keeps each run's history short); default SERIES_OCCURRENCES_PER_RUN. */
  occurrencesPerRun?: number;
}

export interface SeriesWorkflowResult {
  /** Occurrences this run handled (created, or skipped because the create checks refused them). */
  occurrences: number;
}

export const SERIES_OCCURRENCES_PER_RUN = 50;

/** Each occurrence is created (as an ordinary post) this long before its time, so edits of the series reach it until then. */
export const OCCURRENCE_LEAD_MS = 5 * 60 * 1000;

/** The series was edited or deleted: the workflow plans its next occurrence again. */
export const seriesChangedSignal = defineSignal('seriesChanged');

/** What planSeriesOccurrence answers: the next occurrence (its number and rule time), or null when the series has none left. */
export interface PlannedOccurrence {
  index: number;
  /** ISO 8601, UTC. */
  at: string;
}

export interface CreateOccurrenceInput {
  seriesId: string;
  index: number;
  /** The workflow's clock (ISO 8601): "now" for the create checks, so time-skipped tests agree with the timers. */
  now: string;
}

/**
 * created: the post exists now (created by this call, or by an earlier attempt); skipped: the
 * create checks refused it (lastError on the series says why) and the series moved on; not_due:
 * the series was edited and this occurrence is no longer next or not yet due; ended: stopped or no
 * occurrences left.
 */
export interface CreateOccurrenceResult {
  outcome: 'created' | 'skipped' | 'not_due' | 'ended';
  postId?: string;
}

/** Failure type of planSeriesOccurrence while the row is not there yet (retried until it appears). */
export const SERIES_NOT_FOUND = 'SeriesNotFound';

/** The workflow's signature (workflows/series.ts implements it; test/workflow-contracts.test.ts checks). */
export type SeriesWorkflow = (input: SeriesWorkflowInput) => Promise<SeriesWorkflowResult>;
