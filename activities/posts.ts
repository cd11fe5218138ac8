// Activities of the post workflow. Each forks its own EntityManager; each is idempotent.
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  Channel,
  Post,
  PostChannel,
  PostChannelItem,
  type IPost,
  type IPostChannel,
  type IPostChannelItem,
  type LinkChoice,
} from '../db/entities/index.ts';
import { followUpRows, insertFollowUps } from '../domain/posts/create.ts';
import { newId } from '../lib/ids.ts';
import { dueAt } from '../domain/analytics/metrics.ts';
import type { Platform } from '../platforms/catalog.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { endpointWants, type WebhookEventType } from '../domain/webhooks/outbox.ts';
import { createWebhookEmitter, type WebhookEmitter } from './webhook-events.ts';
import { createSending, refusal, type Recorded, type SendTarget } from './sending.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import type { Connectors, PublishRequest } from '../platforms/types.ts';
import { contentOf } from '../domain/posts/content.ts';
import { sentText } from '../domain/links/published.ts';
import { FAILURE, type ApprovalDecision, type ApprovalRecord, type PostEdit, type PublishTarget } from '../workflows/post-types.ts';
import type { ChannelFailure, ChannelFailureClass } from '../workflows/publish-failure-types.ts';

const sameApproval = (a: ApprovalRecord | null | undefined, b: ApprovalRecord) => a?.status === b.status && a.requestedAt === b.requestedAt;

/**
 * finishPost's one statement: the post's status from its channels' (published when every one is,
 * else failed; published at the last channel's time), written when it differs. `unlessWanted`: not
 * written when the status would change and an endpoint wants post.published or post.failed
 * (`wanted` true: a transaction then runs the plain form and writes the event with the change).
 * Answers the status before, the status after, the organization, whether the row changed here.
 * Parameters: the post, the time of the change.
 */
function finishStatement(unlessWanted: boolean): string {
  const wanted = unlessWanted
    ? `, wanted as (select exists (select 1 from webhook_endpoints e where ${endpointWants('next.organization_id', "'post.' || next.to_status")}) as yes
    from next)`
    : '';
  return `with next as (
    select p.id, p.status, p.organization_id,
      case when coalesce(bool_and(pc.status = 'published'), true) then 'published' else 'failed' end as to_status,
      case when coalesce(bool_and(pc.status = 'published'), true) then max(pc.published_at) end as to_published_at
    from posts p left join post_channels pc on pc.post_id = p.id where p.id = ? group by p.id)${wanted},
  changed as (update posts p set status = next.to_status, published_at = next.to_published_at, updated_at = ?
    from next${unlessWanted ? ', wanted' : ''}
    where p.id = next.id and (p.status is distinct from next.to_status or p.published_at is distinct from next.to_published_at)
      ${unlessWanted ? 'and (p.status = next.to_status or not wanted.yes)' : ''}
    returning p.id)
  select next.status, next.to_status as "toStatus", next.organization_id as "organizationId",
    ${unlessWanted ? 'wanted.yes' : 'false'} as wanted, exists (select 1 from changed) as changed
  from next${unlessWanted ? ', wanted' : ''}`;
}
const FINISH = finishStatement(false);
const FINISH_UNLESS_WANTED = finishStatement(true);

interface Finished {
  status: string;
  toStatus: 'published' | 'failed';
  organizationId: string;
  wanted: boolean;
  changed: boolean;
}

/** A timestamp as raw SQL returns it (the ORM's type parsers keep Postgres' text), made a Date as the ORM makes it. */
const dateOrNull = (at: string | null) => (at === null ? null : new Date(at));

/** What a send needs of the post channel, its post and its channel, read in one statement (publishRow). */
interface PublishRow extends SendTarget {
  id: string;
  postId: string;
  channelId: string;
  content: string;
  platformPostId: string | null;
  url: string | null;
  publishedAt: Date | null;
  followUps: number;
  organizationId: string;
  mediaIds: string[];
  reddit: IPost['reddit'];
  options: Record<string, PublishRequest['options']> | null;
  /** The post's links choice (domain/links/choice.ts): its texts are sent with short links when it shortens them. */
  links: LinkChoice;
  scheduledAt: Date;
  platform: Platform;
  channelName: string;
  channelStatus: string;
  credentialsEncrypted: string;
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
  const { send, sendOnce, recordDurably } = createSending(deps, webhooks);

