// Reading published posts' metrics (domain/analytics/metrics.ts): the readings that fell due,
// taken by the metrics sweep (workflows/metrics-sweep.ts) a batch at a time, a channel's posts
// together in the platform's largest batch. Each reading is a row of post_metrics, unique per
// (channel post, step): a retried or doubled run writes none twice.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { afterReading, metricsOf } from '../domain/analytics/metrics.ts';
import { postAnalyticsForKey } from '../domain/analytics/post-analytics.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import type { Platform } from '../platforms/catalog.ts';
import { PlatformError, type Connectors } from '../platforms/types.ts';
import { FAILURE } from '../workflows/post-types.ts';
import { createChannelCredentials } from './channel-credentials.ts';
import type { WebhookEmitter } from './webhook-events.ts';

/** Why a channel's post was not read (metrics, comments): its connection needs re-authorising. */
export const NEEDS_RECONNECT = 'the channel needs to be connected again';
/** A claimed reading is the sweep's for this long: more than its activity's 5-minute limit (the comments sweep's too). */
export const CLAIM_MS = 10 * 60_000;

export interface MetricsActivityDeps {
  orm: Orm;
  connectors: Connectors;
  credentialsKey?: Buffer;
  now?: () => Date;
}

interface DueRow {
  id: string;
  platform: Platform;
  channel_id: string;
  channel_status: string;
  platform_post_id: string | null;
  /** As the driver gives it (a string through the ORM's connection). */
  published_at: Date | string;
  metrics_step: number;
  metrics_next_at: Date | string | null;
  post_id: string;
  organization_id: string;
}

export interface MetricsSweepResult {
  /** Readings written, readings that failed (tried again later), posts no longer followed. */
  read: number;
  failed: number;
  stopped: number;
}

/**
 * collectDueMetrics's heartbeat details, which Temporal hands to a retried attempt: the batch's
 * channel posts not recorded yet and the counts of those that are. The retry reads only the
 * pending ones — a scheduled sweep's while they are still under the earlier attempt's claim
 * (`claimedUntil`; past it another sweep may have them), a reading asked for all of them — so a
 * retry never reads or records twice what an earlier attempt recorded.
 */
export interface MetricsSweepProgress {
  claimedUntil: string | null;
  pending: string[];
  result: MetricsSweepResult;
}

/** How often the sweep heartbeats while a read or a statement takes long (the worker sends at most one a second). */
export const BEAT_MS = 2_000;

function progressOf(details: unknown, asked: boolean): MetricsSweepProgress | undefined {
  const p = details as Partial<MetricsSweepProgress> | null | undefined;
  if (!p || !Array.isArray(p.pending) || !p.result || typeof p.result.read !== 'number') return undefined;
  if (!asked && typeof p.claimedUntil !== 'string') return undefined;
  return { claimedUntil: p.claimedUntil ?? null, pending: p.pending.map(String), result: { ...p.result } };
}

