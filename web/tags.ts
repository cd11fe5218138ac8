// Tags in the web app (domain/tags.ts states the rules), through the same functions as /v1/tags:
// Settings → Tags lists the organization's tags to every member, each with its posts on the
// calendar and its figures on the Analytics page; owners, admins and editors (`tags.manage`) make,
// rename, recolour and delete them (delete asks first, on a page of its own). A post's page shows
// its tags as chips, and whoever writes posts (`posts.write`) puts tags on it or takes them off
// there: an edit of `tagIds` alone, as PATCH /v1/posts/{id} takes it (domain/posts/edit.ts
// retagPost), whatever the post's status, since tags are never published.
import { Value } from '@sinclair/typebox/value';
import { can } from '../domain/access.ts';
import { retagPost } from '../domain/posts/edit.ts';
import { TagIds } from '../domain/posts/content.ts';
import { getPostForKey, type PostView } from '../domain/posts/view.ts';
import {
  createTag,
  deleteTag,
  getTag,
  listTags,
  TAG_DEFAULT_COLOUR,
  TAG_FIELDS,
  TAG_LIMITS,
  updateTag,
  type TagView,
} from '../domain/tags.ts';
import { router } from '../http/router.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { boundsOf, fieldErrors } from '../lib/schema-words.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { boundAttributes } from './option-fields.ts';
import { tagChip, tagChips } from './ui.ts';

const BASE = '/settings/tags';

const NOTICES: Record<string, string> = {
  created: 'Tag made.',
  saved: 'Tag saved.',
  deleted: 'Tag deleted. The posts, series and feeds that had it stay, without it.',
};

// The name's length from its schema; not its pattern, whose escapes HTML's `pattern` (read in
// the `v` mode) does not take: the server's check says what is wrong.
const NAME_BOUNDS = boundAttributes(boundsOf(TAG_FIELDS.name), false);

/** A tag form as sent: its values as typed, to show again when refused. */
interface TagFormValues {
  name: string;
  colour: string;
}

/** A refused create (`for: 'new'`) or edit of a tag: the form again as typed, the reasons at the top and at their fields. */
interface Refused {
  for: string;
  values: TagFormValues;
  fields: FieldError[];
  messages: string[];
  status: number;
}

/**
 * The form's name and colour, checked by the schemas the API's body checks (TAG_FIELDS); an empty
 * colour is none given (a new tag gets the default, an edit keeps its colour).
 */
function readTagForm(form: URLSearchParams): { values: TagFormValues; input: { name: string; colour?: string }; fields: FieldError[] } {
  const values = { name: form.get('name') ?? '', colour: (form.get('colour') ?? '').trim() };
  const fields = [
    ...fieldErrors(Value.Errors(TAG_FIELDS.name, values.name), 'name'),
    ...(values.colour ? fieldErrors(Value.Errors(TAG_FIELDS.colour, values.colour), 'colour') : []),
  ];
  return { values, input: { name: values.name, ...(values.colour ? { colour: values.colour } : {}) }, fields };
}

/** A refusal the form shows again (422, 409: a name taken, the organization's last tag); anything else is the error page. */
function refusalOf(err: unknown, target: string, values: TagFormValues): Refused {
  if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 409)) throw err;
  const fields = err.code === 'validation_failed' ? ((err.details as { fields?: FieldError[] } | undefined)?.fields ?? []) : [];
  return { for: target, values, fields, messages: describeError(err), status: err.status };
}

function fieldError(refused: Refused | undefined, path: string, id: string): { attrs: SafeHtml; note: SafeHtml } {
  const found = refused?.fields.find((f) => f.path === path);
  if (!found) return { attrs: html``, note: html`` };
  return {
    attrs: html` aria-invalid="true" aria-describedby="${id}"`,
    note: html`<p class="field-error" id="${id}" data-testid="tag-field-error" data-path="${path}">${found.message}</p>`,
  };
}

/** The name and colour fields of the create form (`prefix` new) or of a tag's row. */
function tagFields(
  prefix: string,
  values: TagFormValues,
  refused: Refused | undefined,
  testIds: { name: string; colour: string },
): SafeHtml {
  const name = fieldError(refused, 'name', `${prefix}-name-error`);
  const colour = fieldError(refused, 'colour', `${prefix}-colour-error`);
  // A colour input holds only #rrggbb: a value typed otherwise (not from this form) shows the default.
  const shown = Value.Check(TAG_FIELDS.colour, values.colour) ? values.colour.toLowerCase() : TAG_DEFAULT_COLOUR;
  return html`<div class="field"><label for="${prefix}-name">Name</label>
    <input type="text" id="${prefix}-name" name="name" value="${values.name}" required${NAME_BOUNDS} data-testid="${testIds.name}"${name.attrs}>${name.note}</div>
  <div class="field"><label for="${prefix}-colour">Colour</label>
    <input type="color" id="${prefix}-colour" name="colour" value="${shown}" data-testid="${testIds.colour}"${colour.attrs}>${colour.note}</div>`;
}

