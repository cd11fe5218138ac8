import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';

export const MEDIA_TYPES = ['image', 'gif', 'video', 'document', 'audio'] as const;
export const MEDIA_STATUSES = ['pending', 'ready', 'failed'] as const;

export const MediaItem = defineEntity({
  name: 'MediaItem',
  tableName: 'media_items',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    type: p.enum(MEDIA_TYPES),
    status: p.enum(MEDIA_STATUSES).default('pending'),
    fileName: p.string(),
    mimeType: p.string(),
    sizeBytes: p.bigint('number'),
    /**
     * Object-store key of the item's bytes: the upload key while pending; once `ready`, the copy
     * processing checked, under a key no upload URL names — what is served and published
     * (docs/decisions.md "Media"). Workflows carry keys, never bytes.
     */
    storageKey: p.string(),
    /** The key the upload URL writes to; never read once processing has copied it. */
    uploadKey: p.string(),
    /** The API key that created the upload (null for the web application). */
    apiKeyId: p.string().nullable(),
    thumbnailKey: p.string().nullable(),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    durationSeconds: p.integer().nullable(),
    altText: p.text().nullable(),
    description: p.text().nullable(),
    failureReason: p.text().nullable(),
    uploadExpiresAt: p.datetime(),
    /** Committed, its upload workflow not known to be started (domain/workflow-starts.ts). */
    workflowPending: p.boolean().default(false),
  },
  indexes: [
    {
      name: 'media_items_workflow_pending_index',
      expression: 'create index "media_items_workflow_pending_index" on "media_items" ("created_at") where "workflow_pending"',
    },
  ],
});
export type IMediaItem = InferEntity<typeof MediaItem>;
