// RSS and Atom feeds that post by themselves (docs/api.md "Feeds").
//
// Rules:
// - A feed is a URL (http or https, read through the private-address guard), target channels,
//   a template for the text (domain/feeds/items.ts: placeholders, filter), a template per
//   platform (of a target channel; one left from earlier channels is not used), and a mode:
//   `now` publishes each new item's post at once, `queue` puts it in the channels' posting queue
//   (domain/queues/queues.ts).
// - Saving a feed reads it once (a URL that is not a readable feed is refused at `url`), and the
//   items it has then are its backlog: recorded as seen, never posted, but for the newest
//   `backfill` (0 by default) that the first poll posts. A new URL in an edit is read the same way.
// - The feed poll (workflows/feed-poll.ts, every minute) reads each active feed every
//   `pollMinutes` (POLL_MINUTES); `POST /v1/feeds/{id}/poll` reads it now.
// - Every read claims the feed first (domain/feeds/poll.ts claimFeeds): the claim moves its next
//   read an interval away and holds it until the read ends (at most CLAIM_HOLD_MINUTES, for a read
//   cut off). The sweep claims only due feeds; a read asked for claims its feed due or not. Neither
//   claims a feed another read holds: a read asked for then reads nothing (that read is under way),
//   and a sweep or read asked for at the same moment, or two sweeps, read a feed once.
// - A feed whose reads fail PAUSE_AFTER_FAILURES times in a row is paused with the reason
//   (`pausedReason`) and the webhook `feed.failed`; setting `status: active` again resumes it and
//   forgets the failures. A feed paused by its owner has no pausedReason.
// - Its posts are made as its maker would make them (the API key that created it, or the member
//   who did in the web app), with approval as theirs would need now (domain/posts/approval.ts).
//   A maker who may no longer run it (left, lost the role, key revoked or expired) pauses it at its
//   next read, before anything is posted (domain/makers.ts); resuming makes the one who resumes
//   it its maker.
// - A feed's posts are text only: no media, no per-platform options, no Reddit target. A target
//   channel whose platform's catalog rules (platforms/catalog.ts) require media (Instagram,
//   TikTok, YouTube, Pinterest) or extra fields (Reddit's subreddit and title) would refuse every
//   item, so saving or editing a feed refuses it at `channelIds.N` with the reason.
// - An organization has at most MAX_FEEDS feeds, counted under the organization's row lock in
//   the transaction that inserts the feed: concurrent creates cannot both take the last place.
//   A deleted feed polls no more; its posts stay.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import {
  Feed,
  FeedItem,
  type IChannel,
  type FeedFilter,
  type FeedMode,
  type FeedStatus,
  type IFeed,
  type IFeedItem,
} from '../../db/entities/index.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { decodeKeyset, encodeKeyset } from '../../lib/keyset-cursor.ts';
import { sql } from '../../db/sql.ts';
import type { OutboundPolicy } from '../../lib/outbound.ts';
import { rulesFor, type Platform } from '../../platforms/catalog.ts';
import { assertChannelsUsable, loadTargetChannels } from '../posts/checks.ts';
import { keySees } from '../key-channels.ts';
import { FEED_POLL_WORKFLOW_TYPE, feedPollNowWorkflowId, type FeedPollInput } from '../../workflows/feed-poll-types.ts';
import { isTemporalOutage, temporalUnavailable, withTemporalDeadline, type TemporalDeps } from '../temporal-calls.ts';
import { FeedReadError, readFeed } from './fetch.ts';
import { DEFAULT_TEMPLATE, newEntries, type FeedEntry, unknownPlaceholders } from './items.ts';
import { checkTagIds } from '../tags.ts';

export const POLL_MINUTES = { min: 1, max: 1440, default: 15 } as const;
export const MAX_BACKFILL = 20;
export const PAUSE_AFTER_FAILURES = 5;
export const MAX_FEEDS = 100;
export const TEMPLATE_MAX_CHARS = 2000;
/** The sizes of a feed's fields (the API's body schema and the web form both state them). */
export const FEED_LIMITS = { urlChars: 2048, nameChars: 200, filterWords: 50, wordChars: 100 } as const;

