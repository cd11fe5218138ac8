// Posts as the API shows them (SPEC.md §2.3), read from Postgres.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MediaItem,
  Post,
  PostChannel,
  PostChannelItem,
  type IMediaItem,
  type IPostChannelItem,
  type IPost,
  type IPostChannel,
  type PostSource,
  type PostStatus,
} from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { contentOfRow, contentView, type ContentField, type StoredContent } from './content.ts';
import type { PostApproval } from '../../db/entities/index.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { keySees } from '../key-channels.ts';
import { failureClass, RETRYABLE, type ChannelErrorCode } from '../../workflows/publish-failure-types.ts';
import { tagIdsOfPosts } from '../tags.ts';

/** Where a channel, or one item of its conversation, stands on its platform. */
export interface PublishOutcome {
  status: string;
  platformPostId: string | null;
  url: string | null;
  publishedAt: string | null;
  error: string | null;
  /** Set when failed only (a row failed before the column existed shows `unknown`). */
  errorCode: ChannelErrorCode | null;
  retryable: boolean | null;
}

export interface PostChannelView extends PublishOutcome {
  channelId: string;
  platform: string;
  content: string;
  /** The post (position 0) and its follow-ups (domain/posts/thread.ts), each with its own outcome. */
  items: PostItemView[];
}

/** One item of a channel's conversation: position 0 is the post itself, then replies or a comment. */
export interface PostItemView extends PublishOutcome {
  position: number;
  kind: 'post' | 'reply' | 'comment';
  content: string;
  mediaIds: string[];
}

