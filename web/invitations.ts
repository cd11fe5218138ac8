// The invitation's page (/invitations/{token}): the organization, the role and who invites; the
// person invited accepts or declines there (domain/invitations.ts states who may). Signed in with
// the invited address they accept at once; with no account for it they create one here; with
// an account they sign in first (the sign-in page brings them back).
import { router } from '../http/router.ts';
import { acceptInvitation, declineInvitation, openInvitation, type OpenInvitation } from '../domain/invitations.ts';
import { ApiError } from '../lib/errors.ts';
import { createSession, createUserFromInvitation, switchOrganization, type SignedIn } from '../services/users.ts';
import { csrfError, formBody, originAllowed, pageRoute, publicRoute, sessionCookie, type RequestContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime } from './time.ts';
import { auditNote, memberActor } from './audit.ts';

const GONE = 'This invitation is no longer valid: it was used, declined or withdrawn, or it expired. Ask for a new one.';

function invitationPage(
  ctx: RequestContext & { signedIn: SignedIn | null },
  token: string,
  open: OpenInvitation | null,
  o: { errors?: string[]; status?: number } = {},
): Response {
  const s = ctx.signedIn;
  const base = `/invitations/${token}`;
  let body: SafeHtml;
  if (!open) {
    body = html`<h1>Invitation</h1><p data-testid="invitation-gone">${GONE}</p>`;
  } else {
    const { invitation, organizationName, invitedBy, accountExists } = open;
    const csrf = s ? html`<input type="hidden" name="_csrf" value="${s.session.csrfToken}">` : '';
    const decline = html`<form method="post" action="${base}/decline" class="inline">
      <button type="submit" data-testid="invitation-decline">Decline</button>
    </form>`;
    const action =
      s && s.user.email === invitation.email
        ? html`<form method="post" action="${base}/accept" class="inline">${csrf}
      <button type="submit" class="primary" data-testid="invitation-accept">Accept</button>
    </form> ${decline}`
        : s
          ? html`<p data-testid="invitation-other-account">You are signed in as ${s.user.email}. This invitation is for
      ${invitation.email}: sign out, then open this link again.</p>`
          : accountExists
            ? html`<p><a class="button primary" href="/sign-in?next=${encodeURIComponent(base)}" data-testid="invitation-sign-in">Sign in as ${invitation.email} to accept</a></p> ${decline}`
            : html`<form method="post" action="${base}/register" class="stack" data-testid="invitation-register">
      <p>Create your account to join.</p>
      <div class="field"><label for="password">Choose a password (at least 8 characters)</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" data-testid="invitation-password"></div>
      <div class="actions"><button type="submit" class="primary" data-testid="invitation-create">Create account and join</button></div>
    </form> ${decline}`;
    body = html`<h1>Join ${organizationName}</h1>
${formErrors(o.errors ?? [])}
<p data-testid="invitation-summary">${invitedBy} invites <strong>${invitation.email}</strong> to ${organizationName} as
<strong data-testid="invitation-role">${invitation.role}</strong>. The link works until ${formatDateTime(invitation.expiresAt, ctx.tz)}.</p>
${action}`;
  }
  return htmlResponse(layout({ title: 'Invitation', body, signedIn: s, tz: ctx.tz, nav: null }), {
    status: o.status ?? (open ? 200 : 404),
  });
}

const tokenOf = (ctx: RequestContext) => ctx.params.token ?? '';

/** A POST without a session carries the token as its proof; it must still come from this site. */
function assertSameOrigin(web: Web, ctx: RequestContext): void {
  if (!originAllowed(web, ctx.request)) throw csrfError();
}

export function invitationRoutes(web: Web) {
  return router()
    .get(
      '/invitations/:token',
      publicRoute(web, async (ctx) => invitationPage(ctx, tokenOf(ctx), await openInvitation(ctx.em, tokenOf(ctx), ctx.now))),
    )
    .post(
      '/invitations/:token/accept',
      pageRoute(web, 'read', async (ctx) => {
        try {
          const accepted = await acceptInvitation(ctx.em, tokenOf(ctx), ctx.signedIn.user, ctx.now);
          // The event belongs to the organization joined, not to the one the session had open.
          auditNote(ctx, { organizationId: accepted.organizationId, resourceId: accepted.id, details: { role: accepted.role } });
          await switchOrganization(ctx.em, ctx.signedIn.session, accepted.organizationId);
          return redirect('/calendar');
        } catch (err) {
          if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'not_found'))
            return invitationPage(ctx, tokenOf(ctx), await openInvitation(ctx.em, tokenOf(ctx), ctx.now), {
              errors: [err.message],
              status: err.status,
            });
          throw err;
        }
      }),
      { parse: 'text' },
    )
    .post(
      '/invitations/:token/decline',
      publicRoute(web, async (ctx) => {
        assertSameOrigin(web, ctx);
        const declined = await declineInvitation(ctx.em, tokenOf(ctx), ctx.now);
        // Without a session the person is known by the invited address only.
        auditNote(ctx, {
          organizationId: declined.organizationId,
          resourceId: declined.id,
          actor: ctx.signedIn ? memberActor(ctx.signedIn.user) : { type: 'invitee', id: null, name: declined.email },
          details: { invitedRole: declined.role },
        });
        return htmlResponse(
          layout({
            title: 'Invitation declined',
            body: html`<h1>Invitation declined</h1><p data-testid="invitation-declined">You declined the invitation. Nothing else changes.</p>`,
            signedIn: ctx.signedIn,
            tz: ctx.tz,
            nav: null,
          }),
        );
      }),
      { parse: 'text' },
    )
    .post(
      '/invitations/:token/register',
      publicRoute(web, async (ctx) => {
        assertSameOrigin(web, ctx);
        const token = tokenOf(ctx);
        // A first look, so a dead link costs no password hash; the transaction checks again.
        const open = await openInvitation(ctx.em, token, ctx.now);
        if (!open) return invitationPage(ctx, token, null);
        const password = formBody(ctx.body).get('password') ?? '';
        let joined: Awaited<ReturnType<typeof createUserFromInvitation>>;
        try {
          joined = await createUserFromInvitation(ctx.em, token, password, ctx.now);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'validation_failed')
            return invitationPage(ctx, token, open, {
              errors: [err.message, ...((err.details?.fields as { message: string }[]) ?? []).map((f) => `Password ${f.message}.`)],
              status: 422,
            });
          if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'not_found'))
            return invitationPage(ctx, token, await openInvitation(ctx.em, token, ctx.now), { errors: [err.message], status: err.status });
          throw err;
        }
        const { user, invitation: accepted } = joined;
        auditNote(ctx, {
          organizationId: accepted.organizationId,
          resourceId: accepted.id,
          actor: memberActor(user),
          details: { role: accepted.role, accountCreated: true },
        });
        const session = await createSession(ctx.em, user, ctx.now);
        return redirect('/calendar', { cookies: [sessionCookie(web, session.token, session.expiresAt, ctx.now)] });
      }),
      { parse: 'text' },
    );
}
