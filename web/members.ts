// Settings → Members: who belongs to the organization and with which role (domain/members.ts
// states who may change what). Every member sees the list; owners and admins change roles and
// remove members, and only an owner touches an owner.
import { memberPrincipal } from '../services/users.ts';
import { router } from '../http/router.ts';
import { isRole, ROLES } from '../domain/access.ts';
import { can } from '../domain/access.ts';
import { listMembers, removeMember, setMemberRole, type MemberView } from '../domain/members.ts';
import { invite, pendingInvitations, revokeInvitation, type PendingInvitation } from '../domain/invitations.ts';
import { sendMail } from '../services/mail.ts';
import type { Role } from '../db/entities/index.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { auditNote } from './audit.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime } from './time.ts';

const NOTICES: Record<string, string> = { role: 'Role changed.', removed: 'Member removed.', withdrawn: 'Invitation withdrawn.' };

function memberRow(ctx: PageContext, m: MemberView, manage: boolean) {
  const self = m.userId === ctx.signedIn.user.id;
  const csrf = ctx.signedIn.session.csrfToken;
  const touchable = manage && (m.role !== 'owner' || can(ctx.signedIn.role, 'owners.manage'));
  const roles = ROLES.filter((r) => r !== 'owner' || can(ctx.signedIn.role, 'owners.manage'));
  return html`<tr data-testid="member-row" data-user-id="${m.userId}" data-role="${m.role}">
    <td>${m.email}${self ? html` <span class="hint">(you)</span>` : ''}</td>
    <td data-testid="member-role">${m.role}</td>
    <td>${formatDateTime(new Date(m.since), ctx.tz)}</td>
    <td>${
      touchable
        ? html`<form method="post" action="/settings/members/${m.userId}/role" class="inline">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label class="visually-hidden" for="role-${m.userId}">Role of ${m.email}</label>
        <select id="role-${m.userId}" name="role" data-testid="member-role-select">${roles.map(
          (r) => html`<option value="${r}"${r === m.role ? html` selected` : ''}>${r}</option>`,
        )}</select>
        <button type="submit" data-testid="member-role-save">Change</button>
      </form>
      <form method="post" action="/settings/members/${m.userId}/remove" class="inline">
        <input type="hidden" name="_csrf" value="${csrf}">
        <button type="submit" class="danger" data-testid="member-remove">Remove</button>
      </form>`
        : ''
    }</td>
  </tr>`;
}

/** Just invited: the link to share (shown once), and whether it went by mail. */
interface Invited {
  email: string;
  link: string;
  mailed: boolean;
}

function inviteSection(ctx: PageContext, pending: PendingInvitation[], invited?: Invited) {
  const csrf = ctx.signedIn.session.csrfToken;
  const roles = ROLES.filter((r) => r !== 'owner' || can(ctx.signedIn.role, 'owners.manage'));
  return html`<h2>Invite</h2>
${
  invited
    ? html`<div class="notice" role="status" data-testid="invited">
  <p>${invited.mailed ? html`An invitation went to ${invited.email}.` : html`No mail is sent from this service: send ${invited.email} this link.`}
  The link is shown only now and works for 7 days.</p>
  <p><input readonly value="${invited.link}" id="invitation-link" data-testid="invitation-link" aria-label="Invitation link"></p>
</div>`
    : ''
}
<form method="post" action="/settings/members/invitations" class="stack" data-testid="invite-form">
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="field"><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required data-testid="invite-email"></div>
  <div class="field"><label for="invite-role">Role</label><select id="invite-role" name="role" data-testid="invite-role">${roles.map(
    (r) => html`<option value="${r}"${r === 'editor' ? html` selected` : ''}>${r}</option>`,
  )}</select></div>
  <div class="actions"><button type="submit" class="primary" data-testid="invite-send">Invite</button></div>
</form>
${
  pending.length
    ? html`<h2>Invited, not yet answered</h2><ul data-testid="pending-invitations">${pending.map(
        (
          i,
        ) => html`<li data-testid="pending-invitation" data-email="${i.email}">${i.email} as ${i.role}, until ${formatDateTime(new Date(i.expiresAt), ctx.tz)}
      <form method="post" action="/settings/members/invitations/${i.id}/revoke" class="inline"><input type="hidden" name="_csrf" value="${csrf}">
      <button type="submit" class="link-button" data-testid="invitation-revoke">Withdraw</button></form></li>`,
      )}</ul>`
    : ''
}`;
}

