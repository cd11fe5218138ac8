// One webhook delivery attempt (Standard Webhooks): sign and POST the event's body, with a
// timeout and no redirects, through the outbound guard; record the attempt on the delivery row
// and tell the workflow what comes next (workflows/webhook-delivery.ts keeps the schedule).
import type { Orm } from '../db/orm.ts';
import {
  type IWebhookDelivery,
  type IWebhookEndpoint,
  type IWebhookEvent,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
} from '../db/entities/index.ts';
import { decryptJson } from '../lib/crypto.ts';
import { Context } from '@temporalio/activity';
import { createOutboundFetch, type OutboundPolicy } from '../lib/outbound.ts';
import { signatureHeader } from '../lib/webhook-signing.ts';
import { disableIfFailingForDays } from './webhook-auto-disable.ts';
import {
  WEBHOOK_MAX_RETRY_AFTER_MS,
  type WebhookAttemptInput,
  type WebhookAttemptResult,
  type WebhookAttemptsInput,
  type WebhookAttemptsResult,
} from '../workflows/webhook-delivery-types.ts';
import type { WebhookOutboxSweepInput, WebhookOutboxSweepResult } from '../workflows/webhook-outbox-sweep-types.ts';
import { dispatchWebhookDeliveries, reconcilePendingStarts, WEBHOOK_DELIVERY_STARTS } from '../domain/workflow-starts.ts';
import type { WebhookFanoutInput } from '../workflows/webhook-fanout-types.ts';

/** The specification's bound on one attempt. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

/** What webhook_endpoints.secret_encrypted holds. */
export interface StoredWebhookSecrets {
  current: string;
  /** The secret before the last rotation: it signs too until previousUntil. */
  previous?: string;
  previousUntil?: string;
}

export interface WebhookActivityDeps {
  orm: Orm;
  credentialsKey?: Buffer;
  outbound: OutboundPolicy;
  /** Per-attempt timeout; DEFAULT_WEBHOOK_TIMEOUT_MS unless a test shortens it. */
  timeoutMs?: number;
  now?: () => Date;
}

/** The secrets that sign now: the current one, and the previous one during its 24 hours. */
export function signingSecrets(stored: StoredWebhookSecrets, now: Date): string[] {
  const previousValid = stored.previous && stored.previousUntil && Date.parse(stored.previousUntil) > now.getTime();
  return previousValid ? [stored.current, stored.previous!] : [stored.current];
}

