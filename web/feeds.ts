// The Feeds page: RSS and Atom feeds that post by themselves (domain/feeds/feeds.ts states the
// rules), through the same functions as /v1/feeds. Every member sees the feeds (each with its
// tags, narrowed to one tag by the tag filter of web/tag-filter.ts), a feed's settings and its
// items; owners, admins and editors (`feeds.write`) add, edit, pause, resume, read now and
// delete. A feed added here is the web app's (source `app`, no API key) and its maker is the
// member: its posts wait for approval when theirs would. Its URL is read under the web app's
// outbound policy, as a channel's instance is. Delete asks first, on a page of its own.
import type { IChannel } from '../db/entities/index.ts';
import {
  createFeed,
  deleteFeed,
  getFeed,
  listFeedItems,
  listFeeds,
  pollFeedNow,
  updateFeed,
  type FeedItemView,
  type FeedMaker,
  type FeedView,
} from '../domain/feeds/feeds.ts';
import { can } from '../domain/access.ts';
import { listTags, type TagView } from '../domain/tags.ts';
import { router } from '../http/router.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { DEFAULT_OUTBOUND } from '../lib/outbound.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { emptyFeedForm, feedForm, feedInputOf, formOfFeed, readFeedForm, type FeedFormValues } from './feed-form.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { platformBadge, tagChips } from './ui.ts';
import { tagFilter, tagOfQuery } from './tag-filter.ts';

const BASE = '/feeds';
const ITEMS_PER_PAGE = 50;

const NOTICES: Record<string, string> = {
  created: 'Feed added. The items it has now are its backlog; new ones are posted from the next read.',
  saved: 'Feed saved.',
  polling: 'Reading the feed now: what it finds shows here within moments (reload the page).',
  deleted: 'Feed deleted. The posts it made stay.',
};

const MODE_LABEL = { now: 'Published at once', queue: 'Into the posting queue' } as const;
const OUTCOME_LABEL: Record<FeedItemView['outcome'], string> = {
  posted: 'Posted',
  backlog: 'Backlog (not posted)',
  filtered: 'Left out by the filter',
  refused: 'Refused',
};

/** What a form sent back carries: the values as typed, each error at its field (or at the top), the status. */
interface Refused {
  values: FeedFormValues;
  errors: FieldError[];
  messages: string[];
  status: number;
}

const mayWrite = (ctx: PageContext) => can(ctx.signedIn.role, 'feeds.write');

/** The web app's maker: the member, the web options' outbound policy. */
const makerOf = (ctx: PageContext): FeedMaker => ({
  organizationId: ctx.signedIn.organization.id,
  source: 'app',
  key: null,
  userId: ctx.signedIn.user.id,
  outbound: ctx.web.options().outbound ?? DEFAULT_OUTBOUND,
  now: ctx.now,
});

function page(ctx: PageContext, title: string, body: SafeHtml, status = 200, notice?: string | null): Response {
  const shown = notice === undefined ? (NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null) : notice;
  return htmlResponse(layout({ title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'feeds', notice: shown }), { status });
}

const when = (ctx: PageContext, iso: string | null, none = '—') =>
  iso ? html`<time datetime="${iso}">${formatDateTime(new Date(iso), ctx.tz)}</time>` : none;

function channelList(f: FeedView, channels: Map<string, IChannel>): SafeHtml {
  return html`${f.channelIds.map((id, i) => {
    const c = channels.get(id);
    return html`${i ? ', ' : ''}<span data-testid="feed-channel-name" data-channel-id="${id}">${c ? html`${platformBadge(c.platform)} ${c.name}` : id}</span>`;
  })}`;
}

/** Active or paused, why the service paused it, and the last read's error, in words. */
function statusOf(ctx: PageContext, f: FeedView): SafeHtml {
  return html`<span class="status status-${f.status}" data-testid="feed-status">${f.status === 'active' ? 'Active' : 'Paused'}</span>${
    f.status === 'paused'
      ? html` <span data-testid="feed-paused-reason">${f.pausedReason ? `by the service: ${f.pausedReason}` : 'by a member'}</span>`
      : ''
  }${
    f.lastError
      ? html`<p class="field-error" data-testid="feed-last-error">The last read failed (${when(ctx, f.lastError.at)}): ${f.lastError.message}</p>`
      : ''
  }`;
}

