// Activities of the upload workflow and the vision pass. Each forks its own EntityManager;
// bytes move between object storage and a temp file here, never through workflow payloads.
// Processing closes the upload, copies it to a key no upload URL names and checks that copy,
// so the bytes served and published are the bytes checked (docs/decisions.md "Media").
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { MediaItem, type IMediaItem } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createWebhookEmitter, type WebhookEmitter } from './webhook-events.ts';
import { probeFile } from '../media/probe.ts';
import { canonicalMimeType } from '../media/catalog.ts';
import { MAX_PROCESSING_ATTEMPTS, mediaKeys } from '../media/keys.ts';
import { contentDisposition } from '../media/serving.ts';
import { describeMimeType, HEAD_BYTES, sameFamily, sniffMimeType } from '../media/sniff.ts';
import { makeThumbnail } from '../media/thumbnail.ts';
import { MediaRejected } from '../media/types.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { describeImage, type VisionConfig } from './vision.ts';
import { EXPIRED_REASON } from '../workflows/media-types.ts';

export interface MediaActivityDeps {
  orm: Orm;
  /** media.ready / media.failed (activities/webhook-events.ts). */
  webhooks?: WebhookEmitter;
  storage?: ObjectStorage;
  vision?: VisionConfig;
  fetch?: typeof fetch;
}

