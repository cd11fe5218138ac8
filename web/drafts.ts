// Drafts in the web app (domain/posts/drafts.ts states their rules): the Drafts page (the
// organization's drafts, last changed first, each with its tags, narrowed to one tag by the tag
// filter of web/tag-filter.ts), a draft kept from the composer's form and opened in it again,
// scheduled into a post, given a day (the calendar's drag and drop, the page's date field), and
// deleted after a confirmation page of its own. Reading them is `read`; keeping, changing,
// scheduling and deleting are `posts.write`, as for /v1/drafts.
// Scheduling takes the path the composer's posts take (a member, source `app`, no API key):
// the draft's post body as the API builds it (services/draft-requests.ts postBodyOf), the
// request of newPostRequest with the member as requester (a contributor's post waits for
// approval), createPost with every check of a create; then the draft records the post
// (markScheduled) and is read-only. A double click is refused by duplicate_post (the same text to
// the same channels within a day), as the composer's own double submit is.
import { t } from 'elysia';
import type { IChannel } from '../db/entities/index.ts';
import { can } from '../domain/access.ts';
import { createPost } from '../domain/posts/create.ts';
import { listTags, type TagView } from '../domain/tags.ts';
import { createDraft, deleteDraft, type DraftView, getDraft, listDrafts, markScheduled, updateDraft } from '../domain/posts/drafts.ts';
import { refuseUnstorableBody, router } from '../http/router.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { type Placement, postBodyOf } from '../services/draft-requests.ts';
import { newPostRequest } from '../services/post-requests.ts';
import { auditNote } from './audit.ts';
import { draftComposerPage, formFailure, newComposerPage, postActor, withFormZone } from './composer.ts';
import { jsonRoute, pageRoute, type PageContext, type Web } from './context.ts';
import { composerValuesOfDraft, draftContent, draftInputFromForm, intendedOnDay } from './draft-input.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, jsonResponse, redirect } from './http.ts';
import { errorBody, formErrors, layout } from './layout.ts';
import { byId, channelsOf, composerValuesFromForm, localInstant, type Actor, type ComposerValues } from './post-actions.ts';
import { dayKey, formatDateTime, parseDayKey } from './time.ts';
import { excerpt, platformBadge, tagChips } from './ui.ts';
import { tagFilter, tagOfQuery } from './tag-filter.ts';

/** Drafts a page lists; older ones are a link away. */
const PAGE_SIZE = 50;

const DRAFT_NOTICES: Record<string, string> = {
  deleted: 'Draft deleted.',
  'day-set': 'The draft’s day is set.',
  'time-cleared': 'The draft has no intended time now.',
};

/** The request's member, in the session's organization, as the drafts' domain names its caller (every channel: no API key). */
const whoOf = (ctx: Pick<PageContext, 'signedIn' | 'now'>) => ({
  organizationId: ctx.signedIn.organization.id,
  keyChannels: 'all' as const,
  now: ctx.now,
});

function channelBadges(d: DraftView, channels: Map<string, IChannel>): SafeHtml {
  if (!d.channelIds.length) return html`<span class="hint">None chosen yet</span>`;
  return html`${d.channelIds.map((id) => {
    const c = channels.get(id);
    return c ? platformBadge(c.platform, c.name, c.id) : html`<span class="hint">${id}</span>`;
  })}`;
}

function statusOf(d: DraftView): SafeHtml {
  const label = d.status === 'draft' ? 'Draft' : 'Scheduled';
  const post = d.postId
    ? html` <a href="/posts/${d.postId}" data-testid="draft-post-link">Open its post</a>`
    : d.status === 'scheduled'
      ? html` <span class="hint">(its post was removed)</span>`
      : '';
  return html`<span class="status status-${d.status}" data-testid="draft-status" data-status="${d.status}">${label}</span>${post}`;
}

