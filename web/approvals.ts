// Approval in the web app (domain/posts/approval.ts states the rules): the Approvals page lists
// the scheduled posts waiting for a decision, each with its tags (narrowed to one tag by the tag
// filter of web/tag-filter.ts); approvers approve or reject there or on a post's page, with a
// comment; anyone who writes posts shares a signed preview link of a post
// (domain/posts/preview-links.ts), optionally with approve/reject buttons for its reviewer.
import type { PostApproval } from '../db/entities/index.ts';
import { APPROVAL_COMMENT_CHARS, decideApproval, postsAwaitingApproval } from '../domain/posts/approval.ts';
import { PREVIEW_DAYS, revokePreviewLink, sharePreviewLink } from '../domain/posts/preview-links.ts';
import type { IPreviewLink } from '../db/entities/index.ts';
import { auditNote } from './audit.ts';
import type { PostView } from '../domain/posts/view.ts';
import { can } from '../domain/access.ts';
import { memberPrincipal } from '../services/users.ts';
import { router } from '../http/router.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect, safeNextPath } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { excerpt, platformBadge, tagChips } from './ui.ts';
import { tagFilter, tagOfQuery } from './tag-filter.ts';
import { listTags } from '../domain/tags.ts';

const APPROVAL_LABEL: Record<PostApproval['status'], string> = {
  pending: 'Waiting for approval',
  approved: 'Approved',
  rejected: 'Rejected',
};

/** "Approved by ana@… on 3 May, 10:00: looks good" */
export function approvalSummary(approval: PostApproval, tz: string): SafeHtml {
  const decided =
    approval.decidedBy && approval.decidedAt
      ? html` by <span data-testid="approval-decided-by">${approval.decidedBy.name}</span> on ${formatDateTime(new Date(approval.decidedAt), tz)}`
      : '';
  return html`<span class="status approval-${approval.status}" data-testid="approval-status" data-approval="${approval.status}">${APPROVAL_LABEL[approval.status]}</span>${decided}${
    approval.comment ? html`: <q data-testid="approval-comment">${approval.comment}</q>` : ''
  } <span class="hint">(asked by <span data-testid="approval-requested-by">${approval.requestedBy.name}</span>)</span>`;
}

/** The approve and reject buttons, with one comment for either; `next`: where to go after. */
export function decisionForms(ctx: PageContext, post: PostView, next: string): SafeHtml {
  const approval = post.approval;
  if (!approval || post.status !== 'scheduled' || !can(ctx.signedIn.role, 'posts.approve')) return html``;
  return html`<form method="post" action="/posts/${post.id}/approve" class="approval-actions inline" data-testid="approval-actions" data-post-id="${post.id}">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}"><input type="hidden" name="next" value="${next}">
  <input name="comment" maxlength="${APPROVAL_COMMENT_CHARS}" placeholder="Comment (optional)" aria-label="Comment" data-testid="approval-comment-input">
  ${approval.status === 'approved' ? '' : html`<button type="submit" class="primary" data-testid="approval-approve">Approve</button>`}
  ${approval.status === 'rejected' ? '' : html`<button type="submit" formaction="/posts/${post.id}/reject" class="danger" data-testid="approval-reject">Reject</button>`}
</form>`;
}

/** The post page's approval section, its preview-link form and the links shared for it. */
export function approvalPanel(ctx: PageContext, post: PostView, links: IPreviewLink[]): SafeHtml {
  // Only a member who may approve shares a link that decides (domain/posts/preview-links.ts).
  const mayShareDecisions = ctx.signedIn.organization.previewDecisions && post.approval && can(ctx.signedIn.role, 'posts.approve');
  const share = can(ctx.signedIn.role, 'posts.write')
    ? html`<details class="preview-share" data-testid="preview-share"><summary>Share a preview link</summary>
  <form method="post" action="/posts/${post.id}/preview-link" class="stack">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <div class="field"><label for="preview-days">Valid for (days, ${PREVIEW_DAYS.min}–${PREVIEW_DAYS.max})</label>
      <input id="preview-days" name="days" type="number" min="${PREVIEW_DAYS.min}" max="${PREVIEW_DAYS.max}" value="${PREVIEW_DAYS.default}" data-testid="preview-days"></div>
    ${
      mayShareDecisions
        ? html`<div class="check"><input type="checkbox" id="preview-decide" name="decide" value="yes" data-testid="preview-decide"><label for="preview-decide">The reviewer may approve or reject (once, in your name)</label></div>`
        : ''
    }
    <div class="actions"><button type="submit" data-testid="preview-create">Create link</button></div>
  </form></details>${previewLinkList(ctx, post, links)}`
    : html``;
  if (!post.approval) return share;
  return html`<section class="approval" data-testid="post-approval">
  <h2>Approval</h2>
  <p>${approvalSummary(post.approval, ctx.tz)}</p>
  ${decisionForms(ctx, post, `/posts/${post.id}`)}
</section>${share}`;
}

