// Deleting and retrying a post from the web app, through the same services as
// DELETE /v1/posts/{id} and POST /v1/posts/{id}/retry (domain/posts/lifecycle.ts): a scheduled
// post is cancelled through its workflow (never published by a timer already running); a
// published or failed one leaves the lists (its posts on the platforms stay); a failed one is
// published again on the channels that failed, once they are usable. Delete asks first, on a page
// of its own (no window.confirm): the POST needs `confirm=yes`, which only that page's button sends.
import type { IChannel } from '../db/entities/index.ts';
import { ApiError } from '../lib/errors.ts';
import { cancelPost, retryPost } from '../domain/posts/lifecycle.ts';
import { getPostForKey, type PostView } from '../domain/posts/view.ts';
import { router } from '../http/router.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { errorBody, formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { dayKey, formatDateTime } from './time.ts';
import { excerpt, liveLink, platformBadge, platformLabel } from './ui.ts';

/** Statuses a post can be deleted in: publishing cannot (the platforms may be receiving it). */
const DELETABLE = ['scheduled', 'published', 'failed'];

/** The failed channels of a post that must be reconnected (or re-enabled) before a retry. */
export function retryBlockers(post: PostView, channels: Map<string, IChannel>): { channelId: string; platform: string; name: string }[] {
  const out = new Map<string, { channelId: string; platform: string; name: string }>();
  for (const c of post.channels) {
    const ch = channels.get(c.channelId);
    if (c.status === 'failed' && ch?.status !== 'active') {
      out.set(c.channelId, { channelId: c.channelId, platform: c.platform, name: ch?.name ?? c.channelId });
    }
  }
  return [...out.values()];
}

/** "Reconnect Mastodon (Team) first": each channel linked to its reconnect page. */
function reconnectHint(blockers: ReturnType<typeof retryBlockers>): SafeHtml {
  const links = blockers.map(
    (b, i) =>
      html`${i ? ', ' : ''}<a href="/channels/connect/${b.platform.toLowerCase()}?channel=${b.channelId}" data-testid="retry-reconnect" data-channel-id="${b.channelId}">${platformLabel(b.platform)} (${b.name})</a>`,
  );
  return html`Reconnect ${links} first.`;
}

/** The post page's Delete and Retry actions; calendar.js shows each only in its statuses (data-show-when). */
export function postLifecycleActions(ctx: PageContext, post: PostView, channels: Map<string, IChannel>): SafeHtml {
  const blockers = post.status === 'failed' ? retryBlockers(post, channels) : [];
  const retry =
    post.status === 'failed'
      ? html`<form method="post" action="/posts/${post.id}/retry" class="inline" data-testid="post-retry-form" data-show-when="failed">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <button type="submit" class="primary" data-testid="post-retry"${blockers.length ? html` disabled aria-describedby="retry-blocked"` : ''}>Retry failed channels</button>
    ${blockers.length ? html`<span class="hint" id="retry-blocked" data-testid="retry-blocked">${reconnectHint(blockers)}</span>` : ''}
  </form>`
      : '';
  const del = html`<a class="button danger" href="/posts/${post.id}/delete" data-testid="post-delete" data-show-when="${DELETABLE.join(' ')}"${DELETABLE.includes(post.status) ? '' : html` hidden`}>${post.status === 'scheduled' ? 'Delete (cancel)' : 'Remove from lists'}</a>`;
  return html`${retry}${del}`;
}

const isScheduled = (post: PostView) => post.status === 'scheduled';

function confirmPage(ctx: PageContext, post: PostView, channels: Map<string, IChannel>, problems: string[], status = 200): Response {
  const scheduled = isScheduled(post);
  const title = scheduled ? 'Delete this post?' : 'Remove this post from the lists?';
  const names = post.channels.map(
    (c) => html`<li>${platformBadge(c.platform)} ${channels.get(c.channelId)?.name ?? c.channelId} ${c.url ? liveLink(c.url) : ''}</li>`,
  );
  const body = html`<section class="confirm" data-testid="delete-confirm" data-post-id="${post.id}" data-status="${post.status}">
  <h1>${title}</h1>
  ${formErrors(problems)}
  <blockquote class="post-content" data-testid="delete-excerpt">${excerpt(post.content, 200) || '(media only)'}</blockquote>
  ${
    scheduled
      ? html`<p data-testid="delete-explain">It is scheduled for <time datetime="${post.scheduledAt}">${formatDateTime(new Date(post.scheduledAt), ctx.tz)}</time>. Deleting cancels it: it will not be published on any of its channels, and it leaves the calendar and the lists.</p>`
      : html`<p data-testid="delete-explain">It leaves the calendar and the lists here. <strong>The posts already live on the platforms stay there</strong>: delete them on each platform if they should go too.</p>`
  }
  <ul class="plain">${names}</ul>
  <form method="post" action="/posts/${post.id}/delete" class="actions" data-testid="delete-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <input type="hidden" name="status" value="${post.status}">
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="delete-confirm-submit">${scheduled ? 'Delete post' : 'Remove from lists'}</button>
    <a href="/posts/${post.id}" data-testid="delete-keep">Keep it</a>
  </form>
</section>`;
  return htmlResponse(layout({ title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: null }), { status });
}