  /**
   * post.channel.published / post.channel.failed: the post and this channel's entry, in `em`'s
   * transaction. `organizationId`: the post's, when the caller has read it.
   */
  async function emitChannelEvent(
    em: EntityManager,
    postId: string,
    channelId: string,
    type: WebhookEventType,
    organizationId?: string,
  ): Promise<string[]> {
    const organization = organizationId ?? (await em.findOneOrFail(Post, { id: postId })).organization;
    return webhooks.write(em, organization, type, async (views) => {
      const view = await views.post(em, postId);
      const channels = view.channels as { channelId: string }[];
      return { post: view, postChannel: channels.find((c) => c.channelId === channelId) ?? null };
    });
  }

  /**
   * The post channel of (postId, channelId) with what a send needs of its post and channel: one
   * statement, no entities (the publish path runs once per channel of every post).
   */
  async function publishRow(postId: string, channelId: string): Promise<PublishRow> {
    const [row] = await sql<Omit<PublishRow, 'publishedAt' | 'scheduledAt'> & { publishedAt: string | null; scheduledAt: string }>(
      deps.orm.em.fork(),
      `select pc.id, pc.post_id as "postId", pc.channel_id as "channelId", pc.content, pc.platform_post_id as "platformPostId",
         pc.url, pc.published_at as "publishedAt",
         (select count(*)::int from post_channel_items i where i.post_channel_id = pc.id) as "followUps",
         p.organization_id as "organizationId", p.media_ids as "mediaIds", p.reddit, p.options, p.links, p.scheduled_at as "scheduledAt",
         c.platform, c.name as "channelName", c.status as "channelStatus", c.credentials_encrypted as "credentialsEncrypted"
       from post_channels pc join posts p on p.id = pc.post_id join channels c on c.id = pc.channel_id
       where pc.post_id = ? and pc.channel_id = ?`,
      [postId, channelId],
    );
    if (!row) throw new Error(`post ${postId} has no channel ${channelId}`);
    return { ...row, publishedAt: dateOrNull(row.publishedAt), scheduledAt: new Date(row.scheduledAt) };
  }

  /**
   * The text a send carries: its links made the channel's short links when the post shortens them
   * (domain/links/published.ts), the same on every attempt.
   */
  function textToSend(pc: PublishRow, text: string): Promise<string> {
    return sentText(deps.orm.em.fork(), { postId: pc.postId, postChannelId: pc.id, platform: pc.platform, links: pc.links }, text);
  }

  /** One more send of a post channel or a follow-up item, counted on its row. */
  function countAttempt(table: 'post_channels' | 'post_channel_items', id: string) {
    return sql(deps.orm.em.fork(), `update ${table} set attempts = attempts + 1, updated_at = ? where id = ?`, [now(), id]);
  }

  /**
   * The post channel's change to published, as SQL with its parameters; `unlessWanted`: made only
   * when no endpoint wants post.channel.published (the statement answers `wanted`).
   */
  function channelPublishedUpdate(pc: PublishRow, publishedAt: Date, post: Recorded | undefined, unlessWanted: boolean) {
    const metricsNextAt = deps.connectors[pc.platform]?.readMetrics ? dueAt(publishedAt, 0) : null;
    const update = `update post_channels set status = 'published',${post ? ' platform_post_id = ?, url = ?, published_at = ?,' : ''}
         metrics_step = 0, metrics_next_at = ?, error = null, error_code = null, retryable = null
       where id = ? and status <> 'published'`;
    const params = [...(post ? [post.platformPostId, post.url, publishedAt] : []), metricsNextAt, pc.id];
    if (!unlessWanted) return { text: `${update} returning id`, params };
    return {
      text: `with wanted as (select exists (select 1 from webhook_endpoints e where ${endpointWants('?', '?')}) as yes),
        changed as (${update} and not (select yes from wanted) returning id)
        select yes as wanted from wanted`,
      params: [pc.organizationId, 'post.channel.published', ...params],
    };
  }

  /**
   * The channel is published: every item is out. Only the change from another status emits
   * post.channel.published (a retried recording does not). Followed for metrics from its first
   * reading's time, where the platform reports any (domain/analytics/metrics.ts).
   */
  async function channelPublished(em: EntityManager, pc: PublishRow, publishedAt: Date, post?: Recorded) {
    // A plain statement: every channel of every post runs it once.
    const { text, params } = channelPublishedUpdate(pc, publishedAt, post, false);
    const changed = await sql(em, text, params);
    if (!changed.length) return [];
    return emitChannelEvent(em, pc.postId, pc.channelId, 'post.channel.published', pc.organizationId);
  }

