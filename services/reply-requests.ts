// A reply to a comment asked for through an API key (the route and the MCP tool): created once
// per (API key, comment, Idempotency-Key), as domain/inbox/replies.ts states, answered 202 with
// the reply and where to follow it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeyChannels } from '../domain/key-channels.ts';
import { keyRequester } from '../domain/posts/approval.ts';
import { createReply, getReply } from '../domain/inbox/replies.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { errors } from '../lib/errors.ts';
import { idPattern } from '../lib/ids.ts';
import { createOnce, type StoredResponse } from './idempotency.ts';

const COMMENT_ID = new RegExp(idPattern('cmt'));

export async function replyToCommentOnce(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined },
  who: { organization: { id: string }; key: { id: string }; channels: KeyChannels; now: Date },
  commentId: string,
  body: { content: string },
  idempotencyKey: string | undefined,
): Promise<StoredResponse & { replayed: boolean }> {
  // The key's claim names the comment: an id that cannot be one names nothing (and no claim).
  if (!COMMENT_ID.test(commentId)) throw errors.notFound('Comment');
  const { em } = deps;
  return createOnce(
    em,
    who,
    `POST /v1/comments/${commentId}/reply`,
    { body, idempotencyKey },
    async (claim) => {
      const requester = await keyRequester(em, who.key.id);
      const context = { organizationId: who.organization.id, keyChannels: who.channels, requester, now: who.now };
      return createReply(em, deps.temporal, context, commentId, body.content, claim);
    },
    (id) => getReply(em.fork(), who.organization.id, id, who.channels),
    { status: 202, location: (id) => `/v1/replies/${id}` },
  );
}