export interface FeedView {
  id: string;
  name: string;
  url: string;
  channelIds: string[];
  /** The organization's tags each of its posts gets (domain/tags.ts), in id order. */
  tagIds: string[];
  template: string;
  templateByPlatform: Record<string, string>;
  mode: FeedMode;
  filter: FeedFilter | null;
  pollMinutes: number;
  status: FeedStatus;
  pausedReason: string | null;
  consecutiveFailures: number;
  lastPolledAt: string | null;
  lastSuccessAt: string | null;
  lastError: { at: string; message: string } | null;
  nextPollAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function feedView(f: IFeed): FeedView {
  return {
    id: f.id,
    name: f.name,
    url: f.url,
    channelIds: f.channelIds,
    tagIds: f.tagIds ?? [],
    template: f.template,
    templateByPlatform: f.templateByPlatform ?? {},
    mode: f.mode,
    filter: f.filter ?? null,
    pollMinutes: f.pollMinutes,
    status: f.status,
    pausedReason: f.pausedReason ?? null,
    consecutiveFailures: f.consecutiveFailures,
    lastPolledAt: f.lastPolledAt?.toISOString() ?? null,
    lastSuccessAt: f.lastSuccessAt?.toISOString() ?? null,
    lastError: f.lastError ?? null,
    nextPollAt: f.status === 'active' ? f.nextPollAt.toISOString() : null,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}

/** Who saves a feed: its organization, the key (null: the web app) and the reading of its URL. */
export interface FeedMaker {
  organizationId: string;
  source: 'api' | 'app';
  /** The API key and its channel list; null: the web app. */
  key: { apiKeyId: string; channels: 'all' | string[] } | null;
  /** The member who saves it in the web app. */
  userId?: string | null;
  outbound: OutboundPolicy;
  /** The transport under the guard (tests). */
  transport?: typeof fetch;
  now: Date;
}

export interface FeedInput {
  url: string;
  name?: string;
  channelIds: string[];
  tagIds?: string[];
  template?: string;
  templateByPlatform?: Record<string, string>;
  mode?: FeedMode;
  filter?: FeedFilter | null;
  pollMinutes?: number;
  backfill?: number;
}

export interface FeedEdit extends Partial<Omit<FeedInput, 'backfill'>> {
  status?: FeedStatus;
}

function checkUrl(url: string, fields: FieldError[]): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    fields.push({ path: 'url', message: 'is not a URL' });
    return;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') fields.push({ path: 'url', message: 'must be an http or https URL' });
}

function checkTemplates(t: { template?: string; templateByPlatform?: Record<string, string> }, fields: FieldError[]): void {
  const check = (path: string, template: string) => {
    if (!template.trim()) fields.push({ path, message: 'must not be empty' });
    const unknown = unknownPlaceholders(template);
    if (unknown.length) {
      fields.push({
        path,
        message: `has unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.map((w) => `{${w}}`).join(', ')}; the placeholders are {title}, {link}, {summary}, {author}, {categories} and {feed}`,
      });
    }
  };
  if (t.template !== undefined) check('template', t.template);
  for (const [platform, template] of Object.entries(t.templateByPlatform ?? {})) check(`templateByPlatform.${platform}`, template);
}

/** A template per platform goes with a target channel on that platform, as a post's text per platform does. */
function checkTemplatePlatforms(templateByPlatform: Record<string, string> | undefined, channels: IChannel[]): void {
  const fields = Object.keys(templateByPlatform ?? {})
    .filter((platform) => !channels.some((c) => c.platform === platform))
    .map((platform) => ({ path: `templateByPlatform.${platform}`, message: 'no target channel is on this platform' }));
  if (fields.length) throw errors.validation(fields);
}

/**
 * Why a feed cannot post to a channel of this platform, or null when it can: a feed's posts carry
 * text only, so a platform whose catalog rules require media or extra fields would refuse every
 * item. TikTok's privacy level and YouTube's madeForKids, the options a post to them must choose
 * (domain/posts/options.ts), are on platforms that require media already.
 */
export function feedPlatformProblem(platform: Platform): string | null {
  const rules = rulesFor(platform);
  if (rules.requiresMedia) return `${platform} needs an image or video; a feed's posts are text only`;
  if (rules.requiredFields.length) return `${platform} needs ${rules.requiredFields.join(' and ')}; a feed's posts carry none`;
  return null;
}

/** Every target channel a feed cannot post to, at its index in the request's list (`channels` is in that order). */
function checkChannelPlatforms(channels: IChannel[]): void {
  const fields = channels.flatMap((c, i) => {
    const why = feedPlatformProblem(c.platform);
    return why ? [{ path: `channelIds.${i}`, message: `channel ${c.id}: ${why}` }] : [];
  });
  if (fields.length) throw errors.validation(fields);
}

/** The organization's feeds not deleted are fewer than MAX_FEEDS, or the conflict saying so. */
async function assertUnderFeedLimit(em: EntityManager, organizationId: string): Promise<void> {
  const [{ count } = { count: 0 }] = await sql<{ count: number }>(
    em,
    'select count(*)::int as count from feeds where organization_id = ? and deleted_at is null',
    [organizationId],
  );
  if (count >= MAX_FEEDS) throw errors.conflict(`An organization has at most ${MAX_FEEDS} feeds; delete one first.`, { limit: MAX_FEEDS });
}

/** The feed's items at `url` now, or the refusal at `url` saying why it cannot be read. */
async function readForSaving(url: string, maker: FeedMaker): Promise<{ title: string; entries: FeedEntry[] }> {
  try {
    const read = await readFeed(url, { outbound: maker.outbound, transport: maker.transport });
    if (read.status !== 'ok') throw new FeedReadError('the feed answered 304 Not Modified to a request without validators');
    return read;
  } catch (err) {
    if (err instanceof FeedReadError) throw errors.validation([{ path: 'url', message: err.message }]);
    throw err;
  }
}

/** Records every entry not yet seen as backlog but the newest `keep`, which the next poll posts. */
async function recordBacklog(tx: EntityManager, feedId: string, entries: FeedEntry[], keep: number, now: Date): Promise<void> {
  const seen = await seenOf(tx, feedId, entries);
  const fresh = newEntries(entries, seen.keys, seen.links);
  const backlog = fresh.slice(0, Math.max(0, fresh.length - keep));
  if (!backlog.length) return;
  await sql(
    tx,
    `insert into feed_items (feed_id, key_hash, item_key, link, title, outcome, created_at)
     select ?, e.key_hash, e.item_key, e.link, e.title, 'backlog', ? from jsonb_to_recordset(?::jsonb) as e(key_hash text, item_key text, link text, title text)
     on conflict do nothing`,
    [feedId, now, JSON.stringify(backlog.map((e) => ({ key_hash: e.keyHash, item_key: e.key, link: e.link, title: e.title })))],
  );
}

/** The keys and links of these entries the feed has already seen. */
export async function seenOf(em: EntityManager, feedId: string, entries: FeedEntry[]): Promise<{ keys: Set<string>; links: Set<string> }> {
  const rows = await sql<{ key_hash: string; link: string | null }>(
    em,
    `select key_hash, link from feed_items
     where feed_id = ? and (key_hash in (select jsonb_array_elements_text(?::jsonb)) or link in (select jsonb_array_elements_text(?::jsonb)))`,
    [feedId, JSON.stringify(entries.map((e) => e.keyHash)), JSON.stringify(entries.flatMap((e) => (e.link ? [e.link] : [])))],
  );
  return { keys: new Set(rows.map((r) => r.key_hash)), links: new Set(rows.map((r) => r.link).filter((l): l is string => !!l)) };
}

export async function createFeed(
  em: EntityManager,
  maker: FeedMaker,
  input: FeedInput,
  /** Runs in the feed's transaction, with its view (the API stores its Idempotency-Key answer there). */
  inTransaction?: (tx: EntityManager, view: FeedView) => Promise<void>,
): Promise<FeedView> {
  const fields: FieldError[] = [];
  checkUrl(input.url, fields);
  checkTemplates({ template: input.template ?? DEFAULT_TEMPLATE, templateByPlatform: input.templateByPlatform }, fields);
  if (fields.length) throw errors.validation(fields);
  const channels = await loadTargetChannels(em, maker.organizationId, input.channelIds, maker.key?.channels ?? 'all');
  assertChannelsUsable(channels);
  checkChannelPlatforms(channels);
  checkTemplatePlatforms(input.templateByPlatform, channels);
  const tagIds = await checkTagIds(em, maker.organizationId, input.tagIds ?? []);
  // A full organization is refused before its URL is read; the count that decides is the one below.
  await assertUnderFeedLimit(em, maker.organizationId);
  const read = await readForSaving(input.url, maker);
  const id = newId('feed');
  const backfill = input.backfill ?? 0;
  const pollMinutes = input.pollMinutes ?? POLL_MINUTES.default;
  let view: FeedView | undefined;
  await em.transactional(async (tx) => {
    // The organization's row lock, so that concurrent creates count one after another. FOR NO KEY
    // UPDATE: inserts of the organization's other rows (a FOR KEY SHARE on it) do not wait for it.
    await sql(tx, 'select 1 from organizations where id = ? for no key update', [maker.organizationId]);
    await assertUnderFeedLimit(tx, maker.organizationId);
    const feed = tx.create(Feed, {
      id,
      organization: maker.organizationId,
      name: (input.name ?? read.title).trim().slice(0, 200) || new URL(input.url).hostname,
      url: input.url,
      channelIds: input.channelIds,
      tagIds,
      template: input.template ?? DEFAULT_TEMPLATE,
      templateByPlatform: input.templateByPlatform ?? {},
      mode: input.mode ?? 'now',
      filter: input.filter ?? null,
      pollMinutes,
      status: 'active',
      consecutiveFailures: 0,
      // The backfill goes out at the next sweep; otherwise the next read is a poll interval away.
      nextPollAt: backfill > 0 ? maker.now : new Date(maker.now.getTime() + pollMinutes * 60_000),
      source: maker.source,
      apiKeyId: maker.key?.apiKeyId ?? null,
      createdByUserId: maker.userId ?? null,
    });
    await tx.flush();
    await recordBacklog(tx, id, read.entries, backfill, maker.now);
    view = feedView(feed);
    await inTransaction?.(tx, view);
  });
  return view!;
}

async function findFeed(em: EntityManager, organizationId: string, id: string, keyChannels: 'all' | readonly string[]): Promise<IFeed> {
  if (id.includes('\u0000')) throw errors.notFound('Feed');
  const f = await em.findOne(Feed, { id, organization: organizationId, deletedAt: null });
  if (!f || !keySees(keyChannels, f.channelIds)) throw errors.notFound('Feed');
  return f;
}

export async function getFeed(em: EntityManager, organizationId: string, id: string, keyChannels: 'all' | readonly string[] = 'all') {
  return feedView(await findFeed(em, organizationId, id, keyChannels));
}

/**
 * The organization's feeds (not deleted) whose channels the key sees, oldest first; with `tagId`,
 * those with that tag (an id that is none of the organization's tags matches none).
 */
export async function listFeeds(
  em: EntityManager,
  organizationId: string,
  keyChannels: 'all' | readonly string[] = 'all',
  filters: { tagId?: string } = {},
) {
  const rows = await em.find(
    Feed,
    {
      organization: organizationId,
      deletedAt: null,
      ...(filters.tagId !== undefined ? { tagIds: { $contains: [filters.tagId] } } : {}),
    },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return rows.filter((f) => keySees(keyChannels, f.channelIds)).map(feedView);
}

export async function updateFeed(em: EntityManager, maker: FeedMaker, id: string, edit: FeedEdit): Promise<FeedView> {
  const f = await findFeed(em, maker.organizationId, id, maker.key?.channels ?? 'all');
  const fields: FieldError[] = [];
  if (edit.url !== undefined) checkUrl(edit.url, fields);
  checkTemplates(edit, fields);
  if (fields.length) throw errors.validation(fields);
  if (edit.channelIds || edit.templateByPlatform) {
    const channels = await loadTargetChannels(em, maker.organizationId, edit.channelIds ?? f.channelIds, maker.key?.channels ?? 'all');
    if (edit.channelIds) {
      assertChannelsUsable(channels);
      checkChannelPlatforms(channels);
    }
    checkTemplatePlatforms(edit.templateByPlatform, channels);
  }
  const tagIds = edit.tagIds === undefined ? undefined : await checkTagIds(em, maker.organizationId, edit.tagIds);
  const read = edit.url !== undefined && edit.url !== f.url ? await readForSaving(edit.url, maker) : null;
  await em.transactional(async (tx) => {
    const feed = await tx.findOneOrFail(Feed, { id: f.id });
    if (edit.name !== undefined) feed.name = edit.name.trim() || feed.name;
    if (edit.channelIds !== undefined) feed.channelIds = edit.channelIds;
    if (tagIds !== undefined) feed.tagIds = tagIds;
    if (edit.template !== undefined) feed.template = edit.template;
    if (edit.templateByPlatform !== undefined) feed.templateByPlatform = edit.templateByPlatform;
    if (edit.mode !== undefined) feed.mode = edit.mode;
    if (edit.filter !== undefined) feed.filter = edit.filter;
    if (edit.pollMinutes !== undefined) {
      feed.pollMinutes = edit.pollMinutes;
      feed.nextPollAt = new Date(Math.min(feed.nextPollAt.getTime(), maker.now.getTime() + edit.pollMinutes * 60_000));
    }
    if (read) {
      feed.url = edit.url!;
      feed.etag = null;
      feed.lastModified = null;
      await recordBacklog(tx, feed.id, read.entries, 0, maker.now);
    }
    if (edit.status === 'active' && feed.status !== 'active') {
      feed.status = 'active';
      feed.pausedReason = null;
      // Resuming is a take-over: the key or member that resumes it is its maker from now on (domain/makers.ts).
      feed.apiKeyId = maker.key?.apiKeyId ?? null;
      feed.createdByUserId = maker.key ? null : (maker.userId ?? null);
      feed.source = maker.source;
      feed.consecutiveFailures = 0;
      feed.nextPollAt = maker.now;
    } else if (edit.status === 'paused' && feed.status !== 'paused') {
      feed.status = 'paused';
      feed.pausedReason = null;
    }
    await tx.flush();
  });
  return getFeed(em.fork(), maker.organizationId, id);
}

/** DELETE /v1/feeds/{id}: it polls no more; the posts it made stay. */
export async function deleteFeed(em: EntityManager, organizationId: string, id: string, keyChannels: 'all' | readonly string[], now: Date) {
  const f = await findFeed(em, organizationId, id, keyChannels);
  await em.nativeUpdate(Feed, { id: f.id }, { deletedAt: now });
}

export interface FeedItemView {
  itemKey: string;
  title: string | null;
  link: string | null;
  outcome: IFeedItem['outcome'];
  postId: string | null;
  error: { code: string; message: string } | null;
  seenAt: string;
}

const itemView = (i: IFeedItem): FeedItemView => ({
  itemKey: i.itemKey,
  title: i.title ?? null,
  link: i.link ?? null,
  outcome: i.outcome,
  postId: i.postId ?? null,
  error: i.error ?? null,
  seenAt: i.createdAt.toISOString(),
});

/** GET /v1/feeds/{id}/items: what the feed has seen, newest first, one keyset page. */
export async function listFeedItems(
  em: EntityManager,
  organizationId: string,
  id: string,
  keyChannels: 'all' | readonly string[],
  page: { limit: number; cursor?: string },
): Promise<{ data: FeedItemView[]; nextCursor: string | null }> {
  const f = await findFeed(em, organizationId, id, keyChannels);
  const k = page.cursor ? decodeKeyset(page.cursor, /^[0-9a-f]{64}$/) : null;
  const c = k ? { at: k.at, keyHash: k.id } : null;
  const rows = await em.find(
    FeedItem,
    { feed: f.id, ...(c ? { $or: [{ createdAt: { $lt: c.at } }, { createdAt: c.at, keyHash: { $lt: c.keyHash } }] } : {}) },
    { orderBy: { createdAt: 'desc', keyHash: 'desc' }, limit: page.limit + 1 },
  );
  const shown = rows.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return { data: shown.map(itemView), nextCursor: rows.length > page.limit && last ? encodeKeyset(last.createdAt, last.keyHash) : null };
}

/** A poll asked for now must find the feed active. */
export async function assertPollable(em: EntityManager, organizationId: string, id: string, keyChannels: 'all' | readonly string[]) {
  const f = await findFeed(em, organizationId, id, keyChannels);
  if (f.status !== 'active') {
    throw new ApiError('conflict', 'The feed is paused; set its status to active to poll it again.', {
      details: { status: f.status, pausedReason: f.pausedReason ?? null },
    });
  }
  return f;
}

/**
 * POST /v1/feeds/{id}/poll: reads the feed now, as the poll would, claiming it first (a read of
 * it already under way, the sweep's or one asked for, answers the same and reads nothing). Answers
 * at once; the outcome shows on the feed and its items.
 */
export async function pollFeedNow(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  id: string,
  keyChannels: 'all' | readonly string[],
): Promise<FeedView> {
  const f = await assertPollable(em, organizationId, id, keyChannels);
  if (!temporal) throw new Error('Temporal is not configured for this API');
  const input: FeedPollInput = { limit: 1, rounds: 1, feedId: f.id };
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.client.workflow.start(FEED_POLL_WORKFLOW_TYPE, {
        args: [input],
        taskQueue: temporal.taskQueue,
        workflowId: feedPollNowWorkflowId(f.id),
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowRunTimeout: '10 minutes',
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return feedView(f); // a read of this feed is under way
    if (isTemporalOutage(err)) throw temporalUnavailable('The read could not be started; retry shortly.', err);
    throw err;
  }
  return feedView(f);
}
