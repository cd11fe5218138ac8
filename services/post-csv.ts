// CSV import and export of posts (domain/posts/csv.ts states the columns and the cells' rules):
// an import is a batch of POST /v1/posts/bulk, its media URLs fetched through the outbound guard
// as upload_media_from_url does; an export reads the posts a key sees, page by page.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Organization, type PostStatus } from '../db/entities/index.ts';
import { listChannels } from '../domain/channels.ts';
import { type BulkMode, inTurns } from '../domain/posts/bulk.ts';
import { readPostsCsv, writePostsCsv, type CsvRow } from '../domain/posts/csv.ts';
import { listPostsForKey, type PostView } from '../domain/posts/view.ts';
import { keySees } from '../domain/key-channels.ts';
import { listTags } from '../domain/tags.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import type { CapabilityDeps } from '../domain/capabilities.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { checkTimeZone } from '../lib/zoned-time.ts';
import { DEFAULT_OUTBOUND, type OutboundPolicy } from '../lib/outbound.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { StoredResponse } from './idempotency.ts';
import { uploadMediaFromUrl } from './media-from-url.ts';
import { Value } from '@sinclair/typebox/value';
import { fieldErrors } from '../lib/schema-words.ts';
import { ContentEdit, contentOf, PostContent } from '../domain/posts/content.ts';
import { listDrafts, type DraftView } from '../domain/posts/drafts.ts';
import type { DraftRow } from './bulk-rows.ts';
import { createPostsInBulkOnce, type NewPostBody } from './post-requests.ts';
import type { Caller } from './account.ts';

type Who = Pick<Caller, 'organization' | 'key' | 'channels' | 'now'>;

/** The most posts one export writes: narrow `from`/`to` for more. */
export const EXPORT_MAX_POSTS = 10_000;

/** Rows whose media URLs are fetched at once (each row fetches its own one after another). */
export const FETCHES_AT_ONCE = 4;

const isUrl = (ref: string) => /^https?:\/\//i.test(ref);

/**
 * POST /v1/posts/import: the rows of the file as a batch (mode as for /bulk). A row's media URL is
 * fetched and stored first, once the Idempotency-Key is claimed; a URL that cannot be refuses its row.
 */
export async function importPostsCsv(
  deps: {
    em: EntityManager;
    temporal: TemporalDeps | undefined;
    storage: ObjectStorage | undefined;
    capabilities?: CapabilityDeps;
    outbound?: OutboundPolicy;
  },
  who: Who,
  csv: string,
  o: { mode?: BulkMode; timeZone?: string; idempotencyKey?: string; drafts?: boolean },
): Promise<StoredResponse & { replayed: boolean }> {
  const fields: FieldError[] = [];
  const zone = o.timeZone === undefined ? undefined : checkTimeZone(o.timeZone, 'timeZone', fields);
  if (fields.length) throw errors.validation(fields);
  const org = await deps.em.findOneOrFail(Organization, { id: who.organization.id });
  const channels = (await listChannels(deps.em, who.organization.id)).filter((c) => keySees(who.channels, [c.id]));
  const rows = readPostsCsv(csv, channels, zone ?? org.timeZone, await listTags(deps.em, who.organization.id), { drafts: o.drafts });
  const fetchUrl = async (url: string) => {
    if (!deps.storage || !deps.temporal) throw new Error('media storage is not configured for this API');
    const item = await uploadMediaFromUrl(deps.em.fork(), deps.storage, deps.temporal, deps.outbound ?? DEFAULT_OUTBOUND, {
      organizationId: who.organization.id,
      viewer: { apiKeyId: who.key.id, channels: who.channels },
      url,
      altText: null,
      now: who.now,
    });
    return item.id;
  };
  // Fetched only once the Idempotency-Key is claimed (a replay answers without fetching again), a
  // few rows at a time: a file may name a URL in each of its 500 rows.
  const posts = () => inTurns(rows, FETCHES_AT_ONCE, async (row) => (row instanceof ApiError ? row : csvRowBody(row, fetchUrl)));
  // The file and whether it asks for drafts are what the Idempotency-Key is held to.
  return createPostsInBulkOnce(deps, who, { mode: o.mode, posts }, o.idempotencyKey, {
    endpoint: 'POST /v1/posts/import',
    request: o.drafts ? { csv, drafts: true } : csv,
  });
}