export function createMetricsActivities(deps: MetricsActivityDeps, webhooks: WebhookEmitter) {
  const now = deps.now ?? (() => new Date());
  const credentials = createChannelCredentials(deps, webhooks);

  type Outcome = { metrics?: Record<string, number | null>; error?: string; stop?: boolean };

  /**
   * Records readings' outcomes, one statement for them all: each snapshot (ok) and its next step,
   * or the error and when to try again; a reading asked for (`asked`) is a snapshot without a step
   * and moves no step. With the snapshots written, their post.analytics.updated events, in the
   * same transaction (a retried reading writes neither twice).
   */
  async function record(rows: DueRow[], at: Date, outcome: (row: DueRow) => Outcome, asked: boolean): Promise<void> {
    if (!rows.length) return;
    const input = rows.map((row) => {
      const o = outcome(row);
      const next =
        asked && !o.stop
          ? { step: row.metrics_step, nextAt: row.metrics_next_at }
          : o.stop
            ? { step: row.metrics_step, nextAt: null }
            : afterReading(new Date(row.published_at), row.metrics_step, at, !o.error);
      return {
        id: row.id,
        pm_id: newId('pm'),
        step: asked ? null : row.metrics_step,
        metrics: o.metrics ?? null,
        next_step: next.step,
        next_at: next.nextAt === null ? null : new Date(next.nextAt).toISOString(),
        error: o.error ?? null,
        cur_step: row.metrics_step,
      };
    });
    const deliveries = await deps.orm.em.fork().transactional(async (em) => {
      const written = await sql<{ id: string }>(
        em,
        `with input as (
           select * from jsonb_to_recordset(?::jsonb)
             as i(id text, pm_id text, step int, metrics jsonb, next_step int, next_at timestamptz, error text, cur_step int)
         ),
         snap as (
           insert into post_metrics (id, post_channel_id, step, measured_at, metrics)
           select pm_id, id, step, ?, metrics from input where metrics is not null
           on conflict (post_channel_id, step) do nothing
           returning post_channel_id as id
         ),
         moved as (
           update post_channels pc set metrics_step = i.next_step, metrics_next_at = i.next_at, metrics_error = i.error
           from input i where pc.id = i.id and pc.metrics_step = i.cur_step
           returning 1
         )
         select id from snap`,
        [JSON.stringify(input), at],
      );
      const ids: string[] = [];
      for (const { id } of written) {
        const row = rows.find((r) => r.id === id)!;
        ids.push(
          ...(await webhooks.write(em, row.organization_id, 'post.analytics.updated', async () => ({
            ...(await postAnalyticsForKey(em, row.organization_id, row.post_id, 'all')),
          }))),
        );
      }
      return ids;
    });
    await webhooks.dispatch(deps.orm.em, deliveries);
  }

  const dueColumns = `pc.id, pc.platform, pc.channel_id, c.status as channel_status, pc.platform_post_id, pc.published_at,
    pc.metrics_step, pc.metrics_next_at, pc.post_id, c.organization_id`;

  /**
   * Scheduled readings are claimed: their time moves CLAIM_MS ahead in the statement that picks
   * them, so two sweeps (a Schedule's run beside a refresh, a retried activity) never read the
   * same post twice; a reading whose worker died is due again once the claim runs out. With
   * `resume`, an earlier attempt's readings still under its claim are claimed again instead.
   */
  function claim(at: Date, limit: number, until: Date, resume?: { ids: string[]; until: string }): Promise<DueRow[]> {
    const picked = resume
      ? `select id from post_channels
         where id in (select jsonb_array_elements_text(?::jsonb)) and status = 'published' and metrics_next_at = ?
         for update skip locked`
      : `select id from post_channels
         where status = 'published' and metrics_next_at <= ?
         order by metrics_next_at limit ?
         for update skip locked`;
    return sql<DueRow>(
      deps.orm.em.fork(),
      `with picked as (${picked}),
       claimed as (
         update post_channels pc set metrics_next_at = ?
         from picked where pc.id = picked.id
         returning pc.id, pc.platform, pc.channel_id, pc.platform_post_id, pc.published_at, pc.metrics_step,
           pc.metrics_next_at, pc.post_id
       )
       select claimed.*, c.status as channel_status, c.organization_id
       from claimed join channels c on c.id = claimed.channel_id`,
      [...(resume ? [JSON.stringify(resume.ids), new Date(resume.until)] : [at, limit]), until],
    );
  }

  return {
    /**
     * The readings due now, at most `limit` channel posts, oldest due first; with `postId`, every
     * published channel of that post now, as a reading asked for (POST …/analytics/refresh).
     *
     * It heartbeats as it goes (after each platform read and each channel's record, and every
     * BEAT_MS while a read or a statement takes long), its details the readings of the batch not
     * recorded yet: a retry reads only those (MetricsSweepProgress). Cancelled (the workflow
     * cancelled, or the attempt timed out), it asks nothing more of any platform.
     */
    async collectDueMetrics({ limit, postId }: { limit: number; postId?: string }): Promise<MetricsSweepResult> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      const at = now();
      const asked = postId !== undefined;
      const earlier = progressOf(ctx.info.heartbeatDetails, asked);
      const claimedUntil = asked ? null : new Date(at.getTime() + CLAIM_MS);
      const due =
        earlier && !earlier.pending.length
          ? []
          : asked
            ? await sql<DueRow>(
                deps.orm.em.fork(),
                `select ${dueColumns}
                 from post_channels pc join channels c on c.id = pc.channel_id
                 where pc.status = 'published' and pc.post_id = ?
                   ${earlier ? 'and pc.id in (select jsonb_array_elements_text(?::jsonb))' : ''}
                 limit ?`,
                [postId, ...(earlier ? [JSON.stringify(earlier.pending)] : []), limit],
              )
            : await claim(at, limit, claimedUntil!, earlier ? { ids: earlier.pending, until: earlier.claimedUntil! } : undefined);
      const progress: MetricsSweepProgress = {
        claimedUntil: claimedUntil?.toISOString() ?? null,
        pending: due.map((r) => r.id),
        result: earlier?.result ?? { read: 0, failed: 0, stopped: 0 },
      };
      const result = progress.result;
      // A copy: the SDK may encode the details after the next change to `progress`.
      const beat = () => ctx.heartbeat({ ...progress, pending: [...progress.pending], result: { ...result } });
      /** The channel's readings are recorded and counted: off the pending list. */
      const recorded = (rows: DueRow[]) => {
        const ids = new Set(rows.map((r) => r.id));
        progress.pending = progress.pending.filter((id) => !ids.has(id));
        beat();
      };
      beat();
      const beating = setInterval(beat, BEAT_MS);
      try {
        const byChannel = new Map<string, DueRow[]>();
        for (const r of due) byChannel.set(r.channel_id, [...(byChannel.get(r.channel_id) ?? []), r]);
        for (const rows of byChannel.values()) {
          signal.throwIfAborted();
          const first = rows[0]!;
          const connector = deps.connectors[first.platform];
          if (!connector?.readMetrics || !deps.credentialsKey) {
            await record(rows, at, () => ({ stop: true, error: 'this platform reports no metrics' }), asked);
            result.stopped += rows.length;
            recorded(rows);
            continue;
          }
          if (first.channel_status === 'reauth_required') {
            // Rule 5: not read; tried again later, with the reason.
            await record(rows, at, () => ({ error: NEEDS_RECONNECT }), asked);
            result.failed += rows.length;
            recorded(rows);
            continue;
          }
          let creds: Record<string, unknown>;
          try {
            creds = await credentials.current(first.channel_id, connector, signal);
          } catch (err) {
            signal.throwIfAborted();
            if (!(err instanceof ApplicationFailure && err.type === FAILURE.reauth)) throw err;
            await record(rows, at, () => ({ error: NEEDS_RECONNECT }), asked);
            result.failed += rows.length;
            recorded(rows);
            continue;
          }
          // Every reading of the channel, then one record of them all.
          const outcomes = new Map<string, Outcome>();
          for (const r of rows) if (!r.platform_post_id) outcomes.set(r.id, { stop: true, error: 'the platform gave no id for this post' });
          const readable = rows.filter((r) => r.platform_post_id);
          const batch = Math.max(1, connector.metricsBatch ?? 1);
          for (let i = 0; i < readable.length; i += batch) {
            // Cancelled: no further call to the platform (what this attempt read is not recorded;
            // a scheduled reading is due again when its claim runs out).
            signal.throwIfAborted();
            const chunk = readable.slice(i, i + batch);
            try {
              const answer = await connector.readMetrics(
                creds,
                chunk.map((r) => r.platform_post_id!),
                signal,
              );
              for (const r of chunk) {
                const reported = answer[r.platform_post_id!];
                outcomes.set(
                  r.id,
                  reported ? { metrics: metricsOf(reported) } : { stop: true, error: 'the post is no longer on the platform' },
                );
              }
            } catch (err) {
              // A read cut short by the cancellation is the cancellation, not the platform's failure.
              signal.throwIfAborted();
              if (!(err instanceof PlatformError)) throw err;
              // A refused token: the channel must be connected again (as a publish would find it).
              if (err.kind === 'reauth') await credentials.markReauthRequired(first.channel_id);
              // Otherwise the platform's rate limit or outage: these readings are tried again later (rule 4).
              for (const r of chunk) outcomes.set(r.id, { error: err.kind === 'reauth' ? NEEDS_RECONNECT : err.message });
              // A refused token or the platform's rate limit: nothing more is asked of this channel now
              // (its other readings wait for their next try, like these).
              if (err.kind === 'reauth' || err.opts.status === 429) {
                for (const r of readable.slice(i + batch))
                  outcomes.set(r.id, { error: err.kind === 'reauth' ? NEEDS_RECONNECT : err.message });
                break;
              }
            }
            beat();
          }
          await record(rows, at, (r) => outcomes.get(r.id)!, asked);
          for (const o of outcomes.values()) {
            if (o.metrics) result.read++;
            else if (o.stop) result.stopped++;
            else result.failed++;
          }
          recorded(rows);
        }
      } finally {
        clearInterval(beating);
      }
      return { ...result };
    },
  };
}
