// The media library: uploads (rows + their upload workflow), the Media item view, completion.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { MediaItem, type IMediaItem } from '../db/entities/index.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { classifyDeclared } from '../media/catalog.ts';
import type { ObjectStorage, PresignedUpload } from '../storage/types.ts';
import { EXPIRED_REASON, UPLOAD_FAILURE, uploadWorkflowId, type UploadWorkflowInput } from '../workflows/media-types.ts';
import type { TemporalDeps } from './post-scheduler.ts';

export const UPLOAD_WINDOW_MS = 15 * 60 * 1000;
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

export async function getMediaItem(em: EntityManager, organizationId: string, id: string): Promise<IMediaItem> {
  if (!/^med_[0-9a-z]{26}$/.test(id)) throw errors.notFound('Media item');
  const item = await em.findOne(MediaItem, { id, organization: organizationId });
  if (!item) throw errors.notFound('Media item');
  return item;
}

export interface NewUpload {
  organizationId: string;
  fileName: string;
  mimeType: string;
  fileSize: number;
  altText: string | null;
  now: Date;
}

/**
 * Creates the pending item, its presigned PUT and its upload workflow in one step (the workflow
 * starts inside the transaction, before the commit, as for posts).
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
  const storageKey = `${u.organizationId}/${id}/original`;
  const upload = await storage.presignPut(storageKey, { contentType: mimeType, contentLength: u.fileSize, expiresAt });
  const workflowId = uploadWorkflowId(id);
  let started = false;
  let item!: IMediaItem;
  try {
    await em.transactional(async (tx) => {
      item = tx.create(MediaItem, {
        id,
        organization: u.organizationId,
        type: classified.type,
        status: 'pending',
        fileName: u.fileName,
        mimeType,
        sizeBytes: u.fileSize,
        storageKey,
        altText: u.altText,
        uploadExpiresAt: expiresAt,
      });
      await tx.flush();
      const input: UploadWorkflowInput = { mediaId: id, organizationId: u.organizationId, expiresAt: expiresAt.toISOString() };
      try {
        await temporal.client.workflow.start('mediaUploadWorkflow', { taskQueue: temporal.taskQueue, workflowId, args: [input] });
      } catch (err) {
        throw new ApiError('internal_error', 'The upload could not be started; nothing was created. Retry the request.', {
          reason: (err as Error).message.slice(0, 200),
        });
      }
      started = true;
    });
  } catch (err) {
    if (started) await temporal.client.workflow.getHandle(workflowId).terminate('media row was not committed').catch(() => {});
    throw err;
  }
  return { item, upload };
}

/**
 * Completes an upload through the workflow's Update. Repeated calls return the stored item;
 * bytes not there yet → 409 (still pending); after the window → 409.
 */
export async function completeUpload(em: EntityManager, temporal: TemporalDeps, organizationId: string, id: string): Promise<IMediaItem> {
  const item = await getMediaItem(em, organizationId, id);
  if (item.status === 'failed' && item.failureReason === EXPIRED_REASON) {
    throw errors.conflict('The 15-minute upload window has closed; create a new upload.', { mediaId: id });
  }
  if (item.status !== 'pending') return item;
  try {
    await temporal.client.workflow.getHandle(uploadWorkflowId(id)).executeUpdate('completeUpload', { args: [] });
  } catch (err) {
    const type = err instanceof WorkflowUpdateFailedError ? (err.cause as { type?: string } | undefined)?.type : undefined;
    if (type === UPLOAD_FAILURE.notReceived) {
      throw errors.conflict('The file has not been uploaded yet: PUT it to upload.url first, then complete.', { mediaId: id });
    }
    if (type === UPLOAD_FAILURE.windowClosed || /not found|completed|already/i.test((err as Error).message)) {
      throw errors.conflict('The 15-minute upload window has closed; create a new upload.', { mediaId: id });
    }
    throw err;
  }
  return em.fork().findOneOrFail(MediaItem, { id });
}