function createForm(ctx: PageContext, refused: Refused | undefined): SafeHtml {
  const mine = refused?.for === 'new' ? refused : undefined;
  return html`<section aria-labelledby="tag-new-h">
  <h2 id="tag-new-h">New tag</h2>
  ${formErrors(mine?.messages ?? [])}
  <form method="post" action="${BASE}" class="stack tag-form" data-testid="tag-create-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    ${tagFields('new-tag', mine?.values ?? { name: '', colour: TAG_DEFAULT_COLOUR }, mine, { name: 'tag-new-name', colour: 'tag-new-colour' })}
    <div class="actions"><button type="submit" class="primary" data-testid="tag-create">Make tag</button></div>
  </form>
</section>`;
}

function tagRow(ctx: PageContext, t: TagView, manage: boolean, refused: Refused | undefined): SafeHtml {
  const mine = refused?.for === t.id ? refused : undefined;
  const links = html`<a href="/calendar?tagId=${t.id}" data-testid="tag-calendar-link">Posts on the calendar</a> ·
    <a href="/analytics?tagId=${t.id}" data-testid="tag-analytics-link">Analytics</a>`;
  return html`<tr id="${t.id}" data-testid="tag-row" data-tag-id="${t.id}" data-name="${t.name}" data-colour="${t.colour}">
    <th scope="row">${tagChip(t)}</th>
    <td>${links}</td>
    ${
      manage
        ? html`<td>${formErrors(mine?.messages ?? [])}<form method="post" action="${BASE}/${t.id}" class="tag-form tag-edit" data-testid="tag-edit-form">
      <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
      ${tagFields(`tag-${t.id}`, mine?.values ?? { name: t.name, colour: t.colour }, mine, { name: 'tag-name-input', colour: 'tag-colour-input' })}
      <div class="actions"><button type="submit" data-testid="tag-save">Save</button>
      <a href="${BASE}/${t.id}/delete" class="button danger" data-testid="tag-delete">Delete…</a></div>
    </form></td>`
        : ''
    }
  </tr>`;
}

async function tagsPage(ctx: PageContext, refused?: Refused): Promise<Response> {
  const tags = await listTags(ctx.em, ctx.signedIn.organization.id);
  const manage = can(ctx.signedIn.role, 'tags.manage');
  const body = html`<h1>Tags</h1>
<p class="hint">Tags label posts, series and feeds (a campaign, a topic, a client). They are never published: the calendar and the Analytics page narrow to one, and a post's first tag names its UTM campaign when none is given.${
    can(ctx.signedIn.role, 'settings.manage')
      ? html` <a href="/settings/links" data-testid="links-settings-link">Tracked links settings</a>`
      : ''
  }</p>
${manage ? createForm(ctx, refused) : ''}
<h2>The organization's tags</h2>
${
  tags.length
    ? html`<table class="table tag-list" data-testid="tag-list">
  <thead><tr><th scope="col">Tag</th><th scope="col">Its posts</th>${manage ? html`<th scope="col">Change</th>` : ''}</tr></thead>
  <tbody>${tags.map((t) => tagRow(ctx, t, manage, refused))}</tbody>
</table>
<p class="hint">${tags.length} of at most ${TAG_LIMITS.perOrganization} tags.</p>`
    : html`<p data-testid="tags-empty">No tags yet.${manage ? '' : ' Owners, admins and editors make them.'}</p>`
}`;
  const notice = refused ? null : (NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null);
  return htmlResponse(layout({ title: 'Tags', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'tags', notice }), {
    status: refused?.status ?? 200,
  });
}

async function confirmDelete(ctx: PageContext, id: string, problems: string[] = [], status = 200): Promise<Response> {
  const t = await getTag(ctx.em, ctx.signedIn.organization.id, id);
  const body = html`<section class="confirm" data-testid="tag-delete-confirm" data-tag-id="${t.id}">
  <h1>Delete this tag?</h1>
  ${formErrors(problems)}
  <p>${tagChip(t)} comes off every post, series and feed that has it. The posts, series and feeds stay.</p>
  <form method="post" action="${BASE}/${t.id}/delete" class="actions" data-testid="tag-delete-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="tag-delete-submit">Delete tag</button>
    <a href="${BASE}#${t.id}" data-testid="tag-delete-keep">Keep it</a>
  </form>
</section>`;
  return htmlResponse(layout({ title: 'Delete tag?', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'tags' }), { status });
}

/**
 * A post page's tags: its chips, and for whoever writes posts a form of the organization's tags to
 * put on it or take off (POST /posts/{id}/tags). `tags`: the organization's (listTags).
 */