/**
 * A row's body, its media URLs now media ids (`fetchUrl` stores the file and gives its id): a
 * post's, or a draft's (a row read as one). A URL refused, or any URL without `fetchUrl` (the web
 * app's import page, which names media by id), is the row's refusal at `media`.
 */
export async function csvRowBody(row: CsvRow, fetchUrl?: (url: string) => Promise<string>): Promise<NewPostBody | DraftRow | ApiError> {
  const { media: _media, texts, draft, ...cells } = row;
  // The row's content held to the schema a body's is (domain/posts/content.ts; a draft's, every
  // field optional), before any URL is fetched: its bounds, in its words.
  const content = contentOf({ ...cells, ...(draft && cells.content === '' ? { content: undefined } : {}), ...texts });
  const problems = fieldErrors(Value.Errors(draft ? ContentEdit : PostContent, content));
  if (problems.length) return errors.validation(problems);
  const mediaIds: string[] = [];
  for (const ref of row.media) {
    if (!isUrl(ref)) {
      mediaIds.push(ref);
      continue;
    }
    if (!fetchUrl) {
      return errors.validation([
        { path: 'media', message: `${ref}: URLs are not fetched here; upload the file to the media library and give its id` },
      ]);
    }
    try {
      mediaIds.push(await fetchUrl(ref));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return errors.validation([{ path: 'media', message: `${ref}: ${err.message}` }]);
    }
  }
  if (draft) {
    const { publishAt, channelIds, tagIds } = cells;
    return {
      draft: {
        ...content,
        channelIds,
        ...(tagIds ? { tagIds } : {}),
        ...(publishAt ? { intendedAt: publishAt } : {}),
        ...(mediaIds.length ? { mediaIds } : {}),
      },
    };
  }
  return { ...cells, ...texts, ...(mediaIds.length ? { mediaIds } : {}) };
}

/**
 * GET /v1/posts/export: the posts the key sees, in the range and status asked for, oldest first;
 * with `drafts`, then the drafts it sees not yet scheduled (those meant for a time in the range
 * when one is given), by intended time, those without one last.
 */
export async function exportPostsCsv(
  em: EntityManager,
  who: Who,
  f: { from?: Date; to?: Date; status?: PostStatus; drafts?: boolean },
  storage?: ObjectStorage,
): Promise<string> {
  const posts: PostView[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listPostsForKey(em, who.organization.id, who.channels, { ...f, limit: 100, cursor }, storage);
    posts.push(...page.data);
    if (posts.length > EXPORT_MAX_POSTS)
      throw errors.validation([{ path: 'from', message: `more than ${EXPORT_MAX_POSTS} posts in the range: narrow from and to` }]);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const drafts = f.drafts ? await draftsToExport(em, who, f) : [];
  return writePostsCsv(posts.reverse(), await listTags(em, who.organization.id), drafts);
}

async function draftsToExport(em: EntityManager, who: Who, f: { from?: Date; to?: Date }): Promise<DraftView[]> {
  const drafts: DraftView[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listDrafts(em, who.organization.id, who.channels, { status: 'draft', limit: 100, cursor });
    drafts.push(...page.data);
    if (drafts.length > EXPORT_MAX_POSTS)
      throw errors.validation([{ path: 'drafts', message: `more than ${EXPORT_MAX_POSTS} drafts: export posts alone` }]);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const at = (d: DraftView) => (d.intendedAt === null ? Number.POSITIVE_INFINITY : new Date(d.intendedAt).getTime());
  const ranged = f.from !== undefined || f.to !== undefined;
  return drafts
    .filter((d) => !ranged || (d.intendedAt !== null && (!f.from || at(d) >= f.from.getTime()) && (!f.to || at(d) < f.to.getTime())))
    .sort((a, b) => at(a) - at(b) || a.createdAt.localeCompare(b.createdAt));
}
