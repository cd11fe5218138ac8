// An organization's tags (docs/api.md "Tags"): labels with a colour on posts, drafts, series and
// feeds, by which their lists, the calendar and the analytics narrow to one (a campaign).
//
// Rules:
// - A tag is a name and a colour. The name: 1 to TAG_LIMITS.nameChars characters, not only
//   spaces, without `|` (a CSV cell's separator of tags), stored trimmed; unique in the
//   organization whatever its letter case (a second one is `409 conflict` naming the first). The
//   colour: `#rrggbb`, stored lower case; TAG_DEFAULT_COLOUR when not given. An organization has
//   at most TAG_LIMITS.perOrganization tags, so its list needs no pages.
// - Making, renaming, recolouring and deleting tags is `tags.manage` (editors and up); putting
//   the organization's tags on a post, a series or a feed is part of writing it (domain/access.ts).
//   Tags belong to the organization, not to channels: a key limited to some channels reads and
//   uses them all.
// - `tagIds` (a post's, a series', a feed's): ids of the organization's tags, no repeats, at most
//   TAG_LIMITS.perPost (the schema: domain/posts/content.ts TagIds). An id that names none of them
//   (another organization's included) is `422` at `tagIds`, as an unknown channel is at
//   `channelIds`. They are kept and shown in id order, the order the tags were made.
// - A post's tags are not its content: no part of what is published. They are post_tags rows,
//   written in the create's transaction, and by an edit directly rather than through the post's
//   workflow; an edit that gives nothing but `tagIds` takes any post, published ones too.
// - A post made by a series or a feed gets the series' or the feed's tags as they are then.
// - Deleting a tag takes it off every post (the cascade), series, feed and draft in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { t } from 'elysia';
import { Tag, type ITag } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';
import { MAX_CHARS } from '../lib/chars.ts';
import { errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';

export const TAG_LIMITS = {
  /** Characters of a tag's name. */
  nameChars: 50,
  /** Tags of one post (series, feed). */
  perPost: 20,
  /** Tags of one organization. */
  perOrganization: 500,
} as const;

/** The colour of a tag made without one. */
export const TAG_DEFAULT_COLOUR = '#64748b';

/** A name's character: no NUL, no unpaired surrogate (as lib/chars.ts), no `|` (a CSV cell's list separator, domain/posts/csv.ts). */
const NAME_CHAR = '(?:[^\\u0000\\ud800-\\udfff|]|[\\ud800-\\udbff][\\udc00-\\udfff])';

/** A tag's settable fields, as the API and the MCP tools take them. */
export const TAG_FIELDS = {
  name: t.String({
    pattern: `^(?!\\s*$)${NAME_CHAR}{1,${TAG_LIMITS.nameChars}}$`,
    minLength: 1,
    [MAX_CHARS]: TAG_LIMITS.nameChars,
    error: `must be 1 to ${TAG_LIMITS.nameChars} characters, not only spaces, without | or NUL`,
    description: `1 to ${TAG_LIMITS.nameChars} characters, not only spaces, without \`|\`; kept trimmed. Unique in the organization whatever its letter case (\`409\` otherwise).`,
  }),
  colour: t.String({
    pattern: '^#[0-9A-Fa-f]{6}$',
    error: 'must be a colour #rrggbb (six hexadecimal digits)',
    description: `\`#rrggbb\` (kept in lower case); default \`${TAG_DEFAULT_COLOUR}\`.`,
  }),
};

export interface TagView {
  id: string;
  name: string;
  colour: string;
  createdAt: string;
  updatedAt: string;
}

export const tagView = (tag: ITag): TagView => ({
  id: tag.id,
  name: tag.name,
  colour: tag.colour,
  createdAt: tag.createdAt.toISOString(),
  updatedAt: tag.updatedAt.toISOString(),
});

/** By name, any letter case, then id. */
const byName = (a: ITag, b: ITag) => {
  const x = a.name.toLowerCase();
  const y = b.name.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

/** GET /v1/tags: every tag of the organization, by name. */
export async function listTags(em: EntityManager, organizationId: string): Promise<TagView[]> {
  return (await em.find(Tag, { organization: organizationId })).sort(byName).map(tagView);
}

async function findTag(em: EntityManager, organizationId: string, id: string): Promise<ITag> {
  if (id.includes('\u0000')) throw errors.notFound('Tag'); // names nothing; Postgres would refuse the NUL
  const tag = await em.findOne(Tag, { id, organization: organizationId });
  if (!tag) throw errors.notFound('Tag');
  return tag;
}

export async function getTag(em: EntityManager, organizationId: string, id: string): Promise<TagView> {
  return tagView(await findTag(em, organizationId, id));
}

/** The conflict of a name another tag of the organization has (any letter case), or null. */
async function nameTaken(em: EntityManager, organizationId: string, name: string, except?: string) {
  const [row] = await sql<{ id: string; name: string }>(
    em,
    'select id, name from tags where organization_id = ? and lower(name) = lower(?) and id <> ?',
    [organizationId, name, except ?? ''],
  );
  return row
    ? errors.conflict(`The organization has a tag named "${row.name}" already; tag names are unique whatever their letter case.`, {
        tagId: row.id,
      })
    : null;
}

/** A write the unique index refused: the tag that took the name meanwhile. */
async function asConflict(em: EntityManager, organizationId: string, name: string, except: string | undefined, err: unknown) {
  if (!(err instanceof UniqueConstraintViolationException)) return err;
  return (await nameTaken(em.fork(), organizationId, name, except)) ?? err;
}

export async function createTag(em: EntityManager, organizationId: string, input: { name: string; colour?: string }): Promise<TagView> {
  const name = input.name.trim();
  const id = newId('tag');
  try {
    await em.transactional(async (tx) => {
      // The organization's row lock, so that concurrent creates count one after another (as feeds do).
      await sql(tx, 'select 1 from organizations where id = ? for no key update', [organizationId]);
      const [{ count } = { count: 0 }] = await sql<{ count: number }>(
        tx,
        'select count(*)::int as count from tags where organization_id = ?',
        [organizationId],
      );
      if (count >= TAG_LIMITS.perOrganization)
        throw errors.conflict(`An organization has at most ${TAG_LIMITS.perOrganization} tags; delete one first.`, {
          limit: TAG_LIMITS.perOrganization,
        });
      const taken = await nameTaken(tx, organizationId, name);
      if (taken) throw taken;
      tx.create(Tag, { id, organization: organizationId, name, colour: (input.colour ?? TAG_DEFAULT_COLOUR).toLowerCase() });
    });
  } catch (err) {
    throw await asConflict(em, organizationId, name, undefined, err);
  }
  return getTag(em.fork(), organizationId, id);
}

/** PATCH /v1/tags/{id}: a new name, a new colour, or both. */
export async function updateTag(
  em: EntityManager,
  organizationId: string,
  id: string,
  edit: { name?: string; colour?: string },
): Promise<TagView> {
  const name = edit.name?.trim();
  try {
    await em.transactional(async (tx) => {
      const tag = await findTag(tx, organizationId, id);
      if (name !== undefined && name !== tag.name) {
        const taken = await nameTaken(tx, organizationId, name, tag.id);
        if (taken) throw taken;
        tag.name = name;
      }
      if (edit.colour !== undefined) tag.colour = edit.colour.toLowerCase();
    });
  } catch (err) {
    throw await asConflict(em, organizationId, name ?? '', id, err);
  }
  return getTag(em.fork(), organizationId, id);
}

/** DELETE /v1/tags/{id}: gone, and off every post, series, feed and draft. */
export async function deleteTag(em: EntityManager, organizationId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const tag = await findTag(tx, organizationId, id);
    // A series', a feed's and a draft's tags are a list of ids: the id goes from each list that has it.
    for (const table of ['series', 'feeds', 'drafts']) {
      await sql(
        tx,
        `update ${table} set tag_ids = tag_ids - ?::text, updated_at = now() where organization_id = ? and tag_ids @> jsonb_build_array(?::text)`,
        [tag.id, organizationId, tag.id],
      );
    }
    // Its post_tags rows go with it (the cascade), each announced to the kept post pages.
    await sql(tx, 'delete from tags where id = ?', [tag.id]);
  });
}