/** A draft's actions, only those the member's role may use: edit, schedule, give it a day, delete. */
function draftActions(ctx: PageContext, d: DraftView): SafeHtml {
  if (!can(ctx.signedIn.role, 'posts.write')) return html``;
  const csrf = html`<input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">`;
  const del = html`<a class="button danger" href="/drafts/${d.id}/delete" data-testid="draft-delete">Delete…</a>`;
  // A scheduled draft is the post now: only its deletion is left (the post stays).
  if (d.status !== 'draft') return html`<div class="actions">${del}</div>`;
  const at = d.intendedAt ? new Date(d.intendedAt) : null;
  const upcoming = at !== null && at > ctx.now;
  const noChannel = d.channelIds.length === 0;
  const blocked = noChannel ? html` disabled aria-describedby="draft-${d.id}-needs"` : '';
  return html`<div class="actions">
    <a class="button" href="/drafts/${d.id}/edit" data-testid="draft-edit">Edit</a>
    <form method="post" action="/drafts/${d.id}/schedule" class="inline" data-testid="draft-schedule-form">
      ${csrf}
      ${upcoming ? html`<button type="submit" name="at" value="intended" class="primary" data-testid="draft-schedule-intended"${blocked}>Schedule for ${formatDateTime(at, ctx.tz)}</button>` : ''}
      <button type="submit" name="at" value="now" data-testid="draft-schedule-now"${blocked}>Publish now</button>
      ${noChannel ? html`<span class="hint" id="draft-${d.id}-needs" data-testid="draft-needs-channel">Choose its channels first (Edit).</span>` : ''}
      ${at && !upcoming ? html`<span class="hint" data-testid="draft-time-passed">Its intended time has passed: give it another day, or edit it.</span>` : ''}
    </form>
    <form method="post" action="/drafts/${d.id}/intended" class="inline" data-testid="draft-date-form">
      ${csrf}
      <input type="hidden" name="tz" value="${ctx.tz}">
      <label for="draft-day-${d.id}">Day it is meant for <span class="hint">(empty: none)</span></label>
      <input type="date" id="draft-day-${d.id}" name="date" value="${at ? dayKey(at, ctx.tz) : ''}" data-testid="draft-date-input">
      <button type="submit" data-testid="draft-date-submit">Set day</button>
    </form>
    ${del}
  </div>`;
}

function draftRow(ctx: PageContext, d: DraftView, channels: Map<string, IChannel>, tags: ReadonlyMap<string, TagView>): SafeHtml {
  const text = draftContent(d).content ?? '';
  const at = d.intendedAt ? new Date(d.intendedAt) : null;
  return html`<li class="draft-row" id="draft-${d.id}" data-testid="draft-item" data-draft-id="${d.id}" data-status="${d.status}" data-intended-at="${d.intendedAt ?? ''}">
  <p class="draft-text" data-testid="draft-text">${excerpt(text, 280) || html`<span class="hint">(no text yet)</span>`}</p>
  <dl class="facts">
    <dt>Channels</dt><dd data-testid="draft-channels">${channelBadges(d, channels)}</dd>
    ${d.tagIds.length ? html`<dt>Tags</dt><dd data-testid="draft-tags">${tagChips(d.tagIds, tags)}</dd>` : ''}
    <dt>Meant for</dt><dd data-testid="draft-intended">${at ? html`<time datetime="${d.intendedAt}">${formatDateTime(at, ctx.tz)}</time>` : html`<span class="hint">No time yet</span>`}</dd>
    <dt>Status</dt><dd>${statusOf(d)}</dd>
    <dt>Last changed</dt><dd data-testid="draft-updated"><time datetime="${d.updatedAt}">${formatDateTime(new Date(d.updatedAt), ctx.tz)}</time></dd>
  </dl>
  ${draftActions(ctx, d)}
</li>`;
}