/** An error of these actions as the app shows its errors (an HTML page of the status), with links where they help. */
function actionError(ctx: PageContext, status: number, message: string, extra?: SafeHtml): Response {
  const title = status === 404 ? 'Not found' : status === 409 ? 'Cannot do that now' : 'Something is not right';
  const more = html`${extra ?? ''}<p><a href="/posts/${ctx.params.id!}">Back to the post</a></p>`;
  return htmlResponse(
    layout({ title, body: errorBody(title, message, status === 404 ? undefined : more), signedIn: ctx.signedIn, tz: ctx.tz }),
    {
      status,
    },
  );
}

const PUBLISHING_DELETE =
  'This post is already publishing, so it can no longer be deleted. Once it is done you can remove it from the lists.';

/** The post as it is now (after a refused action), or null when it is gone. */
async function currentPost(ctx: PageContext): Promise<PostView | null> {
  try {
    return await getPostForKey(ctx.em.fork(), ctx.signedIn.organization.id, ctx.params.id!, 'all');
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return null;
    throw err;
  }
}

async function deleteConfirm(ctx: PageContext): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const post = await getPostForKey(ctx.em, orgId, ctx.params.id!, 'all');
  if (!DELETABLE.includes(post.status)) return actionError(ctx, 409, PUBLISHING_DELETE);
  return confirmPage(ctx, post, byId(await channelsOf(ctx.em, orgId)), []);
}

async function deletePost(web: Web, ctx: PageContext): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const id = ctx.params.id!;
  const post = await getPostForKey(ctx.em, orgId, id, 'all');
  if (!DELETABLE.includes(post.status)) return actionError(ctx, 409, PUBLISHING_DELETE);
  // Only the confirmation page's button sends confirm=yes; what it confirmed must still be so
  // (a post that was scheduled on that page and has been published since is asked about again).
  const confirmed = ctx.form.get('confirm') === 'yes';
  const expected = ctx.form.get('status');
  if (!confirmed || (expected !== null && expected !== post.status)) {
    const channels = byId(await channelsOf(ctx.em, orgId));
    const why = confirmed
      ? `The post is ${post.status} now (it was ${expected} when you asked). Confirm again if it should still go.`
      : 'Confirm with the button below to delete this post.';
    return confirmPage(ctx, post, channels, [why], confirmed ? 409 : 422);
  }
  try {
    await cancelPost(ctx.em, web.deps.temporal, orgId, id, 'all', ctx.now);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'conflict') throw err;
    const now = await currentPost(ctx);
    return actionError(ctx, 409, now?.status === 'publishing' ? PUBLISHING_DELETE : describeError(err).join(' '));
  }
  const day = dayKey(new Date(post.scheduledAt), ctx.tz);
  return redirect(`/calendar?date=${day}&notice=${isScheduled(post) ? 'deleted' : 'removed'}`);
}

async function retry(web: Web, ctx: PageContext): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const id = ctx.params.id!;
  try {
    await retryPost(ctx.em, web.deps.temporal, orgId, id, 'all', ctx.now);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === 'reauth_required') {
      const post = await currentPost(ctx);
      const channels = byId(await channelsOf(ctx.em.fork(), orgId));
      const blockers = post ? retryBlockers(post, channels) : [];
      if (blockers.length)
        return actionError(
          ctx,
          409,
          'A channel of this post needs reconnecting.',
          html`<p data-testid="retry-blocked">${reconnectHint(blockers)}</p>`,
        );
      return actionError(ctx, 409, describeError(err).join(' '));
    }
    if (err.code !== 'conflict') throw err;
    const now = await currentPost(ctx);
    const message =
      now?.status === 'publishing'
        ? 'This post is already publishing.'
        : now?.status === 'published'
          ? 'This post is already published: there is nothing to retry.'
          : now?.status === 'scheduled'
            ? 'This post has not been published yet: there is nothing to retry.'
            : describeError(err).join(' ');
    return actionError(ctx, 409, message);
  }
  return redirect(`/posts/${id}?notice=retrying`);
}

export function postLifecycleRoutes(web: Web) {
  return router()
    .get(
      '/posts/:id/delete',
      pageRoute(web, 'posts.publish', (ctx) => deleteConfirm(ctx)),
    )
    .post(
      '/posts/:id/delete',
      pageRoute(web, 'posts.publish', (ctx) => deletePost(web, ctx)),
      { parse: 'text' },
    )
    .post(
      '/posts/:id/retry',
      pageRoute(web, 'posts.publish', (ctx) => retry(web, ctx)),
      { parse: 'text' },
    );
}