function feedsTable(
  ctx: PageContext,
  feeds: FeedView[],
  channels: Map<string, IChannel>,
  tags: ReadonlyMap<string, TagView>,
  narrowed: boolean,
): SafeHtml {
  if (!feeds.length) return html`<p data-testid="no-feeds">No feeds ${narrowed ? 'with this tag' : 'yet'}.</p>`;
  return html`<table class="table" data-testid="feed-list">
  <caption class="visually-hidden">Feeds</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">Channels</th><th scope="col">Each new item</th><th scope="col">Status</th><th scope="col">Last read</th><th scope="col">Next read</th></tr></thead>
  <tbody>${feeds.map(
    (f) => html`<tr data-testid="feed-row" data-feed-id="${f.id}" data-status="${f.status}">
    <th scope="row"><a href="${BASE}/${f.id}" data-testid="feed-link">${f.name}</a> ${tagChips(f.tagIds, tags)}</th>
    <td data-testid="feed-url-cell"><code>${f.url}</code></td>
    <td>${channelList(f, channels)}</td>
    <td data-testid="feed-mode">${MODE_LABEL[f.mode]}</td>
    <td>${statusOf(ctx, f)}</td>
    <td data-testid="feed-last-read">${when(ctx, f.lastPolledAt, 'Not yet')}</td>
    <td data-testid="feed-next-read">${when(ctx, f.nextPollAt, f.status === 'paused' ? 'Not while paused' : '—')}</td>
  </tr>`,
  )}</tbody>
</table>`;
}

async function listPage(ctx: PageContext, refused?: Refused): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const tagList = await listTags(ctx.em, orgId);
  const tag = tagOfQuery(tagList, ctx.url.searchParams);
  const [feeds, channels] = await Promise.all([listFeeds(ctx.em, orgId, 'all', { tagId: tag?.id }), channelsOf(ctx.em, orgId)]);
  const add = mayWrite(ctx)
    ? html`<section aria-labelledby="feed-create-title" data-testid="feed-create">
  <h2 id="feed-create-title">Add a feed</h2>
  ${formErrors(refused?.messages ?? [])}
  ${feedForm({
    kind: 'create',
    action: BASE,
    csrfToken: ctx.signedIn.session.csrfToken,
    values: refused?.values ?? emptyFeedForm(),
    channels,
    errors: refused?.errors ?? [],
  })}
</section>`
    : '';
  const body = html`<h1>Feeds</h1>
<p>Each new item of an RSS or Atom feed becomes a post on the feed's channels, made from its template.</p>
<section aria-labelledby="feeds-title">
  <h2 id="feeds-title" class="visually-hidden">The organization's feeds</h2>
  ${tagFilter({ action: BASE, name: 'feeds', noun: 'feeds', tags: tagList, current: tag })}
  ${feedsTable(ctx, feeds, byId(channels), byId(tagList), tag !== null)}
</section>
${add}`;
  return page(ctx, 'Feeds', body, refused?.status ?? 200, refused ? null : undefined);
}

function itemsTable(ctx: PageContext, f: FeedView, items: { data: FeedItemView[]; nextCursor: string | null }): SafeHtml {
  if (!items.data.length) return html`<p data-testid="no-feed-items">No items seen yet.</p>`;
  const older = items.nextCursor
    ? html`<p><a href="${BASE}/${f.id}?cursor=${encodeURIComponent(items.nextCursor)}" data-testid="feed-items-older">Older items</a></p>`
    : '';
  return html`<table class="table" data-testid="feed-items">
  <caption class="visually-hidden">Items the feed has seen, newest first</caption>
  <thead><tr><th scope="col">Item</th><th scope="col">Outcome</th><th scope="col">Post or reason</th><th scope="col">Seen</th></tr></thead>
  <tbody>${items.data.map((i) => {
    const link = safeHttpUrl(i.link);
    const title = i.title || i.link || i.itemKey;
    return html`<tr data-testid="feed-item" data-outcome="${i.outcome}">
    <th scope="row">${link ? html`<a href="${link}" rel="noopener noreferrer" data-testid="feed-item-link">${title}</a>` : html`<span data-testid="feed-item-title">${title}</span>`}</th>
    <td><span class="status status-${i.outcome}" data-testid="feed-item-outcome">${OUTCOME_LABEL[i.outcome]}</span></td>
    <td>${
      i.postId && i.outcome === 'posted'
        ? html`<a href="/posts/${i.postId}" data-testid="feed-item-post" data-post-id="${i.postId}">The post</a>`
        : i.error
          ? html`<span data-testid="feed-item-error">${i.error.message}</span>`
          : ''
    }</td>
    <td>${when(ctx, i.seenAt)}</td>
  </tr>`;
  })}</tbody>
</table>${older}`;
}

