// Activities of the upload workflow and the vision pass. Each forks its own EntityManager;
// bytes move between object storage and a temp file here, never through workflow payloads.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { MediaItem } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { probeFile } from '../media/probe.ts';
import { describeMimeType, HEAD_BYTES, sameFamily, sniffMimeType } from '../media/sniff.ts';
import { makeThumbnail } from '../media/thumbnail.ts';
import { MediaRejected } from '../media/types.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { describeImage, type VisionConfig } from './vision.ts';
import { EXPIRED_REASON } from '../workflows/media-types.ts';

export interface MediaActivityDeps {
  orm: Orm;
  storage?: ObjectStorage;
  vision?: VisionConfig;
  fetch?: typeof fetch;
}


export function createMediaActivities(deps: MediaActivityDeps) {
  const storage = () => {
    if (!deps.storage) throw new Error('object storage is not configured on this worker');
    return deps.storage;
  };

  async function fail(id: string, reason: string) {
    const em = deps.orm.em.fork();
    const item = await em.findOneOrFail(MediaItem, { id });
    if (item.status === 'pending') {
      item.status = 'failed';
      item.failureReason = reason;
      await em.flush();
    }
    return { status: item.status, reason: item.failureReason ?? reason } as const;
  }

  return {
    async checkUploadedObject(mediaId: string): Promise<{ present: boolean }> {
      const item = await deps.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId });
      return { present: (await storage().head(item.storageKey)) !== null };
    },

    /** Verifies size and type against what was declared, probes, thumbnails; ready or failed. */
    async processUpload(mediaId: string): Promise<{ status: 'ready' | 'failed' | 'pending'; reason?: string }> {
      const em = deps.orm.em.fork();
      const item = await em.findOneOrFail(MediaItem, { id: mediaId });
      if (item.status !== 'pending') return { status: item.status, reason: item.failureReason ?? undefined };
      const store = storage();
      const info = await store.head(item.storageKey);
      if (!info) return fail(mediaId, 'the uploaded file disappeared before it could be processed');
      if (info.size !== item.sizeBytes) {
        return fail(mediaId, `the upload is ${info.size} bytes but ${item.sizeBytes} bytes were declared`);
      }
      const head = await store.readRange(item.storageKey, 0, HEAD_BYTES - 1);
      const sniffed = sniffMimeType(head);
      if (!sniffed || !sameFamily(item.mimeType, sniffed)) {
        return fail(mediaId, sniffed ? `the file is ${describeMimeType(sniffed)}, not ${item.mimeType}` : `the file is not ${describeMimeType(item.mimeType)}`);
      }
      const dir = await mkdtemp(join(tmpdir(), 'postpilot-media-'));
      try {
        const path = join(dir, 'original');
        await store.downloadTo(item.storageKey, path);
        Context.current().heartbeat();
        const probe = await probeFile(path, item.mimeType);
        Context.current().heartbeat();
        const thumb = await makeThumbnail(path, probe.sniffedMimeType);
        let thumbnailKey: string | null = null;
        if (thumb) {
          thumbnailKey = `${item.storageKey.replace(/\/original$/, '')}/thumbnail`;
          await store.put(thumbnailKey, thumb.bytes, thumb.contentType);
        }
        item.width = probe.width ?? null;
        item.height = probe.height ?? null;
        item.durationSeconds = probe.durationSeconds ?? null;
        item.thumbnailKey = thumbnailKey;
        item.status = 'ready';
        await em.flush();
        return { status: 'ready' };
      } catch (err) {
        if (err instanceof MediaRejected) return fail(mediaId, err.reason);
        throw err;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    /** The window closed without a completion: fail the item and delete any bytes. */
    async expireUpload(mediaId: string): Promise<void> {
      const item = await deps.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId });
      await fail(mediaId, EXPIRED_REASON);
      await storage().delete(item.storageKey);
    },

    /** The vision pass: a description of an image, when a vision endpoint is configured. */
    async describeMedia(mediaId: string): Promise<{ description: string | null }> {
      if (!deps.vision) return { description: null };
      const em = deps.orm.em.fork();
      const item = await em.findOneOrFail(MediaItem, { id: mediaId });
      if (item.status !== 'ready' || (item.type !== 'image' && item.type !== 'gif')) return { description: null };
      if (item.description) return { description: item.description };
      // The thumbnail is small enough to send inline; the endpoint need not reach our storage.
      const bytes = await storage().read(item.thumbnailKey ?? item.storageKey);
      const contentType = item.thumbnailKey ? 'image/webp' : item.mimeType;
      const description = await describeImage(deps.vision, bytes, contentType, item.altText ?? null, deps.fetch ?? fetch);
      item.description = description;
      await em.flush();
      return { description };
    },
  };
}
