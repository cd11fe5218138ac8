// Sending to a platform from an activity, one way for everything a channel's account publishes
// or does there (a post, a follow-up item, a reply to a comment, a hide, a delete): the channel
// must be active and its platform supported; its credentials are read fresh (refreshed when about
// to expire); a platform's refusal becomes the workflow's failure type with its class
// (workflows/publish-failure-types.ts), and a refused token moves the channel to reauth_required.
// A send is made at most once across attempts (sendOnce), and what the platform accepted is
// recorded durably (recordDurably).
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaItem } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { safeHttpUrl } from '../lib/urls.ts';
import { FOLLOW_UPS, type Platform } from '../platforms/catalog.ts';
import { classifyPlatformError } from '../platforms/failure-class.ts';
import {
  type Connector,
  type Connectors,
  type MediaRef,
  PlatformError,
  type PublishRequest,
  type PublishResult,
} from '../platforms/types.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { FAILURE } from '../workflows/post-types.ts';
import { type ChannelErrorCode, failureClass } from '../workflows/publish-failure-types.ts';
import { createChannelCredentials } from './channel-credentials.ts';
import type { WebhookEmitter } from './webhook-events.ts';

/** Waits between the tries of recording an accepted publish in Postgres, within one attempt. */
const RECORD_RETRY_DELAYS_MS = [500, 1000, 2000, 4000];

/**
 * A platform's answer as it is recorded: its URL only when it is an http(s) link (else null), as
 * the API, webhook receivers and the web app hand it on as a link to follow.
 */
export type Recorded = Omit<PublishResult, 'url'> & { url: string | null };

/** publishToChannel's heartbeat details: the platform's answer, once it has accepted the post. */
interface PublishDetails {
  published: PublishResult;
}

function sentEarlier(details: unknown): PublishResult | undefined {
  const published = (details as Partial<PublishDetails> | null | undefined)?.published;
  return published && typeof published.platformPostId === 'string' && typeof published.url === 'string' ? published : undefined;
}

/** A publish failure of ours (not the platform's), its class in its details (workflows/publish-failure-types.ts). */
export function refusal(type: string, message: string, errorCode: ChannelErrorCode): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [failureClass(errorCode)] });
}

/** The channel a send goes to, with what the send needs of it and of its post. */
export interface SendTarget {
  channelId: string;
  platform: Platform;
  channelName: string;
  channelStatus: string;
  credentialsEncrypted: string;
  reddit?: PublishRequest['reddit'];
  options?: Record<string, PublishRequest['options']> | null;
  /** No send of the item is older than this (a retry run's first attempt may have reached the platform). */
  scheduledAt: Date;
}

export interface SendingDeps {
  orm: Orm;
  connectors: Connectors;
  credentialsKey?: Buffer;
  storage?: ObjectStorage;
}

