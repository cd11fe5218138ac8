// Posts as the API shows them (SPEC.md §2.3), read from Postgres.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaItem, Post, PostChannel, type IMediaItem, type IPost, type IPostChannel, type PostStatus } from '../db/entities/index.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { failureClass, RETRYABLE, type ChannelErrorCode } from '../workflows/publish-failure-types.ts';

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
  const where: string[] = ['p.organization_id = ?', 'p.deleted_at is null'];
  const params: unknown[] = [organizationId];
  if (f.status) {
    where.push('p.status = ?');
    params.push(f.status);
  }
  if (f.channelId) {
    where.push('exists (select 1 from post_channels c where c.post_id = p.id and c.channel_id = ?)');
    params.push(f.channelId);
  }
  if (f.from) {
    where.push('p.scheduled_at >= ?');
    params.push(f.from);
  }
  if (f.to) {
    where.push('p.scheduled_at < ?');
    params.push(f.to);
  }
  if (keyChannels !== 'all') {
    // One placeholder per channel id: the driver expands an array bound to a single `?` into a
    // list, so `<> all(?::text[])` became a malformed array literal (500 for every limited key).
    const outside = keyChannels.length ? ` and c.channel_id not in (${keyChannels.map(() => '?').join(', ')})` : '';
    where.push(`not exists (select 1 from post_channels c where c.post_id = p.id${outside})`);
    params.push(...keyChannels);
  }
  if (f.cursor) {
    const c = decodeCursor(f.cursor);
    where.push('(p.scheduled_at, p.id) < (?, ?)');
    params.push(c.scheduledAt, c.id);
  }
  params.push(f.limit + 1);
  const rows = await em
    .getConnection()
    .execute<{ id: string }[]>(
      `select p.id from posts p where ${where.join(' and ')} order by p.scheduled_at desc, p.id desc limit ?`,
      params,
    );
  const page = rows.slice(0, f.limit).map((r) => r.id);
  const posts = page.length ? await em.find(Post, { id: { $in: page } }) : [];
  posts.sort((a, b) => page.indexOf(a.id) - page.indexOf(b.id));
  const last = posts.at(-1);
  return {
    data: await views(em, posts, storage),
    nextCursor: rows.length > f.limit && last ? encodeCursor(last.scheduledAt, last.id) : null,
  };
}

export function assertEditable(post: PostView): void {
  if (post.status !== 'scheduled') {
    throw new ApiError('conflict', `The post is ${post.status}; only a scheduled post can be edited.`, {
      details: { status: post.status },
    });
  }
}
