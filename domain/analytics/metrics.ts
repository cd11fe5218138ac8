// What a published channel post's metrics are, and when they are read. Rules:
//
// 1. One vocabulary for every platform: impressions, views (video plays), likes, replies,
//    reposts, quotes, saves, clicks. A figure the platform does not report is null, never 0.
// 2. A reading is a snapshot: every reading is kept (a time series), none overwritten.
// 3. Readings fall due at these ages after the post was published: 1 h, 6 h, 24 h, 3 d, 7 d,
//    30 d (READING_AGES). Step k is the k-th; after the last the post is no longer followed.
// 4. A reading that fails is tried again RETRY_AFTER later within its step; once the next step's
//    age is reached the failed step is given up (its error stays recorded) and the next is read.
//    The last step has no next one: it is tried until LAST_STEP_WINDOW after it fell due, then
//    given up, so a channel that stays disconnected or a post that keeps failing is not asked
//    about every 15 minutes for ever.
// 5. A channel whose connection needs re-authorising is not read: its reading counts as failed
//    (rule 4) with that reason, so a channel connected again is read at its next try. A platform
//    without metrics (Telegram, Discord) is never followed; nor is a post the platform no longer has.
// 6. The latest figures of a channel post are, per metric, the value of its newest snapshot that
//    has one, with that snapshot's measuredAt: a reading that could not get a figure keeps the
//    last one.
// 7. `clicks` of a channel post whose platform reports none (null) is the service's own count of
//    its short links' clicks (domain/links/clicks.ts), where the post has short links on that
//    channel, marked `clicksSource: service`; the platform's figure, when there is one, is
//    `clicksSource: platform`, and the two are never added together.

import { METRICS, type Metric } from '../../platforms/types.ts';

export { METRICS, type Metric };
export type Metrics = Record<Metric, number | null>;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const READING_AGES: readonly number[] = [HOUR, 6 * HOUR, DAY, 3 * DAY, 7 * DAY, 30 * DAY];
export const RETRY_AFTER = 15 * 60_000;
/** How long the last reading (30 d) is tried again after it fell due (rule 4). */
export const LAST_STEP_WINDOW = DAY;

/** Every metric null, then what the platform reported (numbers only). */
export function metricsOf(reported: Partial<Record<Metric, number | null | undefined>>): Metrics {
  const out = Object.fromEntries(METRICS.map((m) => [m, null])) as Metrics;
  for (const m of METRICS) {
    const v = reported[m];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[m] = Math.floor(v);
  }
  return out;
}

/** When step `step` falls due (null: no step left). */
export function dueAt(publishedAt: Date, step: number): Date | null {
  const age = READING_AGES[step];
  return age === undefined ? null : new Date(publishedAt.getTime() + age);
}

/** Until when a failed reading of `step` is tried again: the next step's time, or for the last step the end of its window. */
function retryUntil(publishedAt: Date, step: number): Date | null {
  const next = dueAt(publishedAt, step + 1);
  if (next) return next;
  const last = dueAt(publishedAt, step);
  return last && new Date(last.getTime() + LAST_STEP_WINDOW);
}

/**
 * After a reading of `step` at `now`: the step and time of the next one. A success moves on; a
 * failure tries again RETRY_AFTER later unless the next step (or the last step's window's end) comes first (rule 4).
 */
export function afterReading(publishedAt: Date, step: number, now: Date, ok: boolean): { step: number; nextAt: Date | null } {
  if (!ok) {
    const retry = new Date(now.getTime() + RETRY_AFTER);
    const until = retryUntil(publishedAt, step);
    if (until !== null && retry < until) return { step, nextAt: retry };
  }
  // Steps whose time has already passed (a worker away for days) are not read one by one.
  let s = step + 1;
  while (READING_AGES[s + 1] !== undefined && dueAt(publishedAt, s + 1)! <= now) s++;
  return { step: s, nextAt: dueAt(publishedAt, s) };
}

/** Where a channel post's `clicks` comes from (rule 7); null: it has none. */
export type ClicksSource = 'platform' | 'service';
export const CLICKS_SOURCES = ['platform', 'service'] as const satisfies readonly ClicksSource[];

/** Rule 7: the platform's clicks, else `serviceClicks` (the channel post's short links' count; null: it has none). */
export function withServiceClicks(metrics: Metrics, serviceClicks: number | null): { metrics: Metrics; clicksSource: ClicksSource | null } {
  if (metrics.clicks !== null) return { metrics, clicksSource: 'platform' };
  if (serviceClicks === null) return { metrics, clicksSource: null };
  return { metrics: { ...metrics, clicks: serviceClicks }, clicksSource: 'service' };
}

export interface Snapshot {
  measuredAt: Date;
  metrics: Metrics;
}

/** Per metric, the newest snapshot's value that is not null, and when it was measured (rule 6). */
export function latestOf(snapshots: Snapshot[]): { metrics: Metrics; measuredAt: Record<Metric, string | null> } {
  const metrics = metricsOf({});
  const measuredAt = Object.fromEntries(METRICS.map((m) => [m, null])) as Record<Metric, string | null>;
  const newestFirst = [...snapshots].sort((a, b) => b.measuredAt.getTime() - a.measuredAt.getTime());
  for (const m of METRICS) {
    const hit = newestFirst.find((s) => s.metrics[m] !== null);
    if (hit) {
      metrics[m] = hit.metrics[m];
      measuredAt[m] = hit.measuredAt.toISOString();
    }
  }
  return { metrics, measuredAt };
}