async function draftsPage(ctx: PageContext, problems: string[] = [], status = 200): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const cursor = ctx.url.searchParams.get('cursor') ?? undefined;
  const tagList = await listTags(ctx.em, orgId);
  const tag = tagOfQuery(tagList, ctx.url.searchParams);
  const page = await listDrafts(ctx.em, orgId, 'all', { limit: PAGE_SIZE, cursor, tagId: tag?.id });
  const channels = byId(await channelsOf(ctx.em, orgId));
  const tags = byId(tagList);
  const narrowed = tag ? `&tagId=${encodeURIComponent(tag.id)}` : '';
  const write = can(ctx.signedIn.role, 'posts.write');
  const body = html`<section class="drafts" data-testid="drafts" aria-labelledby="drafts-title">
  <h1 id="drafts-title">Drafts</h1>
  <p class="hint">Posts not scheduled yet, last changed first; times in <strong>${ctx.tz}</strong>.${
    write
      ? html` Write one in the <a href="/posts/new" data-testid="drafts-compose">composer</a> and choose <strong>Save as draft</strong>; on the calendar, drag a draft onto a day to give it that day.`
      : ''
  }</p>
  ${formErrors(problems)}
  ${tagFilter({ action: '/drafts', name: 'drafts', noun: 'drafts', tags: tagList, current: tag })}
  <ul class="draft-list" data-testid="draft-list">${page.data.map((d) => draftRow(ctx, d, channels, tags))}</ul>
  ${page.data.length ? '' : html`<p class="empty" data-testid="drafts-empty">No drafts${cursor ? ' further back' : tag ? ' with this tag' : ' yet'}.</p>`}
  ${page.nextCursor ? html`<p><a href="/drafts?cursor=${encodeURIComponent(page.nextCursor)}${narrowed}" data-testid="drafts-next" rel="next">Older drafts</a></p>` : ''}
</section>`;
  const notice = status === 200 ? (DRAFT_NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null) : null;
  return htmlResponse(layout({ title: 'Drafts', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'drafts', notice, tzReload: true }), {
    status,
  });
}

/** A scheduled draft cannot change: a 409 page that leads to the post it became. */
function scheduledAlready(ctx: PageContext, d: DraftView): Response {
  const title = 'Cannot do that now';
  const link = d.postId ? html`<p><a href="/posts/${d.postId}" data-testid="draft-post-link">Open its post</a></p>` : html``;
  return htmlResponse(
    layout({
      title,
      body: errorBody(title, 'This draft was scheduled: it is a post now, and the draft no longer changes. Change the post instead.', link),
      signedIn: ctx.signedIn,
      tz: ctx.tz,
    }),
    { status: 409 },
  );
}

/** How the composer's form asks for the post: now, at the time typed, or the queue's next slot. */
function placementOfForm(v: ComposerValues, tz: string, fields: FieldError[]): Placement | 'now' {
  if (v.when === 'now') return 'now';
  if (v.when === 'queue') return { queue: true };
  const at = localInstant(v.publishAtLocal, tz, fields);
  return at === null ? {} : { publishAt: at };
}

/**
 * The post a draft becomes (rules at the top): the one create path, then the draft records it.
 * `now`: published now whatever its intended time. `fields`: what the form already found wrong,
 * reported with the create's own refusals.
 */
async function scheduleDraft(actor: Actor, draft: DraftView, placement: Placement | 'now', fields: FieldError[] = []): Promise<string> {
  // In the composer's words (createAppPost's), with the form's other problems.
  if (!draft.channelIds.length) throw errors.validation([{ path: 'channelIds', message: 'choose at least one channel' }, ...fields]);
  const body = placement === 'now' ? postBodyOf({ ...draft, intendedAt: null }, {}) : postBodyOf(draft, placement);
  const origin = { organization: actor.organization, source: 'app' as const, key: null, now: actor.now };
  const created = await createPost(actor.em, actor.temporal, newPostRequest(origin, body, actor.capabilities, actor.requester), fields);
  await markScheduled(actor.em, draft.id, created.id, actor.now);
  return created.id;
}

