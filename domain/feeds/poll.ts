// One poll of a feed (domain/feeds/feeds.ts states the feed's rules, items.ts the items'): read it
// conditionally, then create a post for each new item through the normal create path, with a post
// id fixed per (feed, item). The post is committed before its item is recorded, so a poll cut off
// between the two (a worker restart) finds the post by its id on the next try and records it then:
// an item is posted at most once, however often a poll is retried or two polls meet.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Channel, Feed, Organization, Post, type FeedItemOutcome, type IFeed } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { ApiError } from '../../lib/errors.ts';
import type { OutboundPolicy } from '../../lib/outbound.ts';
import type { WebhookEvents } from '../webhooks/outbox.ts';
import type { Requester } from '../posts/approval.ts';
import { makerStanding, pauseForMaker } from '../makers.ts';
import { createPost } from '../posts/create.ts';
import { FeedReadError, readFeed } from './fetch.ts';
import { feedView, PAUSE_AFTER_FAILURES, seenOf } from './feeds.ts';
import { MAX_POSTS_PER_POLL, newEntries, passesFilter, render, type FeedEntry } from './items.ts';

export type FeedEvents = WebhookEvents;

export interface PollDeps {
  temporal: { client: Client; taskQueue: string };
  outbound: OutboundPolicy;
  events: FeedEvents;
  /** The transport under the guard (tests). */
  transport?: typeof fetch;
  /** Aborts the read (the activity cancelled: its worker shuts down). */
  signal?: AbortSignal;
}

export type PollOutcome =
  | { outcome: 'skipped' }
  | { outcome: 'paused'; reason: string }
  | { outcome: 'failed'; message: string; paused: boolean }
  | { outcome: 'not_modified' }
  | { outcome: 'read'; posted: number; filtered: number; refused: number; waiting: number };

/** The post id of a feed's item: a repeated create finds the post instead of making another. */
export const feedPostId = (feedId: string, keyHash: string) => `post_${feedId.replace(/^feed_/, '')}_${keyHash.slice(0, 24)}`;

/** How long a claim holds a feed at most: a read cut off (its worker gone for good) lets it go then. */
export const CLAIM_HOLD_MINUTES = 10;

/**
 * Claims feeds for a read, the sweep's and a read asked for alike: each claimed feed's next read
 * moves to an interval from now, and the read holds it until it ends (pollFeed lets it go) or
 * CLAIM_HOLD_MINUTES pass. A feed another read holds is not claimed.
 * - Without `feedId` (the sweep): the active feeds due now, rows another claim has locked skipped.
 * - With `feedId` (POST /v1/feeds/{id}/poll): that feed if active, due or not; a concurrent claim
 *   of it is waited for, then its hold decides. Nothing claimed: another read is reading it.
 */
export async function claimFeeds(em: EntityManager, o: { limit: number; now: Date; feedId?: string }): Promise<string[]> {
  const which = o.feedId === undefined ? 'next_poll_at <= ?' : 'id = ?';
  const lock = o.feedId === undefined ? 'for update skip locked' : 'for update';
  const rows = await sql<{ id: string }>(
    em,
    `update feeds f set next_poll_at = ?::timestamptz + f.poll_minutes * interval '1 minute',
       read_until = ?::timestamptz + ? * interval '1 minute'
     where f.id in (select id from feeds where status = 'active' and deleted_at is null and ${which}
                    and (read_until is null or read_until <= ?)
                    order by next_poll_at limit ? ${lock})
     returning f.id`,
    [o.now, o.now, CLAIM_HOLD_MINUTES, o.feedId ?? o.now, o.now, o.limit],
  );
  return rows.map((r) => r.id);
}

/** The read of the feed ended (read, failed, skipped or paused): another read may claim it. */
async function release(em: EntityManager, feedId: string): Promise<void> {
  await sql(em, 'update feeds set read_until = null where id = ? and read_until is not null', [feedId]);
}

