// The comments an organization has collected (activities/comments.ts stores them): a post's
// conversation as a tree, the inbox across the organization, and what the team does about one
// (read or unread, who answers it). An API key limited to channels sees the comments of those
// channels only (domain/key-channels.ts). Rules of a conversation: domain/inbox/collection.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommentModeration, CommentStatus, ReplyStatus } from '../../db/entities/index.ts';
import type { Actor, PostApproval } from '../../db/entities/post.ts';
import { sql } from '../../db/sql.ts';
import { t } from 'elysia';
import { errors } from '../../lib/errors.ts';
import { idPattern } from '../../lib/ids.ts';
import { decodeKeyset, encodeKeyset } from '../../lib/keyset-cursor.ts';
import type { Platform } from '../../platforms/catalog.ts';
import { getPostForKey } from '../posts/view.ts';
import { type KeyChannels, keySees } from '../key-channels.ts';
import { conversation } from './collection.ts';

/** A comment as the API shows it. */
export interface CommentView {
  id: string;
  postId: string;
  channelId: string;
  platform: Platform;
  /** The collected comment it answers; null when it answers the post, one of its thread items, or something not collected. */
  parentId: string | null;
  platformCommentId: string;
  author: { name: string | null; handle: string | null; avatarUrl: string | null; profileUrl: string | null };
  text: string;
  /** When the platform says it was written. */
  createdAt: string;
  url: string | null;
  /** Written by the channel's own account. */
  ours: boolean;
  status: CommentStatus;
  assigneeUserId: string | null;
  /** The last hide or show-again asked for through the service, and how it went; null: none. */
  moderation: CommentModeration | null;
  /** When the service first read it. */
  collectedAt: string;
}

/** A comment of a conversation, with its depth in the tree (0: it answers the post or a thread item). */
export type ConversationEntry = CommentView & { depth: number };

interface Row {
  id: string;
  post_id: string;
  channel_id: string;
  platform: Platform;
  parent_id: string | null;
  platform_comment_id: string;
  parent_platform_id: string;
  author_name: string | null;
  author_handle: string | null;
  author_avatar_url: string | null;
  author_profile_url: string | null;
  text: string;
  written_at: Date | string;
  url: string | null;
  ours: boolean;
  status: CommentStatus;
  assignee_user_id: string | null;
  moderation: CommentModeration | null;
  created_at: Date | string;
}

/** The columns of a view, with the collected parent's id (same channel, the platform id it answers). */
const COLUMNS = `c.id, c.post_id, c.channel_id, ch.platform, parent.id as parent_id, c.platform_comment_id, c.parent_platform_id,
  c.author_name, c.author_handle, c.author_avatar_url, c.author_profile_url, c.text, c.written_at, c.url, c.ours, c.status,
  c.assignee_user_id, c.moderation, c.created_at`;
const FROM = `comments c join channels ch on ch.id = c.channel_id
  left join comments parent on parent.channel_id = c.channel_id and parent.platform_comment_id = c.parent_platform_id`;

function view(r: Row): CommentView {
  return {
    id: r.id,
    postId: r.post_id,
    channelId: r.channel_id,
    platform: r.platform,
    parentId: r.parent_id,
    platformCommentId: r.platform_comment_id,
    author: { name: r.author_name, handle: r.author_handle, avatarUrl: r.author_avatar_url, profileUrl: r.author_profile_url },
    text: r.text,
    createdAt: new Date(r.written_at).toISOString(),
    url: r.url,
    ours: r.ours,
    status: r.status,
    assigneeUserId: r.assignee_user_id,
    moderation: r.moderation,
    collectedAt: new Date(r.created_at).toISOString(),
  };
}

/**
 * GET /v1/posts/{id}/comments: the post's conversation on each of its channels as one tree (rule
 * 4), depth first: each comment followed by those answering it.
 */
export async function postConversation(
  em: EntityManager,
  organizationId: string,
  postId: string,
  keyChannels: KeyChannels,
): Promise<ConversationEntry[]> {
  // The post as the key may see it, or not_found.
  await getPostForKey(em, organizationId, postId, keyChannels === 'all' ? 'all' : [...keyChannels]);
  const rows = await sql<Row>(em, `select ${COLUMNS} from ${FROM} where c.post_id = ? and c.organization_id = ?`, [postId, organizationId]);
  // Platform ids are unique per channel: the tree is keyed by channel and platform id.
  const tree = conversation(
    rows.map((r) => ({
      view: view(r),
      platformCommentId: `${r.channel_id}\n${r.platform_comment_id}`,
      parentPlatformId: `${r.channel_id}\n${r.parent_platform_id}`,
      createdAt: new Date(r.written_at).toISOString(),
    })),
  );
  const out: ConversationEntry[] = [];
  const walk = (nodes: typeof tree, depth: number) => {
    for (const n of nodes) {
      out.push({ ...n.view, depth });
      walk(n.replies, depth + 1);
    }
  };
  walk(tree, 0);
  return out;
}

