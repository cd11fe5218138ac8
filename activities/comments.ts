// Collecting the comments under published posts (domain/inbox/collection.ts states when): the
// comments sweep (workflows/comments-sweep.ts) follows each published channel post of a platform
// that lists its comments, claims the reads that fell due, and stores each comment once per
// (channel, platform comment id), however often it is read.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FOLLOW_FOR, nextReadAt } from '../domain/inbox/collection.ts';
import { getComment } from '../domain/inbox/comments.ts';
import { sql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';
import { safeHttpUrl } from '../lib/urls.ts';
import type { Platform } from '../platforms/catalog.ts';
import { PlatformError, type PlatformComment } from '../platforms/types.ts';
import { FAILURE } from '../workflows/post-types.ts';
import type { CommentsSweepInput, CommentsSweepResult } from '../workflows/comments-sweep-types.ts';
import { createChannelCredentials } from './channel-credentials.ts';
import { CLAIM_MS, type MetricsActivityDeps, NEEDS_RECONNECT } from './metrics.ts';
import type { WebhookEmitter } from './webhook-events.ts';

/** What the comments sweep reads with: the metrics sweep's dependencies. */
export type CommentsActivityDeps = MetricsActivityDeps;

interface DueRow {
  id: string;
  post_id: string;
  channel_id: string;
  platform: Platform;
  platform_post_id: string;
  url: string | null;
  /** As the driver gives it (a string through the ORM's connection). */
  published_at: Date | string;
  channel_status: string;
  organization_id: string;
  /** The platform ids of the post's own thread items: they are the post, not comments on it. */
  item_ids: string[];
}

/** Postgres refuses NUL in text; a platform's text is stored without it. */
const clean = (s: string) => s.replaceAll('\u0000', '');

export function createCommentsActivities(deps: CommentsActivityDeps, webhooks: WebhookEmitter) {
  const now = deps.now ?? (() => new Date());
  const credentials = createChannelCredentials(deps, webhooks);
  const readable = () => (Object.keys(deps.connectors) as Platform[]).filter((p) => deps.connectors[p]?.readComments);

  /** Follows the published channel posts of the last FOLLOW_FOR not followed yet: due at once (rule 1). */
  async function follow(at: Date, limit: number): Promise<void> {
    const platforms = readable();
    if (!platforms.length) return;
    await sql(
      deps.orm.em.fork(),
      `insert into comment_follows (post_channel_id, next_at)
       select pc.id, ? from post_channels pc
        where pc.status = 'published' and pc.published_at > ? and pc.platform in (?) and pc.platform_post_id is not null
          and not exists (select 1 from comment_follows f where f.post_channel_id = pc.id)
        order by pc.published_at limit ?
       on conflict do nothing`,
      [at, new Date(at.getTime() - FOLLOW_FOR), platforms, limit],
    );
  }

  /** What a read needs of a channel post (`picked`: a CTE of post_channel_id). */
  const DUE = `select pc.id, pc.post_id, pc.channel_id, pc.platform, pc.platform_post_id, pc.url, pc.published_at,
      c.status as channel_status, c.organization_id,
      array(select i.platform_post_id from post_channel_items i where i.post_channel_id = pc.id and i.platform_post_id is not null) as item_ids
    from picked join post_channels pc on pc.id = picked.post_channel_id join channels c on c.id = pc.channel_id`;

  /** The reads due now, claimed: their time moves CLAIM_MS ahead in the statement that picks them, so two sweeps never read one post at once. */
  function claim(at: Date, limit: number): Promise<DueRow[]> {
    return sql<DueRow>(
      deps.orm.em.fork(),
      `with due as (
         select post_channel_id from comment_follows where next_at <= ? order by next_at limit ? for update skip locked
       ),
       picked as (
         update comment_follows f set next_at = ? from due where f.post_channel_id = due.post_channel_id
         returning f.post_channel_id
       )
       ${DUE}`,
      [at, limit, new Date(at.getTime() + CLAIM_MS)],
    );
  }

  /** A read asked for: every followed channel of the post (domain/inbox/refresh.ts followed and claimed them). */
  function asked(postId: string, limit: number): Promise<DueRow[]> {
    return sql<DueRow>(
      deps.orm.em.fork(),
      `with picked as (
         select f.post_channel_id from comment_follows f join post_channels pc on pc.id = f.post_channel_id
          where pc.post_id = ? and pc.status = 'published' limit ?
       )
       ${DUE}`,
      [postId, limit],
    );
  }

  /**
   * After a read: when the next one is (null: no longer followed; undefined: where it was, for a
   * read asked for), and why it failed.
   */
  async function done(row: DueRow, at: Date, next: Date | null | undefined, error: string | null): Promise<void> {
    await sql(
      deps.orm.em.fork(),
      `update comment_follows set next_at = case when ?::boolean then ?::timestamptz else next_at end, last_read_at = ?, error = ? where post_channel_id = ?`,
      [next !== undefined, next ?? null, at, error, row.id],
    );
  }

  /** Stores the comments not stored yet (the post's own thread items left out); returns how many were new. */
  async function store(row: DueRow, comments: PlatformComment[], at: Date): Promise<number> {
    const own = new Set([row.platform_post_id, ...row.item_ids]);
    const input = comments
      .filter((c) => !own.has(c.platformCommentId))
      .map((c) => {
        const written = Date.parse(c.createdAt);
        return {
          id: newId('cmt'),
          platform_comment_id: clean(c.platformCommentId),
          parent_platform_id: clean(c.parentPlatformId),
          author_name: c.author.name === null ? null : clean(c.author.name),
          author_handle: c.author.handle === null ? null : clean(c.author.handle),
          // Links others hand us are kept only when they are http(s) (lib/urls.ts).
          author_avatar_url: safeHttpUrl(c.author.avatarUrl),
          author_profile_url: safeHttpUrl(c.author.profileUrl),
          text: clean(c.text),
          written_at: new Date(Number.isNaN(written) ? at.getTime() : written).toISOString(),
          url: safeHttpUrl(c.url),
          ours: c.ours,
        };
      });
    if (!input.length) return 0;
    // With the new comments, in their transaction, their comment.received events (a read repeated inserts nothing, so sends none).
    const { count, deliveries } = await deps.orm.em.fork().transactional(async (tx) => {
      const inserted = await insert(tx, row, input, at);
      const ids: string[] = [];
      for (const { id, ours } of inserted) {
        if (ours) continue;
        ids.push(
          ...(await webhooks.write(tx, row.organization_id, 'comment.received', async () => ({
            ...(await getComment(tx, row.organization_id, id, 'all')),
          }))),
        );
      }
      return { count: inserted.length, deliveries: ids };
    });
    await webhooks.dispatch(deps.orm.em, deliveries);
    return count;
  }

  function insert(tx: EntityManager, row: DueRow, input: unknown[], at: Date) {
    return sql<{ id: string; ours: boolean }>(
      tx,
      `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
         author_name, author_handle, author_avatar_url, author_profile_url, text, written_at, url, ours, created_at, updated_at)
       select i.id, ?, ?, ?, ?, i.platform_comment_id, i.parent_platform_id, i.author_name, i.author_handle, i.author_avatar_url,
         i.author_profile_url, i.text, i.written_at, i.url, i.ours, ?, ?
       from jsonb_to_recordset(?::jsonb) as i(id text, platform_comment_id text, parent_platform_id text, author_name text,
         author_handle text, author_avatar_url text, author_profile_url text, text text, written_at timestamptz, url text, ours boolean)
       on conflict (channel_id, platform_comment_id) do nothing
       returning id, ours`,
      [row.organization_id, row.post_id, row.id, row.channel_id, at, at, JSON.stringify(input)],
    );
  }

  return {
    /**
     * The reads due now, at most `limit` channel posts, oldest due first, after following what was
     * published since the last run. Each read is recorded as soon as it is made, so a retried
     * attempt reads only what is still due (a read cut off is due again when its claim runs out).
     */
    async collectDueComments({ limit, postId }: Pick<CommentsSweepInput, 'limit' | 'postId'>): Promise<CommentsSweepResult> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      const at = now();
      if (postId === undefined) await follow(at, limit);
      const due = postId === undefined ? await claim(at, limit) : await asked(postId, limit);
      // A read asked for moves no scheduled read (rule 2), unless the post is gone.
      const next = (published: Date, ok: boolean) => (postId === undefined ? nextReadAt(published, at, ok) : undefined);
      const result: CommentsSweepResult = { read: 0, failed: 0, stopped: 0, stored: 0 };
      for (const row of due) {
        signal.throwIfAborted();
        ctx.heartbeat();
        const published = new Date(row.published_at);
        const connector = deps.connectors[row.platform];
        if (!connector?.readComments || !deps.credentialsKey) {
          await done(row, at, null, 'this platform lists no comments');
          result.stopped++;
          continue;
        }
        if (row.channel_status === 'reauth_required') {
          await done(row, at, next(published, false), NEEDS_RECONNECT);
          result.failed++;
          continue;
        }
        try {
          const creds = await credentials.current(row.channel_id, connector, signal);
          const read = await connector.readComments(creds, { platformPostId: row.platform_post_id, url: row.url ?? '' }, signal);
          if (read.gone) {
            await done(row, at, null, 'the post is no longer on the platform');
            result.stopped++;
            continue;
          }
          result.stored += await store(row, read.comments, at);
          await done(row, at, next(published, true), null);
          result.read++;
        } catch (err) {
          // A read cut short by the cancellation is the cancellation, not the platform's failure.
          signal.throwIfAborted();
          const reauth =
            (err instanceof ApplicationFailure && err.type === FAILURE.reauth) || (err instanceof PlatformError && err.kind === 'reauth');
          if (!reauth && !(err instanceof PlatformError)) throw err;
          if (err instanceof PlatformError && reauth) await credentials.markReauthRequired(row.channel_id);
          await done(row, at, next(published, false), reauth ? NEEDS_RECONNECT : (err as Error).message);
          result.failed++;
        }
      }
      return result;
    },
  };
}
