// Drafts: a post's content not yet scheduled (db/entities/draft.ts).
//
// Rules:
// - A draft holds the post-content schema's fields (domain/posts/content.ts), each optional, as
//   given: from nothing to a whole post. Its channels (maybe none) must be the organization's, and
//   within a channel-limited key's list; nothing else is checked until it is validated or
//   scheduled (POST /v1/drafts/{id}/validate runs every check of a create).
// - A draft is never published, whatever its intended time, and never counts toward the pending
//   posts' limit or duplicate_post.
// - Scheduling makes the post through the one create path (services/draft-requests.ts); the draft
//   then records the post it became and can no longer be changed or scheduled again (it can be
//   deleted).
// - A key limited to channels sees the drafts whose channels are all within its list (a draft
//   with none too).
// - Its tags (`tagIds`) are the organization's, checked as a post's (domain/tags.ts), and go to the
//   post it becomes; deleting a tag takes it off every draft.
import type { EntityManager } from '@mikro-orm/postgresql';
import { t } from 'elysia';
import type { Actor } from '../../db/entities/post.ts';
import { sql } from '../../db/sql.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { parseInstant } from '../../lib/date-time.ts';
import { BodyId } from '../../lib/chars.ts';
import { idPattern, newId } from '../../lib/ids.ts';
import { decodeKeyset, encodeKeyset } from '../../lib/keyset-cursor.ts';
import { type KeyChannels, keySees } from '../key-channels.ts';
import { checkTagIds } from '../tags.ts';
import { LATEST_PUBLISH_AT, loadTargetChannels } from './checks.ts';
import { CONTENT_FIELDS, EDIT_FIELDS } from './content.ts';
import { POST_LIMITS } from './limits.ts';

/** A draft's channels: a post's bounds, but it may have none until it is scheduled. */
export const DraftChannelIds = t.Array(BodyId(), {
  maxItems: POST_LIMITS.channels,
  uniqueItems: true,
  description: 'The channels it is meant for (the organization’s); may be empty until it is scheduled.',
});

/** A draft's fields: the content's, each optional (null removes a nullable one), its channels and its intended time. */
export const DRAFT_FIELDS = {
  ...EDIT_FIELDS,
  channelIds: t.Optional(DraftChannelIds),
};

export interface DraftInput {
  [field: string]: unknown;
  channelIds?: string[];
  tagIds?: string[];
  /** ISO 8601, or null: none. */
  intendedAt?: string | null;
}