async function feedPage(ctx: PageContext, id: string, o: { refused?: Refused; problems?: string[]; status?: number } = {}) {
  const orgId = ctx.signedIn.organization.id;
  const f = await getFeed(ctx.em, orgId, id);
  const cursor = ctx.url.searchParams.get('cursor') ?? undefined;
  const [channels, items] = await Promise.all([
    channelsOf(ctx.em, orgId),
    listFeedItems(ctx.em, orgId, f.id, 'all', { limit: ITEMS_PER_PAGE, cursor }),
  ]);
  const write = mayWrite(ctx);
  const filter = [
    f.filter?.include?.length ? `only with ${f.filter.include.join(', ')}` : '',
    f.filter?.exclude?.length ? `never with ${f.filter.exclude.join(', ')}` : '',
  ].filter(Boolean);
  const actions = write
    ? html`<div class="actions">
  <form method="post" action="${BASE}/${f.id}/poll" class="inline">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <button type="submit" data-testid="feed-poll">Read now</button>
  </form>
  <a href="${BASE}/${f.id}/delete" class="button danger" data-testid="feed-delete">Delete…</a>
</div>`
    : '';
  const edit = write
    ? html`<section aria-labelledby="feed-edit-title" data-testid="feed-edit">
  <h2 id="feed-edit-title">Settings</h2>
  ${formErrors(o.refused?.messages ?? [])}
  ${feedForm({
    kind: 'edit',
    action: `${BASE}/${f.id}`,
    csrfToken: ctx.signedIn.session.csrfToken,
    values: o.refused?.values ?? formOfFeed(f),
    channels,
    errors: o.refused?.errors ?? [],
    pausedReason: f.pausedReason,
  })}
</section>`
    : '';
  const body = html`<p><a href="${BASE}" data-testid="feeds-back">← All feeds</a></p>
<h1>${f.name}</h1>
${formErrors(o.problems ?? [])}
<dl class="details" data-testid="feed-detail" data-feed-id="${f.id}" data-status="${f.status}">
  <dt>URL</dt><dd><code data-testid="feed-detail-url">${f.url}</code></dd>
  <dt>Channels</dt><dd>${channelList(f, byId(channels))}</dd>
  <dt>Each new item</dt><dd data-testid="feed-mode">${MODE_LABEL[f.mode]}</dd>
  <dt>Text</dt><dd><code data-testid="feed-detail-template">${f.template}</code></dd>
  ${Object.entries(f.templateByPlatform).map(([p, t]) => html`<dt>Text on ${platformBadge(p)}</dt><dd><code>${t}</code></dd>`)}
  <dt>Filter</dt><dd data-testid="feed-detail-filter">${filter.length ? filter.join('; ') : 'None: every item'}</dd>
  <dt>Status</dt><dd>${statusOf(ctx, f)}</dd>
  <dt>Read every</dt><dd>${f.pollMinutes} minutes</dd>
  <dt>Last read</dt><dd data-testid="feed-last-read">${when(ctx, f.lastPolledAt, 'Not yet')}</dd>
  <dt>Last read that worked</dt><dd>${when(ctx, f.lastSuccessAt, 'Not yet')}</dd>
  <dt>Next read</dt><dd data-testid="feed-next-read">${when(ctx, f.nextPollAt, f.status === 'paused' ? 'Not while paused' : '—')}</dd>
</dl>
${actions}
<section aria-labelledby="feed-items-title">
  <h2 id="feed-items-title">Items</h2>
  ${itemsTable(ctx, f, items)}
</section>
${edit}`;
  return page(ctx, f.name, body, o.status ?? 200, o.refused || o.problems ? null : undefined);
}

