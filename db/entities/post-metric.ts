import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { PostChannel } from './post-channel.ts';

/** One reading of a published channel post's metrics (domain/analytics/metrics.ts): a time series, never overwritten. */
export const PostMetric = defineEntity({
  name: 'PostMetric',
  tableName: 'post_metrics',
  properties: {
    id: p.string().primary(),
    postChannel: () => p.manyToOne(PostChannel).mapToPk().deleteRule('cascade'),
    /** The scheduled reading's step (READING_AGES); null for a reading asked for (refresh). One row per step. */
    step: p.integer().nullable(),
    measuredAt: p.datetime(),
    /** Every metric of the vocabulary, null where the platform reports none. */
    metrics: p.json<Record<string, number | null>>(),
  },
  uniques: [{ properties: ['postChannel', 'step'] }],
  indexes: [{ properties: ['postChannel', 'measuredAt'] }],
});
export type IPostMetric = InferEntity<typeof PostMetric>;