/** A post as the API shows it: its content as stored (domain/posts/content.ts; its media as `media`), where it stands, and on each channel. */
export interface PostView extends Omit<StoredContent, 'mediaIds'> {
  id: string;
  status: PostStatus;
  scheduledAt: string;
  publishedAt: string | null;
  createdAt: string;
  source: string;
  channels: PostChannelView[];
  media: { id: string; type: string; url: string }[];
  /** The organization's tags on it (domain/tags.ts), in id order. */
  tagIds: string[];
  /** The series this post is an occurrence of; null for a post of its own. */
  seriesId: string | null;
  /** Null: the post needs no approval (domain/posts/approval.ts). */
  approval: PostApproval | null;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** What the view reads of a post: an entity, or a row of post_page (postOfRow). */
type PostFields = Pick<
  IPost,
  'id' | 'status' | 'scheduledAt' | 'publishedAt' | 'createdAt' | 'source' | 'seriesId' | 'approval' | ContentField
>;
/** What the view reads of a post's channel. */
type ChannelFields = Pick<
  IPostChannel,
  | 'id'
  | 'post'
  | 'channel'
  | 'platform'
  | 'status'
  | 'content'
  | 'platformPostId'
  | 'url'
  | 'publishedAt'
  | 'error'
  | 'errorCode'
  | 'retryable'
>;
/** What the view reads of a follow-up item. */
type ItemFields = Pick<
  IPostChannelItem,
  | 'postChannel'
  | 'position'
  | 'kind'
  | 'content'
  | 'mediaIds'
  | 'status'
  | 'platformPostId'
  | 'url'
  | 'publishedAt'
  | 'error'
  | 'errorCode'
  | 'retryable'
>;
/** What the view reads of a media item. */
export type MediaItemFields = Pick<IMediaItem, 'id' | 'type' | 'storageKey'>;

/** errorCode and retryable of a failed channel; null on every other (docs/api.md "Failures a program can act on"). */
function failureView(pc: Pick<IPostChannel, 'status' | 'errorCode' | 'retryable'>): Pick<PostChannelView, 'errorCode' | 'retryable'> {
  if (pc.status !== 'failed') return { errorCode: null, retryable: null };
  if (!pc.errorCode) return failureClass('unknown');
  return { errorCode: pc.errorCode, retryable: pc.retryable ?? RETRYABLE[pc.errorCode] };
}

/**
 * A channel's items: the post itself (position 0: published once its platform id is recorded,
 * which may be before the channel is, when follow-ups remain), then its follow-up rows.
 */
function itemsView(pc: ChannelFields, mediaIds: string[], rows: ItemFields[]): PostItemView[] {
  const failedAt = pc.status === 'failed' ? rows.find((r) => r.status === 'failed')?.position : undefined;
  const first: PostItemView = {
    position: 0,
    kind: 'post',
    content: pc.content,
    mediaIds,
    status: pc.platformPostId ? 'published' : pc.status,
    platformPostId: pc.platformPostId ?? null,
    url: pc.url ?? null,
    publishedAt: iso(pc.publishedAt),
    // The channel's error is the post's own unless a follow-up failed.
    error: !pc.platformPostId && pc.status === 'failed' && failedAt === undefined ? (pc.error ?? null) : null,
    ...(!pc.platformPostId && failedAt === undefined ? failureView(pc) : { errorCode: null, retryable: null }),
  };
  const rest = rows
    .slice()
    .sort((a, b) => a.position - b.position)
    .map(
      (r): PostItemView => ({
        position: r.position,
        kind: r.kind,
        content: r.content,
        mediaIds: r.mediaIds,
        status: r.status,
        platformPostId: r.platformPostId ?? null,
        url: r.url ?? null,
        publishedAt: iso(r.publishedAt),
        error: r.status === 'failed' ? (r.error ?? null) : null,
        ...failureView(r),
      }),
    );
  return [first, ...rest];
}

/** The one definition of a post's view: GET /v1/posts/{id}, the list's pages, webhook event bodies. */
export function postView(
  post: PostFields,
  pcs: ChannelFields[],
  media: { id: string; type: string; url: string }[] = [],
  items: ItemFields[] = [],
  tagIds: string[] = [],
): PostView {
  return {
    ...contentView(post),
    id: post.id,
    status: post.status,
    scheduledAt: post.scheduledAt.toISOString(),
    publishedAt: iso(post.publishedAt),
    createdAt: post.createdAt.toISOString(),
    source: post.source,
    channels: pcs
      .slice()
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((pc) => ({
        channelId: pc.channel,
        platform: pc.platform,
        status: pc.status,
        content: pc.content,
        platformPostId: pc.platformPostId ?? null,
        url: pc.url ?? null,
        publishedAt: iso(pc.publishedAt),
        // A channel being published again keeps its last error until the run records a new outcome: not shown.
        error: pc.status === 'publishing' ? null : (pc.error ?? null),
        ...failureView(pc),
        items: itemsView(
          pc,
          post.mediaIds,
          items.filter((i) => i.postChannel === pc.id),
        ),
      })),
    media,
    tagIds,
    seriesId: post.seriesId ?? null,
    approval: post.approval ?? null,
  };
}

const MEDIA_URL_TTL_SECONDS = 3600;

/** The views of these posts from their channels, media items and tags: each media URL signed once. */
async function assemble(
  posts: PostFields[],
  pcs: ChannelFields[],
  items: MediaItemFields[],
  storage?: ObjectStorage,
  followUps: ItemFields[] = [],
  tags: ReadonlyMap<string, string[]> = new Map(),
): Promise<PostView[]> {
  const postOfChannel = new Map(pcs.map((pc) => [pc.id, pc.post]));
  const followUpsOf = new Map<string, ItemFields[]>();
  for (const f of followUps) {
    const postId = postOfChannel.get(f.postChannel);
    if (postId === undefined) continue;
    const list = followUpsOf.get(postId);
    if (list) list.push(f);
    else followUpsOf.set(postId, [f]);
  }
  const channelsOf = new Map<string, ChannelFields[]>();
  for (const pc of pcs) {
    const list = channelsOf.get(pc.post);
    if (list) list.push(pc);
    else channelsOf.set(pc.post, [pc]);
  }
  const byId = new Map(items.map((m) => [m.id, m]));
  const urls = new Map<string, string>();
  const out: PostView[] = [];
  for (const p of posts) {
    // In the post's order; an id with no media item is left out.
    const media: PostView['media'] = [];
    for (const id of p.mediaIds) {
      const item = byId.get(id);
      if (!item) continue;
      let url = urls.get(id);
      if (url === undefined) urls.set(id, (url = storage ? await storage.signedGetUrl(item.storageKey, MEDIA_URL_TTL_SECONDS) : ''));
      media.push({ id, type: item.type, url });
    }
    out.push(postView(p, channelsOf.get(p.id) ?? [], media, followUpsOf.get(p.id), tags.get(p.id)));
  }
  return out;
}

/** The view of a post from the rows its create wrote, without reading them back. */
export async function createdPostView(
  post: PostFields,
  channels: ChannelFields[],
  media: MediaItemFields[],
  storage?: ObjectStorage,
  followUps: ItemFields[] = [],
  tagIds: string[] = [],
): Promise<PostView> {
  return (await assemble([post], channels, media, storage, followUps, new Map([[post.id, tagIds]])))[0]!;
}

async function views(em: EntityManager, posts: IPost[], storage?: ObjectStorage): Promise<PostView[]> {
  if (!posts.length) return [];
  const pcs = await em.find(PostChannel, { post: { $in: posts.map((p) => p.id) } });
  const mediaIds = [...new Set(posts.flatMap((p) => p.mediaIds))];
  const items = mediaIds.length ? await em.find(MediaItem, { id: { $in: mediaIds } }) : [];
  // Only posts that asked for follow-ups have rows: the others need no look-up.
  const asked = pcs.filter((pc) => {
    const post = posts.find((p) => p.id === pc.post)!;
    return post.thread !== null || post.firstComment !== null || Object.keys(post.threadByPlatform ?? {}).length > 0;
  });
  const followUps = asked.length ? await em.find(PostChannelItem, { postChannel: { $in: asked.map((pc) => pc.id) } }) : [];
  return assemble(
    posts,
    pcs,
    items,
    storage,
    followUps,
    await tagIdsOfPosts(
      em,
      posts.map((p) => p.id),
    ),
  );
}

/** A post's view by id, deleted or not (webhook event bodies, domain/webhooks/views.ts). */
export async function loadPostView(em: EntityManager, id: string, storage?: ObjectStorage): Promise<PostView> {
  const post = await em.findOneOrFail(Post, { id });
  return (await views(em, [post], storage))[0]!;
}

/** A post of the organization that the key may see (all its channels within the key's list), or not_found. */
export async function getPostForKey(
  em: EntityManager,
  organizationId: string,
  id: string,
  keyChannels: 'all' | string[],
  storage?: ObjectStorage,
): Promise<PostView> {
  if (id.includes('\u0000')) throw errors.notFound('Post'); // no such id; Postgres would refuse the NUL (500)
  // A deleted post (DELETE /v1/posts/{id}) keeps its row but is gone for every reader.
  const post = await em.findOne(Post, { id, organization: organizationId, deletedAt: null });
  if (!post) throw errors.notFound('Post');
  const [view] = await views(em, [post], storage);
  const channelIds = view!.channels.map((c) => c.channelId);
  if (!keySees(keyChannels, channelIds)) throw errors.notFound('Post');
  return view!;
}

export interface ListFilters {
  status?: PostStatus;
  channelId?: string;
  /** Only the posts with this tag (domain/tags.ts). */
  tagId?: string;
  from?: Date;
  to?: Date;
  limit: number;
  cursor?: string;
}

export function encodeCursor(scheduledAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([scheduledAt.toISOString(), id])).toString('base64url');
}