async function confirmDelete(ctx: PageContext, id: string, problems: string[] = [], status = 200): Promise<Response> {
  const f = await getFeed(ctx.em, ctx.signedIn.organization.id, id);
  const body = html`<section class="confirm" data-testid="feed-delete-confirm" data-feed-id="${f.id}">
  <h1>Delete this feed?</h1>
  ${formErrors(problems)}
  <p><strong>${f.name}</strong> (<code>${f.url}</code>) is read no more. The posts it made stay.</p>
  <form method="post" action="${BASE}/${f.id}/delete" class="actions">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="feed-delete-submit">Delete feed</button>
    <a href="${BASE}/${f.id}" data-testid="feed-delete-keep">Keep it</a>
  </form>
</section>`;
  return page(ctx, 'Delete feed?', body, status, null);
}

/**
 * A refusal the form shows again: every reason at the top, and the domain's field errors also at
 * their fields; any other error is the app's error page.
 */
function refusalOf(err: unknown, values: FeedFormValues): Refused {
  if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 409)) throw err;
  const fields = err.code === 'validation_failed' ? ((err.details as { fields?: FieldError[] } | undefined)?.fields ?? []) : [];
  return { values, errors: fields, messages: describeError(err), status: err.status };
}

/** The form's input for the domain, or its refusal (checked as the API's body schema checks). */
async function submitted(ctx: PageContext, kind: 'create' | 'edit') {
  const values = readFeedForm(ctx.form);
  const { input, fields } = feedInputOf(values, kind);
  return { values, input, fields };
}

export function feedRoutes(web: Web) {
  const idOf = (ctx: PageContext) => ctx.params.id ?? '';
  const orgOf = (ctx: PageContext) => ctx.signedIn.organization.id;
  return router()
    .get(
      BASE,
      pageRoute(web, 'read', (ctx) => listPage(ctx)),
    )
    .post(
      BASE,
      pageRoute(web, 'feeds.write', async (ctx) => {
        const { values, input, fields } = await submitted(ctx, 'create');
        try {
          if (fields.length) throw errors.validation(fields);
          const view = await createFeed(ctx.em, makerOf(ctx), input);
          return redirect(`${BASE}/${view.id}?notice=created`);
        } catch (err) {
          return listPage({ ...ctx, em: ctx.em.fork() }, refusalOf(err, values));
        }
      }),
      { parse: 'text' },
    )
    .get(
      `${BASE}/:id`,
      pageRoute(web, 'read', (ctx) => feedPage(ctx, idOf(ctx))),
    )
    .post(
      `${BASE}/:id`,
      pageRoute(web, 'feeds.write', async (ctx) => {
        const { values, input, fields } = await submitted(ctx, 'edit');
        try {
          if (fields.length) throw errors.validation(fields);
          await updateFeed(ctx.em, makerOf(ctx), idOf(ctx), input);
          return redirect(`${BASE}/${idOf(ctx)}?notice=saved`);
        } catch (err) {
          const refused = refusalOf(err, values);
          return feedPage({ ...ctx, em: ctx.em.fork() }, idOf(ctx), { refused, status: refused.status });
        }
      }),
      { parse: 'text' },
    )
    .post(
      `${BASE}/:id/poll`,
      pageRoute(web, 'feeds.write', async (ctx) => {
        try {
          await pollFeedNow(ctx.em, web.deps.temporal, orgOf(ctx), idOf(ctx), 'all');
        } catch (err) {
          // A paused feed is not read: the page says so, with the form that resumes it.
          if (!(err instanceof ApiError) || err.code !== 'conflict') throw err;
          return feedPage({ ...ctx, em: ctx.em.fork() }, idOf(ctx), { problems: [err.message], status: 409 });
        }
        return redirect(`${BASE}/${idOf(ctx)}?notice=polling`);
      }),
      { parse: 'text' },
    )
    .get(
      `${BASE}/:id/delete`,
      pageRoute(web, 'feeds.write', (ctx) => confirmDelete(ctx, idOf(ctx))),
    )
    .post(
      `${BASE}/:id/delete`,
      pageRoute(web, 'feeds.write', async (ctx) => {
        // Only the confirmation page's button sends confirm=yes.
        if (ctx.form.get('confirm') !== 'yes') return confirmDelete(ctx, idOf(ctx), ['Confirm with the button below.'], 422);
        await deleteFeed(ctx.em, orgOf(ctx), idOf(ctx), 'all', ctx.now);
        return redirect(`${BASE}?notice=deleted`);
      }),
      { parse: 'text' },
    );
}