async function schedule(web: Web, raw: PageContext): Promise<Response> {
  const ctx = withFormZone(raw);
  const orgId = ctx.signedIn.organization.id;
  let draft = await getDraft(ctx.em, orgId, ctx.params.id!, 'all');
  if (draft.status !== 'draft') return scheduledAlready(ctx, draft);
  // The composer's form (its marker field), or the Drafts page's buttons (`at`).
  const values = ctx.form.get('composer') === '1' ? composerValuesFromForm(ctx.form) : null;
  const at = ctx.form.get('at');
  try {
    const fields: FieldError[] = [];
    let placement: Placement | 'now';
    if (values) {
      // The form is kept in the draft first: what was typed stays with it whatever the checks say.
      draft = await updateDraft(ctx.em, whoOf(ctx), draft.id, draftInputFromForm(values, await channelsOf(ctx.em, orgId), draft, ctx.tz));
      placement = placementOfForm(values, ctx.tz, fields);
    } else if (at === 'now') placement = 'now';
    else if (at === 'intended' && draft.intendedAt) placement = {};
    else throw errors.validation([{ path: 'at', message: at === 'intended' ? 'the draft has no intended time' : 'choose when' }]);
    const postId = await scheduleDraft(postActor(web, ctx), draft, placement, fields);
    auditNote(ctx, { details: { draftId: draft.id } });
    return redirect(`/posts/${postId}?notice=created`);
  } catch (err) {
    const { status, messages, fields } = formFailure(err);
    const em = ctx.em.fork();
    const current = await getDraft(em, orgId, draft.id, 'all');
    if (current.status !== 'draft') return scheduledAlready(ctx, current);
    // The composer shows why, at the fields: the form as sent, or the draft as asked from the list.
    const shown = values ?? { ...composerValuesOfDraft(current, ctx.tz), when: at === 'now' ? ('now' as const) : ('later' as const) };
    return draftComposerPage(web, { ...ctx, em }, current, shown, messages, status, fields);
  }
}

/** The form's values kept as a new draft (POST /drafts) or into a draft (POST /drafts/{id}); refused shapes → the form again. */
async function saveDraft(web: Web, raw: PageContext, id: string | null): Promise<Response> {
  const ctx = withFormZone(raw);
  const orgId = ctx.signedIn.organization.id;
  const current = id === null ? null : await getDraft(ctx.em, orgId, id, 'all');
  if (current && current.status !== 'draft') return scheduledAlready(ctx, current);
  const values = composerValuesFromForm(ctx.form);
  try {
    const input = draftInputFromForm(values, await channelsOf(ctx.em, orgId), current, ctx.tz);
    const saved = current
      ? await updateDraft(ctx.em, whoOf(ctx), current.id, input)
      : await createDraft(ctx.em, { ...whoOf(ctx), actor: postActor(web, ctx).requester.actor }, input);
    return redirect(`/drafts/${saved.id}/edit?notice=draft-saved`);
  } catch (err) {
    const { status, messages, fields } = formFailure(err);
    const again = { ...ctx, em: ctx.em.fork() };
    return current
      ? draftComposerPage(web, again, current, values, messages, status, fields)
      : newComposerPage(web, again, values, messages, status, fields);
  }
}

