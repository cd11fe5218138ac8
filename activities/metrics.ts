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

const NEEDS_RECONNECT = 'the channel needs to be connected again';
/** A claimed reading is the sweep's for this long: more than its activity's 5-minute limit. */
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

  return {
    /**
     * The readings due now, at most `limit` channel posts, oldest due first; with `postId`, every
     * published channel of that post now, as a reading asked for (POST …/analytics/refresh).
     */
    async collectDueMetrics({ limit, postId }: { limit: number; postId?: string }): Promise<MetricsSweepResult> {
      const at = now();
      const asked = postId !== undefined;
      // Scheduled readings are claimed: their time moves CLAIM_MS ahead in the statement that picks
      // them, so two sweeps (a Schedule's run beside a refresh, a retried activity) never read the
      // same post twice; a reading whose worker died is due again once the claim runs out.
      const due = asked
        ? await sql<DueRow>(
            deps.orm.em.fork(),
            `select pc.id, pc.platform, pc.channel_id, c.status as channel_status, pc.platform_post_id, pc.published_at,
               pc.metrics_step, pc.metrics_next_at, pc.post_id, c.organization_id
             from post_channels pc join channels c on c.id = pc.channel_id
             where pc.status = 'published' and pc.post_id = ? limit ?`,
            [postId, limit],
          )
        : await sql<DueRow>(
            deps.orm.em.fork(),
            `with picked as (
               select id from post_channels
               where status = 'published' and metrics_next_at <= ?
               order by metrics_next_at limit ?
               for update skip locked
             ),
             claimed as (
               update post_channels pc set metrics_next_at = ?
               from picked where pc.id = picked.id
               returning pc.id, pc.platform, pc.channel_id, pc.platform_post_id, pc.published_at, pc.metrics_step,
                 pc.metrics_next_at, pc.post_id
             )
             select claimed.*, c.status as channel_status, c.organization_id
             from claimed join channels c on c.id = claimed.channel_id`,
            [at, limit, new Date(at.getTime() + CLAIM_MS)],
          );
      const result: MetricsSweepResult = { read: 0, failed: 0, stopped: 0 };
      const byChannel = new Map<string, DueRow[]>();
      for (const r of due) byChannel.set(r.channel_id, [...(byChannel.get(r.channel_id) ?? []), r]);
      const signal = Context.current().cancellationSignal;
      for (const rows of byChannel.values()) {
        const first = rows[0]!;
        const connector = deps.connectors[first.platform];
        if (!connector?.readMetrics || !deps.credentialsKey) {
          await record(rows, at, () => ({ stop: true, error: 'this platform reports no metrics' }), asked);
          result.stopped += rows.length;
          continue;
        }
        if (first.channel_status === 'reauth_required') {
          // Rule 5: not read; tried again later, with the reason.
          await record(rows, at, () => ({ error: NEEDS_RECONNECT }), asked);
          result.failed += rows.length;
          continue;
        }
        let creds: Record<string, unknown>;
        try {
          creds = await credentials.current(first.channel_id, connector, signal);
        } catch (err) {
          if (!(err instanceof ApplicationFailure && err.type === FAILURE.reauth)) throw err;
          await record(rows, at, () => ({ error: NEEDS_RECONNECT }), asked);
          result.failed += rows.length;
          continue;
        }
        // Every reading of the channel, then one record of them all.
        const outcomes = new Map<string, Outcome>();
        for (const r of rows) if (!r.platform_post_id) outcomes.set(r.id, { stop: true, error: 'the platform gave no id for this post' });
        const readable = rows.filter((r) => r.platform_post_id);
        const batch = Math.max(1, connector.metricsBatch ?? 1);
        for (let i = 0; i < readable.length; i += batch) {
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
        }
        await record(rows, at, (r) => outcomes.get(r.id)!, asked);
        for (const o of outcomes.values()) {
          if (o.metrics) result.read++;
          else if (o.stop) result.stopped++;
          else result.failed++;
        }
      }
      return result;
    },
  };
}