export function createSending(deps: SendingDeps, webhooks: WebhookEmitter) {
  const credentials = createChannelCredentials(deps, webhooks);
  const { markReauthRequired } = credentials;
  const currentCredentials = credentials.current;

  /** The post's media in its order; bytes are read from storage only when a connector asks. */
  async function mediaRefs(ids: string[]): Promise<MediaRef[]> {
    if (!ids.length) return [];
    const items = await deps.orm.em.fork().find(MediaItem, { id: { $in: ids } });
    return ids.map((id) => {
      const item = items.find((m) => m.id === id);
      if (item?.status !== 'ready') throw refusal(FAILURE.permanent, `media ${id} is not available`, 'media_rejected');
      return {
        id: item.id,
        type: item.type,
        mimeType: item.mimeType,
        fileName: item.fileName,
        altText: item.altText ?? null,
        read: () => {
          if (!deps.storage) throw new Error('object storage is not configured on this worker');
          return deps.storage.read(item.storageKey);
        },
        // Long enough for a platform that queues the download (Instagram video processing).
        url: () => {
          if (!deps.storage) throw new Error('object storage is not configured on this worker');
          return deps.storage.signedGetUrl(item.storageKey, 6 * 3600);
        },
      };
    });
  }

  /**
   * Writes what a platform accepted, in one transaction that returns its webhook events. Retried
   * here, within the attempt, so a short Postgres outage (restart, failover, dropped connection)
   * does not fail an attempt whose message is already out; each try uses a fresh EntityManager and
   * idempotent UPDATEs. `alone`: the same change as one statement that makes it only when no
   * endpoint wants its event (true: done, nothing to emit); when one does, the transaction writes
   * the change and its event together.
   */
  async function recordDurably(
    ctx: Context,
    write: (em: EntityManager) => Promise<string[]>,
    alone?: (em: EntityManager) => Promise<boolean>,
  ): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        if (alone && (await alone(deps.orm.em.fork()))) return;
        const events = await deps.orm.em.fork().transactional(write);
        await webhooks.dispatch(deps.orm.em, events);
        return;
      } catch (err) {
        const delay = RECORD_RETRY_DELAYS_MS[i];
        if (delay === undefined) throw err;
        await ctx.sleep(delay); // ends early, with CancelledFailure, when the attempt is cancelled
      }
    }
  }

  /**
   * Runs `act` with the channel's connector and current credentials; a platform's refusal becomes
   * the workflow's failure type with its class (reauth and permanent are final, a transient one
   * is retried after the platform's Retry-After where it gives one).
   */
  async function onPlatform<T>(
    pc: SendTarget,
    ctx: Context,
    act: (connector: Connector, credentials: Record<string, unknown>) => Promise<T>,
    before?: (connector: Connector) => Promise<void>,
  ): Promise<T> {
    const { channelId, platform } = pc;
    if (pc.channelStatus !== 'active') {
      // Reconnecting the channel makes it active again (either status).
      const message = `channel ${pc.channelName} is ${pc.channelStatus}; reconnect it`;
      throw refusal(pc.channelStatus === 'reauth_required' ? FAILURE.reauth : FAILURE.permanent, message, 'reauth_required');
    }
    const connector = deps.connectors[platform];
    if (!connector) throw refusal(FAILURE.permanent, `publishing to ${platform} is not supported yet`, 'unknown');
    if (!deps.credentialsKey) throw new Error('CREDENTIALS_KEY is not configured on this worker');
    await before?.(connector);
    try {
      const credentials = await currentCredentials(channelId, connector, ctx.cancellationSignal, pc.credentialsEncrypted);
      return await act(connector, credentials);
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      const message = err.message;
      // What a client can do about it (errorCode, retryable), carried to the failure's record.
      const details = [classifyPlatformError(platform, err)];
      if (err.kind === 'reauth') {
        // The channel was active above: it moves to reauth_required, with its event.
        await markReauthRequired(channelId);
        throw ApplicationFailure.create({ type: FAILURE.reauth, message, nonRetryable: true, details });
      }
      if (err.kind === 'permanent') throw ApplicationFailure.create({ type: FAILURE.permanent, message, nonRetryable: true, details });
      throw ApplicationFailure.create({ type: FAILURE.transient, message, nextRetryDelay: err.opts.retryAfterMs, details });
    }
  }

  /**
   * Sends one item to the channel's platform (a post, or with `replyTo` a follow-up or a reply to
   * a comment). `countAttempt`: counts this send on its row. `retry`: a run started again after
   * an earlier one failed (POST /retry): its first attempt may follow a send that reached the
   * platform.
   */
  async function send(
    pc: SendTarget,
    countAttempt: () => Promise<unknown>,
    item: { text: string; mediaIds: string[]; idempotencyKey: string; replyTo?: PublishRequest['replyTo'] },
    ctx: Context,
    retry: boolean,
  ): Promise<PublishResult> {
    const { platform } = pc;
    let media: MediaRef[] = [];
    return onPlatform(
      pc,
      ctx,
      async (connector, credentials) => {
        // A retry of a failed post (POST /retry) counts as a later attempt from its first one: the
        // run that failed may have reached the platform (a lost answer, a timeout after sending).
        const attempt = retry ? ctx.info.attempt + 1 : ctx.info.attempt;
        const req: PublishRequest = {
          text: item.text,
          media,
          idempotencyKey: item.idempotencyKey,
          ...(item.replyTo ? { replyTo: item.replyTo } : {}),
          credentials,
          reddit: pc.reddit ?? null,
          options: pc.options?.[platform.toLowerCase()],
          attempt,
          // No send of this item is older than the post's time; within one activity, none is older
          // than its first attempt.
          firstAttemptAt: retry ? pc.scheduledAt : new Date(ctx.info.scheduledTimestampMs),
          signal: ctx.cancellationSignal,
        };
        // An earlier attempt may have reached the platform and lost its answer: where the
        // platform has no idempotency key, look the item up before sending again.
        let result: PublishResult | null = null;
        if (attempt > 1 && connector.findPublished) result = await connector.findPublished(req);
        return result ?? (await connector.publish(req));
      },
      async () => {
        // Validation refuses follow-ups where the platform takes none; a connector must never get one as a post of its own.
        if (item.replyTo && FOLLOW_UPS[platform].kind === null)
          throw refusal(FAILURE.permanent, `${platform} takes no replies or comments`, 'rejected_content');
        media = await mediaRefs(item.mediaIds);
        await countAttempt();
      },
    );
  }

  /**
   * Sends an item at most once across attempts, then records it. What an earlier attempt heard
   * from the platform is kept by Temporal in the heartbeat details (on any worker): the message is
   * out, only its recording is missing. Every heartbeat repeats the record, so a later one never
   * erases it.
   */
  async function sendOnce(
    sendItem: () => Promise<PublishResult>,
    record: (sent: Recorded, ctx: Context) => Promise<void>,
  ): Promise<{ platformPostId: string; url: string }> {
    const ctx = Context.current();
    let sent = sentEarlier(ctx.info.heartbeatDetails);
    const beat = () => ctx.heartbeat(sent ? ({ published: sent } satisfies PublishDetails) : undefined);
    if (sent) beat();
    const heartbeat = setInterval(beat, 2000);
    try {
      if (!sent) sent = await sendItem();
      // Durable before anything that can fail: the details reach Temporal within a second (the
      // publish workers' heartbeat throttle), and a failing attempt hands its last details over
      // with the failure (servers ≥ 1.16); Temporal gives them to the next attempt.
      beat();
      // The one place a connector's answer becomes a row: a URL that is not http(s) (a hostile
      // instance's `javascript:`) is never stored, so never shown or sent on.
      const recorded: Recorded = { ...sent, url: safeHttpUrl(sent.url) };
      await record(recorded, ctx);
      return { platformPostId: recorded.platformPostId, url: recorded.url ?? '' };
    } finally {
      clearInterval(heartbeat);
    }
  }

  return { send, sendOnce, onPlatform, mediaRefs, recordDurably, markReauthRequired };
}
