import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

export const MEDIA_TYPES = ['image', 'gif', 'video', 'document', 'audio'] as const;
export const MEDIA_STATUSES = ['pending', 'ready', 'failed'] as const;

export const MediaItem = defineEntity({
  name: 'MediaItem',
  tableName: 'media_items',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    type: p.enum(MEDIA_TYPES),
    status: p.enum(MEDIA_STATUSES).default('pending'),
    fileName: p.string(),
    mimeType: p.string(),
    sizeBytes: p.bigint('number'),
    /** Object-store key of the bytes; workflows carry this, never the bytes. */
    storageKey: p.string(),
    thumbnailKey: p.string().nullable(),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    durationSeconds: p.integer().nullable(),
    altText: p.text().nullable(),
    description: p.text().nullable(),
    failureReason: p.text().nullable(),
    uploadExpiresAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type IMediaItem = InferEntity<typeof MediaItem>;
