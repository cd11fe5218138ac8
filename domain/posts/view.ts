// Posts as the API shows them (SPEC.md §2.3), read from Postgres.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaItem, Post, PostChannel, type IMediaItem, type IPost, type IPostChannel, type PostStatus } from '../../db/entities/index.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { failureClass, RETRYABLE, type ChannelErrorCode } from '../../workflows/publish-failure-types.ts';

export interface PostChannelView {
  channelId: string;
  platform: string;
  status: string;
  content: string;
  platformPostId: string | null;
  url: string | null;
  publishedAt: string | null;
  error: string | null;
  /** Set on a failed channel only (a row failed before the column existed shows `unknown`). */
  errorCode: ChannelErrorCode | null;
  retryable: boolean | null;
}

export interface PostView {
  id: string;
  status: PostStatus;
  content: string;
  scheduledAt: string;
  publishedAt: string | null;
  createdAt: string;
  source: string;
  channels: PostChannelView[];
  media: { id: string; type: string; url: string }[];
  reddit: { subreddit: string; title: string } | null;
  /** The series this post is an occurrence of (issue 17); null for a post of its own. */
  seriesId: string | null;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** errorCode and retryable of a failed channel; null on every other (docs/decisions.md "Failures a program can act on"). */
function failureView(pc: IPostChannel): Pick<PostChannelView, 'errorCode' | 'retryable'> {
  if (pc.status !== 'failed') return { errorCode: null, retryable: null };
  if (!pc.errorCode) return failureClass('unknown');
  return { errorCode: pc.errorCode, retryable: pc.retryable ?? RETRYABLE[pc.errorCode] };
}

export function postView(post: IPost, pcs: IPostChannel[], media: { id: string; type: string; url: string }[] = []): PostView {
  return {
    id: post.id,
    status: post.status,
    content: post.content,
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
        error: pc.error ?? null,
        ...failureView(pc),
      })),
    media,
    reddit: post.reddit ?? null,
    seriesId: post.seriesId ?? null,
  };
}

const MEDIA_URL_TTL_SECONDS = 3600;

async function views(em: EntityManager, posts: IPost[], storage?: ObjectStorage): Promise<PostView[]> {
  if (!posts.length) return [];
  const pcs = await em.find(PostChannel, { post: { $in: posts.map((p) => p.id) } });
  const mediaIds = [...new Set(posts.flatMap((p) => p.mediaIds))];
  const items = mediaIds.length ? await em.find(MediaItem, { id: { $in: mediaIds } }) : [];
  const byId = new Map<string, IMediaItem>(items.map((m) => [m.id, m]));
  const urls = new Map<string, string>();
  for (const m of items) if (storage) urls.set(m.id, await storage.signedGetUrl(m.storageKey, MEDIA_URL_TTL_SECONDS));
  return posts.map((p) =>
    postView(
      p,
      pcs.filter((pc) => pc.post === p.id),
      p.mediaIds.filter((id) => byId.has(id)).map((id) => ({ id, type: byId.get(id)!.type, url: urls.get(id) ?? '' })),
    ),
  );
}

/** A post's view by id, deleted or not (webhook event bodies, worker/webhook-views.ts). */
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
  if (keyChannels !== 'all' && !view!.channels.every((c) => keyChannels.includes(c.channelId))) throw errors.notFound('Post');
  return view!;
}

export interface ListFilters {
  status?: PostStatus;
  channelId?: string;
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

/** Newest first by (scheduledAt, id); keyset pagination, so pages stay stable while posts are added. */
export async function listPostsForKey(
  em: EntityManager,
  organizationId: string,
  keyChannels: 'all' | string[],
  f: ListFilters,
  storage?: ObjectStorage,
): Promise<{ data: PostView[]; nextCursor: string | null }> {
  const cursor = f.cursor ? decodeCursor(f.cursor) : null;
  // One statement for the page, its channels and its media, whatever the page holds, with a
  // plan Postgres keeps (post_page, db/migrations/Migration20261124110000_post_page.ts; issue 15).
  // The key's channels go as one JSON text: the driver would expand an array into a list.
  const [row] = await em
    .getConnection()
    .execute<{ page: string }[]>('select post_page(?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?) as page', [
      organizationId,
      f.status ?? null,
      f.channelId ?? null,
      f.from ?? null,
      f.to ?? null,
      keyChannels === 'all' ? null : JSON.stringify(keyChannels),
      cursor?.scheduledAt ?? null,
      cursor?.id ?? null,
      f.limit + 1,
    ]);
  const rows = JSON.parse(row!.page) as PageRow[];
  const data = await pageViews(rows.slice(0, f.limit), storage);
  const last = data.at(-1);
  return {
    data,
    nextCursor: rows.length > f.limit && last ? encodeCursor(new Date(last.scheduledAt), last.id) : null,
  };
}

type Stamp = string | null;
/** A row of post_page's answer (its json_build_array, in that order). */
type PageRow = [
  id: string,
  status: PostStatus,
  content: string,
  scheduledAt: string,
  publishedAt: Stamp,
  createdAt: string,
  source: string,
  reddit: PostView['reddit'],
  seriesId: string | null,
  mediaIds: string[],
  channels: [string, string, string, string, string | null, string | null, Stamp, string | null, ChannelErrorCode | null, boolean | null][],
  media: [string, string, string][],
];

const isoOf = (s: Stamp) => (s === null ? null : new Date(s).toISOString());

/** PostViews from post_page's rows: the same answer as views(), each media URL signed once per page. */
async function pageViews(rows: PageRow[], storage?: ObjectStorage): Promise<PostView[]> {
  const urls = new Map<string, string>();
  if (storage) {
    for (const [, , , , , , , , , , , media] of rows)
      for (const [id, , key] of media) if (!urls.has(id)) urls.set(id, await storage.signedGetUrl(key, MEDIA_URL_TTL_SECONDS));
  }
  return rows.map(([id, status, content, scheduledAt, publishedAt, createdAt, source, reddit, seriesId, mediaIds, channels, media]) => {
    const types = new Map(media.map(([mid, type]) => [mid, type]));
    return {
      id,
      status,
      content,
      scheduledAt: isoOf(scheduledAt)!,
      publishedAt: isoOf(publishedAt),
      createdAt: isoOf(createdAt)!,
      source,
      channels: channels.map(([channelId, platform, st, text, platformPostId, url, at, error, errorCode, retryable]) => ({
        channelId,
        platform,
        status: st,
        content: text,
        platformPostId,
        url,
        publishedAt: isoOf(at),
        error,
        ...failureView({ status: st, errorCode, retryable } as IPostChannel),
      })),
      media: mediaIds.filter((m) => types.has(m)).map((m) => ({ id: m, type: types.get(m)!, url: urls.get(m) ?? '' })),
      reddit: reddit ?? null,
      seriesId: seriesId ?? null,
    };
  });
}

export function assertEditable(post: PostView): void {
  if (post.status !== 'scheduled') {
    throw new ApiError('conflict', `The post is ${post.status}; only a scheduled post can be edited.`, {
      details: { status: post.status },
    });
  }
}
