// Settings → Tracked links: the organization's default links choice for posts that give none
// (domain/links/choice.ts states the rules), set here as the CLI's `org set-links` sets it:
// shorten each link into a short link of the service that counts its clicks, with UTM parameters
// and a campaign name or not. Owners and admins (`settings.manage`). Each post stores its choice
// when it is made, so a change applies to the posts made from then on.
import { setLinkDefaults, type LinkChoice } from '../domain/links/choice.ts';
import { router } from '../http/router.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { CAMPAIGN_BOUNDS, linkChoiceOf, linkFieldsFromForm, linkFieldsOf, type LinkFields } from './link-input.ts';

/** The choice in words. */
function describe(choice: LinkChoice): string {
  if (!choice.shorten) return 'Links are sent as they are written: no short links, no clicks counted.';
  if (!choice.utm) return 'Each link becomes a short link of the service that counts its clicks.';
  const campaign = choice.utm.campaign ? `the campaign “${choice.utm.campaign}”` : 'the name of the post’s first tag as the campaign';
  return `Each link becomes a short link of the service that counts its clicks, and leads to its target with UTM parameters (${campaign}).`;
}

function settingsPage(ctx: PageContext, o: { values?: LinkFields; errors?: string[]; status?: number } = {}): Response {
  const current = ctx.signedIn.organization.links;
  const v = o.values ?? linkFieldsOf(current);
  const csrf = ctx.signedIn.session.csrfToken;
  const body = html`<h1>Tracked links</h1>
<p>For posts that do not choose for themselves (in the API, <code>links</code> on a post). <span data-testid="links-current" data-shorten="${String(current.shorten)}" data-utm="${String(Boolean(current.utm))}">${describe(current)}</span></p>
${formErrors(o.errors ?? [])}
<form method="post" action="/settings/links" class="stack" data-testid="links-settings-form">
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="check"><input type="checkbox" id="links-shorten" name="shorten" value="yes" data-testid="links-shorten"${v.shorten ? html` checked` : ''}><label for="links-shorten">Shorten links: each link of a post's text, its thread and its first comment is published as a short link of the service that counts its clicks</label></div>
  <div class="check"><input type="checkbox" id="links-utm" name="utm" value="yes" data-testid="links-utm"${v.utm ? html` checked` : ''}><label for="links-utm">Add UTM parameters to the short links' targets (utm_source the platform, utm_medium social)</label></div>
  <div class="field"><label for="links-campaign">Campaign <span class="hint">(utm_campaign; empty: the name of the post's first tag, else none)</span></label>
    <input type="text" id="links-campaign" name="campaign" value="${v.campaign}"${CAMPAIGN_BOUNDS} data-testid="links-campaign"></div>
  <p class="hint">A post keeps the choice it was made with: a change here applies to the posts made from now on.</p>
  <div class="actions"><button type="submit" class="primary" data-testid="links-save">Save</button></div>
</form>`;
  const notice = !o.errors && ctx.url.searchParams.get('notice') === 'saved' ? 'Tracked links settings saved.' : null;
  return htmlResponse(layout({ title: 'Tracked links', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: null, notice }), {
    status: o.status ?? 200,
  });
}

export function linkSettingsRoutes(web: Web) {
  return router()
    .get(
      '/settings/links',
      pageRoute(web, 'settings.manage', (ctx) => settingsPage(ctx)),
    )
    .post(
      '/settings/links',
      pageRoute(web, 'settings.manage', async (ctx) => {
        const values = linkFieldsFromForm(ctx.form);
        const { choice, fields } = linkChoiceOf(values);
        try {
          if (fields.length) throw errors.validation(fields);
          await setLinkDefaults(ctx.em, ctx.signedIn.organization.id, choice);
        } catch (err) {
          if (!(err instanceof ApiError) || err.code !== 'validation_failed') throw err;
          return settingsPage(ctx, { values, errors: describeError(err), status: err.status });
        }
        return redirect('/settings/links?notice=saved');
      }),
      { parse: 'text' },
    );
}