function decodeCursor(cursor: string): { scheduledAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    // Only what encodeCursor writes: an instant in years 1–9999 (Postgres rejects year 0 and the
    // far years a Date allows) and an id of word characters (Postgres rejects NUL in text).
    if (typeof at !== 'string' || typeof id !== 'string' || !/^\w{1,64}$/.test(id)) throw new Error('bad');
    const scheduledAt = new Date(at);
    const year = scheduledAt.getUTCFullYear();
    if (Number.isNaN(year) || year < 1 || year > 9999) throw new Error('bad');
    return { scheduledAt, id };
  } catch {
    throw errors.validation([{ path: 'cursor', message: 'is not a cursor returned by this API' }]);
  }
}

/** A posts row as post_page answers it: column names (a post's content by contentOfRow), timestamps as JSON text. */
interface PostRow extends Record<string, unknown> {
  id: string;
  status: PostStatus;
  scheduled_at: string;
  published_at: string | null;
  created_at: string;
  source: PostSource;
  series_id: string | null;
  approval: PostApproval | null;
}

/** A post_channel_items row as post_page answers it. */
interface PostItemRow {
  post_channel_id: string;
  position: number;
  kind: IPostChannelItem['kind'];
  content: string;
  media_ids: string[];
  status: IPostChannelItem['status'];
  platform_post_id: string | null;
  url: string | null;
  published_at: string | null;
  error: string | null;
  error_code: ChannelErrorCode | null;
  retryable: boolean | null;
}