/**
 * The organization's tags that `ids` names, in id order; any id that names none of them refuses
 * the request at `path` (rules above).
 */
export async function checkTagIds(em: EntityManager, organizationId: string, ids: readonly string[], path = 'tagIds'): Promise<string[]> {
  if (!ids.length) return [];
  const found = new Set(
    (
      await sql<{ id: string }>(
        em,
        'select id from tags where organization_id = ? and id in (select jsonb_array_elements_text(?::jsonb))',
        [organizationId, JSON.stringify(ids.filter((id) => !id.includes('\u0000')))],
      )
    ).map((r) => r.id),
  );
  const unknown = ids.filter((id) => !found.has(id));
  if (unknown.length) throw errors.validation(unknown.map((id) => ({ path, message: `unknown tag ${id}` })));
  return [...found].sort();
}

/**
 * Puts these tags (checked: checkTagIds) on a post just written, in the create's transaction;
 * returns those written, in id order (a tag deleted since it was checked is left out).
 */
export async function insertPostTags(em: EntityManager, postId: string, tagIds: readonly string[]): Promise<string[]> {
  if (!tagIds.length) return [];
  const rows = await sql<{ tag_id: string }>(
    em,
    `insert into post_tags (post_id, tag_id) select p.id, t.id from posts p join tags t on t.organization_id = p.organization_id
     where p.id = ? and t.id in (select jsonb_array_elements_text(?::jsonb)) returning tag_id`,
    [postId, JSON.stringify(tagIds)],
  );
  return rows.map((r) => r.tag_id).sort();
}

/**
 * A post's tags become these (checked: checkTagIds): the others come off, the new ones go on, and
 * a tag it keeps is not written again (nothing is announced to the kept pages for it).
 */
export async function setPostTags(em: EntityManager, postId: string, tagIds: readonly string[]): Promise<void> {
  await em.transactional(async (tx) => {
    await sql(tx, 'delete from post_tags where post_id = ? and tag_id not in (select jsonb_array_elements_text(?::jsonb))', [
      postId,
      JSON.stringify(tagIds),
    ]);
    // A tag deleted since it was checked is left out rather than failing the edit.
    await sql(
      tx,
      `insert into post_tags (post_id, tag_id) select ?, t.id from tags t join posts p on p.organization_id = t.organization_id
       where p.id = ? and t.id in (select jsonb_array_elements_text(?::jsonb)) on conflict do nothing`,
      [postId, postId, JSON.stringify(tagIds)],
    );
  });
}

/** Each post's tags, in id order (a post without any has no entry). */
export async function tagIdsOfPosts(em: EntityManager, postIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!postIds.length) return out;
  const rows = await sql<{ post_id: string; tag_id: string }>(
    em,
    'select post_id, tag_id from post_tags where post_id in (select jsonb_array_elements_text(?::jsonb)) order by tag_id',
    [JSON.stringify(postIds)],
  );
  for (const r of rows) {
    const list = out.get(r.post_id);
    if (list) list.push(r.tag_id);
    else out.set(r.post_id, [r.tag_id]);
  }
  return out;
}
