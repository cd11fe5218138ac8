// Approval in the web app (domain/posts/approval.ts states the rules): the Approvals page lists
// the scheduled posts waiting for a decision; approvers approve or reject there or on a post's
// page, with a comment; anyone who writes posts shares a signed preview link of a post
// (domain/posts/preview-links.ts), optionally with approve/reject buttons for its reviewer.
import type { PostApproval } from '../db/entities/index.ts';
import { APPROVAL_COMMENT_CHARS, decideApproval, memberActor, postsAwaitingApproval } from '../domain/posts/approval.ts';
import { PREVIEW_DAYS, signPreviewLink } from '../domain/posts/preview-links.ts';
import { getPostForKey, type PostView } from '../domain/posts/view.ts';
import { can } from '../domain/roles.ts';
import { router } from '../http/router.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect, safeNextPath } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { excerpt, platformBadge } from './ui.ts';

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

/** The post page's approval section and its preview-link form. */
export function approvalPanel(ctx: PageContext, post: PostView): SafeHtml {
  const share = can(ctx.signedIn.role, 'posts.write')
    ? html`<details class="preview-share" data-testid="preview-share"><summary>Share a preview link</summary>
  <form method="post" action="/posts/${post.id}/preview-link" class="stack">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    <div class="field"><label for="preview-days">Valid for (days, ${PREVIEW_DAYS.min}–${PREVIEW_DAYS.max})</label>
      <input id="preview-days" name="days" type="number" min="${PREVIEW_DAYS.min}" max="${PREVIEW_DAYS.max}" value="${PREVIEW_DAYS.default}" data-testid="preview-days"></div>
    ${
      ctx.signedIn.organization.previewDecisions && post.approval
        ? html`<div class="check"><input type="checkbox" id="preview-decide" name="decide" value="yes" data-testid="preview-decide"><label for="preview-decide">The reviewer may approve or reject</label></div>`
        : ''
    }
    <div class="actions"><button type="submit" data-testid="preview-create">Create link</button></div>
  </form></details>`
    : html``;
  if (!post.approval) return share;
  return html`<section class="approval" data-testid="post-approval">
  <h2>Approval</h2>
  <p>${approvalSummary(post.approval, ctx.tz)}</p>
  ${decisionForms(ctx, post, `/posts/${post.id}`)}
</section>${share}`;
}

async function approvalsPage(ctx: PageContext, web: Web, problems: string[] = [], status = 200): Promise<Response> {
  const posts = await postsAwaitingApproval(ctx.em, ctx.signedIn.organization.id, web.deps.storage);
  const channels = byId(await channelsOf(ctx.em, ctx.signedIn.organization.id));
  const body = html`<h1>Approvals</h1>
${formErrors(problems)}
<p class="hint">Scheduled posts waiting for a decision. A post is published only once approved; one not approved within 24 hours of its time fails with “not approved”.${
    can(ctx.signedIn.role, 'settings.manage')
      ? html` <a href="/settings/approval" data-testid="approval-settings-link">Approval settings</a>`
      : ''
  }</p>
${
  posts.length
    ? html`<ul class="plain approvals" data-testid="approvals-list">${posts.map(
        (p) => html`<li class="approval-item" data-testid="approval-item" data-post-id="${p.id}" data-approval="${p.approval!.status}">
  <a href="/posts/${p.id}" data-testid="approval-post-link">${excerpt(p.content) || '(media only)'}</a>
  <span class="badges">${p.channels.map((c) => platformBadge(c.platform, channels.get(c.channelId)?.name ?? c.channelId, c.channelId))}</span>
  <time datetime="${p.scheduledAt}">${formatDateTime(new Date(p.scheduledAt), ctx.tz)}</time>
  <p>${approvalSummary(p.approval!, ctx.tz)}</p>
  ${decisionForms(ctx, p, '/approvals')}
</li>`,
      )}</ul>`
    : html`<p data-testid="approvals-empty">Nothing is waiting for approval.</p>`
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
      by: await memberActor(ctx.em, ctx.signedIn.user.id),
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
  const orgId = ctx.signedIn.organization.id;
  const post = await getPostForKey(ctx.em, orgId, ctx.params.id!, 'all');
  const days = Number(ctx.form.get('days') ?? PREVIEW_DAYS.default);
  if (!Number.isInteger(days) || days < PREVIEW_DAYS.min || days > PREVIEW_DAYS.max)
    throw errors.validation([{ path: 'days', message: `must be a whole number from ${PREVIEW_DAYS.min} to ${PREVIEW_DAYS.max}` }]);
  const key = web.options().credentialsKey;
  if (!key) throw new ApiError('conflict', 'Preview links need the service’s CREDENTIALS_KEY to be set.');
  const expiresAt = new Date(ctx.now.getTime() + days * 86_400_000);
  const decide = ctx.form.get('decide') === 'yes' && ctx.signedIn.organization.previewDecisions && post.approval !== null;
  const token = signPreviewLink(key, { postId: post.id, organizationId: orgId, expiresAt, decide });
  const url = `${web.options().publicBaseUrl.replace(/\/$/, '')}/preview/${token}`;
  const body = html`<h1>Preview link</h1>
<p>Anyone with this link sees the post as each channel would publish it, until ${formatDateTime(expiresAt, ctx.tz)}${decide ? ', and may approve or reject it' : ''}. It shows nothing else of the organization.</p>
<p><input readonly value="${url}" class="wide" aria-label="Preview link" data-testid="preview-link"></p>
<p><a href="/posts/${post.id}">Back to the post</a></p>`;
  return htmlResponse(layout({ title: 'Preview link', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: null }));
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
    );
}
