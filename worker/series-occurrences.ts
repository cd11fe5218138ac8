// Series occurrences for the series activities (activities/series.ts): planned and created by the
// services layer (services/series.ts), which the activities, below it, cannot import.
import type { SeriesOccurrences } from '../activities/series.ts';
import { createOccurrence, planNextOccurrence } from '../domain/series/series.ts';

export const seriesOccurrences: SeriesOccurrences = {
  plan: planNextOccurrence,
  create: createOccurrence,
};