export interface InboxFilters {
  channelId?: string;
  postId?: string;
  status?: CommentStatus;
  /** A member's user id, or `none`: comments no one answers yet. */
  assignee?: string;
  /** Written at or after. */
  since?: Date;
  limit: number;
  cursor?: string;
}

const COMMENT_ID = new RegExp(idPattern('cmt'));

/**
 * What the team may set on a comment and filter the inbox by, as schemas the API and the MCP
 * tools both take (the other statuses follow from a reply and a hide).
 */
export const COMMENT_FIELDS = {
  status: t.Union([t.Literal('read'), t.Literal('unread')], { error: 'must be read or unread', description: 'read or unread.' }),
  assigneeUserId: t.Union([t.String({ pattern: idPattern('usr'), error: 'must be a user id (usr_…)' }), t.Null()], {
    description: 'A member of the organization (`usr_…`), or null for no one.',
  }),
  assignee: t.String({
    pattern: `${idPattern('usr')}|^none$`,
    error: 'must be a member’s user id or none',
    description: 'A member’s user id (`usr_…`): the comments given to them; `none`: those given to no one.',
  }),
};

/**
 * The inbox: what people wrote under the organization's posts (not its own replies), by the
 * filters. `newest` (GET /v1/inbox): newest first. `unread-first` (the web app's Inbox): unread
 * ones first, then the others, each part newest first, so what still needs a look is on top; its
 * cursor holds the part (`u.` unread, `o.` the others) before the last row's keyset.
 */
export async function listInbox(
  em: EntityManager,
  organizationId: string,
  keyChannels: KeyChannels,
  f: InboxFilters,
  order: 'newest' | 'unread-first' = 'newest',
): Promise<{ data: CommentView[]; nextCursor: string | null }> {
  const where = ['c.organization_id = ?', 'not c.ours'];
  const params: unknown[] = [organizationId];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  // An id holding NUL names nothing (and Postgres refuses NUL in a text).
  if ([f.channelId, f.postId, f.assignee].some((id) => id?.includes('\u0000'))) return { data: [], nextCursor: null };
  if (keyChannels !== 'all') {
    if (!keyChannels.length) return { data: [], nextCursor: null };
    add('c.channel_id in (?)', [...keyChannels]);
  }
  if (f.channelId !== undefined) add('c.channel_id = ?', f.channelId);
  if (f.postId !== undefined) add('c.post_id = ?', f.postId);
  if (f.status !== undefined) add('c.status = ?', f.status);
  if (f.assignee === 'none') add('c.assignee_user_id is null');
  else if (f.assignee !== undefined) add('c.assignee_user_id = ?', f.assignee);
  if (f.since !== undefined) add('c.written_at >= ?', f.since);
  // false (unread) sorts before true (the others).
  const seen = `(c.status <> 'unread')`;
  const parted = order === 'unread-first';
  if (f.cursor !== undefined) {
    const part = parted ? f.cursor.slice(0, 2) : '';
    if (parted && part !== 'u.' && part !== 'o.')
      throw errors.validation([{ path: 'cursor', message: 'is not a cursor returned by this API' }]);
    const k = decodeKeyset(f.cursor.slice(part.length), COMMENT_ID);
    if (!parted) add('(c.written_at, c.id) < (?, ?)', k.at, k.id);
    else {
      const read = part === 'o.';
      add(`(${seen} > ? or (${seen} = ? and (c.written_at, c.id) < (?, ?)))`, read, read, k.at, k.id);
    }
  }
  const rows = await sql<Row>(
    em,
    `select ${COLUMNS} from ${FROM} where ${where.join(' and ')} order by ${parted ? `${seen}, ` : ''}c.written_at desc, c.id desc limit ?`,
    [...params, f.limit + 1],
  );
  const shown = rows.slice(0, f.limit).map(view);
  const last = shown.at(-1);
  if (rows.length <= f.limit || !last) return { data: shown, nextCursor: null };
  const keyset = encodeKeyset(new Date(last.createdAt), last.id);
  return { data: shown, nextCursor: parted ? `${last.status === 'unread' ? 'u.' : 'o.'}${keyset}` : keyset };
}

