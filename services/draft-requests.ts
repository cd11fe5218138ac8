// A draft checked, or scheduled, through an API key (the routes and the MCP tools): the post is
// made from the draft's content and channels by the one create path (services/post-requests.ts),
// with its checks, its Idempotency-Key rules and approval for those who need it; the draft then
// records the post it became (domain/posts/drafts.ts states the rules).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CapabilityDeps } from '../domain/capabilities.ts';
import { validatePost } from '../domain/posts/create.ts';
import { assertEditable, type DraftView, getDraft, markScheduled } from '../domain/posts/drafts.ts';
import { getPostForKey } from '../domain/posts/view.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { errors } from '../lib/errors.ts';
import { idPattern } from '../lib/ids.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { Caller } from './account.ts';
import { createOnce, type StoredResponse } from './idempotency.ts';
import { createPostFor, createPostRequest, type NewPostBody } from './post-requests.ts';

type Who = Pick<Caller, 'organization' | 'key' | 'channels' | 'now'>;

/** When the post goes out: `publishAt`, or the queue's next slot; neither: the draft's intended time, else now. */
export interface Placement {
  publishAt?: string;
  queue?: boolean;
}

const DRAFT_ID = new RegExp(idPattern('drf'));

/** The post a draft makes: its content as given, its channels, the placement asked for (else its intended time); the web app schedules a draft with it too (web/drafts.ts). */
export function postBodyOf(draft: DraftView, placement: Placement): NewPostBody {
  const { id, channelIds, tagIds, intendedAt, status, postId, scheduledAt, createdBy, createdAt, updatedAt, ...content } = draft;
  if (!channelIds.length) throw errors.validation([{ path: 'channelIds', message: 'a draft needs a channel before it is scheduled' }]);
  const publishAt = placement.publishAt ?? (placement.queue ? undefined : (intendedAt ?? undefined));
  return {
    ...(content as Omit<NewPostBody, 'channelIds'>),
    content: typeof content.content === 'string' ? content.content : '',
    channelIds,
    ...(tagIds.length ? { tagIds } : {}),
    ...(publishAt !== undefined ? { publishAt } : {}),
    ...(placement.queue ? { queue: true } : {}),
  };
}

/** POST /v1/drafts/{id}/validate: every check of a create, on the post the draft would make; nothing is created. */
export async function validateDraft(
  em: EntityManager,
  who: Who,
  capabilities: CapabilityDeps | undefined,
  id: string,
  placement: Placement,
) {
  const draft = await getDraft(em, who.organization.id, id, who.channels);
  return validatePost(em, createPostRequest(who, postBodyOf(draft, placement), capabilities));
}

/** POST /v1/drafts/{id}/schedule: the post, once per (API key, draft, Idempotency-Key); 201 with it. */
export async function scheduleDraftOnce(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined; storage: ObjectStorage | undefined; capabilities?: CapabilityDeps },
  who: Who,
  id: string,
  placement: Placement,
  idempotencyKey: string | undefined,
): Promise<StoredResponse & { replayed: boolean }> {
  // The key's claim names the draft: an id that cannot be one names nothing (and no claim).
  if (!DRAFT_ID.test(id)) throw errors.notFound('Draft');
  const { em } = deps;
  return createOnce(
    em,
    who,
    `POST /v1/drafts/${id}/schedule`,
    { body: placement, idempotencyKey },
    async (claim) => {
      const draft = await getDraft(em, who.organization.id, id, who.channels);
      assertEditable(draft);
      const created = await createPostFor(deps, who, postBodyOf(draft, placement), claim);
      await markScheduled(em, id, created.id, who.now);
      return created;
    },
    async (postId) => {
      // A schedule cut off after its post's commit: the draft records it now.
      await markScheduled(em.fork(), id, postId, who.now);
      return getPostForKey(em.fork(), who.organization.id, postId, 'all', deps.storage);
    },
    { status: 201, location: (postId) => `/v1/posts/${postId}` },
  );
}
