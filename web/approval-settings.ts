// Settings → Approval: whose posts wait for approval, and whether a preview link may carry
// approve/reject buttons for a reviewer without an account (domain/posts/approval.ts).
import { APPROVAL_SETTINGS, type ApprovalSetting } from '../db/entities/index.ts';
import { approvalWarning, setApprovalSettings } from '../domain/organizations.ts';
import { router } from '../http/router.ts';
import { pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { layout } from './layout.ts';

const SETTING_HELP: Record<ApprovalSetting, string> = {
  none: 'Only contributors’ posts wait (the contributor role never publishes directly).',
  contributors: 'Contributors’ posts wait for an owner, admin or editor to approve them.',
  everyone: 'Every post waits for approval, whoever makes it, in the app or through the API.',
};

async function settingsPage(ctx: PageContext): Promise<Response> {
  const org = ctx.signedIn.organization;
  const warning = await approvalWarning(ctx.em, org.id);
  const body = html`<h1>Approval</h1>
${warning ? html`<p class="notice warning" role="alert" data-testid="approval-warning">${warning}</p>` : ''}
<form method="post" action="/settings/approval" class="stack" data-testid="approval-settings-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <fieldset><legend>Whose posts wait for approval</legend>
  ${APPROVAL_SETTINGS.map(
    (s) =>
      html`<div class="radio"><input type="radio" id="approval-${s}" name="approval" value="${s}" data-testid="approval-setting-${s}"${org.approval === s ? html` checked` : ''}><label for="approval-${s}"><strong>${s}</strong> <span class="hint">${SETTING_HELP[s]}</span></label></div>`,
  )}
  </fieldset>
  <p class="hint">An API key can also be made with “Posts need approval” (Settings → API keys). A post not approved within 24 hours of its time fails with “not approved”.</p>
  <div class="check"><input type="checkbox" id="preview-decisions" name="previewDecisions" value="yes" data-testid="approval-preview-decisions"${org.previewDecisions ? html` checked` : ''}><label for="preview-decisions">A preview link may let its reviewer approve or reject (without an account)</label></div>
  <div class="actions"><button type="submit" class="primary" data-testid="approval-settings-save">Save</button></div>
</form>`;
  const notice = ctx.url.searchParams.get('notice') === 'saved' ? 'Approval settings saved.' : null;
  return htmlResponse(layout({ title: 'Approval settings', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: null, notice }));
}

export function approvalSettingsRoutes(web: Web) {
  return router()
    .get(
      '/settings/approval',
      pageRoute(web, 'settings.manage', (ctx) => settingsPage(ctx)),
    )
    .post(
      '/settings/approval',
      pageRoute(web, 'settings.manage', async (ctx) => {
        await setApprovalSettings(ctx.em, ctx.signedIn.organization.id, {
          approval: ctx.form.get('approval') ?? undefined,
          previewDecisions: ctx.form.get('previewDecisions') === 'yes',
        });
        return redirect('/settings/approval?notice=saved');
      }),
      { parse: 'text' },
    );
}
