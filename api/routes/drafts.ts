// Drafts (domain/posts/drafts.ts states their rules): a post's content not yet scheduled, kept,
// checked and scheduled into a post by the create path. Reading is `read`; writing, checking and
// scheduling are what making a post is (`posts.write`).
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { CursorParam, LimitParam, parseLimit, TagIdParam } from '../../http/page-query.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { createDraft, DRAFT_FIELDS, deleteDraft, getDraft, listDrafts, updateDraft } from '../../domain/posts/drafts.ts';
import { answerStored } from '../../http/stored-response.ts';
import { scheduleDraftOnce, validateDraft } from '../../services/draft-requests.ts';
import { authPlugin, type Auth } from '../auth.ts';
import { DateTimeInput, DraftListSchema, DraftSchema, PathId, PostSchema, PostValidationSchema } from '../schemas.ts';
import { actorOf } from '../../domain/posts/approval.ts';
import { PLACEMENT_FIELDS, TAG_FILTER } from '../openapi/fields.ts';
import { doc } from '../openapi/operation.ts';

const IdParams = t.Object({ id: PathId() });
const intendedAt = t.Optional(
  t.Union([DateTimeInput(), t.Null()], {
    description: 'When it is meant to go out, with an offset, from 1970-01-01T00:00:00Z to before 9999-12-31T00:00:00Z; null: none.',
  }),
);
const CreateBody = t.Object({ ...DRAFT_FIELDS, intendedAt }, { additionalProperties: false });
const PatchBody = t.Object({ ...DRAFT_FIELDS, intendedAt }, { additionalProperties: false, minProperties: 1 });
const Placement = t.Optional(
  t.Object(
    {
      publishAt: t.Optional(DateTimeInput()),
      queue: t.Optional(t.Boolean()),
    },
    { additionalProperties: false },
  ),
);
const ListQuery = t.Object({
  status: t.Optional(t.Union([t.Literal('draft'), t.Literal('scheduled')], { error: 'must be draft or scheduled' })),
  tagId: TagIdParam(),
  limit: LimitParam(),
  cursor: CursorParam(),
});

const DRAFT_ID = 'Draft id (`drf_…`).';
/** When the post a draft makes goes out: as Schedule a post's. */
const PLACEMENT = { publishAt: PLACEMENT_FIELDS.publishAt, queue: PLACEMENT_FIELDS.queue };
const PLACEMENT_NOTE =
  'Body (optional): `publishAt`, or `queue: true`; neither: the draft’s `intendedAt`, and without one the post is published now.';

