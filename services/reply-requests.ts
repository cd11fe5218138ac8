// A reply to a comment asked for through an API key (the route and the MCP tool): created once
// per (API key, comment, Idempotency-Key), as domain/inbox/replies.ts states, answered 202 with
// the reply and where to follow it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeyChannels } from '../domain/key-channels.ts';
import { keyRequester } from '../domain/posts/approval.ts';
import { createReply, getReply } from '../domain/inbox/replies.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { createOnce, type StoredResponse } from './idempotency.ts';

export async function replyToCommentOnce(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined },
  who: { organization: { id: string }; key: { id: string }; channels: KeyChannels; now: Date },
  commentId: string,
  body: { content: string },
  idempotencyKey: string | undefined,
): Promise<StoredResponse & { replayed: boolean }> {
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
    { location: (id) => `/v1/replies/${id}` },
  );
}