export interface DraftView {
  [field: string]: unknown;
  id: string;
  channelIds: string[];
  tagIds: string[];
  intendedAt: string | null;
  /** `draft` until scheduled; `scheduled` once it became a post (`postId`). */
  status: 'draft' | 'scheduled';
  postId: string | null;
  scheduledAt: string | null;
  createdBy: Actor;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  content: Record<string, unknown>;
  channel_ids: string[];
  tag_ids: string[];
  intended_at: Date | string | null;
  created_by: Actor;
  post_id: string | null;
  scheduled_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (at: Date | string | null) => (at === null ? null : new Date(at).toISOString());

function view(r: Row): DraftView {
  return {
    id: r.id,
    ...r.content,
    channelIds: r.channel_ids,
    tagIds: r.tag_ids,
    intendedAt: iso(r.intended_at),
    status: r.post_id || r.scheduled_at ? 'scheduled' : 'draft',
    postId: r.post_id,
    scheduledAt: iso(r.scheduled_at),
    createdBy: r.created_by,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

const COLUMNS = 'id, content, channel_ids, tag_ids, intended_at, created_by, post_id, scheduled_at, created_at, updated_at';
const DRAFT_ID = new RegExp(idPattern('drf'));

/** The content fields of a body, as given (null kept: it removes a field on edit). */
function contentGiven(body: DraftInput): Record<string, unknown> {
  return Object.fromEntries(CONTENT_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
}

/** The earliest intended time a draft takes. */
const EARLIEST_INTENDED_AT = new Date(0);

/**
 * A draft's intended time: an instant with an offset, from 1970 to before LATEST_PUBLISH_AT (what a
 * post may be scheduled at), as the Date stored (Postgres takes offsets only up to ±15:59); null: none.
 */
function intendedAtOf(value: string | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const fields: FieldError[] = [];
  const at = parseInstant(value, 'intendedAt', fields);
  if (at && at.getTime() >= LATEST_PUBLISH_AT.getTime())
    fields.push({ path: 'intendedAt', message: `must be before ${LATEST_PUBLISH_AT.toISOString()}` });
  else if (at && at.getTime() < EARLIEST_INTENDED_AT.getTime())
    fields.push({ path: 'intendedAt', message: `must be at or after ${EARLIEST_INTENDED_AT.toISOString()}` });
  if (fields.length || !at) throw errors.validation(fields);
  return at;
}

async function checkChannels(em: EntityManager, organizationId: string, channelIds: string[] | undefined, keyChannels: KeyChannels) {
  if (channelIds?.length) await loadTargetChannels(em, organizationId, channelIds, keyChannels === 'all' ? 'all' : [...keyChannels]);
}

/** A draft of the organization the key sees, or not_found. */
export async function getDraft(em: EntityManager, organizationId: string, id: string, keyChannels: KeyChannels): Promise<DraftView> {
  if (!DRAFT_ID.test(id)) throw errors.notFound('Draft');
  const [row] = await sql<Row>(em, `select ${COLUMNS} from drafts where id = ? and organization_id = ?`, [id, organizationId]);
  if (!row || !keySees(keyChannels, row.channel_ids)) throw errors.notFound('Draft');
  return view(row);
}

/** A draft as checked (checkDraft), ready to be written. */
export interface CheckedDraft {
  content: Record<string, unknown>;
  channelIds: string[];
  tagIds: string[];
  intendedAt: Date | null;
}

/** A new draft's body checked: its intended time, its channels (within the key's), its tags. */
export async function checkDraft(
  em: EntityManager,
  who: { organizationId: string; keyChannels: KeyChannels },
  body: DraftInput,
): Promise<CheckedDraft> {
  const intendedAt = intendedAtOf(body.intendedAt) ?? null;
  await checkChannels(em, who.organizationId, body.channelIds, who.keyChannels);
  const tagIds = await checkTagIds(em, who.organizationId, body.tagIds ?? []);
  const content = Object.fromEntries(Object.entries(contentGiven(body)).filter(([, v]) => v !== null));
  return { content, channelIds: body.channelIds ?? [], tagIds, intendedAt };
}

/**
 * Writes a checked draft under `id`; undefined when a draft has that id already (an import's row
 * with an Idempotency-Key has a fixed one: a retry meets the draft written before).
 */
export async function insertDraft(
  em: EntityManager,
  who: { organizationId: string; actor: Actor; now: Date },
  d: CheckedDraft,
  id = newId('drf'),
): Promise<DraftView | undefined> {
  const [row] = await sql<Row>(
    em,
    `insert into drafts (id, organization_id, content, channel_ids, tag_ids, intended_at, created_by, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (id) do nothing returning ${COLUMNS}`,
    [
      id,
      who.organizationId,
      JSON.stringify(d.content),
      JSON.stringify(d.channelIds),
      JSON.stringify(d.tagIds),
      d.intendedAt,
      JSON.stringify(who.actor),
      who.now,
      who.now,
    ],
  );
  return row && view(row);
}

/** POST /v1/drafts. */
export async function createDraft(
  em: EntityManager,
  who: { organizationId: string; keyChannels: KeyChannels; actor: Actor; now: Date },
  body: DraftInput,
): Promise<DraftView> {
  return (await insertDraft(em, who, await checkDraft(em, who, body)))!;
}

/** PATCH /v1/drafts/{id}: the fields given replace the draft's (null removes one); a scheduled draft is refused. */
export async function updateDraft(
  em: EntityManager,
  who: { organizationId: string; keyChannels: KeyChannels; now: Date },
  id: string,
  body: DraftInput,
): Promise<DraftView> {
  const draft = await getDraft(em, who.organizationId, id, who.keyChannels);
  assertEditable(draft);
  const intendedAt = intendedAtOf(body.intendedAt);
  await checkChannels(em, who.organizationId, body.channelIds, who.keyChannels);
  const tagIds = body.tagIds === undefined ? undefined : await checkTagIds(em, who.organizationId, body.tagIds);
  const given = contentGiven(body);
  const removed = Object.keys(given).filter((f) => given[f] === null);
  const set = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null));
  await sql(
    em,
    `update drafts set content = (content - ?::text[]) || ?::jsonb,
       channel_ids = coalesce(?::jsonb, channel_ids),
       tag_ids = coalesce(?::jsonb, tag_ids),
       intended_at = case when ? then ?::timestamptz else intended_at end,
       updated_at = ?
     where id = ? and post_id is null and scheduled_at is null`,
    [
      `{${removed.join(',')}}`,
      JSON.stringify(set),
      body.channelIds !== undefined ? JSON.stringify(body.channelIds) : null,
      tagIds !== undefined ? JSON.stringify(tagIds) : null,
      intendedAt !== undefined,
      intendedAt ?? null,
      who.now,
      id,
    ],
  );
  return getDraft(em, who.organizationId, id, who.keyChannels);
}

export function assertEditable(draft: DraftView): void {
  if (draft.status === 'scheduled')
    throw new ApiError('conflict', 'The draft was scheduled; change the post it became instead.', { details: { postId: draft.postId } });
}

/** DELETE /v1/drafts/{id}. */
export async function deleteDraft(em: EntityManager, organizationId: string, id: string, keyChannels: KeyChannels): Promise<void> {
  await getDraft(em, organizationId, id, keyChannels);
  await sql(em, 'delete from drafts where id = ? and organization_id = ?', [id, organizationId]);
}

export interface DraftFilters {
  status?: 'draft' | 'scheduled';
  /** Only the drafts with this tag; an id that is none of the organization's tags matches none. */
  tagId?: string;
  limit: number;
  cursor?: string;
}

/** GET /v1/drafts: last changed first, keyset paged. */
export async function listDrafts(
  em: EntityManager,
  organizationId: string,
  keyChannels: KeyChannels,
  f: DraftFilters,
): Promise<{ data: DraftView[]; nextCursor: string | null }> {
  const where = ['organization_id = ?'];
  const params: unknown[] = [organizationId];
  if (keyChannels !== 'all') {
    where.push('channel_ids <@ ?::jsonb');
    params.push(JSON.stringify(keyChannels));
  }
  if (f.status === 'draft') where.push('post_id is null and scheduled_at is null');
  if (f.status === 'scheduled') where.push('(post_id is not null or scheduled_at is not null)');
  if (f.tagId !== undefined) {
    where.push('tag_ids @> ?::jsonb');
    params.push(JSON.stringify([f.tagId]));
  }
  if (f.cursor !== undefined) {
    const k = decodeKeyset(f.cursor, DRAFT_ID);
    where.push('(updated_at, id) < (?, ?)');
    params.push(k.at, k.id);
  }
  const rows = await sql<Row>(em, `select ${COLUMNS} from drafts where ${where.join(' and ')} order by updated_at desc, id desc limit ?`, [
    ...params,
    f.limit + 1,
  ]);
  const shown = rows.slice(0, f.limit).map(view);
  const last = shown.at(-1);
  return { data: shown, nextCursor: rows.length > f.limit && last ? encodeKeyset(new Date(last.updatedAt), last.id) : null };
}

/** Records the post a draft became (idempotent: a retried schedule records the same post). */
export async function markScheduled(em: EntityManager, draftId: string, postId: string, now: Date): Promise<void> {
  await sql(
    em,
    'update drafts set post_id = ?, scheduled_at = coalesce(scheduled_at, ?), updated_at = ? where id = ? and (post_id is null or post_id = ?)',
    [postId, now, now, draftId, postId],
  );
}