/** Retry-After as seconds or an HTTP date, in milliseconds; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const guardedFetch = createOutboundFetch(deps.outbound);

  /**
   * Attempts each delivery still pending: its endpoint and event are read once for all, the
   * requests are sent at once, and every outcome is written by one flush. A delivery no longer
   * pending is not sent again; its outcome is what its row says (an attempt repeated after its
   * result was recorded, as when a workflow task that ran a local activity is retried).
   */
  async function attemptAll(attempts: WebhookAttemptInput[]): Promise<WebhookAttemptResult[]> {
    const em = deps.orm.em.fork();
    const found = await em.find(WebhookDelivery, { id: { $in: attempts.map((a) => a.deliveryId) } });
    const ended = new Map(found.filter((d) => d.status !== 'pending').map((d) => [d.id, d.status] as const));
    const deliveries = found.filter((d) => d.status === 'pending');
    const endpointIds = [...new Set(deliveries.map((d) => d.endpoint))];
    const eventIds = [...new Set(deliveries.map((d) => d.event))];
    const endpoints = new Map(
      (endpointIds.length ? await em.find(WebhookEndpoint, { id: { $in: endpointIds } }) : []).map((e) => [e.id, e] as const),
    );
    const events = new Map((eventIds.length ? await em.find(WebhookEvent, { id: { $in: eventIds } }) : []).map((e) => [e.id, e] as const));
    const byId = new Map(deliveries.map((d) => [d.id, d] as const));
    const lastFailures: { endpoint: IWebhookEndpoint; at: Date }[] = [];
    const results = await Promise.all(
      attempts.map(async ({ deliveryId, plannedDelayMs }): Promise<WebhookAttemptResult> => {
        const delivery = byId.get(deliveryId);
        if (!delivery)
          return { outcome: ended.get(deliveryId) === 'delivered' ? 'delivered' : ended.has(deliveryId) ? 'failed' : 'skipped' };
        const endpoint = endpoints.get(delivery.endpoint);
        const event = events.get(delivery.event);
        // A deleted endpoint's deliveries are deleted with it; a disabled one gets nothing more.
        if (!endpoint || !event || !endpoint.enabled) {
          if (endpoint && !endpoint.enabled)
            Object.assign(delivery, { status: 'failed', nextRetryAt: null, lastError: 'the endpoint is disabled' });
          return { outcome: 'skipped' };
        }
        const result = await attemptOne(delivery, endpoint, event, plannedDelayMs);
        if (result.outcome === 'failed') lastFailures.push({ endpoint, at: delivery.lastAttemptAt! });
        return result;
      }),
    );
    await em.flush();
    // A last attempt failed: its endpoint may now have failed for days (activities/webhook-auto-disable.ts).
    if (lastFailures.length) {
      for (const { endpoint, at } of lastFailures) await disableIfFailingForDays(em, endpoint, at);
      await em.flush();
    }
    return results;
  }

  /** One signed POST of the event to the endpoint; records the attempt on the delivery (flushed by the caller). */
  async function attemptOne(
    delivery: IWebhookDelivery,
    endpoint: IWebhookEndpoint,
    event: IWebhookEvent,
    plannedDelayMs: number | null,
  ): Promise<WebhookAttemptResult> {
    if (!deps.credentialsKey) throw new Error('CREDENTIALS_KEY is required to sign webhooks');
    const started = now();
    const timestamp = Math.floor(started.getTime() / 1000);
    const body = JSON.stringify(event.payload);
    const secrets = signingSecrets(decryptJson<StoredWebhookSecrets>(deps.credentialsKey, endpoint.secretEncrypted), started);
    let status: number | null = null;
    let error: string | null = null;
    let retryAfter: number | null = null;
    const timeoutMs = deps.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    const t0 = performance.now();
    try {
      const res = await guardedFetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'postpilot-webhooks',
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, event.id, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      retryAfter = retryAfterMs(res.headers.get('retry-after'), started);
      await res.body?.cancel().catch(() => {});
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      const name = (err as Error)?.name;
      error =
        name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${timeoutMs} ms` : String((err as Error)?.message ?? err);
    }
    const durationMs = Math.round(performance.now() - t0);
    delivery.attempts += 1;
    Object.assign(delivery, { lastStatusCode: status, lastDurationMs: durationMs, lastError: error, lastAttemptAt: started });
    if (status !== null && status >= 200 && status < 300) {
      Object.assign(delivery, { status: 'delivered', nextRetryAt: null });
      return { outcome: 'delivered' };
    }
    if (status === 410) {
      // 410 Gone: the receiver asks for no more events; the endpoint shows why it was disabled.
      Object.assign(delivery, { status: 'failed', nextRetryAt: null });
      endpoint.enabled = false;
      endpoint.disabledAt = started;
      endpoint.disabledReason = `${endpoint.url} answered 410 Gone on ${started.toISOString()}`;
      return { outcome: 'gone' };
    }
    if (plannedDelayMs === null) {
      Object.assign(delivery, { status: 'failed', nextRetryAt: null });
      return { outcome: 'failed' };
    }
    const nextDelayMs = Math.max(plannedDelayMs, Math.min(retryAfter ?? 0, WEBHOOK_MAX_RETRY_AFTER_MS));
    delivery.nextRetryAt = new Date(started.getTime() + nextDelayMs);
    return { outcome: 'retry', nextDelayMs };
  }

  return {
    /**
     * The outbox sweep (workflows/webhook-outbox-sweep.ts): starts the delivery workflows of rows
     * committed but never started (domain/workflow-starts.ts), on this activity's task queue (the worker's main queue, where
     * the Schedule runs the sweep and where delivery workflows run).
     */
    async sweepWebhookOutbox(input: WebhookOutboxSweepInput): Promise<WebhookOutboxSweepResult> {
      const ctx = Context.current();
      const { started, alreadyStarted } = await reconcilePendingStarts(
        deps.orm.em,
        { client: ctx.client, taskQueue: ctx.info.taskQueue },
        WEBHOOK_DELIVERY_STARTS,
        { ...input, now: now(), beat: () => ctx.heartbeat() },
      );
      return { started, alreadyStarted };
    },

    /**
     * The fan-out of the executions started before (workflows/webhook-fanout.ts): dispatches the
     * deliveries as every event's are now, on this activity's task queue (the worker's main one).
     */
    async startWebhookDeliveries({ deliveryIds }: WebhookFanoutInput): Promise<void> {
      const ctx = Context.current();
      await dispatchWebhookDeliveries(deps.orm.em, { client: ctx.client, taskQueue: ctx.info.taskQueue }, deliveryIds);
    },

    /** One delivery (the single-delivery workflows started before): an attempt set of one. */
    async attemptWebhookDelivery(input: WebhookAttemptInput): Promise<WebhookAttemptResult> {
      return (await attemptAll([input]))[0]!;
    },

    /** The deliveries' workflow's attempts (workflows/webhook-delivery.ts): sent at once, recorded by one flush. */
    async attemptWebhookDeliveries({ attempts }: WebhookAttemptsInput): Promise<WebhookAttemptsResult> {
      return attemptAll(attempts);
    },
  };
}
