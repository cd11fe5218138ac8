// One webhook delivery attempt (Standard Webhooks): sign and POST the event's body, with a
// timeout and no redirects, through the outbound guard; record the attempt on the delivery row
// and tell the workflow what comes next (workflows/webhook-delivery.ts keeps the schedule).
import type { Orm } from '../db/orm.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../db/entities/index.ts';
import { decryptJson } from '../lib/crypto.ts';
import { Context } from '@temporalio/activity';
import { createOutboundFetch, type OutboundPolicy } from '../lib/outbound.ts';
import { signatureHeader } from '../lib/webhook-signing.ts';
import { disableIfFailingForDays } from './webhook-auto-disable.ts';
import { WEBHOOK_MAX_RETRY_AFTER_MS, type WebhookAttemptInput, type WebhookAttemptResult } from '../workflows/webhook-delivery-types.ts';
import type { WebhookOutboxSweepInput, WebhookOutboxSweepResult } from '../workflows/webhook-outbox-sweep-types.ts';
import { reconcilePendingStarts, startDeliveriesNow, WEBHOOK_DELIVERY_STARTS } from '../domain/workflow-starts.ts';
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

    /** The fan-out (workflows/webhook-fanout.ts): starts the delivery workflows on this activity's task queue, the worker's main one. */
    async startWebhookDeliveries({ deliveryIds }: WebhookFanoutInput): Promise<void> {
      const ctx = Context.current();
      await startDeliveriesNow(deps.orm.em, { client: ctx.client, taskQueue: ctx.info.taskQueue }, deliveryIds);
    },

    async attemptWebhookDelivery({ deliveryId, plannedDelayMs }: WebhookAttemptInput): Promise<WebhookAttemptResult> {
      const em = deps.orm.em.fork();
      const delivery = await em.findOne(WebhookDelivery, { id: deliveryId });
      if (delivery?.status !== 'pending') return { outcome: 'skipped' };
      const endpoint = await em.findOne(WebhookEndpoint, { id: delivery.endpoint });
      const event = await em.findOne(WebhookEvent, { id: delivery.event });
      // A deleted endpoint's deliveries are deleted with it; a disabled one gets nothing more.
      if (!endpoint || !event || !endpoint.enabled) {
        if (endpoint && !endpoint.enabled) {
          Object.assign(delivery, { status: 'failed', nextRetryAt: null, lastError: 'the endpoint is disabled' });
          await em.flush();
        }
        return { outcome: 'skipped' };
      }
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
      let result: WebhookAttemptResult;
      if (status !== null && status >= 200 && status < 300) {
        result = { outcome: 'delivered' };
        Object.assign(delivery, { status: 'delivered', nextRetryAt: null });
      } else if (status === 410) {
        // 410 Gone: the receiver asks for no more events; the endpoint shows why it was disabled.
        result = { outcome: 'gone' };
        Object.assign(delivery, { status: 'failed', nextRetryAt: null });
        endpoint.enabled = false;
        endpoint.disabledAt = started;
        endpoint.disabledReason = `${endpoint.url} answered 410 Gone on ${started.toISOString()}`;
      } else if (plannedDelayMs === null) {
        result = { outcome: 'failed' };
        Object.assign(delivery, { status: 'failed', nextRetryAt: null });
        // Its last attempt: the endpoint may now have failed for days (activities/webhook-auto-disable.ts).
        await em.flush();
        await disableIfFailingForDays(em, endpoint, started);
      } else {
        const nextDelayMs = Math.max(plannedDelayMs, Math.min(retryAfter ?? 0, WEBHOOK_MAX_RETRY_AFTER_MS));
        result = { outcome: 'retry', nextDelayMs };
        delivery.nextRetryAt = new Date(started.getTime() + nextDelayMs);
      }
      await em.flush();
      return result;
    },
  };
}
