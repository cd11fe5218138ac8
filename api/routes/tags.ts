// An organization's tags (docs/api.md "Tags"; domain/tags.ts states the rules): /v1/tags. Reading
// needs `read`; making, changing and deleting one is `tags.manage` (domain/access.ts). Putting
// tags on posts, series and feeds is their own routes' (`tagIds`).
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { createTag, deleteTag, getTag, listTags, TAG_FIELDS, TAG_LIMITS, updateTag } from '../../domain/tags.ts';
import { authPlugin } from '../auth.ts';
import { PathId, TagListSchema, TagSchema } from '../schemas.ts';
import { doc } from '../openapi/operation.ts';

const IdParams = t.Object({ id: PathId() });
const CreateBody = t.Object({ name: TAG_FIELDS.name, colour: t.Optional(TAG_FIELDS.colour) }, { additionalProperties: false });
const PatchBody = t.Object(
  { name: t.Optional(TAG_FIELDS.name), colour: t.Optional(TAG_FIELDS.colour) },
  { additionalProperties: false, minProperties: 1 },
);

const TAG_ID = 'Tag id (`tag_…`).';
const NAME_TAKEN = 'another tag of the organization has this name, in any letter case (`details.tagId`)';

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const TAG_OPERATIONS = {
  createTag: doc({
    operationId: 'createTag',
    audit: { action: 'tag.create', resource: 'tag' },
    tag: 'Tags',
    action: 'tags.manage',
    summary: 'Make a tag',
    description: `A name and a colour for grouping posts, series and feeds (their \`tagIds\`): GET /posts and GET /analytics narrow to one with \`tagId\`. Tags are the organization’s, not published anywhere. An organization has at most ${TAG_LIMITS.perOrganization}.`,
    errors: ['conflict', 'validation_failed'],
    errorNotes: {
      conflict: `${NAME_TAKEN}, or the organization has ${TAG_LIMITS.perOrganization} tags already`,
      validation_failed: 'invalid body (`details.fields`): a name out of its bounds, a colour that is not `#rrggbb`',
    },
    success: { status: 201, description: 'The tag.', location: true },
    body: { name: 'CreateTagRequest' },
  }),

  listTags: doc({
    operationId: 'listTags',
    tag: 'Tags',
    action: 'read',
    summary: 'List the tags',
    description: 'Every tag of the organization, by name. A key limited to channels sees them all: tags belong to the organization.',
    success: { description: 'The tags.' },
  }),

  getTag: doc({
    operationId: 'getTag',
    tag: 'Tags',
    action: 'read',
    summary: 'A tag',
    description: 'Its posts: GET /posts?tagId=…; what they did: GET /analytics?tagId=….',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The tag.' },
    params: { id: TAG_ID },
  }),

  updateTag: doc({
    operationId: 'updateTag',
    audit: { action: 'tag.update', resource: 'tag' },
    tag: 'Tags',
    action: 'tags.manage',
    summary: 'Rename or recolour a tag',
    description: 'Give `name`, `colour` or both. The posts, series and feeds that have it keep it.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: NAME_TAKEN },
    success: { description: 'The tag as it is now.' },
    params: { id: TAG_ID },
    body: { name: 'UpdateTagRequest' },
  }),

  deleteTag: doc({
    operationId: 'deleteTag',
    audit: { action: 'tag.delete', resource: 'tag' },
    tag: 'Tags',
    action: 'tags.manage',
    summary: 'Delete a tag',
    description:
      'The tag is taken off every post, series and feed that has it (the posts themselves stay as they are); it is then gone (`404`).',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted; no body.' },
    params: { id: TAG_ID },
  }),
};

export function tagRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .post(
      '/tags',
      async ({ auth, body, set }) => {
        const tag = await createTag(deps.orm.em.fork(), auth.organization.id, body);
        set.status = 201;
        set.headers.location = `/v1/tags/${tag.id}`;
        return tag;
      },
      { body: CreateBody, transform: refuseUnstorableBody, response: { 201: TagSchema }, operation: TAG_OPERATIONS.createTag },
    )
    .get('/tags', async ({ auth }) => ({ data: await listTags(deps.orm.em.fork(), auth.organization.id) }), {
      response: { 200: TagListSchema },
      operation: TAG_OPERATIONS.listTags,
    })
    .get('/tags/:id', ({ auth, params }) => getTag(deps.orm.em.fork(), auth.organization.id, params.id), {
      params: IdParams,
      response: { 200: TagSchema },
      operation: TAG_OPERATIONS.getTag,
    })
    .patch('/tags/:id', ({ auth, params, body }) => updateTag(deps.orm.em.fork(), auth.organization.id, params.id, body), {
      params: IdParams,
      body: PatchBody,
      transform: refuseUnstorableBody,
      response: { 200: TagSchema },
      operation: TAG_OPERATIONS.updateTag,
    })
    .delete(
      '/tags/:id',
      async ({ auth, params, set }) => {
        await deleteTag(deps.orm.em.fork(), auth.organization.id, params.id);
        set.status = 204;
      },
      { params: IdParams, operation: TAG_OPERATIONS.deleteTag },
    );
}