  /**
   * The post itself (position 0) is out. Without follow-ups the channel is published (one
   * statement when no endpoint wants the event); with them, the post's id is recorded (what the
   * first follow-up answers) and the channel stays publishing until its last item.
   */
  async function recordPublished(pc: PublishRow, result: Recorded, ctx: Context): Promise<void> {
    const publishedAt = result.publishedAt ? new Date(result.publishedAt) : now();
    await recordDurably(
      ctx,
      async (em) => {
        if (!pc.followUps) return channelPublished(em, pc, publishedAt, result);
        await em.nativeUpdate(
          PostChannel,
          { id: pc.id, platformPostId: null },
          { platformPostId: result.platformPostId, url: result.url, publishedAt },
        );
        return [];
      },
      pc.followUps
        ? undefined
        : async (em) => {
            const { text, params } = channelPublishedUpdate(pc, publishedAt, result, true);
            const [row] = await sql<{ wanted: boolean }>(em, text, params);
            return !row!.wanted;
          },
    );
  }

  /** A follow-up is out; the last one publishes the channel, in the same transaction. */
  async function recordFollowUp(pc: PublishRow, item: IPostChannelItem, last: boolean, result: Recorded, ctx: Context) {
    const publishedAt = result.publishedAt ? new Date(result.publishedAt) : now();
    await recordDurably(ctx, async (em) => {
      await em.nativeUpdate(
        PostChannelItem,
        { id: item.id, status: { $ne: 'published' } },
        {
          status: 'published',
          platformPostId: result.platformPostId,
          url: result.url,
          publishedAt,
          error: null,
          errorCode: null,
          retryable: null,
        },
      );
      return last ? channelPublished(em, pc, pc.publishedAt ?? publishedAt) : [];
    });
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

  /** The channels to publish, each with its number of follow-up items when it has any. */
  async function targetsOf(em: EntityManager, post: IPost, pcs: IPostChannel[]): Promise<PublishTarget[]> {
    const asked = post.thread !== null || post.firstComment !== null || Object.keys(post.threadByPlatform ?? {}).length > 0;
    const items = asked && pcs.length ? await em.find(PostChannelItem, { postChannel: { $in: pcs.map((pc) => pc.id) } }) : [];
    for (const item of items) if (item.status !== 'published') item.status = 'publishing';
    return pcs.map((pc) => {
      const followUps = items.filter((i) => i.postChannel === pc.id).length;
      return followUps ? { channelId: pc.channel, platform: pc.platform, followUps } : { channelId: pc.channel, platform: pc.platform };
    });
  }

  return {
    /** Fails (retryably) until the API's insert of the post row is visible. */
    async confirmPost(postId: string): Promise<void> {
      const [post] = await sql(deps.orm.em.fork(), 'select 1 from posts where id = ?', [postId]);
      if (!post) throw ApplicationFailure.retryable(`post ${postId} is not in the database (yet)`, FAILURE.notVisible);
    },

    async applyPostEdit({ postId, edit }: { postId: string; edit: PostEdit }): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        if (post.status !== 'scheduled') return [];
        // Asked for again: post.approval.requested, once (a retried activity finds it written).
        const requested = edit.approval !== undefined && !sameApproval(post.approval, edit.approval);
        if (edit.approval !== undefined) post.approval = edit.approval;
        // Every field of the post's content the edit gives (domain/posts/content.ts), as validated.
        Object.assign(post, contentOf(edit));
        if (edit.publishAt !== undefined) post.scheduledAt = new Date(edit.publishAt);
        const pcs = await em.find(PostChannel, { post: postId });
        for (const pc of pcs) {
          const text = edit.channelContent[pc.channel];
          if (text !== undefined) pc.content = text;
        }
        if (edit.channelIds !== undefined) await replaceChannels(em, post, pcs, edit.channelIds, edit.channelContent);
        if (edit.channelItems !== undefined) {
          await em.flush();
          // A scheduled post's follow-ups are drafts: replaced whole, channel by channel.
          const now = new Date();
          const channels = await em.find(PostChannel, { post: postId });
          await em.nativeDelete(PostChannelItem, { postChannel: { $in: channels.map((pc) => pc.id) } });
          const rows = followUpRows(channels, edit.channelItems, now);
          if (rows.length) await insertFollowUps(em, rows);
        }
        if (!requested) return [];
        await em.flush();
        return webhooks.write(em, post.organization, 'post.approval.requested', (views) => views.post(em, postId));
      });
      await webhooks.dispatch(deps.orm.em, events);
    },

    /**
     * Writes an approve or reject decision (the decideApproval Update's) to the post's approval,
     * with its webhook event; a retried activity finds it written and emits nothing.
     */
    async recordApprovalDecision({ postId, decision }: { postId: string; decision: ApprovalDecision }): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const post = await em.findOneOrFail(Post, { id: postId });
        if (!post.approval || post.status !== 'scheduled') return [];
        const status = decision.decision === 'approve' ? 'approved' : 'rejected';
        if (post.approval.status === status && post.approval.decidedAt === decision.at) return [];
        post.approval = { ...post.approval, status, decidedBy: decision.by, decidedAt: decision.at, comment: decision.comment };
        await em.flush();
        return webhooks.write(em, post.organization, `post.approval.${status}`, (views) => views.post(em, postId));
      });
      await webhooks.dispatch(deps.orm.em, events);
    },

    /**
     * Marks the post publishing; returns the channels still to publish (not already published),
     * each with its number of follow-up items when it has any; null when the post has no row
     * (not committed yet, or withdrawn after its start failed).
     */
    async startPublishing(postId: string): Promise<PublishTarget[] | null> {
      // One statement (atomic on its own, no BEGIN and COMMIT): every post runs this once, inside
      // its workflow task. The post moves to publishing when scheduled; its channels not published,
      // in id order, with their follow-up items' count (only a post that asked for follow-ups has
      // any), move too, and so do those items not sent; updated_at moves only on a row whose status
      // changes. No row: the post has none; one row without a channel: nothing left to publish.
      const at = now();
      const rows = await sql<{ channelId: string | null; platform: Platform | null; followUps: number }>(
        deps.orm.em.fork(),
        `with p as (
           select id, (thread is not null or first_comment is not null or thread_by_platform <> '{}'::jsonb) as asked
           from posts where id = ?),
         moved as (
           update posts set status = 'publishing', updated_at = ? where id = (select id from p) and status = 'scheduled'),
         u as (
           update post_channels set status = 'publishing', updated_at = case when status = 'publishing' then updated_at else ? end
           where post_id = (select id from p) and status <> 'published' returning id, channel_id, platform),
         items as (
           update post_channel_items set status = 'publishing', updated_at = ?
           where (select asked from p) and post_channel_id in (select id from u) and status not in ('published', 'publishing'))
         select u.channel_id as "channelId", u.platform,
           case when p.asked and u.id is not null
             then (select count(*)::int from post_channel_items i where i.post_channel_id = u.id) else 0 end as "followUps"
         from p left join u on true order by u.id`,
        [postId, at, at, at],
      );
      if (!rows.length) return null;
      return rows.flatMap(({ channelId, platform, followUps }) =>
        channelId === null || platform === null ? [] : [followUps ? { channelId, platform, followUps } : { channelId, platform }],
      );
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
      const pc = await publishRow(postId, channelId);
      // Already sent (a retry, a replay or a reset in the Temporal UI): never send twice. A
      // channel with follow-ups records the post's id before it is published.
      if (pc.platformPostId) return { platformPostId: pc.platformPostId, url: pc.url ?? '' };
      const item = { text: await textToSend(pc, pc.content), mediaIds: pc.mediaIds, idempotencyKey: `${postId}:${channelId}` };
      return sendOnce(
        () => send(pc, () => countAttempt('post_channels', pc.id), item, Context.current(), retry),
        (sent, ctx) => recordPublished(pc, sent, ctx),
      );
    },

    /**
     * Follow-up item `position` (1, 2, …) of a channel whose post is out: a reply to the item
     * before (or a comment under the post), sent only once that item is recorded with its
     * platform id, and recorded before the next one is sent. Idempotent as publishToChannel:
     * an item already recorded is not sent again; its own idempotency key and the look-up before
     * a re-send find one whose answer was lost.
     */
    async publishFollowUp({
      postId,
      channelId,
      position,
      retry = false,
    }: {
      postId: string;
      channelId: string;
      position: number;
      retry?: boolean;
    }): Promise<{ platformPostId: string; url: string }> {
      const pc = await publishRow(postId, channelId);
      const items = await deps.orm.em.fork().find(PostChannelItem, { postChannel: pc.id }, { orderBy: { position: 'asc' } });
      const item = items.find((i) => i.position === position);
      if (!item) throw refusal(FAILURE.permanent, `the post has no follow-up ${position} on channel ${channelId}`, 'unknown');
      if (item.status === 'published' && item.platformPostId) return { platformPostId: item.platformPostId, url: item.url ?? '' };
      const root = pc.platformPostId ? { platformPostId: pc.platformPostId, url: pc.url ?? '' } : null;
      const before = item.kind === 'comment' || position === 1 ? root : items.find((i) => i.position === position - 1);
      const parent = before?.platformPostId ? { platformPostId: before.platformPostId, url: before.url ?? '' } : null;
      // The workflow sends the items in order: an item before that is not recorded is a bug, not a platform failure.
      if (!root || !parent) throw refusal(FAILURE.permanent, `follow-up ${position} has no published item to answer`, 'unknown');
      const last = position === items.at(-1)!.position;
      const what = {
        text: await textToSend(pc, item.content),
        mediaIds: item.mediaIds,
        idempotencyKey: `${postId}:${channelId}:${position}`,
        replyTo: { root, parent },
      };
      return sendOnce(
        () => send(pc, () => countAttempt('post_channel_items', item.id), what, Context.current(), retry),
        (sent, ctx) => recordFollowUp(pc, item, last, sent, ctx),
      );
    },

    /**
     * errorCode and retryable: optional, as workflows that older code ran send only the error.
     * `position`: the item that failed (a follow-up; absent or 0: the post itself); it carries the
     * reason, the items after it stay unsent (draft), and the channel fails with the reason.
     */
    async recordChannelFailure({
      postId,
      channelId,
      error,
      errorCode,
      retryable,
      position = 0,
    }: { postId: string; channelId: string; position?: number } & Pick<ChannelFailure, 'error'> &
      Partial<ChannelFailureClass>): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const pc = await em.findOneOrFail(PostChannel, { post: postId, channel: channelId });
        if (pc.status === 'published') return [];
        const was = pc.status;
        const reason = error.slice(0, 2000);
        pc.status = 'failed';
        pc.errorCode = errorCode ?? null;
        pc.retryable = errorCode ? (retryable ?? null) : null;
        const items = await em.find(PostChannelItem, { postChannel: pc.id, status: { $ne: 'published' } });
        for (const item of items) {
          const failed = item.position === position;
          item.status = failed ? 'failed' : 'draft';
          item.error = failed ? reason : null;
          item.errorCode = failed ? pc.errorCode : null;
          item.retryable = failed ? pc.retryable : null;
        }
        const kind = items.find((i) => i.position === position)?.kind;
        pc.error = kind ? `${kind === 'comment' ? 'The first comment' : `Reply ${position}`} failed: ${reason}`.slice(0, 2000) : reason;
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
    async startRetry(postId: string): Promise<PublishTarget[]> {
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
        return targetsOf(em, post, todo);
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

    /**
     * published when every channel is; failed when all are done and at least one failed. One
     * statement when no endpoint wants the post's outcome (or it is already recorded); when one
     * does, a transaction writes the status and its event together.
     */
    async finishPost(postId: string): Promise<'published' | 'failed'> {
      const [alone] = await sql<Finished>(deps.orm.em.fork(), FINISH_UNLESS_WANTED, [postId, now()]);
      if (!alone) throw new Error(`post ${postId} not found`);
      if (alone.status === alone.toStatus || !alone.wanted) return alone.toStatus;
      const { status, events } = await deps.orm.em.fork().transactional(async (em) => {
        const [post] = await sql<Finished>(em, FINISH, [postId, now()]);
        if (!post) throw new Error(`post ${postId} not found`);
        // Only a change of status made here emits (a retried or concurrent finishPost finds it made).
        const events =
          post.changed && post.status !== post.toStatus
            ? await webhooks.write(em, post.organizationId, `post.${post.toStatus}`, (views) => views.post(em, postId))
            : [];
        return { status: post.toStatus, events };
      });
      await webhooks.dispatch(deps.orm.em, events);
      return status;
    },
  };
}