/** The Drafts page's date field: the draft on that day (its time of day kept, else 09:00); empty: no intended time. */
async function setDay(raw: PageContext): Promise<Response> {
  // The day is one of the zone the page showed it in.
  const ctx = withFormZone(raw);
  const draft = await getDraft(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all');
  if (draft.status !== 'draft') return scheduledAlready(ctx, draft);
  const given = (ctx.form.get('date') ?? '').trim();
  let intendedAt: string | null = null;
  if (given !== '') {
    const day = parseDayKey(given);
    if (!day) return draftsPage({ ...ctx, em: ctx.em.fork() }, ['date: must be a date YYYY-MM-DD'], 422);
    intendedAt = intendedOnDay(draft.intendedAt, day, ctx.tz).toISOString();
  }
  await updateDraft(ctx.em, whoOf(ctx), draft.id, { intendedAt });
  return redirect(`/drafts?notice=${intendedAt ? 'day-set' : 'time-cleared'}#draft-${draft.id}`);
}

function confirmPage(ctx: PageContext, d: DraftView, problems: string[], status = 200): Response {
  const title = 'Delete this draft?';
  const body = html`<section class="confirm" data-testid="draft-delete-confirm" data-draft-id="${d.id}" data-status="${d.status}">
  <h1>${title}</h1>
  ${formErrors(problems)}
  <blockquote class="post-content" data-testid="draft-delete-excerpt">${excerpt(draftContent(d).content ?? '', 200) || '(no text)'}</blockquote>
  <p data-testid="draft-delete-explain">${
    d.status === 'draft'
      ? 'It was never scheduled: nothing was published from it. Deleted, it cannot be brought back.'
      : 'The post it became stays (delete that on its own page if it should go too). Deleted, the draft cannot be brought back.'
  }</p>
  <form method="post" action="/drafts/${d.id}/delete" class="actions" data-testid="draft-delete-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="draft-delete-submit">Delete draft</button>
    <a href="/drafts#draft-${d.id}" data-testid="draft-delete-keep">Keep it</a>
  </form>
</section>`;
  return htmlResponse(layout({ title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'drafts' }), { status });
}

async function deleteConfirmed(ctx: PageContext): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const draft = await getDraft(ctx.em, orgId, ctx.params.id!, 'all');
  // Only the confirmation page's button sends confirm=yes.
  if (ctx.form.get('confirm') !== 'yes') return confirmPage(ctx, draft, ['Confirm with the button below to delete this draft.'], 422);
  await deleteDraft(ctx.em, orgId, draft.id, 'all');
  return redirect('/drafts?notice=deleted');
}

/** The calendar's drag and drop: a draft onto a day (the viewer's zone, `?tz=`), its time of day kept (else 09:00). */
const DayBody = t.Object({ date: t.String({ maxLength: 10 }) }, { additionalProperties: false });

export function draftRoutes(web: Web) {
  return router()
    .get(
      '/drafts',
      pageRoute(web, 'read', (ctx) => draftsPage(ctx)),
    )
    .post(
      '/drafts',
      pageRoute(web, 'posts.write', (ctx) => saveDraft(web, ctx, null)),
      { parse: 'text' },
    )
    .get(
      '/drafts/:id/edit',
      pageRoute(web, 'posts.write', async (ctx) => {
        const draft = await getDraft(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all');
        return draft.status === 'draft' ? draftComposerPage(web, ctx, draft, null) : scheduledAlready(ctx, draft);
      }),
    )
    .post(
      '/drafts/:id',
      pageRoute(web, 'posts.write', (ctx) => saveDraft(web, ctx, ctx.params.id!)),
      { parse: 'text' },
    )
    .post(
      '/drafts/:id/schedule',
      pageRoute(web, 'posts.write', (ctx) => schedule(web, ctx)),
      { parse: 'text' },
    )
    .post(
      '/drafts/:id/intended',
      pageRoute(web, 'posts.write', (ctx) => setDay(ctx)),
      { parse: 'text' },
    )
    .get(
      '/drafts/:id/delete',
      pageRoute(web, 'posts.write', async (ctx) =>
        confirmPage(ctx, await getDraft(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all'), []),
      ),
    )
    .post(
      '/drafts/:id/delete',
      pageRoute(web, 'posts.write', (ctx) => deleteConfirmed(ctx)),
      { parse: 'text' },
    )
    .patch(
      '/web/api/drafts/:id',
      jsonRoute(web, 'posts.write', async (ctx) => {
        const day = parseDayKey((ctx.body as typeof DayBody.static).date);
        if (!day) throw errors.validation([{ path: 'date', message: 'must be a date YYYY-MM-DD' }]);
        const draft = await getDraft(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all');
        const intendedAt = intendedOnDay(draft.intendedAt, day, ctx.tz).toISOString();
        // updateDraft refuses a scheduled draft (409 conflict): it no longer changes.
        return jsonResponse(await updateDraft(ctx.em, whoOf(ctx), draft.id, { intendedAt }));
      }),
      { body: DayBody, transform: refuseUnstorableBody },
    );
}
