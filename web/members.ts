// Settings → Members: who belongs to the organization and with which role (domain/members.ts
// states who may change what). Every member sees the list; owners and admins change roles and
// remove members, and only an owner touches an owner.
import { router } from '../http/router.ts';
import { isRole, ROLES } from '../domain/roles.ts';
import { can } from '../domain/roles.ts';
import { listMembers, removeMember, setMemberRole, type MemberView } from '../domain/members.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime } from './time.ts';

const NOTICES: Record<string, string> = { role: 'Role changed.', removed: 'Member removed.' };

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

async function membersPage(ctx: PageContext, o: { errors?: string[]; status?: number } = {}): Promise<Response> {
  const members = await listMembers(ctx.em, ctx.signedIn.organization.id);
  const manage = can(ctx.signedIn.role, 'members.manage');
  const body = html`<h1>Members</h1>
${formErrors(o.errors ?? [])}
<p>Your role here: <strong data-testid="my-role">${ctx.signedIn.role}</strong>.</p>
<table data-testid="members">
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Member since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${members.map((m) => memberRow(ctx, m, manage))}</tbody>
</table>`;
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

export function memberRoutes(web: Web) {
  const actor = (ctx: PageContext) => ({ userId: ctx.signedIn.user.id, role: ctx.signedIn.role });
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
          },
          'role',
        ),
      ),
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
