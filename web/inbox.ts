// The Inbox: what people wrote under the organization's posts (domain/inbox/comments.ts states
// the rules), unread first and then newest first, filtered per channel, post, status and
// assignee, with what the team does about each in place: reply (domain/inbox/replies.ts: a
// contributor's reply waits for approval), mark read or unread, give it to a member, hide it or
// show it again where the platform lets the service (domain/inbox/moderation.ts), and the replies
// already sent with their outcome (approve or reject one waiting; delete one after a page that
// asks first). Every route names its action (domain/access.ts); a form a role may not use is not
// drawn, and its route refuses anyway. inbox.js keeps the list live the way calendar.js keeps the
// posts: it fetches the rows again (GET /inbox/live) every 3 s while the tab is visible.
import type { CommentStatus, IChannel } from '../db/entities/index.ts';
import { COMMENT_STATUSES, Post } from '../db/entities/index.ts';
import { can } from '../domain/access.ts';
import { commentedPosts, type CommentView, listInbox, repliesByComment, type SentReply, updateComment } from '../domain/inbox/comments.ts';
import { deleteReply, moderateComment } from '../domain/inbox/moderation.ts';
import { createReply, decideReply, getReply } from '../domain/inbox/replies.ts';
import { listMembers, type MemberView } from '../domain/members.ts';
import { memberRequester, needsApproval } from '../domain/posts/approval.ts';
import { router } from '../http/router.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { COMMENTS } from '../platforms/catalog.ts';
import { memberPrincipal } from '../services/users.ts';
import { auditNote } from './audit.ts';
import { counter, followUpLength } from './char-count.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { htmlResponse, redirect, safeNextPath } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { excerpt, platformBadge, platformLabel } from './ui.ts';

const BASE = '/inbox';
const PAGE_SIZE = 50;
/** Posts offered in the post filter: the most recently commented. */
const FILTER_POSTS = 100;

const STATUS_LABEL: Record<CommentStatus, string> = { unread: 'Unread', read: 'Read', replied: 'Replied', hidden: 'Hidden' };
const REPLY_LABEL: Record<SentReply['status'], string> = {
  pending_approval: 'Waiting for approval',
  publishing: 'Publishing',
  published: 'Published',
  failed: 'Failed',
  rejected: 'Rejected',
  deleting: 'Deleting',
  deleted: 'Deleted',
};

const NOTICES: Record<string, string> = {
  replied: 'Reply sent: it is being published.',
  'reply-waits': 'Reply saved: it waits for approval before it is published.',
  read: 'Marked read.',
  unread: 'Marked unread.',
  assigned: 'Assignee saved.',
  hidden: 'The comment is hidden on its platform.',
  unhidden: 'The comment is shown again on its platform.',
  moderating: 'Asked of the platform; the comment shows the outcome once it answers.',
  'moderation-failed': 'The platform refused: the comment says why.',
  'reply-approved': 'Reply approved: it is being published.',
  'reply-rejected': 'Reply rejected: it will not be published.',
  'reply-deleted': 'Reply deleted.',
  'reply-deleting': 'Deleting the reply on its platform.',
};

/** The list's filters, as the page's query holds them. */
interface Filters {
  channelId?: string;
  postId?: string;
  status?: CommentStatus;
  /** A member's user id, or `none`. */
  assignee?: string;
  cursor?: string;
}

/** An id as typed (a wrong one matches nothing), or none. */
const idParam = (q: URLSearchParams, name: string) => q.get(name)?.trim().slice(0, 100) || undefined;

function filtersOf(q: URLSearchParams): Filters {
  const status = q.get('status');
  return {
    channelId: idParam(q, 'channelId'),
    postId: idParam(q, 'postId'),
    status: (COMMENT_STATUSES as readonly string[]).includes(status ?? '') ? (status as CommentStatus) : undefined,
    assignee: idParam(q, 'assignee'),
    cursor: q.get('cursor') || undefined,
  };
}