export function createMediaActivities(deps: MediaActivityDeps) {
  const webhooks = deps.webhooks ?? createWebhookEmitter(undefined);
  const storage = () => {
    if (!deps.storage) throw new Error('object storage is not configured on this worker');
    return deps.storage;
  };

  /** The item's event, in `em`'s transaction (called only by the attempt that changed its status). */
  async function emitMedia(em: EntityManager, id: string, type: 'media.ready' | 'media.failed'): Promise<string[]> {
    // Reloaded: the status was changed by an UPDATE, under an identity map that may hold the item as it was.
    const item = await em.findOneOrFail(MediaItem, { id }, { refresh: true });
    return webhooks.write(em, item.organization, type, (views) => views.media(em, id));
  }

  /** Fails a pending item (atomically: another attempt may be deciding it too); the outcome. */
  async function fail(id: string, reason: string) {
    const em = deps.orm.em.fork();
    const events = await em.transactional(async (tx) => {
      const changed = await tx.nativeUpdate(
        MediaItem,
        { id, status: 'pending' },
        { status: 'failed', failureReason: reason, updatedAt: new Date() },
      );
      return changed ? emitMedia(tx, id, 'media.failed') : [];
    });
    await webhooks.dispatch(deps.orm.em, events);
    const item = await em.findOneOrFail(MediaItem, { id });
    return { status: item.status, reason: item.failureReason ?? reason } as const;
  }

  /** Fails the item and drops its bytes: nothing of a refused file is kept or served. */
  async function reject(item: IMediaItem, finalKey: string, reason: string) {
    const outcome = await fail(item.id, reason);
    await storage().delete(finalKey);
    if (outcome.status === 'failed') await storage().delete(item.uploadKey);
    return outcome;
  }

  return {
    async checkUploadedObject(mediaId: string): Promise<{ present: boolean }> {
      const item = await deps.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId });
      return { present: (await storage().head(item.uploadKey)) !== null };
    },

    /**
     * Closes the upload, copies it to the item's final key, and checks that copy: size and type
     * against what was declared, probe, thumbnail; then ready (serving the copy) or failed.
     */
    async processUpload(mediaId: string): Promise<{ status: 'ready' | 'failed' | 'pending'; reason?: string }> {
      const em = deps.orm.em.fork();
      const item = await em.findOneOrFail(MediaItem, { id: mediaId });
      if (item.status !== 'pending') return { status: item.status, reason: item.failureReason ?? undefined };
      const store = storage();
      const keys = mediaKeys(item.organization, item.id, Context.current().info.attempt);
      // From here on the disk store refuses the upload URL; S3 cannot, hence the copy below.
      await store.closeUpload(item.uploadKey);
      const info = await store.head(item.uploadKey);
      if (!info) return fail(mediaId, 'the uploaded file disappeared before it could be processed');
      if (info.size !== item.sizeBytes) {
        return reject(item, keys.final, `the upload is ${info.size} bytes but ${item.sizeBytes} bytes were declared`);
      }
      // Everything below reads the copy, which no client can write: a PUT to the upload URL
      // after this point changes nothing that is checked, served or published.
      const servedType = canonicalMimeType(item.mimeType);
      const copied = await store.copy(item.uploadKey, keys.final, {
        contentType: servedType,
        contentDisposition: contentDisposition(servedType, item.fileName),
      });
      Context.current().heartbeat();
      if (copied.size !== item.sizeBytes) {
        return reject(item, keys.final, `the upload is ${copied.size} bytes but ${item.sizeBytes} bytes were declared`);
      }
      const head = await store.readRange(keys.final, 0, HEAD_BYTES - 1);
      const sniffed = sniffMimeType(head);
      if (!sniffed || !sameFamily(item.mimeType, sniffed)) {
        return reject(
          item,
          keys.final,
          sniffed ? `the file is ${describeMimeType(sniffed)}, not ${item.mimeType}` : `the file is not ${describeMimeType(item.mimeType)}`,
        );
      }
      const dir = await mkdtemp(join(tmpdir(), 'postpilot-media-'));
      try {
        const path = join(dir, 'upload');
        await store.downloadTo(keys.final, path);
        Context.current().heartbeat();
        const probe = await probeFile(path, item.mimeType);
        Context.current().heartbeat();
        const thumb = await makeThumbnail(path, probe.sniffedMimeType);
        let thumbnailKey: string | null = null;
        if (thumb) {
          thumbnailKey = keys.thumbnail;
          await store.put(thumbnailKey, thumb.bytes, thumb.contentType);
        }
        // What was probed is what is stored: the file read has the copy's size, and the copy is
        // still the version made above (same size and ETag) — else fail retryably rather than
        // vouch for bytes this attempt did not see.
        const [processed, stored] = await Promise.all([stat(path), store.head(keys.final)]);
        if (
          processed.size !== copied.size ||
          !stored ||
          stored.size !== copied.size ||
          (copied.etag !== null && stored.etag !== copied.etag)
        ) {
          throw new Error(`the checked copy of ${mediaId} changed while it was processed; processing again`);
        }
        // Only one attempt decides (Temporal may retry one that is in fact still running).
        const { won, events } = await em.transactional(async (tx) => {
          const won = await tx.nativeUpdate(
            MediaItem,
            { id: mediaId, status: 'pending' },
            {
              status: 'ready',
              storageKey: keys.final,
              thumbnailKey,
              width: probe.width ?? null,
              height: probe.height ?? null,
              durationSeconds: probe.durationSeconds ?? null,
              updatedAt: new Date(),
            },
          );
          return { won, events: won ? await emitMedia(tx, mediaId, 'media.ready') : [] };
        });
        await webhooks.dispatch(deps.orm.em, events);
        if (won === 0) {
          await Promise.all([store.delete(keys.final), thumbnailKey ? store.delete(thumbnailKey) : undefined]);
          const decided = await deps.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId });
          return { status: decided.status, reason: decided.failureReason ?? undefined };
        }
        // The upload key is never read again; a late S3 PUT may write it until the URL
        // expires, which the workflow's releaseUpload cleans up.
        await store.delete(item.uploadKey);
        return { status: 'ready' };
      } catch (err) {
        if (err instanceof MediaRejected) return reject(item, keys.final, err.reason);
        throw err;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    /** The window closed without a completion: fail the item and delete any bytes. */
    async expireUpload(mediaId: string): Promise<void> {
      const item = await deps.orm.em.fork().findOneOrFail(MediaItem, { id: mediaId });
      await fail(mediaId, EXPIRED_REASON);
      await storage().closeUpload(item.uploadKey);
      await storage().delete(item.uploadKey);
    },

    /**
     * After the upload URL has expired (the workflow waits for it): deletes whatever a late PUT
     * left under the upload key, and the disk store's seal. Never the key the item is served from.
     */
    async releaseUpload(mediaId: string): Promise<void> {
      const item = await deps.orm.em.fork().findOne(MediaItem, { id: mediaId });
      if (!item || item.status === 'pending') return;
      const store = storage();
      // (An item made ready before copies existed is served from its upload key: keep it.)
      if (!(item.status === 'ready' && item.storageKey === item.uploadKey)) await store.releaseUpload(item.uploadKey);
      // Copies and thumbnails of attempts that crashed or lost.
      for (let attempt = 1; attempt <= MAX_PROCESSING_ATTEMPTS; attempt++) {
        const keys = mediaKeys(item.organization, item.id, attempt);
        if (keys.final !== item.storageKey) await store.delete(keys.final);
        if (keys.thumbnail !== item.thumbnailKey) await store.delete(keys.thumbnail);
      }
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