/** The links shared for the post: who shared each, what it may do, its state, and Revoke. */
function previewLinkList(ctx: PageContext, post: PostView, links: IPreviewLink[]): SafeHtml {
  if (!links.length) return html``;
  const state = (l: IPreviewLink) =>
    l.revokedAt
      ? 'revoked'
      : l.decidedAt
        ? `${l.decision === 'approve' ? 'approved' : 'rejected'} by ${l.reviewerName ?? ''}`
        : l.expiresAt.getTime() <= ctx.now.getTime()
          ? 'expired'
          : `valid until ${formatDateTime(l.expiresAt, ctx.tz)}`;
  const mayRevoke = (l: IPreviewLink) =>
    !l.revokedAt && (l.createdByUserId === ctx.signedIn.user.id || can(ctx.signedIn.role, 'posts.approve'));
  return html`<table class="table" data-testid="preview-links"><thead><tr><th scope="col">Link</th><th scope="col">Reviewer may</th><th scope="col">State</th><th scope="col"></th></tr></thead>
<tbody>${links.map(
    (l) => html`<tr data-testid="preview-link-row" data-link-id="${l.id}" data-revoked="${l.revokedAt ? 'yes' : 'no'}">
  <td>${formatDateTime(l.createdAt, ctx.tz)}</td><td>${l.decide ? 'see and decide once' : 'see'}</td><td>${state(l)}</td>
  <td>${
    mayRevoke(l)
      ? html`<form method="post" action="/posts/${post.id}/preview-links/${l.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}"><button type="submit" class="danger" data-testid="preview-link-revoke">Revoke</button></form>`
      : ''
  }</td></tr>`,
  )}</tbody></table>`;
}

async function approvalsPage(ctx: PageContext, web: Web, problems: string[] = [], status = 200): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const tagList = await listTags(ctx.em, orgId);
  const tag = tagOfQuery(tagList, ctx.url.searchParams);
  const posts = await postsAwaitingApproval(ctx.em, orgId, web.deps.storage, { tagId: tag?.id });
  const channels = byId(await channelsOf(ctx.em, orgId));
  const tags = byId(tagList);
  // A decision comes back to the list as it was narrowed.
  const back = tag ? `/approvals?tagId=${encodeURIComponent(tag.id)}` : '/approvals';
  const body = html`<h1>Approvals</h1>
${formErrors(problems)}
<p class="hint">Scheduled posts waiting for a decision. A post is published only once approved; one not approved within 24 hours of its time fails with “not approved”.${
    can(ctx.signedIn.role, 'settings.manage')
      ? html` <a href="/settings/approval" data-testid="approval-settings-link">Approval settings</a>`
      : ''
  }</p>
${tagFilter({ action: '/approvals', name: 'approvals', noun: 'posts', tags: tagList, current: tag })}
${
  posts.length
    ? html`<ul class="plain approvals" data-testid="approvals-list">${posts.map(
        (p) => html`<li class="approval-item" data-testid="approval-item" data-post-id="${p.id}" data-approval="${p.approval!.status}">
  <a href="/posts/${p.id}" data-testid="approval-post-link">${excerpt(p.content) || '(media only)'}</a>
  <span class="badges">${p.channels.map((c) => platformBadge(c.platform, channels.get(c.channelId)?.name ?? c.channelId, c.channelId))}</span>
  ${tagChips(p.tagIds, tags)}
  <time datetime="${p.scheduledAt}">${formatDateTime(new Date(p.scheduledAt), ctx.tz)}</time>
  <p>${approvalSummary(p.approval!, ctx.tz)}</p>
  ${decisionForms(ctx, p, back)}
</li>`,
      )}</ul>`
    : html`<p data-testid="approvals-empty">Nothing${tag ? ' with this tag' : ''} is waiting for approval.</p>`
}`;
  const notice = ctx.url.searchParams.get('notice');
  return htmlResponse(
    layout({
      title: 'Approvals',
      body,
      signedIn: ctx.signedIn,
      tz: ctx.tz,
      nav: 'approvals',
      notice: notice === 'approved' ? 'Post approved.' : notice === 'rejected' ? 'Post rejected.' : null,
    }),
    { status },
  );
}