function queryOf(f: Filters, withCursor = true): string {
  const q = new URLSearchParams();
  for (const k of ['channelId', 'postId', 'status', 'assignee'] as const) if (f[k]) q.set(k, f[k]!);
  if (withCursor && f.cursor) q.set('cursor', f.cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** What a page of the list shows, read in a fixed number of statements whatever its length. */
interface InboxData {
  comments: CommentView[];
  nextCursor: string | null;
  replies: Map<string, SentReply[]>;
  channels: Map<string, IChannel>;
  members: MemberView[];
  posts: Map<string, string>;
}

async function readInbox(ctx: PageContext, f: Filters): Promise<InboxData> {
  const orgId = ctx.signedIn.organization.id;
  const [page, channels, members] = await Promise.all([
    listInbox(ctx.em, orgId, 'all', { ...f, limit: PAGE_SIZE }, 'unread-first'),
    channelsOf(ctx.em, orgId),
    listMembers(ctx.em, orgId),
  ]);
  const postIds = [...new Set(page.data.map((c) => c.postId))];
  const [replies, posts] = await Promise.all([
    repliesByComment(
      ctx.em,
      orgId,
      page.data.map((c) => c.id),
    ),
    postIds.length ? ctx.em.find(Post, { id: { $in: postIds }, organization: orgId }) : Promise.resolve([]),
  ]);
  return {
    comments: page.data,
    nextCursor: page.nextCursor,
    replies,
    channels: byId(channels),
    members,
    posts: new Map(posts.map((p) => [p.id, p.content])),
  };
}

/** What one row needs besides its comment: who looks, where forms go back to, a reply typed before a refusal. */
interface RowContext {
  ctx: PageContext;
  data: InboxData;
  next: string;
  /** The member's replies wait for approval (said beside the Reply button). */
  replyWaits: boolean;
  draft?: { commentId: string; content: string };
}

/** Whether the member's replies wait for approval, by the rule their posts follow (the organization's setting as the session read it). */
function replyWaits(ctx: PageContext): Promise<boolean> {
  const { user, organization, role } = ctx.signedIn;
  return needsApproval(ctx.em, organization.id, {
    ...memberRequester({ userId: user.id, email: user.email, role }),
    setting: organization.approval,
  });
}

const hidden = (rc: RowContext) =>
  html`<input type="hidden" name="_csrf" value="${rc.ctx.signedIn.session.csrfToken}"><input type="hidden" name="next" value="${rc.next}">`;

const memberName = (rc: RowContext, userId: string) => rc.data.members.find((m) => m.userId === userId)?.email ?? userId;

function author(c: CommentView): SafeHtml {
  const avatar = safeHttpUrl(c.author.avatarUrl);
  const profile = safeHttpUrl(c.author.profileUrl);
  const name = c.author.name || c.author.handle || 'Someone';
  const handle = c.author.handle ? `@${c.author.handle.replace(/^@/, '')}` : '';
  return html`<div class="inbox-author">
    ${
      avatar
        ? html`<img class="avatar" src="${avatar}" alt="" width="36" height="36" loading="lazy" referrerpolicy="no-referrer" data-testid="inbox-avatar">`
        : html`<span class="avatar avatar-none" aria-hidden="true" data-testid="inbox-avatar-none"></span>`
    }
    <span class="inbox-author-name" data-testid="inbox-author-name">${name}</span>
    ${
      handle
        ? profile
          ? html`<a href="${profile}" rel="noopener noreferrer" target="_blank" class="hint" data-testid="inbox-author-handle">${handle}</a>`
          : html`<span class="hint" data-testid="inbox-author-handle">${handle}</span>`
        : ''
    }
  </div>`;
}

/** Status, assignee and the last hide or show-again: what changes while the page is open. */
function statePart(rc: RowContext, c: CommentView): SafeHtml {
  const m = c.moderation;
  const moderation = m
    ? html`<span class="hint" data-testid="inbox-moderation" data-moderation-status="${m.status}">${
        m.status === 'pending'
          ? m.action === 'hide'
            ? 'Hiding on the platform…'
            : 'Showing again on the platform…'
          : m.status === 'failed'
            ? html`<span class="error-text">${m.action === 'hide' ? 'Hide' : 'Show again'} failed: ${m.error ?? 'the platform refused'}</span>`
            : ''
      }</span>`
    : '';
  return html`<div class="inbox-state" data-live-part="state">
    <span class="status status-comment-${c.status}" data-testid="inbox-status" data-status="${c.status}">${STATUS_LABEL[c.status]}</span>
    <span data-testid="inbox-assignee" data-user-id="${c.assigneeUserId ?? ''}">${
      c.assigneeUserId ? html`Assigned to ${memberName(rc, c.assigneeUserId)}` : 'Not assigned'
    }</span>
    ${moderation}
  </div>`;
}

function replyItem(rc: RowContext, c: CommentView, r: SentReply): SafeHtml {
  const { ctx } = rc;
  const link = r.status === 'published' ? safeHttpUrl(r.url) : null;
  const own = r.approval?.requestedBy.type === 'member' && r.approval.requestedBy.id === ctx.signedIn.user.id;
  // Four eyes: whoever wrote a reply does not decide it (the route refuses too).
  const decide = r.status === 'pending_approval' && can(ctx.signedIn.role, 'posts.approve') && !own;
  const fact = COMMENTS[c.platform];
  const deletable =
    can(ctx.signedIn.role, 'comments.manage') &&
    (r.status === 'published' ? fact.read && fact.delete : ['pending_approval', 'failed', 'rejected'].includes(r.status));
  return html`<li class="inbox-reply" data-testid="inbox-reply" data-reply-id="${r.id}" data-status="${r.status}">
    <p class="reply-text" data-testid="inbox-reply-text">${r.content}</p>
    <p class="hint"><span class="status status-${r.status}" data-testid="inbox-reply-status" data-status="${r.status}">${REPLY_LABEL[r.status]}</span>
      by ${r.createdBy.name}, <time datetime="${r.createdAt}">${formatDateTime(new Date(r.createdAt), ctx.tz)}</time>
      ${link ? html`· <a href="${link}" rel="noopener noreferrer" target="_blank" data-testid="inbox-reply-url">View reply<span class="visually-hidden"> (opens in a new tab)</span></a>` : ''}
      ${r.status === 'failed' && r.error ? html`· <span class="error-text" data-testid="inbox-reply-error">${r.error}</span>` : ''}
      ${r.status === 'rejected' && r.approval?.comment ? html`· <q data-testid="inbox-reply-decision">${r.approval.comment}</q>` : ''}
    </p>
    ${
      decide
        ? html`<form method="post" action="${BASE}/replies/${r.id}/approve" class="inline" data-testid="inbox-reply-decision-form">${hidden(rc)}
      <button type="submit" class="primary" data-testid="inbox-reply-approve">Approve</button>
      <button type="submit" formaction="${BASE}/replies/${r.id}/reject" class="danger" data-testid="inbox-reply-reject">Reject</button></form>`
        : ''
    }
    ${deletable ? html`<a href="${BASE}/replies/${r.id}/delete?next=${encodeURIComponent(rc.next)}" class="button danger" data-testid="inbox-reply-delete">Delete…</a>` : ''}
  </li>`;
}

function repliesPart(rc: RowContext, c: CommentView): SafeHtml {
  const replies = rc.data.replies.get(c.id) ?? [];
  return html`<div data-live-part="replies">${
    replies.length
      ? html`<ul class="plain inbox-replies" data-testid="inbox-replies" aria-label="Replies sent">${replies.map((r) => replyItem(rc, c, r))}</ul>`
      : ''
  }</div>`;
}

/** Mark read or unread, give to a member, hide or show again: `comments.manage`. */
function managePart(rc: RowContext, c: CommentView): SafeHtml {
  if (!can(rc.ctx.signedIn.role, 'comments.manage')) return html``;
  const fact = COMMENTS[c.platform];
  // A hidden comment's status says so: it is shown again first.
  const mark =
    c.status === 'hidden'
      ? ''
      : html`<form method="post" action="${BASE}/comments/${c.id}/status" class="inline">${hidden(rc)}
      <input type="hidden" name="status" value="${c.status === 'unread' ? 'read' : 'unread'}">
      <button type="submit" data-testid="${c.status === 'unread' ? 'inbox-mark-read' : 'inbox-mark-unread'}">${c.status === 'unread' ? 'Mark read' : 'Mark unread'}</button></form>`;
  const assign = html`<form method="post" action="${BASE}/comments/${c.id}/assign" class="inline inbox-assign">${hidden(rc)}
      <label for="assign-${c.id}">Assign to</label>
      <select id="assign-${c.id}" name="assigneeUserId" data-testid="inbox-assign-select"><option value="">No one</option>${rc.data.members.map(
        (m) =>
          html`<option value="${m.userId}"${m.userId === c.assigneeUserId ? html` selected` : ''}>${m.email}${m.userId === rc.ctx.signedIn.user.id ? ' (you)' : ''}</option>`,
      )}</select>
      <button type="submit" data-testid="inbox-assign-submit">Assign</button></form>`;
  const pending = c.moderation?.status === 'pending';
  const moderate =
    fact.read && fact.hide && !pending
      ? c.status === 'hidden'
        ? html`<form method="post" action="${BASE}/comments/${c.id}/unhide" class="inline">${hidden(rc)}<button type="submit" data-testid="inbox-unhide">Show again</button></form>`
        : html`<form method="post" action="${BASE}/comments/${c.id}/hide" class="inline">${hidden(rc)}<button type="submit" data-testid="inbox-hide">Hide on ${platformLabel(c.platform)}</button></form>`
      : '';
  return html`<div class="actions inbox-manage" data-live-part="manage">${mark}${assign}${moderate}</div>`;
}

/** The reply form with the channel's live count: `comments.reply`. Not a live part: what is typed stays. */
function replyForm(rc: RowContext, c: CommentView, channel: IChannel | undefined): SafeHtml {
  if (!channel || !can(rc.ctx.signedIn.role, 'comments.reply') || !COMMENTS[c.platform].read || c.ours) return html``;
  const draft = rc.draft?.commentId === c.id ? rc.draft.content : '';
  const id = `reply-${c.id}`;
  return html`<form method="post" action="${BASE}/comments/${c.id}/reply" class="inbox-reply-form" data-testid="inbox-reply-form">${hidden(rc)}
    <div class="field"><label for="${id}">Reply as ${channel.name} <span class="hint">(${platformLabel(c.platform)})</span></label>
    <textarea id="${id}" name="content" rows="2" data-testid="inbox-reply-input" aria-describedby="${id}-count">${draft}</textarea></div>
    <ul class="counts" id="${id}-count" aria-live="polite">${counter(channel, followUpLength(channel, draft), { testId: 'inbox-reply-count', selected: true, source: id })}</ul>
    <div class="actions"><button type="submit" class="primary" data-testid="inbox-reply-submit">Reply</button>${
      rc.replyWaits
        ? html`<span class="hint" data-testid="inbox-reply-waits">Your reply waits for approval before it is published.</span>`
        : ''
    }</div>
  </form>`;
}

function commentRow(rc: RowContext, c: CommentView): SafeHtml {
  const channel = rc.data.channels.get(c.channelId);
  const link = safeHttpUrl(c.url);
  const post = rc.data.posts.get(c.postId);
  return html`<li class="inbox-item comment-${c.status}" id="comment-${c.id}" data-testid="inbox-item" data-comment-id="${c.id}" data-status="${c.status}" data-platform="${c.platform}" data-channel-id="${c.channelId}" data-post-id="${c.postId}" data-assignee="${c.assigneeUserId ?? ''}">
  <div class="inbox-head">${author(c)}${statePart(rc, c)}</div>
  <p class="comment-text" data-testid="inbox-text">${c.text}</p>
  <p class="hint inbox-meta">
    <time datetime="${c.createdAt}" data-testid="inbox-time">${formatDateTime(new Date(c.createdAt), rc.ctx.tz)}</time>
    · ${platformBadge(c.platform, channel?.name ?? c.channelId, c.channelId)} ${channel?.name ?? c.channelId}
    · on <a href="/posts/${c.postId}" data-testid="inbox-post-link">${post === undefined ? 'the post' : excerpt(post, 60) || '(media only)'}</a>
    ${link ? html`· <a href="${link}" rel="noopener noreferrer" target="_blank" data-testid="inbox-comment-url">View on ${platformLabel(c.platform)}<span class="visually-hidden"> (opens in a new tab)</span></a>` : ''}
  </p>
  ${repliesPart(rc, c)}
  ${managePart(rc, c)}
  ${replyForm(rc, c, channel)}
</li>`;
}

/** The rows, in a list the live update finds by its test id (`data-inbox-fragment`: the live answer). */
function rowList(rc: RowContext, fragment: boolean): SafeHtml {
  return html`<ul class="plain inbox" data-testid="inbox-list"${fragment ? html` data-inbox-fragment` : ''}>${rc.data.comments.map((c) => commentRow(rc, c))}</ul>`;
}

async function filterForm(ctx: PageContext, f: Filters, data: InboxData): Promise<SafeHtml> {
  const posts = await commentedPosts(ctx.em, ctx.signedIn.organization.id, FILTER_POSTS);
  const channels = [...data.channels.values()].filter((c) => COMMENTS[c.platform].read);
  const option = (value: string, label: string | SafeHtml, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  const postOptions = posts.map((p) =>
    option(p.postId, `${excerpt(p.content, 50) || '(media only)'}${p.unread ? ` (${p.unread} unread)` : ''}`, p.postId === f.postId),
  );
  // A post asked for (the post page's link) that the list does not offer stays chosen.
  if (f.postId && !posts.some((p) => p.postId === f.postId)) postOptions.unshift(option(f.postId, f.postId, true));
  return html`<form method="get" action="${BASE}" class="filters" data-testid="inbox-filters">
  <div class="field"><label for="filter-channel">Channel</label>
    <select id="filter-channel" name="channelId" data-testid="inbox-filter-channel">${option('', 'All channels', !f.channelId)}${channels.map(
      (c) => option(c.id, `${platformLabel(c.platform)}: ${c.name}`, c.id === f.channelId),
    )}</select></div>
  <div class="field"><label for="filter-post">Post</label>
    <select id="filter-post" name="postId" data-testid="inbox-filter-post">${option('', 'All posts', !f.postId)}${postOptions}</select></div>
  <div class="field"><label for="filter-status">Status</label>
    <select id="filter-status" name="status" data-testid="inbox-filter-status">${option('', 'Any', !f.status)}${COMMENT_STATUSES.map((s) =>
      option(s, STATUS_LABEL[s], s === f.status),
    )}</select></div>
  <div class="field"><label for="filter-assignee">Assigned to</label>
    <select id="filter-assignee" name="assignee" data-testid="inbox-filter-assignee">${option('', 'Anyone or no one', !f.assignee)}${option(
      'none',
      'No one',
      f.assignee === 'none',
    )}${data.members.map((m) => option(m.userId, `${m.email}${m.userId === ctx.signedIn.user.id ? ' (you)' : ''}`, m.userId === f.assignee))}</select></div>
  <div class="actions"><button type="submit" data-testid="inbox-filter-apply">Show</button>
    <a href="${BASE}" data-testid="inbox-filter-clear">Clear</a></div>
</form>`;
}

interface Refusal {
  problems: string[];
  status: number;
  draft?: { commentId: string; content: string };
}

async function inboxPage(ctx: PageContext, f: Filters, refusal?: Refusal): Promise<Response> {
  const data = await readInbox(ctx, f);
  const next = `${BASE}${queryOf(f)}`;
  const rc: RowContext = { ctx, data, next, replyWaits: await replyWaits(ctx), draft: refusal?.draft };
  const filtered = Boolean(f.channelId || f.postId || f.status || f.assignee);
  const body = html`<h1>Inbox</h1>
<p class="hint">What people wrote under the organization’s posts, as collected from each platform: unread first, then newest first.</p>
${await filterForm(ctx, f, data)}
${formErrors(refusal?.problems ?? [])}
<section class="inbox-list" data-inbox data-feed="${BASE}/live${queryOf(f)}" aria-label="Comments">
  <p class="visually-hidden" role="status" aria-live="polite" data-testid="inbox-message" id="inbox-message"></p>
  <p data-testid="inbox-empty"${data.comments.length ? html` hidden` : ''}>${filtered ? 'No comments match these filters.' : 'No comments yet.'}</p>
  ${rowList(rc, false)}
  ${
    data.nextCursor
      ? html`<p><a href="${BASE}${queryOf({ ...f, cursor: data.nextCursor })}" data-testid="inbox-next">Older comments</a></p>`
      : ''
  }
</section>`;
  const notice = refusal ? null : (NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null);
  return htmlResponse(layout({ title: 'Inbox', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'inbox', scripts: ['inbox.js'], notice }), {
    status: refusal?.status ?? 200,
  });
}

/** The rows alone, for inbox.js. */
async function liveRows(ctx: PageContext): Promise<Response> {
  const f = filtersOf(ctx.url.searchParams);
  const data = await readInbox(ctx, f);
  return htmlResponse(rowList({ ctx, data, next: `${BASE}${queryOf(f)}`, replyWaits: await replyWaits(ctx) }, true));
}

/**
 * A post page's comments: how many are unread, with a link to them in the Inbox (the counts:
 * commentCountsByPost). Nothing for a post that has none and has not gone out.
 */
export function postComments(postId: string, counts: { unread: number; total: number } | undefined, wentOut: boolean): SafeHtml {
  const { unread, total } = counts ?? { unread: 0, total: 0 };
  if (!total && !wentOut) return html``;
  return html`<section class="post-comments" data-testid="post-comments" aria-labelledby="post-comments-title">
  <h2 id="post-comments-title">Comments</h2>
  <p>${
    total
      ? html`<strong data-testid="post-unread-count" data-count="${unread}">${unread} unread</strong> of ${total} comment${total === 1 ? '' : 's'}.`
      : html`<span data-testid="post-unread-count" data-count="0">No comments collected yet.</span>`
  } <a href="${BASE}?postId=${encodeURIComponent(postId)}" data-testid="post-inbox-link">Open in the Inbox</a></p>
</section>`;
}

/** Where a form goes back to: the list as it was filtered (a same-site path), with a notice, at the comment. */
function back(ctx: PageContext, notice: string, commentId?: string): Response {
  const next = safeNextPath(ctx.form.get('next'), BASE).replace(/#.*$/, '');
  return redirect(`${next}${next.includes('?') ? '&' : '?'}notice=${notice}${commentId ? `#comment-${commentId}` : ''}`);
}

/** The list the form came from, with the refusal's reasons (a 422 or 409 answers there); anything else is the app's error page. */
function refused(ctx: PageContext, err: unknown, draft?: Refusal['draft']): Promise<Response> {
  if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 409)) throw err;
  const next = safeNextPath(ctx.form.get('next'), BASE);
  const f = filtersOf(new URL(next, 'http://inbox.invalid').searchParams);
  return inboxPage({ ...ctx, em: ctx.em.fork() }, f, { problems: describeError(err), status: err.status, draft });
}

async function reply(web: Web, ctx: PageContext): Promise<Response> {
  const { user, organization, role } = ctx.signedIn;
  const commentId = ctx.params.id ?? '';
  const content = ctx.form.get('content') ?? '';
  try {
    const id = await createReply(
      ctx.em,
      web.deps.temporal,
      {
        organizationId: organization.id,
        keyChannels: 'all',
        requester: memberRequester({ userId: user.id, email: user.email, role }),
        now: ctx.now,
      },
      commentId,
      content,
      undefined,
    );
    auditNote(ctx, { resourceId: id, details: { commentId } });
    const sent = await getReply(ctx.em.fork(), organization.id, id, 'all');
    return back(ctx, sent.status === 'pending_approval' ? 'reply-waits' : 'replied', commentId);
  } catch (err) {
    return refused(ctx, err, { commentId, content });
  }
}

async function setStatus(ctx: PageContext): Promise<Response> {
  const status = ctx.form.get('status');
  if (status !== 'read' && status !== 'unread') throw errors.validation([{ path: 'status', message: 'must be read or unread' }]);
  try {
    await updateComment(ctx.em, ctx.signedIn.organization.id, ctx.params.id ?? '', 'all', { status }, ctx.now);
  } catch (err) {
    return refused(ctx, err);
  }
  auditNote(ctx, { details: { status } });
  return back(ctx, status, ctx.params.id);
}

async function assign(ctx: PageContext): Promise<Response> {
  const assigneeUserId = ctx.form.get('assigneeUserId') || null;
  try {
    await updateComment(ctx.em, ctx.signedIn.organization.id, ctx.params.id ?? '', 'all', { assigneeUserId }, ctx.now);
  } catch (err) {
    return refused(ctx, err);
  }
  auditNote(ctx, { details: { assigneeUserId } });
  return back(ctx, 'assigned', ctx.params.id);
}

async function moderate(web: Web, ctx: PageContext, action: 'hide' | 'unhide'): Promise<Response> {
  try {
    const { comment, done } = await moderateComment(
      ctx.em,
      web.deps.temporal,
      ctx.signedIn.organization.id,
      ctx.params.id ?? '',
      'all',
      action,
      ctx.now,
    );
    const failed = comment.moderation?.status === 'failed';
    return back(ctx, !done ? 'moderating' : failed ? 'moderation-failed' : action === 'hide' ? 'hidden' : 'unhidden', comment.id);
  } catch (err) {
    return refused(ctx, err);
  }
}

async function decide(web: Web, ctx: PageContext, decision: 'approve' | 'reject'): Promise<Response> {
  try {
    const r = await decideReply(ctx.em, web.deps.temporal, ctx.signedIn.organization.id, ctx.params.id ?? '', 'all', {
      decision,
      by: memberPrincipal(ctx.signedIn),
      comment: null,
      now: ctx.now,
    });
    return back(ctx, decision === 'approve' ? 'reply-approved' : 'reply-rejected', r.commentId);
  } catch (err) {
    return refused(ctx, err);
  }
}

async function confirmDelete(ctx: PageContext, problems: string[] = [], status = 200): Promise<Response> {
  const r = await getReply(ctx.em, ctx.signedIn.organization.id, ctx.params.id ?? '', 'all');
  const next = safeNextPath(ctx.form.get('next') ?? ctx.url.searchParams.get('next'), BASE);
  const published = r.status === 'published';
  const body = html`<section class="confirm" data-testid="inbox-reply-delete-confirm" data-reply-id="${r.id}" data-status="${r.status}">
  <h1>Delete this reply?</h1>
  ${formErrors(problems)}
  <blockquote data-testid="inbox-reply-delete-text">${r.content}</blockquote>
  <p>${
    published
      ? `It is deleted on ${platformLabel(r.platform)} too, and leaves the conversation.`
      : 'It was never published: it is deleted here only.'
  }</p>
  <form method="post" action="${BASE}/replies/${r.id}/delete" class="actions">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}"><input type="hidden" name="next" value="${next}">
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="inbox-reply-delete-submit">Delete reply</button>
    <a href="${next}" data-testid="inbox-reply-delete-keep">Keep it</a>
  </form>
</section>`;
  return htmlResponse(layout({ title: 'Delete reply?', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'inbox' }), { status });
}

async function removeReply(web: Web, ctx: PageContext): Promise<Response> {
  // Only the confirmation page's button sends confirm=yes.
  if (ctx.form.get('confirm') !== 'yes') return confirmDelete(ctx, ['Confirm with the button below.'], 422);
  try {
    const { reply: r, done } = await deleteReply(
      ctx.em,
      web.deps.temporal,
      ctx.signedIn.organization.id,
      ctx.params.id ?? '',
      'all',
      ctx.now,
    );
    return back(ctx, done ? 'reply-deleted' : 'reply-deleting', r.commentId);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'conflict') throw err;
    return confirmDelete({ ...ctx, em: ctx.em.fork() }, [err.message], 409);
  }
}

export function inboxRoutes(web: Web) {
  const form = { parse: 'text' } as const;
  return router()
    .get(
      BASE,
      pageRoute(web, 'read', (ctx) => inboxPage(ctx, filtersOf(ctx.url.searchParams))),
    )
    .get(
      `${BASE}/live`,
      pageRoute(web, 'read', (ctx) => liveRows(ctx)),
    )
    .post(
      `${BASE}/comments/:id/reply`,
      pageRoute(web, 'comments.reply', (ctx) => reply(web, ctx)),
      form,
    )
    .post(
      `${BASE}/comments/:id/status`,
      pageRoute(web, 'comments.manage', (ctx) => setStatus(ctx)),
      form,
    )
    .post(
      `${BASE}/comments/:id/assign`,
      pageRoute(web, 'comments.manage', (ctx) => assign(ctx)),
      form,
    )
    .post(
      `${BASE}/comments/:id/hide`,
      pageRoute(web, 'comments.manage', (ctx) => moderate(web, ctx, 'hide')),
      form,
    )
    .post(
      `${BASE}/comments/:id/unhide`,
      pageRoute(web, 'comments.manage', (ctx) => moderate(web, ctx, 'unhide')),
      form,
    )
    .post(
      `${BASE}/replies/:id/approve`,
      pageRoute(web, 'posts.approve', (ctx) => decide(web, ctx, 'approve')),
      form,
    )
    .post(
      `${BASE}/replies/:id/reject`,
      pageRoute(web, 'posts.approve', (ctx) => decide(web, ctx, 'reject')),
      form,
    )
    .get(
      `${BASE}/replies/:id/delete`,
      pageRoute(web, 'comments.manage', (ctx) => confirmDelete(ctx)),
    )
    .post(
      `${BASE}/replies/:id/delete`,
      pageRoute(web, 'comments.manage', (ctx) => removeReply(web, ctx)),
      form,
    );
}