/** A post_channels row as post_page answers it. */
interface PostChannelRow {
  id: string;
  post_id: string;
  channel_id: string;
  platform: IPostChannel['platform'];
  status: IPostChannel['status'];
  content: string;
  platform_post_id: string | null;
  url: string | null;
  published_at: string | null;
  error: string | null;
  error_code: ChannelErrorCode | null;
  retryable: boolean | null;
}

/** A media_items row as post_page answers it. */
interface MediaItemRow {
  id: string;
  type: IMediaItem['type'];
  storage_key: string;
}

/** A post_tags row as post_page answers it. */
interface PostTagRow {
  post_id: string;
  tag_id: string;
}

/** post_page's answer: the page's posts (newest first, one more than asked for), their channels, media items, follow-ups and tags. */
interface PostPage {
  posts: PostRow[];
  channels: PostChannelRow[];
  media: MediaItemRow[];
  items: PostItemRow[];
  tags: PostTagRow[];
}

const dateOf = (s: string | null) => (s === null ? null : new Date(s));

const postOfRow = (r: PostRow): PostFields => ({
  ...contentOfRow(r),
  id: r.id,
  status: r.status,
  scheduledAt: new Date(r.scheduled_at),
  publishedAt: dateOf(r.published_at),
  createdAt: new Date(r.created_at),
  source: r.source,
  seriesId: r.series_id,
  approval: r.approval,
});

const itemOfRow = (r: PostItemRow): ItemFields => ({
  postChannel: r.post_channel_id,
  position: r.position,
  kind: r.kind,
  content: r.content,
  mediaIds: r.media_ids,
  status: r.status,
  platformPostId: r.platform_post_id,
  url: r.url,
  publishedAt: dateOf(r.published_at),
  error: r.error,
  errorCode: r.error_code,
  retryable: r.retryable,
});

const channelOfRow = (r: PostChannelRow): ChannelFields => ({
  id: r.id,
  post: r.post_id,
  channel: r.channel_id,
  platform: r.platform,
  status: r.status,
  content: r.content,
  platformPostId: r.platform_post_id,
  url: r.url,
  publishedAt: dateOf(r.published_at),
  error: r.error,
  errorCode: r.error_code,
  retryable: r.retryable,
});

const mediaOfRow = (r: MediaItemRow): MediaItemFields => ({ id: r.id, type: r.type, storageKey: r.storage_key });

/** Newest first by (scheduledAt, id); keyset pagination, so pages stay stable while posts are added. */
export async function listPostsForKey(
  em: EntityManager,
  organizationId: string,
  keyChannels: 'all' | string[],
  f: ListFilters,
  storage?: ObjectStorage,
): Promise<{ data: PostView[]; nextCursor: string | null }> {
  const cursor = f.cursor ? decodeCursor(f.cursor) : null;
  // One statement for the page's rows of posts, channels and media, whatever the page holds, with
  // a plan Postgres keeps (post_page, db/migrations/Migration20261126120000_post_page_rows.ts); the
  // view is postView's, as for a single post. The key's channels go as one JSON text: the driver
  // would expand an array into a list.
  const [row] = await sql<{ page: string }>(em, 'select post_page(?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?) as page', [
    organizationId,
    f.status ?? null,
    f.channelId ?? null,
    f.tagId ?? null,
    f.from ?? null,
    f.to ?? null,
    keyChannels === 'all' ? null : JSON.stringify(keyChannels),
    cursor?.scheduledAt ?? null,
    cursor?.id ?? null,
    f.limit + 1,
  ]);
  const page = JSON.parse(row!.page) as PostPage;
  const tags = new Map<string, string[]>();
  for (const t of page.tags) tags.set(t.post_id, [...(tags.get(t.post_id) ?? []), t.tag_id].sort());
  const data = await assemble(
    page.posts.slice(0, f.limit).map(postOfRow),
    page.channels.map(channelOfRow),
    page.media.map(mediaOfRow),
    storage,
    page.items.map(itemOfRow),
    tags,
  );
  const last = data.at(-1);
  return {
    data,
    nextCursor: page.posts.length > f.limit && last ? encodeCursor(new Date(last.scheduledAt), last.id) : null,
  };
}

export function assertEditable(post: PostView): void {
  if (post.status !== 'scheduled') {
    throw new ApiError('conflict', `The post is ${post.status}; only a scheduled post can be edited.`, {
      details: { status: post.status },
    });
  }
}
