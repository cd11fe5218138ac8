import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created } from './base.ts';
import { Channel } from './channel.ts';

// Posting queues (docs/api.md "Queues"): a channel's weekly posting slots, and the slot
// instants queued posts have taken (a claim per channel and instant, so two concurrent queued
// creates never take the same slot: the primary key decides).

/** One weekly slot: ISO weekday (1 = Monday … 7 = Sunday) and local time `HH:MM` in the channel's zone. */
export const QueueSlot = defineEntity({
  name: 'QueueSlot',
  tableName: 'queue_slots',
  properties: {
    channel: () => p.manyToOne(Channel).mapToPk().deleteRule('cascade').primary(),
    weekday: p.smallint().primary(),
    time: p.string().length(5).primary(),
  },
});
export type IQueueSlot = InferEntity<typeof QueueSlot>;

/**
 * A slot instant taken by a queued post. A claim whose post no longer sits there (deleted,
 * rescheduled, the channel removed from it) is stale and is taken over by the next queued post
 * (domain/queues/queues.ts), so a cancel or a reschedule frees the slot whatever path made it.
 */
export const QueueClaim = defineEntity({
  name: 'QueueClaim',
  tableName: 'queue_claims',
  extends: Created,
  properties: {
    channel: () => p.manyToOne(Channel).mapToPk().deleteRule('cascade').primary(),
    slotAt: p.datetime().primary(),
    postId: p.string().index(),
  },
});
export type IQueueClaim = InferEntity<typeof QueueClaim>;
