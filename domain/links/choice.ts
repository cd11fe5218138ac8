// A post's links choice (its `links` field) and an organization's default for posts that give none.
//
// Rules:
// - `links.shorten`: at publish, each http(s) link of the text sent to a channel (the post's, its
//   thread items' and its first comment's) is replaced by a short link of the service
//   (domain/links/rewrite.ts), one per (post, channel, link), which counts its clicks
//   (domain/links/clicks.ts). Nothing else of the text changes.
// - `links.utm` (with `shorten`): each short link leads to its target with UTM parameters of the
//   channel: utm_source the platform in lower case, utm_medium `social`, utm_campaign the given
//   `campaign`, else the name of the post's first tag (id order), else none. A parameter the
//   target already has is kept as the author wrote it.
// - A post that gives no `links` gets the organization's default (`{shorten: false}` until it is
//   changed: `cli org set-links`), decided when the post is created and stored with it, so a
//   later change of the default never changes what a scheduled or retried post sends. An edit
//   that gives `links` replaces the post's.
// - The length checks count each link as the short link it becomes (domain/posts/checks.ts,
//   domain/posts/thread.ts): the text as it will be sent, as its platform counts it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { t } from 'elysia';
import type { Static } from '@sinclair/typebox';
import { Organization, type LinkChoice } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { Chars } from '../../lib/chars.ts';
import { errors } from '../../lib/errors.ts';
import { Value } from '@sinclair/typebox/value';

export type { LinkChoice };

/** The longest utm_campaign a post or an organization names. */
export const CAMPAIGN_CHARS = 100;

const Utm = t.Object(
  {
    campaign: t.Optional(
      Chars(CAMPAIGN_CHARS, { min: 1, description: 'utm_campaign; absent: the name of the post’s first tag (id order), else none.' }),
    ),
  },
  { additionalProperties: false },
);

/** The schema of a links choice: a post's `links`, an organization's default. */
export const LinkChoiceSchema = t.Object(
  {
    shorten: t.Boolean({
      description:
        'true: at publish, each http(s) link of the text (and of the thread and first comment) becomes a short link of the service (`{base}/l/{code}`), one per post, channel and link, that counts its clicks (GET /posts/{id}/analytics `links`). Length checks count the short link as the platform does (X and Mastodon: 23).',
    }),
    utm: t.Optional(
      t.Union([Utm, t.Null()], {
        description:
          'With `shorten`: UTM parameters on each target, per channel: utm_source the platform in lower case, utm_medium=social, utm_campaign `campaign` (else the post’s first tag’s name, else none). A parameter the link already has is kept. Absent or null: none.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Short links with click counts, and UTM parameters (docs/api.md "Tracked links"). Absent on create: the organization’s default, stored with the post.',
  },
);

// The entity's type and the schema describe the same value.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _same: Same<Static<typeof LinkChoiceSchema>, LinkChoice> = true;
void _same;

export const NO_LINKS: LinkChoice = { shorten: false };

/** The links choice a new post stores: the one it gives, else its organization's default. */
export async function linkChoiceFor(em: EntityManager, organizationId: string, given: LinkChoice | undefined): Promise<LinkChoice> {
  if (given) return given;
  const [row] = await sql<{ links: LinkChoice | null }>(em, 'select links from organizations where id = ?', [organizationId]);
  return row?.links ?? NO_LINKS;
}

/** Sets the organization's default links choice (the CLI's `org set-links`); answers it. */
export async function setLinkDefaults(
  em: EntityManager,
  organizationId: string,
  choice: unknown,
): Promise<{ id: string; links: LinkChoice }> {
  if (!Value.Check(LinkChoiceSchema, choice)) {
    const fields = [...Value.Errors(LinkChoiceSchema, choice)].map((e) => ({
      path: `links${e.path.replaceAll('/', '.')}`,
      message: e.message,
    }));
    throw errors.validation(fields);
  }
  const org = await em.findOne(Organization, { id: organizationId });
  if (!org) throw errors.notFound('Organization');
  org.links = choice;
  await em.flush();
  return { id: org.id, links: org.links };
}