async function membersPage(ctx: PageContext, o: { errors?: string[]; status?: number; invited?: Invited } = {}): Promise<Response> {
  const members = await listMembers(ctx.em, ctx.signedIn.organization.id);
  const manage = can(ctx.signedIn.role, 'members.manage');
  const pending = manage ? await pendingInvitations(ctx.em, ctx.signedIn.organization.id, ctx.now) : [];
  const body = html`<h1>Members</h1>
${formErrors(o.errors ?? [])}
<p>Your role here: <strong data-testid="my-role">${ctx.signedIn.role}</strong>.</p>
<table data-testid="members">
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Member since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${members.map((m) => memberRow(ctx, m, manage))}</tbody>
</table>
${manage ? inviteSection(ctx, pending, o.invited) : ''}`;
  const notice = NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null;
  return htmlResponse(layout({ title: 'Members', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'members', notice }), {
    status: o.status ?? 200,
  });
}

/** A refusal the page can explain (the last owner, a role not allowed) is shown on the page. */
async function orPage(ctx: PageContext, act: () => Promise<void>, notice: string): Promise<Response> {
  try {
    await act();
    return redirect(`/settings/members?notice=${notice}`);
  } catch (err) {
    if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'validation_failed'))
      return membersPage(ctx, { errors: describeError(err), status: err.status });
    throw err;
  }
}

/**
 * The invitation by mail when SMTP is configured (services/mail.ts). A refused mail is logged and
 * the page shows the link instead: the invitation itself stands.
 */
async function mailInvitation(web: Web, ctx: PageContext, to: string, role: Role, link: string): Promise<boolean> {
  const mail = web.options().mail;
  if (!mail) return false;
  try {
    await sendMail(mail, {
      to,
      subject: `${ctx.signedIn.user.email} invites you to ${ctx.signedIn.organization.name} on Postpilot`,
      text: `${ctx.signedIn.user.email} invites you to join ${ctx.signedIn.organization.name} as ${role}.\n\nAccept or decline: ${link}\n\nThe link works for 7 days.\n`,
    });
    return true;
  } catch (err) {
    web.log({ level: 'warn', msg: 'invitation mail not sent', error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}

export function memberRoutes(web: Web) {
  const actor = (ctx: PageContext) => memberPrincipal(ctx.signedIn);
  return router()
    .get(
      '/settings/members',
      pageRoute(web, 'read', (ctx) => membersPage(ctx)),
    )
    .post(
      '/settings/members/:userId/role',
      pageRoute(web, 'members.manage', (ctx) =>
        orPage(
          ctx,
          async () => {
            const role = ctx.form.get('role');
            if (!isRole(role)) throw errors.validation([{ path: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
            await setMemberRole(ctx.em, ctx.signedIn.organization.id, actor(ctx), ctx.params.userId ?? '', role);
            auditNote(ctx, { details: { newRole: role } });
          },
          'role',
        ),
      ),
      { parse: 'text' },
    )
    .post(
      '/settings/members/invitations',
      pageRoute(web, 'members.manage', async (ctx) => {
        const role = ctx.form.get('role');
        try {
          if (!isRole(role)) throw errors.validation([{ path: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
          const { invitation, token } = await invite(
            ctx.em,
            ctx.signedIn.organization.id,
            actor(ctx),
            { email: ctx.form.get('email') ?? '', role },
            ctx.now,
          );
          auditNote(ctx, { resourceId: invitation.id, details: { email: invitation.email, invitedRole: role } });
          const link = `${web.options().publicBaseUrl}/invitations/${token}`;
          const mailed = await mailInvitation(web, ctx, invitation.email, role, link);
          return membersPage(ctx, { invited: { email: invitation.email, link, mailed }, status: 201 });
        } catch (err) {
          if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'validation_failed'))
            return membersPage(ctx, { errors: describeError(err), status: err.status });
          throw err;
        }
      }),
      { parse: 'text' },
    )
    .post(
      '/settings/members/invitations/:id/revoke',
      pageRoute(web, 'members.manage', async (ctx) => {
        await revokeInvitation(ctx.em, ctx.signedIn.organization.id, actor(ctx), ctx.params.id ?? '', ctx.now);
        return redirect('/settings/members?notice=withdrawn');
      }),
      { parse: 'text' },
    )
    .post(
      '/settings/members/:userId/remove',
      pageRoute(web, 'members.manage', (ctx) =>
        orPage(ctx, () => removeMember(ctx.em, ctx.signedIn.organization.id, actor(ctx), ctx.params.userId ?? ''), 'removed'),
      ),
      { parse: 'text' },
    );
}