export async function pollFeed(em: EntityManager, deps: PollDeps, feedId: string, now = new Date()): Promise<PollOutcome> {
  const feed = await em.fork().findOne(Feed, { id: feedId });
  if (!feed || feed.deletedAt || feed.status !== 'active') {
    await release(em, feedId);
    return { outcome: 'skipped' };
  }
  // Its maker, now: one who may no longer run it pauses it before anything is read or posted.
  const maker = await makerStanding(
    em.fork(),
    { organizationId: feed.organization, apiKeyId: feed.apiKeyId ?? null, createdByUserId: feed.createdByUserId ?? null },
    'feeds.write',
    now,
  );
  if (!maker.stands) {
    await pauseForMaker(
      em,
      deps.events,
      {
        kind: 'feed',
        id: feed.id,
        organizationId: feed.organization,
        data: async (tx) => ({ feed: feedView(await tx.findOneOrFail(Feed, { id: feed.id }, { refresh: true })) }),
      },
      maker.reason,
      now,
    );
    await release(em, feed.id);
    return { outcome: 'paused', reason: maker.reason };
  }
  let read: Awaited<ReturnType<typeof readFeed>>;
  try {
    read = await readFeed(feed.url, {
      outbound: deps.outbound,
      transport: deps.transport,
      etag: feed.etag,
      lastModified: feed.lastModified,
      signal: deps.signal,
    });
  } catch (err) {
    // Cancelled, not failed: the activity's retry reads it again.
    if (!(err instanceof FeedReadError) || deps.signal?.aborted) throw err;
    return failed(em, deps, feed, err.message, now);
  }
  if (read.status === 'not_modified') {
    await succeeded(em, feed, now, {});
    return { outcome: 'not_modified' };
  }
  const seen = await seenOf(em, feed.id, read.entries);
  const fresh = newEntries(read.entries, seen.keys, seen.links);
  const batch = fresh.slice(0, MAX_POSTS_PER_POLL);
  const counts = { posted: 0, filtered: 0, refused: 0 };
  for (const entry of batch) counts[await postEntry(em, deps, feed, entry, maker.requester, now)]++;
  const waiting = fresh.length - batch.length;
  // Validators only once every item of this answer is decided: a 304 must not hide the rest.
  await succeeded(em, feed, now, waiting ? { nextPollAt: now } : { etag: read.etag, lastModified: read.lastModified });
  return { outcome: 'read', ...counts, waiting };
}

type Posted = 'posted' | 'filtered' | 'refused';

