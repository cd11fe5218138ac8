// The media library: uploads (rows + their upload workflow), the Media item view, completion,
// and which media a channel-limited key may see.
import type { EntityManager } from '@mikro-orm/postgresql';
import { t } from 'elysia';
import { WorkflowNotFoundError } from '@temporalio/client';
import { MediaItem, type IMediaItem } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';
import { errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { Chars, MAX_CHARS } from '../lib/chars.ts';
import { classifyDeclared, CONTROL_OR_DISGUISE, MAX_FILE_NAME_CHARS, MEDIA_RULES } from '../media/catalog.ts';
import { mediaKeys } from '../media/keys.ts';
import type { ObjectStorage, PresignedUpload } from '../storage/types.ts';
import {
  completeUploadUpdate,
  EXPIRED_REASON,
  MEDIA_UPLOAD_WORKFLOW_TYPE,
  UPLOAD_FAILURE,
  uploadWorkflowId,
  type UploadWorkflowInput,
} from '../workflows/media-types.ts';
import { executeUpdateInRequest, updateFailureType, type TemporalDeps } from './temporal-calls.ts';
import { type PendingKind, startAfterCommit } from './workflow-starts.ts';

export const UPLOAD_WINDOW_MS = 15 * 60 * 1000;

/** A media item's alt text, in characters: what an upload takes and the vision pass suggests. */
export const ALT_TEXT_CHARS = 1500;

/** A file name as media/catalog.ts checks it: no path separator, control or disguising character; not blank, `.` or `..`. */
const NAME_CHAR = String.raw`(?:[^/\\${CONTROL_OR_DISGUISE.source.slice(1, -1)}\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])`;
const FileName = t.String({
  pattern: String.raw`^(?!\s*$)(?!\.{1,2}$)${NAME_CHAR}{1,${MAX_FILE_NAME_CHARS}}$`,
  minLength: 1,
  [MAX_CHARS]: MAX_FILE_NAME_CHARS,
  error: `must be 1 to ${MAX_FILE_NAME_CHARS} characters, without path separators (/ or \\) or control characters, and not blank, . or ..`,
});

/** The accepted media types (media/catalog.ts), lower case; the server also takes them in any letter case. */
const MimeType = t.String({ minLength: 1, maxLength: 100, enum: Object.keys(MEDIA_RULES) });

/**
 * What a client declares to start an upload, as a request schema: POST /v1/media/uploads and the
 * web app's upload take the same body. The type and its size limit are createUpload's checks.
 */
export const UploadBody = t.Object(
  { fileName: FileName, mimeType: MimeType, fileSize: t.Integer({ minimum: 1 }), altText: t.Optional(Chars(ALT_TEXT_CHARS)) },
  { additionalProperties: false },
);
/** Signed GET URLs in API answers stay valid this long. */
export const MEDIA_URL_TTL_SECONDS = 3600;

export interface MediaView {
  id: string;
  type: string;
  status: string;
  fileName: string;
  mimeType: string;
  sizeBytes: number;
  url: string | null;
  thumbnailUrl: string | null;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  altText: string | null;
  description: string | null;
  /** Why the item failed (an addition to SPEC.md §2.4; null unless status is failed). */
  error: string | null;
  createdAt: string;
}

export async function mediaView(item: IMediaItem, storage: ObjectStorage): Promise<MediaView> {
  const ready = item.status === 'ready';
  return {
    id: item.id,
    type: item.type,
    status: item.status,
    fileName: item.fileName,
    mimeType: item.mimeType,
    sizeBytes: item.sizeBytes,
    url: ready ? await storage.signedGetUrl(item.storageKey, MEDIA_URL_TTL_SECONDS) : null,
    thumbnailUrl: ready && item.thumbnailKey ? await storage.signedGetUrl(item.thumbnailKey, MEDIA_URL_TTL_SECONDS) : null,
    width: item.width ?? null,
    height: item.height ?? null,
    durationSeconds: item.durationSeconds ?? null,
    altText: item.altText ?? null,
    description: item.description ?? null,
    error: item.status === 'failed' ? (item.failureReason ?? 'processing failed') : null,
    createdAt: item.createdAt.toISOString(),
  };
}

/** The API key asking, where it matters (the web application sees the whole organization). */
export interface MediaViewer {
  apiKeyId: string;
  channels: 'all' | string[];
}

export async function getMediaItem(em: EntityManager, organizationId: string, id: string, viewer?: MediaViewer): Promise<IMediaItem> {
  if (!/^med_[0-9a-z]{26}$/.test(id)) throw errors.notFound('Media item');
  const item = await em.findOne(MediaItem, { id, organization: organizationId });
  if (!item) throw errors.notFound('Media item');
  if (viewer && (await hiddenMediaIds(em, organizationId, viewer, [id])).size) throw errors.notFound('Media item');
  return item;
}

/**
 * Which of `ids` a channel-limited key may not see (docs/decisions.md "Media"): media
 * that posts use, none of them on one of the key's channels — unless the key uploaded it itself.
 * Media no post uses yet is the organization's library: visible to every key of it. A key for
 * all channels sees everything. Ids of other organizations are not in the answer (not found
 * anyway).
 */
export async function hiddenMediaIds(em: EntityManager, organizationId: string, viewer: MediaViewer, ids: string[]): Promise<Set<string>> {
  if (viewer.channels === 'all' || ids.length === 0) return new Set();
  const rows = await sql<{ id: string }>(
    em,
    `select m.id from media_items m
      where m.organization_id = ? and m.id in (select jsonb_array_elements_text(?::jsonb))
        and m.api_key_id is distinct from ?
        and exists (select 1 from posts p where p.organization_id = m.organization_id and p.media_ids @> jsonb_build_array(m.id))
        and not exists (
          select 1 from posts p join post_channels pc on pc.post_id = p.id
           where p.organization_id = m.organization_id and p.media_ids @> jsonb_build_array(m.id)
             and pc.channel_id in (select jsonb_array_elements_text(?::jsonb)))`,
    [organizationId, JSON.stringify(ids), viewer.apiKeyId, JSON.stringify(viewer.channels)],
  );
  return new Set(rows.map((r) => r.id));
}

export interface NewUpload {
  organizationId: string;
  fileName: string;
  mimeType: string;
  fileSize: number;
  altText: string | null;
  now: Date;
  /** The API key creating it; null or absent for the web application. */
  apiKeyId?: string | null;
}

/** The columns of a media item the start protocol reads. */
export interface UploadStartRow {
  id: string;
  organization_id: string;
  status: string;
  upload_expires_at: Date;
}

/**
 * A pending upload as a row of the start protocol (domain/workflow-starts.ts): its workflow waits
 * for completion until the window closes, so one started late still fails an expired item and
 * deletes what was uploaded.
 */
export const UPLOAD_STARTS: PendingKind<UploadStartRow> = {
  table: 'media_items',
  markedAt: 'created_at',
  columns: 'id, organization_id, status, upload_expires_at',
  startFor: (row) =>
    row.status !== 'pending'
      ? null
      : {
          workflowType: MEDIA_UPLOAD_WORKFLOW_TYPE,
          options: {
            workflowId: uploadWorkflowId(row.id),
            args: [
              {
                mediaId: row.id,
                organizationId: row.organization_id,
                expiresAt: new Date(row.upload_expires_at).toISOString(),
              } satisfies UploadWorkflowInput,
            ],
          },
        },
  async withdraw(tx, row) {
    await sql(tx, 'delete from media_items where id = ?', [row.id]);
  },
};

/**
 * Creates the pending item and its presigned PUT, commits it, then starts its upload workflow
 * (domain/workflow-starts.ts): Temporal down → 503 within the deadline, nothing created.
 */
export async function createUpload(
  em: EntityManager,
  storage: ObjectStorage,
  temporal: TemporalDeps,
  u: NewUpload,
): Promise<{ item: IMediaItem; upload: PresignedUpload }> {
  const classified = classifyDeclared(u.mimeType, u.fileSize, u.fileName);
  if (!classified.ok) throw errors.validation(classified.errors);
  const mimeType = classified.mimeType;
  const id = newId('med');
  const expiresAt = new Date(u.now.getTime() + UPLOAD_WINDOW_MS);
  // The URL names the upload key only; processing serves a checked copy (storageKey then).
  const uploadKey = mediaKeys(u.organizationId, id).upload;
  const upload = await storage.presignPut(uploadKey, { contentType: mimeType, contentLength: u.fileSize, expiresAt });
  const item = await em.transactional(async (tx) =>
    tx.create(MediaItem, {
      id,
      organization: u.organizationId,
      type: classified.type,
      status: 'pending',
      fileName: u.fileName,
      mimeType,
      sizeBytes: u.fileSize,
      storageKey: uploadKey,
      uploadKey,
      apiKeyId: u.apiKeyId ?? null,
      altText: u.altText,
      uploadExpiresAt: expiresAt,
      workflowPending: true,
    }),
  );
  const row = { id, organization_id: u.organizationId, status: 'pending', upload_expires_at: expiresAt };
  await startAfterCommit(em, temporal, UPLOAD_STARTS, row, {
    withdrawn: 'Uploads are unavailable right now; nothing was created. Retry shortly.',
    kept: 'Uploads are unavailable right now; the upload was saved and its window starts once they are back. Retry shortly.',
  });
  item.workflowPending = false;
  return { item, upload };
}

/**
 * Completes an upload through the workflow's Update. Repeated calls return the stored item;
 * bytes not there yet → 409 (still pending); after the window → 409.
 */
export async function completeUpload(
  em: EntityManager,
  temporal: TemporalDeps,
  organizationId: string,
  id: string,
  viewer?: MediaViewer,
): Promise<IMediaItem> {
  const item = await getMediaItem(em, organizationId, id, viewer);
  if (item.status === 'failed' && item.failureReason === EXPIRED_REASON) {
    throw errors.conflict('The 15-minute upload window has closed; create a new upload.', { mediaId: id });
  }
  if (item.status !== 'pending') return item;
  try {
    // Reaching a worker is bounded (Temporal down or no worker → 503); processing the bytes is not.
    await executeUpdateInRequest(
      temporal,
      uploadWorkflowId(id),
      completeUploadUpdate,
      [],
      'Uploads are unavailable right now; the upload was not completed. Retry shortly.',
      'acceptance',
    );
  } catch (err) {
    const type = updateFailureType(err);
    if (type === UPLOAD_FAILURE.notReceived) {
      throw errors.conflict('The file has not been uploaded yet: PUT it to upload.url first, then complete.', { mediaId: id });
    }
    // No running workflow (WorkflowNotFoundError): it has ended, so its window is over.
    if (type === UPLOAD_FAILURE.windowClosed || err instanceof WorkflowNotFoundError) {
      throw errors.conflict('The 15-minute upload window has closed; create a new upload.', { mediaId: id });
    }
    throw err;
  }
  return em.fork().findOneOrFail(MediaItem, { id });
}
