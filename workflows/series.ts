// One durable workflow per series: plan the next occurrence (an activity reads the series and its
// rule), sleep until OCCURRENCE_LEAD_MS before it, then create it as an ordinary post through the
// normal create path. Its post id is fixed per (series, occurrence number), so a retried or
// repeated create never doubles an occurrence; the series row counts what was created, so a
// worker or Temporal restart resumes without skipping one. An edit or a delete signals the
// workflow to plan again. After SERIES_OCCURRENCES_PER_RUN occurrences it continues as new.
import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  OCCURRENCE_LEAD_MS,
  SERIES_OCCURRENCES_PER_RUN,
  seriesChangedSignal,
  type PlannedOccurrence,
  type SeriesWorkflowInput,
  type SeriesWorkflowResult,
} from './series-types.ts';

type Activities = ReturnType<typeof createActivities>;

const db = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // Safe to retry: planning is a read; creating is idempotent per (series, occurrence number).
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const waitForRow = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '2 minutes',
  // Safe: a read. The API starts the workflow just before it commits the series row; if the row
  // never appears (the commit failed), the workflow gives up after two minutes.
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

export async function seriesWorkflow(input: SeriesWorkflowInput): Promise<SeriesWorkflowResult> {
  let changed = false;
  setHandler(seriesChangedSignal, () => {
    changed = true;
  });
  const perRun = input.occurrencesPerRun ?? SERIES_OCCURRENCES_PER_RUN;
  let handled = 0;
  let confirmed = input.confirmed === true;
  while (handled < perRun) {
    changed = false;
    let next: PlannedOccurrence | null;
    if (confirmed) next = await db.planSeriesOccurrence({ seriesId: input.seriesId, waitForRow: false });
    else {
      try {
        next = await waitForRow.planSeriesOccurrence({ seriesId: input.seriesId, waitForRow: true });
      } catch {
        return { occurrences: handled };
      }
      confirmed = true;
    }
    if (!next) return { occurrences: handled };
    const wait = Date.parse(next.at) - OCCURRENCE_LEAD_MS - Date.now();
    if (wait > 0 && (await condition(() => changed, wait))) continue;
    const created = await db.createSeriesOccurrence({ seriesId: input.seriesId, index: next.index, now: new Date().toISOString() });
    if (created.outcome === 'ended') return { occurrences: handled };
    if (created.outcome !== 'not_due') handled++;
  }
  return continueAsNew<typeof seriesWorkflow>({ ...input, confirmed: true });
}
