// The public page of a preview link (/preview/{token}; domain/posts/preview-links.ts states the
// rules): the post as each channel would publish it (web/channel-preview.ts, the composer's
// preview's renderer too), its status and approval, and, when the link and the organization allow
// it, approve/reject for a reviewer who gives their name.
import { APPROVAL_COMMENT_CHARS } from '../domain/posts/approval.ts';
import { decideByLink, linkMayDecide, previewLinkOf, readPreviewLink, type PreviewGrant } from '../domain/posts/preview-links.ts';
import { getPostForKey, type PostView } from '../domain/posts/view.ts';
import { router } from '../http/router.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { approvalSummary } from './approvals.ts';
import { csrfError, describeError, formBody, originAllowed, publicRoute, type RequestContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { auditNote } from './audit.ts';
import { statusLabel } from './ui.ts';
import { channelPreview } from './channel-preview.ts';

const REVIEWER_NAME_CHARS = 100;

/** The grant of the link in the path; a forged or altered link is not found, an expired one gone (410). */
function grantOf(web: Web, ctx: RequestContext): PreviewGrant {
  const key = web.options().credentialsKey;
  const read = key ? readPreviewLink(key, ctx.params.token ?? '', ctx.now) : 'invalid';
  if (read === 'invalid') throw errors.notFound('Preview link');
  if (read === 'expired') throw new ApiError('not_found', 'This preview link has expired. Ask for a new one.', { status: 410 });
  return read;
}

/**
 * A channel of the stored post, drawn by the composer's renderer too. Its links show as short
 * links while it is still to be published; once sent, its text is shown as it was written.
 */
function previewOf(post: PostView, c: PostView['channels'][number], name: string): SafeHtml {
  const media = new Map(post.media.map((m) => [m.id, m]));
  return channelPreview({
    channelId: c.channelId,
    platform: c.platform,
    name,
    status: c.status,
    content: c.content,
    media: post.media,
    followUps: c.items
      .filter((i) => i.position > 0)
      .map((i) => ({
        kind: i.kind === 'comment' ? 'comment' : 'reply',
        content: i.content,
        media: i.mediaIds.flatMap((id) => media.get(id) ?? []),
      })),
    links: post.status === 'scheduled' ? post.links : undefined,
  });
}

async function previewPage(
  web: Web,
  ctx: RequestContext,
  o: { errors?: string[]; status?: number; notice?: string | null } = {},
): Promise<Response> {
  const grant = grantOf(web, ctx);
  const link = await previewLinkOf(ctx.em, grant);
  const post = await getPostForKey(ctx.em, grant.organizationId, grant.postId, 'all', web.deps.storage);
  const channels = byId(await channelsOf(ctx.em, grant.organizationId));
  const decide = await linkMayDecide(ctx.em, link, post);
  const base = `/preview/${ctx.params.token}`;
  const reviewer = html`<div class="field"><label for="reviewer">Your name</label>
    <input id="reviewer" name="reviewer" required maxlength="${REVIEWER_NAME_CHARS}" autocomplete="name" data-testid="preview-reviewer"></div>
    <div class="field"><label for="comment">Comment (optional)</label>
    <textarea id="comment" name="comment" maxlength="${APPROVAL_COMMENT_CHARS}" data-testid="preview-comment"></textarea></div>`;
  const body = html`<h1>Post preview</h1>
${formErrors(o.errors ?? [])}
<p data-testid="preview-summary">Scheduled for <time datetime="${post.scheduledAt}">${formatDateTime(new Date(post.scheduledAt), ctx.tz)}</time> (${ctx.tz}) · <span class="status status-${post.status}" data-testid="preview-status">${statusLabel(post.status)}</span>.
This link works until ${formatDateTime(grant.expiresAt, ctx.tz)}.</p>
${post.approval ? html`<p>${approvalSummary(post.approval, ctx.tz)}</p>` : ''}
${link?.decidedAt ? html`<p data-testid="preview-link-decided">This link has ${link.decision === 'approve' ? 'approved' : 'rejected'} the post (by ${link.reviewerName}); a link decides once.</p>` : ''}
<div class="preview-channels">${post.channels.map((c) => previewOf(post, c, channels.get(c.channelId)?.name ?? c.channelId))}</div>
${
  decide
    ? html`<form method="post" class="stack" data-testid="preview-decision">
  ${reviewer}
  <div class="actions">
    ${post.approval?.status === 'approved' ? '' : html`<button type="submit" formaction="${base}/approve" class="primary" data-testid="preview-approve">Approve</button>`}
    ${post.approval?.status === 'rejected' ? '' : html`<button type="submit" formaction="${base}/reject" class="danger" data-testid="preview-reject">Reject</button>`}
  </div>
</form>`
    : ''
}`;
  return htmlResponse(layout({ title: 'Post preview', body, signedIn: null, tz: ctx.tz, nav: null, notice: o.notice ?? null }), {
    status: o.status ?? 200,
    // The link is the credential: never sent onwards as a Referer.
    headers: { 'referrer-policy': 'no-referrer' },
  });
}

async function reviewerDecision(web: Web, ctx: RequestContext & { body: unknown }, decision: 'approve' | 'reject'): Promise<Response> {
  // No session: the token is the proof, and the form must come from this site.
  if (!originAllowed(web, ctx.request)) throw csrfError();
  const grant = grantOf(web, ctx);
  const form = formBody(ctx.body);
  const link = await previewLinkOf(ctx.em, grant);
  if (!link) throw errors.notFound('Preview link');
  const name = (form.get('reviewer') ?? '').trim();
  const comment = (form.get('comment') ?? '').trim();
  const fields = [];
  if (!name || name.length > REVIEWER_NAME_CHARS)
    fields.push({ path: 'reviewer', message: `give your name (1 to ${REVIEWER_NAME_CHARS} characters)` });
  if (comment.length > APPROVAL_COMMENT_CHARS)
    fields.push({ path: 'comment', message: `must be at most ${APPROVAL_COMMENT_CHARS} characters` });
  if (fields.length) return previewPage(web, ctx, { errors: fields.map((f) => `${f.path}: ${f.message}`), status: 422 });
  try {
    await decideByLink(ctx.em, web.deps.temporal, grant, { decision, reviewer: name, comment: comment || null, now: ctx.now });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'conflict') return previewPage(web, ctx, { errors: describeError(err), status: 409 });
    throw err;
  }
  // No session: the audit log's actor is the reviewer, by the name they gave (web/audit.ts).
  auditNote(ctx, {
    organizationId: grant.organizationId,
    resourceId: grant.postId,
    actor: { type: 'reviewer', id: link.id, name },
    details: { linkSharedBy: link.createdByUserId },
  });
  return redirect(`/preview/${ctx.params.token}?decided=${decision}`);
}

export function previewRoutes(web: Web) {
  return router()
    .get(
      '/preview/:token',
      publicRoute(web, (ctx) => {
        const decided = ctx.url.searchParams.get('decided');
        return previewPage(web, ctx, {
          notice:
            decided === 'approve' ? 'Thank you: the post is approved.' : decided === 'reject' ? 'Thank you: the post is rejected.' : null,
        });
      }),
    )
    .post(
      '/preview/:token/approve',
      publicRoute(web, (ctx) => reviewerDecision(web, ctx, 'approve')),
      { parse: 'text' },
    )
    .post(
      '/preview/:token/reject',
      publicRoute(web, (ctx) => reviewerDecision(web, ctx, 'reject')),
      { parse: 'text' },
    );
}
