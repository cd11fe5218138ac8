// Activities of what the team does about a comment on its platform (workflows/comment-actions.ts):
// a reply published once (activities/sending.ts: the idempotency key, the look-up before a
// re-send, the platform's answer kept across attempts) and recorded with its event; a decision on
// a reply waiting for one; a hide, a show-again, a delete of our reply. Each is idempotent: a
// retried activity finds its change made and makes it, and emits it, no second time.
import type { Context } from '@temporalio/activity';
import { Context as ActivityContext } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommentModeration } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import { getComment } from '../domain/inbox/comments.ts';
import { getReply } from '../domain/inbox/replies.ts';
import { newId } from '../lib/ids.ts';
import type { CommentTarget, Connectors } from '../platforms/types.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { CommentModerationAction } from '../workflows/comment-actions-types.ts';
import { FAILURE, type ApprovalDecision } from '../workflows/post-types.ts';
import type { ChannelFailure } from '../workflows/publish-failure-types.ts';
import { createSending, type Recorded, refusal, type SendTarget } from './sending.ts';
import type { WebhookEmitter } from './webhook-events.ts';

export interface CommentActionDeps {
  orm: Orm;
  connectors: Connectors;
  credentialsKey?: Buffer;
  storage?: ObjectStorage;
  now?: () => Date;
}

/** A reply with what sending it needs: its comment, the post it is under, and the channel. */
interface ReplyRow extends SendTarget {
  id: string;
  organizationId: string;
  commentId: string;
  content: string;
  status: string;
  platformReplyId: string | null;
  url: string | null;
  commentPlatformId: string;
  commentUrl: string | null;
  postId: string;
  postChannelId: string;
  postPlatformId: string | null;
  postUrl: string | null;
}

/** A comment with what hiding it needs. */
interface CommentRow extends SendTarget {
  id: string;
  organizationId: string;
  platformCommentId: string;
  url: string | null;
  postPlatformId: string | null;
  postUrl: string | null;
  moderation: CommentModeration | null;
}

const CHANNEL_COLUMNS = `ch.id as "channelId", ch.platform, ch.name as "channelName", ch.status as "channelStatus",
  ch.credentials_encrypted as "credentialsEncrypted"`;

