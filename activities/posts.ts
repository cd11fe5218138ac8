// Activities of the post workflow. Each forks its own EntityManager; each is idempotent.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Channel, MediaItem, Post, PostChannel, type IPost, type IPostChannel } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { dueAt } from '../domain/analytics/metrics.ts';
import type { Platform } from '../platforms/catalog.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookEventType } from '../domain/webhooks/outbox.ts';
import { createWebhookEmitter, type WebhookEmitter } from './webhook-events.ts';
import { createChannelCredentials } from './channel-credentials.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { Orm } from '../db/orm.ts';
import { PlatformError, type Connectors, type MediaRef, type PublishResult } from '../platforms/types.ts';
import { classifyPlatformError } from '../platforms/failure-class.ts';
import { FAILURE, type PostEdit } from '../workflows/post-types.ts';
import { failureClass, type ChannelErrorCode, type ChannelFailure, type ChannelFailureClass } from '../workflows/publish-failure-types.ts';

/** Waits between the tries of recording an accepted publish in Postgres, within one attempt. */
const RECORD_RETRY_DELAYS_MS = [500, 1000, 2000, 4000];

/** publishToChannel's heartbeat details: the platform's answer, once it has accepted the post. */
interface PublishDetails {
  published: PublishResult;
}

function sentEarlier(details: unknown): PublishResult | undefined {
  const published = (details as Partial<PublishDetails> | null | undefined)?.published;
  return published && typeof published.platformPostId === 'string' && typeof published.url === 'string' ? published : undefined;
}

/** A publish failure of ours (not the platform's), its class in its details (workflows/publish-failure-types.ts). */
function refusal(type: string, message: string, errorCode: ChannelErrorCode): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [failureClass(errorCode)] });
}

export interface PostActivityDeps {
  orm: Orm;
  connectors: Connectors;
  credentialsKey?: Buffer;
  storage?: ObjectStorage;
  now?: () => Date;
  /** Webhook events of the changes these activities make (activities/webhook-events.ts). */
  webhooks?: WebhookEmitter;
}

