// Posting queues (docs/api.md "Queues"): a channel's weekly slots in its IANA zone (the
// organization's unless the channel names one), the next free slot times, and `queue: true` on
// a new post — the earliest instant that is a free slot of every target channel, claimed in the
// transaction that inserts the post.
//
// "Free": no other post that is not deleted and still scheduled (or publishing) sits on that
// channel at that instant. Bound: QUEUE_HORIZON_DAYS; no free common slot within it → 422.
import type { EntityManager } from '@mikro-orm/postgresql';
import { admissionChanged } from '../../db/admission-changes.ts';
import { Channel, Organization, QueueSlot, type IChannel } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { type ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { checkTimeZone, WEEKDAYS } from '../../lib/zoned-time.ts';
import { channelForKey } from '../channels.ts';
import { commonSlotInstants, isSlotTime, normalizeSlots, weekdayName, weekdayNumber, type QueueSlotInput } from './slots.ts';

export type { QueueSlotInput };

/** How far ahead a queued post may land (and GET …/queue looks for free slots). */
export const QUEUE_HORIZON_DAYS = 90;
const HORIZON_MS = QUEUE_HORIZON_DAYS * 86_400_000;
export const MAX_QUEUE_SLOTS = 100;
export const DEFAULT_FREE_SLOTS = 10;
export const MAX_FREE_SLOTS = 100;

/** GET /v1/channels/{id}/queue. */
export interface QueueView {
  channelId: string;
  /** The zone the slots are in: the channel's own, else the organization's. */
  timeZone: string;
  /** Where `timeZone` comes from: the channel's setting, or the organization's (the channel names none). */
  timeZoneSource: 'channel' | 'organization';
  /** Sorted by weekday (Monday first), then time. */
  slots: QueueSlotInput[];
  /** The next free slot instants (UTC), ascending, within QUEUE_HORIZON_DAYS. */
  nextFreeSlots: string[];
}

export interface QueueAccess {
  /** The API key's channel list ('all' for the web app). */
  keyChannels?: 'all' | string[];
}

/** The organization's zone (UTC unless set). */
export async function organizationTimeZone(em: EntityManager, organizationId: string): Promise<string> {
  const org = await em.findOne(Organization, { id: organizationId }, { fields: ['timeZone'] });
  return org?.timeZone ?? 'UTC';
}

/** Sets the organization's zone (queues and series that name none of their own use it). */
export async function setOrganizationTimeZone(em: EntityManager, organizationId: string, timeZone: string): Promise<string> {
  const fields: FieldError[] = [];
  const tz = checkTimeZone(timeZone, 'timeZone', fields);
  if (tz === undefined) throw errors.validation(fields);
  await em.nativeUpdate(Organization, { id: organizationId }, { timeZone: tz });
  admissionChanged({ organizationId });
  return tz;
}

interface Schedule {
  channelId: string;
  slots: QueueSlotInput[];
  timeZone: string;
  source: 'channel' | 'organization';
}

async function loadSchedules(em: EntityManager, organizationId: string, channels: IChannel[]): Promise<Schedule[]> {
  if (!channels.length) return [];
  const orgZone = await organizationTimeZone(em, organizationId);
  const rows = await em.find(QueueSlot, { channel: { $in: channels.map((c) => c.id) } });
  return channels.map((c) => ({
    channelId: c.id,
    slots: normalizeSlots(rows.filter((r) => r.channel === c.id).map((r) => ({ weekday: weekdayName(r.weekday), time: r.time }))),
    timeZone: c.timeZone ?? orgZone,
    source: c.timeZone ? 'channel' : 'organization',
  }));
}

/** Instants in [from, to] at which one of these channels already has a post (not deleted, scheduled or publishing). */
async function occupiedInstants(em: EntityManager, channelIds: string[], from: Date, to: Date): Promise<Set<number>> {
  // An array parameter is expanded into a list of values: `in (?)` takes every id.
  const rows = await sql<{ at: Date }>(
    em,
    `select distinct p.scheduled_at as at from posts p join post_channels pc on pc.post_id = p.id
     where pc.channel_id in (?) and p.deleted_at is null
       and p.status in ('scheduled', 'publishing') and p.scheduled_at >= ? and p.scheduled_at <= ?`,
    [channelIds, from, to],
  );
  return new Set(rows.map((r) => new Date(r.at).getTime()));
}

/** The free instants common to every schedule, ascending, within the horizon. */
async function freeCommonSlots(em: EntityManager, schedules: Schedule[], now: Date, limit: number): Promise<Date[]> {
  const until = new Date(now.getTime() + HORIZON_MS);
  const candidates = commonSlotInstants(schedules, now, until);
  if (!candidates.length) return [];
  const taken = await occupiedInstants(
    em,
    schedules.map((s) => s.channelId),
    candidates[0]!,
    candidates.at(-1)!,
  );
  return candidates.filter((d) => !taken.has(d.getTime())).slice(0, limit);
}

/** The next `count` free slot instants shared by every one of these channels (the web app's composer and calendar). */
export async function nextFreeSlots(
  em: EntityManager,
  organizationId: string,
  channelIds: string[],
  now: Date,
  count = DEFAULT_FREE_SLOTS,
): Promise<Date[]> {
  const channels = await em.find(Channel, { id: { $in: channelIds }, organization: organizationId });
  if (channels.length !== new Set(channelIds).size) throw errors.notFound('Channel');
  return freeCommonSlots(em, await loadSchedules(em, organizationId, channels), now, count);
}

/** GET /v1/channels/{id}/queue (and the web app's queue editor). */
export async function getQueue(
  em: EntityManager,
  organizationId: string,
  channelId: string,
  opts: QueueAccess & { now: Date; count?: number },
): Promise<QueueView> {
  const channel = await channelForKey(em, organizationId, channelId, opts.keyChannels ?? 'all');
  const [schedule] = await loadSchedules(em, organizationId, [channel]);
  const free = await freeCommonSlots(em, [schedule!], opts.now, opts.count ?? DEFAULT_FREE_SLOTS);
  return {
    channelId,
    timeZone: schedule!.timeZone,
    timeZoneSource: schedule!.source,
    slots: schedule!.slots,
    nextFreeSlots: free.map((d) => d.toISOString()),
  };
}

export interface SetQueueInput {
  /** Replaces every slot of the channel. */
  slots: { weekday: string; time: string }[];
  /** The channel's zone: omitted = unchanged, null = the organization's. */
  timeZone?: string | null;
}

/** PUT /v1/channels/{id}/queue: replaces the slots (and sets the zone when given); 422 for a bad weekday, time or zone. */
export async function setQueue(
  em: EntityManager,
  organizationId: string,
  channelId: string,
  input: SetQueueInput,
  opts: QueueAccess & { now: Date; count?: number },
): Promise<QueueView> {
  const fields: FieldError[] = [];
  if (input.slots.length > MAX_QUEUE_SLOTS) fields.push({ path: 'slots', message: `must have at most ${MAX_QUEUE_SLOTS} slots` });
  input.slots.forEach((s, i) => {
    if (!(WEEKDAYS as readonly string[]).includes(s.weekday))
      fields.push({ path: `slots.${i}.weekday`, message: `must be one of ${WEEKDAYS.join(', ')}` });
    if (!isSlotTime(s.time)) fields.push({ path: `slots.${i}.time`, message: 'must be a local time HH:MM, 00:00 to 23:59' });
  });
  // null: the organization's zone.
  const timeZone = typeof input.timeZone === 'string' ? checkTimeZone(input.timeZone, 'timeZone', fields) : input.timeZone;
  if (fields.length) throw errors.validation(fields);
  const slots = normalizeSlots(input.slots as QueueSlotInput[]);
  await em.transactional(async (tx) => {
    const channel = await channelForKey(tx, organizationId, channelId, opts.keyChannels ?? 'all');
    await tx.nativeDelete(QueueSlot, { channel: channelId });
    for (const s of slots) tx.create(QueueSlot, { channel: channelId, weekday: weekdayNumber(s.weekday), time: s.time });
    if (timeZone !== undefined) channel.timeZone = timeZone;
    await tx.flush();
  });
  return getQueue(em.fork(), organizationId, channelId, opts);
}

/** Why a queued post cannot be placed: a channel without slots, or no common free slot within the horizon. */
function queueRefusal(schedules: Schedule[]): ApiError {
  const empty = schedules.filter((s) => !s.slots.length).map((s) => s.channelId);
  if (empty.length) {
    return errors.validation(
      empty.map((id) => ({ path: 'queue', message: `channel ${id} has no queue slots (PUT /v1/channels/${id}/queue)` })),
      'A target channel has no posting queue.',
    );
  }
  return errors.validation(
    [{ path: 'queue', message: `no free slot common to every target channel within ${QUEUE_HORIZON_DAYS} days` }],
    `No free queue slot within ${QUEUE_HORIZON_DAYS} days.`,
  );
}
/** The time a queued post would get now, without claiming it (POST /v1/posts/validate); 422 when there is none. */
export async function peekQueueTime(em: EntityManager, organizationId: string, channels: IChannel[], now: Date): Promise<Date> {
  const schedules = await loadSchedules(em, organizationId, channels);
  const [first] = await freeCommonSlots(em, schedules, now, 1);
  if (!first) throw queueRefusal(schedules);
  return first;
}

/**
 * The queued post's time, claimed for `postId` on every target channel inside `tx` (the
 * transaction that inserts the post). Candidates are tried earliest first; a channel's claim is
 * the queue_claims primary key (channel, instant): of two concurrent creates, the second waits
 * for the first's commit and then sees the slot taken. Channels are claimed in id order and
 * candidates in time order, so two creates never wait on each other in a cycle. A claim whose
 * post no longer sits there (deleted, rescheduled, channel removed) is taken over.
 */
export async function claimQueueTime(
  tx: EntityManager,
  organizationId: string,
  channels: IChannel[],
  postId: string,
  now: Date,
): Promise<Date> {
  const schedules = await loadSchedules(tx, organizationId, channels);
  const candidates = await freeCommonSlots(tx, schedules, now, Number.MAX_SAFE_INTEGER);
  const ids = channels.map((c) => c.id).sort();
  for (const at of candidates) {
    const claimed: string[] = [];
    for (const channelId of ids) {
      if (!(await claimOne(tx, channelId, at, postId))) break;
      claimed.push(channelId);
    }
    if (claimed.length === ids.length) return at;
    if (claimed.length) await sql(tx, 'delete from queue_claims where post_id = ? and slot_at = ?', [postId, at]);
  }
  throw queueRefusal(schedules);
}

/** Claims (channel, at) for postId; false when a live post holds it. */
async function claimOne(tx: EntityManager, channelId: string, at: Date, postId: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await sql<{ post_id: string }>(
      tx,
      `insert into queue_claims (channel_id, slot_at, post_id, created_at) values (?, ?, ?, now())
       on conflict (channel_id, slot_at) do nothing returning post_id`,
      [channelId, at, postId],
    );
    if (inserted.length) return true;
    // Held: lock the claim (a new statement sees what its holder committed) and see whether its post still sits there.
    const held = await sql<{ post_id: string }>(tx, 'select post_id from queue_claims where channel_id = ? and slot_at = ? for update', [
      channelId,
      at,
    ]);
    if (!held.length) continue; // released meanwhile: insert again
    const live = await sql(
      tx,
      `select 1 from posts p join post_channels pc on pc.post_id = p.id and pc.channel_id = ?
       where p.id = ? and p.deleted_at is null and p.status in ('scheduled', 'publishing') and p.scheduled_at = ?`,
      [channelId, held[0]!.post_id, at],
    );
    if (live.length) return false;
    await sql(tx, 'update queue_claims set post_id = ?, created_at = now() where channel_id = ? and slot_at = ?', [postId, channelId, at]);
    return true;
  }
  return false;
}

/**
 * Frees a post's claims (its cancel, or a reschedule: `keepAt` = its new time, kept if claimed).
 * Only tidiness: a claim whose post has moved or gone is taken over anyway (claimQueueTime).
 */
export async function releaseQueueClaims(em: EntityManager, postId: string, keepAt?: Date): Promise<void> {
  await sql(
    em,
    keepAt ? 'delete from queue_claims where post_id = ? and slot_at <> ?' : 'delete from queue_claims where post_id = ?',
    keepAt ? [postId, keepAt] : [postId],
  );
}