export function createCommentActionActivities(deps: CommentActionDeps, webhooks: WebhookEmitter) {
  const now = deps.now ?? (() => new Date());
  const { send, sendOnce, onPlatform, recordDurably } = createSending(deps, webhooks);

  async function replyRow(replyId: string): Promise<ReplyRow> {
    const [row] = await sql<Omit<ReplyRow, 'scheduledAt'> & { scheduledAt: string }>(
      deps.orm.em.fork(),
      `select r.id, r.organization_id as "organizationId", r.comment_id as "commentId", r.content, r.status,
         r.platform_reply_id as "platformReplyId", r.url, r.created_at as "scheduledAt",
         c.platform_comment_id as "commentPlatformId", c.url as "commentUrl", c.post_id as "postId",
         c.post_channel_id as "postChannelId", pc.platform_post_id as "postPlatformId", pc.url as "postUrl", ${CHANNEL_COLUMNS}
       from comment_replies r join comments c on c.id = r.comment_id join post_channels pc on pc.id = c.post_channel_id
         join channels ch on ch.id = r.channel_id
       where r.id = ?`,
      [replyId],
    );
    if (!row) throw refusal(FAILURE.permanent, `reply ${replyId} is not there`, 'unknown');
    return { ...row, scheduledAt: new Date(row.scheduledAt) };
  }

  async function commentRow(commentId: string): Promise<CommentRow> {
    const [row] = await sql<Omit<CommentRow, 'scheduledAt'>>(
      deps.orm.em.fork(),
      `select c.id, c.organization_id as "organizationId", c.platform_comment_id as "platformCommentId", c.url, c.moderation,
         pc.platform_post_id as "postPlatformId", pc.url as "postUrl", ${CHANNEL_COLUMNS}
       from comments c join post_channels pc on pc.id = c.post_channel_id join channels ch on ch.id = c.channel_id
       where c.id = ?`,
      [commentId],
    );
    if (!row) throw refusal(FAILURE.permanent, `comment ${commentId} is not there`, 'unknown');
    return { ...row, scheduledAt: new Date(0) };
  }

  /** The reply's change and its event (comment.reply.published or .failed), with the comment answered. */
  async function replyEvent(em: EntityManager, r: { id: string; organizationId: string; commentId: string }, type: 'published' | 'failed') {
    return webhooks.write(em, r.organizationId, `comment.reply.${type}`, async () => ({
      reply: await getReply(em, r.organizationId, r.id, 'all'),
      comment: await getComment(em, r.organizationId, r.commentId, 'all'),
    }));
  }

  /**
   * The reply is out: published, its comment `replied`, and the reply itself a comment of the
   * conversation (ours), stored once as the comments sweep would store it.
   */
  async function recordReply(r: ReplyRow, sent: Recorded, ctx: Context): Promise<void> {
    const publishedAt = sent.publishedAt ? new Date(sent.publishedAt) : now();
    await recordDurably(ctx, async (em) => {
      const changed = await sql(
        em,
        `update comment_replies set status = 'published', platform_reply_id = ?, url = ?, published_at = ?, error = null,
           error_code = null, retryable = null, updated_at = ?
         where id = ? and status = 'publishing' returning id`,
        [sent.platformPostId, sent.url, publishedAt, now(), r.id],
      );
      if (!changed.length) return [];
      await sql(em, `update comments set status = 'replied', updated_at = ? where id = ? and status in ('unread', 'read')`, [
        now(),
        r.commentId,
      ]);
      await sql(
        em,
        `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
           author_name, text, written_at, url, ours, status, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true, 'read', ?, ?) on conflict do nothing`,
        [
          newId('cmt'),
          r.organizationId,
          r.postId,
          r.postChannelId,
          r.channelId,
          sent.platformPostId,
          r.commentPlatformId,
          r.channelName,
          r.content.replaceAll('\u0000', ''),
          publishedAt,
          sent.url,
          now(),
          now(),
        ],
      );
      return replyEvent(em, r, 'published');
    });
  }

  /** The moderation of a comment as it ends, when it is still the one asked for (a later ask replaces it). */
  async function recordModeration(
    c: CommentRow,
    action: 'hide' | 'unhide',
    outcome: Pick<CommentModeration, 'status' | 'error' | 'errorCode'>,
  ) {
    const status = outcome.status !== 'done' ? null : action === 'hide' ? 'hidden' : 'read';
    await sql(
      deps.orm.em.fork(),
      `update comments set moderation = moderation || ?::jsonb,
         status = case when ?::text is null then status when ?::text = 'read' and status <> 'hidden' then status else ? end,
         updated_at = ?
       where id = ? and moderation->>'action' = ? and moderation->>'status' = 'pending'`,
      [JSON.stringify(outcome), status, status, status, now(), c.id, action],
    );
  }

  return {
    /**
     * Publishes the reply once (a reply already recorded is not sent again); null when it is no
     * longer to be sent (deleted or decided against meanwhile).
     */
    async publishCommentReply({ replyId }: { replyId: string }): Promise<{ platformPostId: string; url: string } | null> {
      const r = await replyRow(replyId);
      if (r.platformReplyId) return { platformPostId: r.platformReplyId, url: r.url ?? '' };
      if (r.status !== 'publishing') return null;
      if (!r.postPlatformId) throw refusal(FAILURE.permanent, 'the post of this comment has no published item', 'unknown');
      const item = {
        text: r.content,
        mediaIds: [],
        idempotencyKey: `reply:${replyId}`,
        replyTo: {
          root: { platformPostId: r.postPlatformId, url: r.postUrl ?? '' },
          parent: { platformPostId: r.commentPlatformId, url: r.commentUrl ?? '' },
        },
      };
      const ctx = ActivityContext.current();
      const countAttempt = () => sql(deps.orm.em.fork(), 'update comment_replies set attempts = attempts + 1 where id = ?', [replyId]);
      return sendOnce(
        () => send(r, countAttempt, item, ctx, false),
        (sent, c) => recordReply(r, sent, c),
      );
    },

    /** The reply failed: the reason and its class, announced once; a reply no longer waiting or publishing is left as it is. */
    async recordReplyFailure({ replyId, error, errorCode, retryable }: { replyId: string } & ChannelFailure): Promise<void> {
      const events = await deps.orm.em.fork().transactional(async (em) => {
        const changed = await sql<{ organizationId: string; commentId: string }>(
          em,
          `update comment_replies set status = 'failed', error = ?, error_code = ?, retryable = ?, updated_at = ?
           where id = ? and status in ('publishing', 'pending_approval')
           returning organization_id as "organizationId", comment_id as "commentId"`,
          [error.slice(0, 2000), errorCode, retryable, now(), replyId],
        );
        const r = changed[0];
        return r ? replyEvent(em, { id: replyId, ...r }, 'failed') : [];
      });
      await webhooks.dispatch(deps.orm.em, events);
    },

    /** An approve or reject decision (the decideReply Update's), written to the reply waiting for one. */
    async recordReplyDecision({ replyId, decision }: { replyId: string; decision: ApprovalDecision }): Promise<void> {
      const status = decision.decision === 'approve' ? 'approved' : 'rejected';
      await sql(
        deps.orm.em.fork(),
        `update comment_replies set status = ?,
           approval = approval || jsonb_build_object('status', ?::text, 'decidedBy', ?::jsonb, 'decidedAt', ?::text, 'comment', ?::text),
           updated_at = ?
         where id = ? and status = 'pending_approval'`,
        [
          status === 'approved' ? 'publishing' : 'rejected',
          status,
          JSON.stringify(decision.by),
          decision.at,
          decision.comment,
          now(),
          replyId,
        ],
      );
    },

    /**
     * A hide or show-again of a comment (`id` a comment), or the delete of our reply (`id` a
     * reply), on the platform, then recorded. The platform's calls are idempotent, so a retried
     * activity asks again.
     */
    async moderateComment({ action, id }: { action: CommentModerationAction; id: string }): Promise<void> {
      const ctx = ActivityContext.current();
      if (action === 'delete') {
        const r = await replyRow(id);
        if (r.status !== 'deleting') return;
        if (r.platformReplyId && r.postPlatformId) {
          const target: CommentTarget = {
            platformCommentId: r.platformReplyId,
            url: r.url,
            post: { platformPostId: r.postPlatformId, url: r.postUrl ?? '' },
          };
          await onPlatform(r, ctx, async (connector, credentials) => {
            if (!connector.deletePublished) throw refusal(FAILURE.permanent, `${r.platform} replies cannot be deleted`, 'unknown');
            await connector.deletePublished(credentials, target, ctx.cancellationSignal);
          });
        }
        await deps.orm.em.fork().transactional(async (em) => {
          await sql(
            em,
            `update comment_replies set status = 'deleted', error = null, error_code = null, retryable = null, updated_at = ? where id = ? and status = 'deleting'`,
            [now(), id],
          );
          // Gone from the conversation as from the platform.
          if (r.platformReplyId)
            await sql(em, 'delete from comments where channel_id = ? and platform_comment_id = ? and ours', [
              r.channelId,
              r.platformReplyId,
            ]);
        });
        return;
      }
      const c = await commentRow(id);
      if (c.moderation?.action !== action || c.moderation.status !== 'pending') return;
      if (!c.postPlatformId) throw refusal(FAILURE.permanent, 'the post of this comment has no published item', 'unknown');
      const target: CommentTarget = {
        platformCommentId: c.platformCommentId,
        url: c.url,
        post: { platformPostId: c.postPlatformId, url: c.postUrl ?? '' },
      };
      await onPlatform(c, ctx, async (connector, credentials) => {
        if (!connector.hideComment) throw refusal(FAILURE.permanent, `${c.platform} comments cannot be hidden`, 'unknown');
        await connector.hideComment(credentials, target, action === 'hide', ctx.cancellationSignal);
      });
      await recordModeration(c, action, { status: 'done', error: null, errorCode: null });
    },

    /** A hide, show-again or delete that failed: on the comment, or on the reply (published still, with the reason). */
    async recordModerationFailure({
      action,
      id,
      error,
      errorCode,
      retryable,
    }: { action: CommentModerationAction; id: string } & ChannelFailure): Promise<void> {
      if (action === 'delete') {
        await sql(
          deps.orm.em.fork(),
          `update comment_replies set status = 'published', error = ?, error_code = ?, retryable = ?, updated_at = ? where id = ? and status = 'deleting'`,
          [`The delete failed: ${error}`.slice(0, 2000), errorCode, retryable, now(), id],
        );
        return;
      }
      const c = await commentRow(id);
      await recordModeration(c, action, { status: 'failed', error: error.slice(0, 2000), errorCode });
    },
  };
}