async function postEntry(
  em: EntityManager,
  deps: PollDeps,
  feed: IFeed,
  entry: FeedEntry,
  requester: Requester,
  now: Date,
): Promise<Posted> {
  if (!passesFilter(feed.filter ?? null, entry)) {
    await record(em, deps, feed, entry, 'filtered', null, null, now);
    return 'filtered';
  }
  const postId = feedPostId(feed.id, entry.keyHash);
  if (!(await em.fork().findOne(Post, { id: postId }))) {
    const org = await em.fork().findOneOrFail(Organization, { id: feed.organization });
    // Only the platforms of its channels now (a template left from earlier channels is not used).
    const platforms = new Set((await em.fork().find(Channel, { id: { $in: feed.channelIds } })).map((c) => c.platform as string));
    const contentByPlatform = Object.fromEntries(
      Object.entries(feed.templateByPlatform ?? {})
        .filter(([p]) => platforms.has(p))
        .map(([p, t]) => [p, render(t, entry, feed.name)]),
    );
    try {
      await createPost(em.fork(), deps.temporal, {
        organization: { id: org.id, plan: org.plan },
        source: feed.source,
        // The key's channel list was checked when the feed was saved.
        key: feed.apiKeyId ? { apiKeyId: feed.apiKeyId, channels: 'all' } : null,
        channelIds: feed.channelIds,
        tagIds: feed.tagIds ?? [],
        content: render(feed.template, entry, feed.name),
        contentByPlatform,
        reddit: null,
        mediaIds: [],
        publishAt: null,
        queue: feed.mode === 'queue',
        now,
        postId,
        requester,
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        // A concurrent read created it first.
      } else if (err instanceof ApiError && err.status < 500) {
        // A concurrent read created it first (refused here as its duplicate).
        if (await em.fork().findOne(Post, { id: postId }))
          return record(em, deps, feed, entry, 'posted', postId, null, now).then(() => 'posted');
        await record(em, deps, feed, entry, 'refused', null, { code: err.code, message: refusalMessage(err) }, now);
        return 'refused';
      } else throw err;
    }
  }
  await record(em, deps, feed, entry, 'posted', postId, null, now);
  return 'posted';
}

/** The refusal in words, with each field's problem (a validation failure's message alone names no rule). */
function refusalMessage(err: ApiError): string {
  const fields = err.details?.fields as { path: string; message: string }[] | undefined;
  return fields?.length ? `${err.message} ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}` : err.message;
}

/** The item's row, and `feed.item.posted` with it when this call recorded the post (not a repeat). */
async function record(
  em: EntityManager,
  deps: PollDeps,
  feed: IFeed,
  entry: FeedEntry,
  outcome: FeedItemOutcome,
  postId: string | null,
  error: { code: string; message: string } | null,
  now: Date,
): Promise<void> {
  let deliveries: string[] = [];
  await em.fork().transactional(async (tx) => {
    const inserted = await sql<{ key_hash: string }>(
      tx,
      `insert into feed_items (feed_id, key_hash, item_key, link, title, outcome, post_id, error, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?) on conflict do nothing returning key_hash`,
      [feed.id, entry.keyHash, entry.key, entry.link, entry.title, outcome, postId, error ? JSON.stringify(error) : null, now],
    );
    if (inserted.length && outcome === 'posted') {
      deliveries = await deps.events.write(tx, feed.organization, 'feed.item.posted', async () => ({
        feed: { id: feed.id, name: feed.name, url: feed.url },
        item: { key: entry.key, title: entry.title, link: entry.link, publishedAt: entry.publishedAt?.toISOString() ?? null },
        postId,
      }));
    }
  });
  await deps.events.dispatch(em.fork(), deliveries);
}

async function succeeded(
  em: EntityManager,
  feed: IFeed,
  now: Date,
  o: { etag?: string | null; lastModified?: string | null; nextPollAt?: Date },
) {
  await sql(
    em,
    `update feeds set last_polled_at = ?, last_success_at = ?, consecutive_failures = 0, last_error = null,
       etag = coalesce(?, etag), last_modified = coalesce(?, last_modified),
       next_poll_at = coalesce(?::timestamptz, next_poll_at), read_until = null, updated_at = ?
     where id = ?`,
    [now, now, o.etag ?? null, o.lastModified ?? null, o.nextPollAt ?? null, now, feed.id],
  );
}

/** A failed read: counted; the PAUSE_AFTER_FAILURES-th in a row pauses the feed with the reason and `feed.failed`. */
async function failed(em: EntityManager, deps: PollDeps, feed: IFeed, message: string, now: Date): Promise<PollOutcome> {
  let deliveries: string[] = [];
  let paused = false;
  await em.fork().transactional(async (tx) => {
    const [row] = await sql<{ consecutive_failures: number; status: string }>(
      tx,
      `update feeds set last_polled_at = ?, consecutive_failures = consecutive_failures + 1, last_error = ?::jsonb,
         read_until = null, updated_at = ?
       where id = ? and status = 'active' returning consecutive_failures, status`,
      [now, JSON.stringify({ at: now.toISOString(), message }), now, feed.id],
    );
    if (!row || row.consecutive_failures < PAUSE_AFTER_FAILURES) return;
    const reason = `${row.consecutive_failures} reads in a row failed; the last: ${message}`;
    await sql(tx, `update feeds set status = 'paused', paused_reason = ? where id = ?`, [reason, feed.id]);
    paused = true;
    const after = await tx.findOneOrFail(Feed, { id: feed.id }, { refresh: true });
    deliveries = await deps.events.write(tx, feed.organization, 'feed.failed', async () => ({ feed: feedView(after) }));
  });
  await deps.events.dispatch(em.fork(), deliveries);
  // The update above lets the feed go; one paused by its owner meanwhile it did not match.
  if (!paused) await release(em, feed.id);
  return { outcome: 'failed', message, paused };
}
