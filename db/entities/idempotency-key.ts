import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';
import { Organization } from './organization.ts';
import { Post } from './post.ts';
import { Series } from './series.ts';
import { CommentReply } from './comment.ts';

/**
 * A request made with an Idempotency-Key: the first response is kept for 24 h and replayed for
 * the same API key, Idempotency-Key and body (DESIGN.md §3). `statusCode` null = the first
 * request is still running.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    /** Per API key: another key of the organization never gets this key's stored response. */
    apiKey: () => p.manyToOne(ApiKey).mapToPk().deleteRule('cascade').primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    /** e.g. `POST /v1/posts` */
    endpoint: p.string().length(64).primary(),
    key: p.string().length(255).primary(),
    requestHash: p.string().length(64),
    /**
     * The post a create made, claimed in the post's own transaction: while its answer is not
     * stored yet, the retry answers with this post; a withdrawn post takes its claim with it.
     */
    post: () => p.manyToOne(Post).mapToPk().deleteRule('cascade').nullable().index(),
    /** The series a create made, claimed the same way. */
    series: () => p.manyToOne(Series).mapToPk().deleteRule('cascade').nullable().index(),
    /** The reply to a comment a request made, claimed the same way. */
    reply: () => p.manyToOne(CommentReply).mapToPk().deleteRule('cascade').nullable().index(),
    statusCode: p.integer().nullable(),
    response: p.json<unknown>().nullable(),
    location: p.text().nullable(),
    createdAt: p.datetime(),
  },
  indexes: [{ properties: ['createdAt'] }],
});
export type IIdempotencyKey = InferEntity<typeof IdempotencyKey>;