export function createPostActivities(deps: PostActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const webhooks = deps.webhooks ?? createWebhookEmitter(undefined);

  /** post.channel.published / post.channel.failed: the post and this channel's entry, in `em`'s transaction. */
  async function emitChannelEvent(em: EntityManager, postId: string, channelId: string, type: WebhookEventType): Promise<string[]> {
    const post = await em.findOneOrFail(Post, { id: postId });
    return webhooks.write(em, post.organization, type, async (views) => {
      const view = await views.post(em, postId);
      const channels = view.channels as { channelId: string }[];
      return { post: view, postChannel: channels.find((c) => c.channelId === channelId) ?? null };
    });
  }

  const credentials = createChannelCredentials(deps, webhooks);
  const { emitReauth } = credentials;
  const currentCredentials = credentials.current;

  /** The post's media in its order; bytes are read from storage only when a connector asks. */
  async function mediaRefs(em: ReturnType<Orm['em']['fork']>, ids: string[]): Promise<MediaRef[]> {
    if (!ids.length) return [];
    const items = await em.find(MediaItem, { id: { $in: ids } });
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
   * Writes a publish that the platform accepted. Retried here, within the attempt, so a short
   * Postgres outage (restart, failover, dropped connection) does not fail an attempt whose message
   * is already out; each try uses a fresh EntityManager and one idempotent UPDATE.
   */
  async function recordPublished(pcId: string, platform: Platform, result: PublishResult, ctx: Context): Promise<void> {
    const publishedAt = result.publishedAt ? new Date(result.publishedAt) : now();
    // Followed for metrics from its first reading's time, where the platform reports any (domain/analytics/metrics.ts).
    const metricsNextAt = deps.connectors[platform]?.readMetrics ? dueAt(publishedAt, 0) : null;
    for (let i = 0; ; i++) {
      try {
        // Only the change from another status emits post.channel.published (a retried recording does not).
        const events = await deps.orm.em.fork().transactional(async (em) => {
          const changed = await em.nativeUpdate(
            PostChannel,
            { id: pcId, status: { $ne: 'published' } },
            {
              status: 'published',
              platformPostId: result.platformPostId,
              url: result.url,
              publishedAt,
              metricsStep: 0,
              metricsNextAt,
              error: null,
              errorCode: null,
              retryable: null,
            },
          );
          if (!changed) return [];
          const pc = await em.findOneOrFail(PostChannel, { id: pcId });
          return emitChannelEvent(em, pc.post, pc.channel, 'post.channel.published');
        });
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
   * A new channel set for a scheduled post (PATCH channelIds): rows of channels no longer named
   * go, rows of new ones come as drafts. Only drafts are touched (a scheduled post has no other);
   * a retried activity finds the rows it made and makes no second.
   */
  async function replaceChannels(
    em: ReturnType<Orm['em']['fork']>,
    post: IPost,
    pcs: IPostChannel[],
    channelIds: string[],
    texts: Record<string, string>,
  ): Promise<void> {
    const keep = new Set(channelIds);
    for (const pc of pcs) if (!keep.has(pc.channel) && pc.status === 'draft') em.remove(pc);
    const have = new Set(pcs.map((pc) => pc.channel));
    const added = channelIds.filter((id) => !have.has(id));
    if (!added.length) return;
    const channels = await em.find(Channel, { id: { $in: added }, organization: post.organization });
    for (const c of channels) {
      em.create(PostChannel, {
        id: newId('pc'),
        post: post.id,
        channel: c.id,
        platform: c.platform,
        status: 'draft',
        content: texts[c.id] ?? post.content,
      });
    }
  }

  /** Sends the post to the channel's platform; platform errors become the workflow's failure types. */
  async function send(
    em: ReturnType<Orm['em']['fork']>,
    pc: IPostChannel,
    postId: string,
    channelId: string,
    ctx: Context,
    retry: boolean,
  ): Promise<PublishResult> {
    const p = await em.findOneOrFail(Post, { id: postId });
    const channel = await em.findOneOrFail(Channel, { id: channelId });
    if (channel.status !== 'active') {
      // Reconnecting the channel makes it active again (either status).
      const message = `channel ${channel.name} is ${channel.status}; reconnect it`;
      throw refusal(channel.status === 'reauth_required' ? FAILURE.reauth : FAILURE.permanent, message, 'reauth_required');
    }
    const connector = deps.connectors[channel.platform];
    if (!connector) throw refusal(FAILURE.permanent, `publishing to ${channel.platform} is not supported yet`, 'unknown');
    if (!deps.credentialsKey) throw new Error('CREDENTIALS_KEY is not configured on this worker');
    const media = await mediaRefs(em, p.mediaIds);
    pc.attempts += 1;
    await em.flush();
    try {
      const credentials = await currentCredentials(channelId, connector, ctx.cancellationSignal);
      // A retry of a failed post (POST /retry) counts as a later attempt from its first one: the
      // run that failed may have reached the platform (a lost answer, a timeout after sending).
      const attempt = retry ? ctx.info.attempt + 1 : ctx.info.attempt;
      const req = {
        text: pc.content,
        media,
        idempotencyKey: `${postId}:${channelId}`,
        credentials,
        reddit: p.reddit ?? null,
        attempt,
        // No send of this (post, channel) is older than the post's time; within one activity, none
        // is older than its first attempt.
        firstAttemptAt: retry ? p.scheduledAt : new Date(ctx.info.scheduledTimestampMs),
        signal: ctx.cancellationSignal,
      };
      // An earlier attempt may have reached the platform and lost its answer: where the
      // platform has no idempotency key, look the post up before sending again.
      let result: PublishResult | null = null;
      if (attempt > 1 && connector.findPublished) result = await connector.findPublished(req);
      return result ?? (await connector.publish(req));
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      const message = err.message;
      // What a client can do about it (errorCode, retryable), carried to recordChannelFailure.
      const details = [classifyPlatformError(channel.platform, err)];
      if (err.kind === 'reauth') {
        channel.status = 'reauth_required';
        // The event is flushed with the status, in the flush's one transaction.
        const events = await emitReauth(em, channelId);
        await em.flush();
        await webhooks.dispatch(deps.orm.em, events);
        throw ApplicationFailure.create({ type: FAILURE.reauth, message, nonRetryable: true, details });
      }
      if (err.kind === 'permanent') throw ApplicationFailure.create({ type: FAILURE.permanent, message, nonRetryable: true, details });
      throw ApplicationFailure.create({ type: FAILURE.transient, message, nextRetryDelay: err.opts.retryAfterMs, details });
    }
  }

  return {
    /** Fails (retryably) until the API's insert of the post row is visible. */
    async confirmPost(postId: string): Promise<void> {
      const post = await deps.orm.em.fork().findOne(Post, { id: postId });
      if (!post) throw ApplicationFailure.retryable(`post ${postId} is not in the database (yet)`, FAILURE.notVisible);
    },

    async applyPostEdit({ postId, edit }: { postId: string; edit: PostEdit }): Promise<void> {
      await deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        if (post.status !== 'scheduled') return;
        if (edit.content !== undefined) post.content = edit.content;
        if (edit.contentByPlatform !== undefined) post.contentByPlatform = edit.contentByPlatform;
        if (edit.publishAt !== undefined) post.scheduledAt = new Date(edit.publishAt);
        if (edit.mediaIds !== undefined) post.mediaIds = edit.mediaIds;
        if (edit.reddit !== undefined) post.reddit = edit.reddit;
        const pcs = await em.find(PostChannel, { post: postId });
        for (const pc of pcs) {
          const text = edit.channelContent[pc.channel];
          if (text !== undefined) pc.content = text;
        }
        if (edit.channelIds !== undefined) await replaceChannels(em, post, pcs, edit.channelIds, edit.channelContent);
      });
    },

    /** Marks the post publishing; returns the channels still to publish (not already published). */
    async startPublishing(postId: string): Promise<{ channelId: string; platform: string }[]> {
      return deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        if (post.status === 'scheduled') post.status = 'publishing';
        const pcs = await em.find(PostChannel, { post: postId }, { orderBy: { id: 'asc' } });
        const todo = pcs.filter((pc) => pc.status !== 'published');
        for (const pc of todo) pc.status = 'publishing';
        return todo.map((pc) => ({ channelId: pc.channel, platform: pc.platform }));
      });
    },

    /** `retry`: a run started by POST /retry (or the retry Signal): look the post up before sending, from the first attempt. */
    async publishToChannel({
      postId,
      channelId,
      retry = false,
    }: {
      postId: string;
      channelId: string;
      retry?: boolean;
    }): Promise<{ platformPostId: string; url: string }> {
      const ctx = Context.current();
      // What an earlier attempt of this activity heard from the platform, kept by Temporal in the
      // heartbeat details (on any worker): the message is out, only its recording is missing.
      let sent = sentEarlier(ctx.info.heartbeatDetails);
      // Every heartbeat repeats the record, so a later one never erases it.
      const beat = () => ctx.heartbeat(sent ? ({ published: sent } satisfies PublishDetails) : undefined);
      if (sent) beat();
      const em = deps.orm.em.fork();
      const pc = await em.findOneOrFail(PostChannel, { post: postId, channel: channelId });
      // Already sent (a retry, a replay or a reset in the Temporal UI): never send twice.
      if (pc.status === 'published' && pc.platformPostId) return { platformPostId: pc.platformPostId, url: pc.url ?? '' };
      const heartbeat = setInterval(beat, 2000);
      try {
        if (!sent) sent = await send(em, pc, postId, channelId, ctx, retry);
        // Durable before anything that can fail: the details reach Temporal within a second (the
        // publish workers' heartbeat throttle), and a failing attempt hands its last details over
        // with the failure (servers ≥ 1.16); Temporal gives them to the next attempt.
        beat();
        await recordPublished(pc.id, pc.platform, sent, ctx);
        return { platformPostId: sent.platformPostId, url: sent.url };
      } finally {
        clearInterval(heartbeat);
      }
    },

    /** errorCode and retryable: optional, as workflows that older code ran send only the error. */
    async recordChannelFailure({
      postId,
      channelId,
      error,
      errorCode,
      retryable,
    }: { postId: string; channelId: string } & Pick<ChannelFailure, 'error'> & Partial<ChannelFailureClass>): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const pc = await em.findOneOrFail(PostChannel, { post: postId, channel: channelId });
        if (pc.status === 'published') return [];
        const was = pc.status;
        pc.status = 'failed';
        pc.error = error.slice(0, 2000);
        pc.errorCode = errorCode ?? null;
        pc.retryable = errorCode ? (retryable ?? null) : null;
        await em.flush();
        return was === 'failed' ? [] : emitChannelEvent(em, postId, channelId, 'post.channel.failed');
      });
      await webhooks.dispatch(deps.orm.em, events);
    },

    /**
     * A retry begins: the post and its channels not published go back to publishing (their
     * errors cleared); returns those channels. Idempotent (the API may have moved the rows
     * already, when it started this run). A deleted post has nothing to retry.
     */
    async startRetry(postId: string): Promise<{ channelId: string; platform: string }[]> {
      return deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        if (post.deletedAt) return [];
        post.status = 'publishing';
        post.publishedAt = null;
        const pcs = await em.find(PostChannel, { post: postId }, { orderBy: { id: 'asc' } });
        const todo = pcs.filter((pc) => pc.status !== 'published');
        for (const pc of todo) {
          pc.status = 'publishing';
          pc.error = null;
          pc.errorCode = null;
          pc.retryable = null;
        }
        return todo.map((pc) => ({ channelId: pc.channel, platform: pc.platform }));
      });
    },

    /** DELETE of a post (cancelled while scheduled, or removed after it failed): the row stays, marked. */
    async deletePost(postId: string): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const changed = await em.nativeUpdate(Post, { id: postId, deletedAt: null }, { deletedAt: now() });
        const post = changed ? await em.findOneOrFail(Post, { id: postId }) : null;
        // Cancelled while scheduled: post.cancelled. A failed post removed from the service is no new outcome.
        if (post?.status !== 'scheduled') return [];
        return webhooks.write(em, post.organization, 'post.cancelled', (views) => views.post(em, postId));
      });
      await webhooks.dispatch(deps.orm.em, events);
    },

    /** published when every channel is; failed when all are done and at least one failed. */
    async finishPost(postId: string): Promise<'published' | 'failed'> {
      const { status, events } = await deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        const pcs = await em.find(PostChannel, { post: postId });
        const allPublished = pcs.every((pc) => pc.status === 'published');
        const was = post.status;
        post.status = allPublished ? 'published' : 'failed';
        const times = pcs.map((pc) => pc.publishedAt?.getTime() ?? 0).filter(Boolean);
        post.publishedAt = allPublished && times.length ? new Date(Math.max(...times)) : null;
        // Only the change of status emits (a retried finishPost finds it made).
        const events =
          was === post.status ? [] : await webhooks.write(em, post.organization, `post.${post.status}`, (views) => views.post(em, postId));
        return { status: post.status, events };
      });
      await webhooks.dispatch(deps.orm.em, events);
      return status;
    },
  };
}