/** A comment of the organization on a channel the key sees, or not_found. */
export async function getComment(em: EntityManager, organizationId: string, id: string, keyChannels: KeyChannels): Promise<CommentView> {
  if (!COMMENT_ID.test(id)) throw errors.notFound('Comment');
  const [row] = await sql<Row>(em, `select ${COLUMNS} from ${FROM} where c.id = ? and c.organization_id = ?`, [id, organizationId]);
  if (!row || !keySees(keyChannels, [row.channel_id])) throw errors.notFound('Comment');
  return view(row);
}

export interface CommentChange {
  /** Read or unread; `replied` and `hidden` follow from a reply and a hide. */
  status?: 'read' | 'unread';
  /** A member of the organization, or null: no one. */
  assigneeUserId?: string | null;
}

/** PATCH /v1/comments/{id}: marks it read or unread, gives it to a member or to no one. */
export async function updateComment(
  em: EntityManager,
  organizationId: string,
  id: string,
  keyChannels: KeyChannels,
  change: CommentChange,
  now: Date,
): Promise<CommentView> {
  await getComment(em, organizationId, id, keyChannels);
  if (change.assigneeUserId) {
    const [member] = await sql(em, 'select 1 from memberships where organization_id = ? and user_id = ?', [
      organizationId,
      change.assigneeUserId,
    ]);
    if (!member) throw errors.validation([{ path: 'assigneeUserId', message: 'is not a member of the organization' }]);
  }
  await sql(
    em,
    `update comments set updated_at = ?, status = coalesce(?, status),
       assignee_user_id = case when ? then ? else assignee_user_id end
     where id = ? and organization_id = ?`,
    [now, change.status ?? null, change.assigneeUserId !== undefined, change.assigneeUserId ?? null, id, organizationId],
  );
  return getComment(em, organizationId, id, keyChannels);
}

/** Per post, the comments others wrote under it: how many, and how many are unread. One statement for every post asked about. */
export async function commentCountsByPost(
  em: EntityManager,
  organizationId: string,
  postIds: readonly string[],
): Promise<Map<string, { unread: number; total: number }>> {
  if (!postIds.length) return new Map();
  const rows = await sql<{ post_id: string; unread: string | number; total: string | number }>(
    em,
    `select post_id, count(*) filter (where status = 'unread') as unread, count(*) as total
     from comments where organization_id = ? and post_id in (?) and not ours group by post_id`,
    [organizationId, [...postIds]],
  );
  return new Map(rows.map((r) => [r.post_id, { unread: Number(r.unread), total: Number(r.total) }]));
}

/** A post with comments, for the Inbox's post filter. */
export interface CommentedPost {
  postId: string;
  content: string;
  unread: number;
}

/** The posts others commented under, the most recently commented first (at most `limit`). */
export async function commentedPosts(em: EntityManager, organizationId: string, limit: number): Promise<CommentedPost[]> {
  const rows = await sql<{ post_id: string; content: string; unread: string | number }>(
    em,
    `select c.post_id, p.content, count(*) filter (where c.status = 'unread') as unread
     from comments c join posts p on p.id = c.post_id
     where c.organization_id = ? and not c.ours
     group by c.post_id, p.content order by max(c.written_at) desc, c.post_id limit ?`,
    [organizationId, limit],
  );
  return rows.map((r) => ({ postId: r.post_id, content: r.content, unread: Number(r.unread) }));
}

/** A reply sent to a comment through the service, as the Inbox shows it beside the comment. */
export interface SentReply {
  id: string;
  commentId: string;
  content: string;
  status: ReplyStatus;
  url: string | null;
  error: string | null;
  approval: PostApproval | null;
  createdBy: Actor;
  createdAt: string;
}

/** The replies sent to these comments (not those deleted: they left the conversation), oldest first, by comment. One statement. */
export async function repliesByComment(
  em: EntityManager,
  organizationId: string,
  commentIds: readonly string[],
): Promise<Map<string, SentReply[]>> {
  const out = new Map<string, SentReply[]>();
  if (!commentIds.length) return out;
  const rows = await sql<{
    id: string;
    comment_id: string;
    content: string;
    status: ReplyStatus;
    url: string | null;
    error: string | null;
    approval: PostApproval | null;
    created_by: Actor;
    created_at: Date | string;
  }>(
    em,
    `select id, comment_id, content, status, url, error, approval, created_by, created_at from comment_replies
     where organization_id = ? and comment_id in (?) and status <> 'deleted' order by created_at, id`,
    [organizationId, [...commentIds]],
  );
  for (const r of rows) {
    const reply: SentReply = {
      id: r.id,
      commentId: r.comment_id,
      content: r.content,
      status: r.status,
      url: r.url,
      error: r.error,
      approval: r.approval,
      createdBy: r.created_by,
      createdAt: new Date(r.created_at).toISOString(),
    };
    out.set(r.comment_id, [...(out.get(r.comment_id) ?? []), reply]);
  }
  return out;
}