async function decide(web: Web, ctx: PageContext, decision: 'approve' | 'reject'): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const comment = (ctx.form.get('comment') ?? '').trim();
  const next = safeNextPath(ctx.form.get('next'), '/approvals');
  if (comment.length > APPROVAL_COMMENT_CHARS)
    throw errors.validation([{ path: 'comment', message: `must be at most ${APPROVAL_COMMENT_CHARS} characters` }]);
  try {
    await decideApproval(ctx.em, web.deps.temporal, orgId, ctx.params.id!, 'all', {
      decision,
      by: memberPrincipal(ctx.signedIn),
      comment: comment || null,
      now: ctx.now,
    });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'conflict') return approvalsPage(ctx, web, describeError(err), 409);
    throw err;
  }
  const notice = decision === 'approve' ? 'approved' : 'rejected';
  return redirect(`${next}${next.includes('?') ? '&' : '?'}notice=${notice}`);
}

async function previewLink(web: Web, ctx: PageContext): Promise<Response> {
  const key = web.options().credentialsKey;
  if (!key) throw new ApiError('conflict', 'Preview links need the service’s CREDENTIALS_KEY to be set.');
  const days = Number(ctx.form.get('days') ?? PREVIEW_DAYS.default);
  const { token, link } = await sharePreviewLink(ctx.em, key, memberPrincipal(ctx.signedIn), {
    postId: ctx.params.id!,
    days,
    decide: ctx.form.get('decide') === 'yes',
    now: ctx.now,
  });
  auditNote(ctx, { details: { linkId: link.id, decide: link.decide } });
  const url = `${web.options().publicBaseUrl.replace(/\/$/, '')}/preview/${token}`;
  const body = html`<h1>Preview link</h1>
<p>Anyone with this link sees the post as each channel would publish it, until ${formatDateTime(link.expiresAt, ctx.tz)}${link.decide ? ', and may approve or reject it once, in your name' : ''}. It shows nothing else of the organization. Revoke it from the post’s page.</p>
<p><input readonly value="${url}" class="wide" aria-label="Preview link" data-testid="preview-link"></p>
<p><a href="/posts/${link.postId}">Back to the post</a></p>`;
  return htmlResponse(layout({ title: 'Preview link', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: null }));
}

async function revokeLink(ctx: PageContext): Promise<Response> {
  await revokePreviewLink(ctx.em, memberPrincipal(ctx.signedIn), ctx.params.id!, ctx.params.linkId!, ctx.now);
  auditNote(ctx, { details: { linkId: ctx.params.linkId } });
  return redirect(`/posts/${ctx.params.id}?notice=link-revoked`);
}

export function approvalRoutes(web: Web) {
  return router()
    .get(
      '/approvals',
      pageRoute(web, 'posts.approve', (ctx) => approvalsPage(ctx, web)),
    )
    .post(
      '/posts/:id/approve',
      pageRoute(web, 'posts.approve', (ctx) => decide(web, ctx, 'approve')),
      { parse: 'text' },
    )
    .post(
      '/posts/:id/reject',
      pageRoute(web, 'posts.approve', (ctx) => decide(web, ctx, 'reject')),
      { parse: 'text' },
    )
    .post(
      '/posts/:id/preview-link',
      pageRoute(web, 'posts.write', (ctx) => previewLink(web, ctx)),
      { parse: 'text' },
    )
    .post(
      '/posts/:id/preview-links/:linkId/revoke',
      pageRoute(web, 'posts.write', (ctx) => revokeLink(ctx)),
      { parse: 'text' },
    );
}