export function postTagsPanel(ctx: PageContext, post: PostView, tags: TagView[]): SafeHtml {
  const chips = tagChips(post.tagIds, new Map(tags.map((t) => [t.id, t])));
  const write = can(ctx.signedIn.role, 'posts.write');
  const form =
    write && tags.length
      ? html`<details class="post-tags-edit" data-testid="post-tags-edit"><summary>Change tags</summary>
  <form method="post" action="/posts/${post.id}/tags" data-testid="post-tags-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <fieldset><legend>Tags of this post</legend>
    ${tags.map(
      (t) =>
        html`<div class="check"><input type="checkbox" id="post-tag-${t.id}" name="tagIds" value="${t.id}" data-testid="post-tag-option"${post.tagIds.includes(t.id) ? html` checked` : ''}><label for="post-tag-${t.id}">${tagChip(t)}</label></div>`,
    )}
    </fieldset>
    <p class="hint">At most ${TAG_LIMITS.perPost} on a post. Tags are not published: changing them changes nothing on the platforms, whatever the post's status.</p>
    <div class="actions"><button type="submit" data-testid="post-tags-save">Save tags</button></div>
  </form></details>`
      : write && can(ctx.signedIn.role, 'tags.manage')
        ? html`<p class="hint">The organization has no tags yet: <a href="${BASE}" data-testid="post-tags-make">make some</a>.</p>`
        : '';
  return html`<section class="post-tags" id="post-tags" data-testid="post-tags" aria-labelledby="post-tags-h">
  <h2 id="post-tags-h">Tags</h2>
  ${post.tagIds.length ? chips : html`<p class="hint" data-testid="post-tags-none">No tags.</p>`}
  ${form}
</section>`;
}

export function tagRoutes(web: Web) {
  const idOf = (ctx: PageContext) => ctx.params.id ?? '';
  const orgOf = (ctx: PageContext) => ctx.signedIn.organization.id;
  return (
    router()
      .get(
        BASE,
        pageRoute(web, 'read', (ctx) => tagsPage(ctx)),
      )
      .post(
        BASE,
        pageRoute(web, 'tags.manage', async (ctx) => {
          const { values, input, fields } = readTagForm(ctx.form);
          try {
            if (fields.length) throw errors.validation(fields);
            const tag = await createTag(ctx.em, orgOf(ctx), input);
            return redirect(`${BASE}?notice=created#${tag.id}`);
          } catch (err) {
            return tagsPage({ ...ctx, em: ctx.em.fork() }, refusalOf(err, 'new', values));
          }
        }),
        { parse: 'text' },
      )
      .post(
        `${BASE}/:id`,
        pageRoute(web, 'tags.manage', async (ctx) => {
          // Another organization's tag (or none) is a 404 before the form is read.
          const tag = await getTag(ctx.em, orgOf(ctx), idOf(ctx));
          const { values, input, fields } = readTagForm(ctx.form);
          try {
            if (fields.length) throw errors.validation(fields);
            await updateTag(ctx.em, orgOf(ctx), tag.id, input);
            return redirect(`${BASE}?notice=saved#${tag.id}`);
          } catch (err) {
            return tagsPage({ ...ctx, em: ctx.em.fork() }, refusalOf(err, tag.id, values));
          }
        }),
        { parse: 'text' },
      )
      .get(
        `${BASE}/:id/delete`,
        pageRoute(web, 'tags.manage', (ctx) => confirmDelete(ctx, idOf(ctx))),
      )
      .post(
        `${BASE}/:id/delete`,
        pageRoute(web, 'tags.manage', async (ctx) => {
          // Only the confirmation page's button sends confirm=yes.
          if (ctx.form.get('confirm') !== 'yes') return confirmDelete(ctx, idOf(ctx), ['Confirm with the button below.'], 422);
          await deleteTag(ctx.em, orgOf(ctx), idOf(ctx));
          return redirect(`${BASE}?notice=deleted`);
        }),
        { parse: 'text' },
      )
      // The post page's form: the post's tags become the boxes ticked, as PATCH /v1/posts/{id} with `tagIds` alone.
      .post(
        '/posts/:id/tags',
        pageRoute(web, 'posts.write', async (ctx) => {
          const post = await getPostForKey(ctx.em, orgOf(ctx), idOf(ctx), 'all');
          const tagIds = ctx.form.getAll('tagIds');
          const fields = fieldErrors(Value.Errors(TagIds, tagIds), 'tagIds');
          if (fields.length) throw errors.validation(fields);
          await retagPost(ctx.em, orgOf(ctx), post.id, tagIds);
          return redirect(`/posts/${post.id}?notice=saved#post-tags`);
        }),
        { parse: 'text' },
      )
  );
}