export const DRAFT_OPERATIONS = {
  createDraft: doc({
    operationId: 'createDraft',
    audit: { action: 'draft.create', resource: 'draft' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Keep a draft',
    description:
      'Any of the fields of Schedule a post (none is required), the channels it is meant for (maybe none) and a time it is meant for (maybe none). Only the channels are checked (the organization’s, within a channel-limited key’s list); everything else is checked when it is validated or scheduled. A draft is never published and counts toward no limit.',
    errors: ['forbidden_scope', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope, or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'the body does not match (`details.fields`), or `channelIds` names what is not one of the channels of the organization',
    },
    success: { status: 201, description: 'The draft.', location: true },
  }),
  listDrafts: doc({
    operationId: 'listDrafts',
    tag: 'Posts',
    action: 'read',
    summary: 'Drafts',
    description:
      'The organization’s drafts, last changed first; a key limited to channels sees those whose channels are all its own. Keyset pagination: pass `nextCursor` as `cursor`.',
    errors: ['validation_failed'],
    success: { description: 'A page of drafts.' },
    query: {
      status: '`draft` (not scheduled yet) or `scheduled` (became a post).',
      tagId: TAG_FILTER('drafts'),
      limit: { description: 'Page size (default 20).', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),
  getDraft: doc({
    operationId: 'getDraft',
    tag: 'Posts',
    action: 'read',
    summary: 'A draft',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The draft.' },
    params: { id: DRAFT_ID },
  }),
  updateDraft: doc({
    operationId: 'updateDraft',
    audit: { action: 'draft.update', resource: 'draft' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Change a draft',
    description: 'The fields given replace the draft’s; null removes a field (and `intendedAt`). A scheduled draft cannot change (`409`).',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      conflict: 'the draft was scheduled (`details.postId`)',
      validation_failed:
        'the body does not match (`details.fields`), or `channelIds` names what is not one of the channels of the organization',
    },
    success: { description: 'The draft as it is now.' },
    params: { id: DRAFT_ID },
  }),
  deleteDraft: doc({
    operationId: 'deleteDraft',
    audit: { action: 'draft.delete', resource: 'draft' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Delete a draft',
    description: 'The draft goes; a post it became stays.',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted.' },
    params: { id: DRAFT_ID },
  }),
  validateDraft: doc({
    operationId: 'validateDraft',
    audit: null,
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Check a draft as a post',
    description: `Runs every check of Schedule a post on the post the draft would make, and answers as Check a post does; nothing is created. ${PLACEMENT_NOTE}`,
    errors: ['not_found', 'forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'validation_failed'],
    errorNotes: { validation_failed: 'what create would refuse (`details.fields`), or a draft without a channel' },
    success: { description: 'The draft would be accepted: each channel’s text and its length.' },
    params: { id: DRAFT_ID },
    body: { name: 'DraftPlacement', fields: PLACEMENT },
  }),
  scheduleDraft: doc({
    operationId: 'scheduleDraft',
    audit: { action: 'draft.schedule', resource: 'post' },
    tag: 'Posts',
    action: 'posts.write',
    summary: 'Schedule a draft',
    description: `Makes the post through Schedule a post’s own path (its checks, approval for those who need it) and records it on the draft (\`postId\`); the draft can then no longer change. The same Idempotency-Key makes one post. ${PLACEMENT_NOTE}`,
    errors: ['not_found', 'forbidden_scope', 'limit_reached', 'reauth_required', 'duplicate_post', 'conflict', 'validation_failed'],
    errorNotes: {
      conflict: 'the draft was scheduled already (`details.postId`), or an Idempotency-Key reused with another body',
      validation_failed: 'what create would refuse (`details.fields`), or a draft without a channel',
    },
    success: { status: 201, description: 'The post, as Schedule a post answers.', location: true },
    idempotent: true,
    temporal: true,
    params: { id: DRAFT_ID },
    body: { name: 'DraftPlacement', fields: PLACEMENT },
  }),
};

export function draftRoutes(deps: AppDeps) {
  const capabilities = { orm: deps.orm, ...deps.platforms };
  const who = (auth: Auth) => ({ organizationId: auth.organization.id, keyChannels: auth.channels, now: auth.now });
  return router()
    .use(authPlugin(deps))
    .post(
      '/drafts',
      async ({ auth, body, set }) => {
        const actor = actorOf(await auth.principal());
        const draft = await createDraft(deps.orm.em.fork(), { ...who(auth), actor }, body);
        set.status = 201;
        set.headers.location = `/v1/drafts/${draft.id}`;
        return draft;
      },
      { body: CreateBody, transform: refuseUnstorableBody, response: { 201: DraftSchema }, operation: DRAFT_OPERATIONS.createDraft },
    )
    .get(
      '/drafts',
      ({ auth, query }) => {
        const fields: FieldError[] = [];
        const limit = parseLimit(query.limit, fields);
        if (fields.length) throw errors.validation(fields);
        return listDrafts(deps.orm.em.fork(), auth.organization.id, auth.channels, {
          status: query.status,
          tagId: query.tagId,
          limit,
          cursor: query.cursor,
        });
      },
      { query: ListQuery, response: { 200: DraftListSchema }, operation: DRAFT_OPERATIONS.listDrafts },
    )
    .get('/drafts/:id', ({ auth, params }) => getDraft(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: DraftSchema },
      operation: DRAFT_OPERATIONS.getDraft,
    })
    .patch('/drafts/:id', ({ auth, params, body }) => updateDraft(deps.orm.em.fork(), who(auth), params.id, body), {
      params: IdParams,
      body: PatchBody,
      transform: refuseUnstorableBody,
      response: { 200: DraftSchema },
      operation: DRAFT_OPERATIONS.updateDraft,
    })
    .delete(
      '/drafts/:id',
      async ({ auth, params, set }) => {
        await deleteDraft(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels);
        set.status = 204;
      },
      { params: IdParams, operation: DRAFT_OPERATIONS.deleteDraft },
    )
    .post(
      '/drafts/:id/validate',
      ({ auth, params, body }) => validateDraft(deps.orm.em.fork(), auth, capabilities, params.id, body ?? {}),
      { params: IdParams, body: Placement, response: { 200: PostValidationSchema }, operation: DRAFT_OPERATIONS.validateDraft },
    )
    .post(
      '/drafts/:id/schedule',
      async ({ auth, params, body, set, headers }) => {
        const result = await scheduleDraftOnce(
          { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities },
          auth,
          params.id,
          body ?? {},
          headers['idempotency-key'],
        );
        return answerStored(set, result);
      },
      { params: IdParams, body: Placement, response: { 201: PostSchema }, operation: DRAFT_OPERATIONS.scheduleDraft },
    );
}
