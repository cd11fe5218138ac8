// Settings → Tracked links: the organization's default links choice for posts that give none
// (domain/links/choice.ts states the rules), set here as the CLI's `org set-links` sets it:
// shorten each link into a short link of the service that counts its clicks, with UTM parameters
// and a campaign name or not. Owners and admins (`settings.manage`). Each post stores its choice
// when it is made, so a change applies to the posts made from then on.
import { Value } from '@sinclair/typebox/value';
import { LinkChoiceSchema, setLinkDefaults, type LinkChoice } from '../domain/links/choice.ts';
import { router } from '../http/router.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { boundsOf, fieldErrors, schemaAt } from '../lib/schema-words.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { boundAttributes } from './option-fields.ts';

const CAMPAIGN_BOUNDS = boundAttributes(boundsOf(schemaAt(LinkChoiceSchema, 'utm.campaign')), true);

/** The form as sent (or the organization's choice as a form): to show again when refused. */
interface LinkFormValues {
  shorten: boolean;
  utm: boolean;
  campaign: string;
}

const formOf = (choice: LinkChoice): LinkFormValues => ({
  shorten: choice.shorten,
  utm: choice.utm !== undefined && choice.utm !== null,
  campaign: choice.utm?.campaign ?? '',
});

/** The choice the form makes, as `org set-links` makes it from its flags; a campaign only goes with UTM parameters. */
function choiceOf(form: URLSearchParams): { values: LinkFormValues; choice: LinkChoice; fields: FieldError[] } {
  const values = { shorten: form.get('shorten') === 'yes', utm: form.get('utm') === 'yes', campaign: form.get('campaign') ?? '' };
  // An empty field names no campaign: the post's first tag's name is used, else none.
  const campaign = values.campaign.trim() === '' ? undefined : values.campaign;
  const choice: LinkChoice = {
    shorten: values.shorten,
    ...(values.utm ? { utm: campaign !== undefined ? { campaign } : {} } : {}),
  };
  // Checked here by the schema setLinkDefaults checks, for its words (lib/schema-words.ts) at the API's paths.
  const fields: FieldError[] =
    campaign !== undefined && !values.utm
      ? [{ path: 'links.utm.campaign', message: 'names the UTM campaign: tick “Add UTM parameters”, or leave it empty' }]
      : fieldErrors(Value.Errors(LinkChoiceSchema, choice), 'links');
  return { values, choice, fields };
}

/** The choice in words. */
function describe(choice: LinkChoice): string {
  if (!choice.shorten) return 'Links are sent as they are written: no short links, no clicks counted.';
  if (!choice.utm) return 'Each link becomes a short link of the service that counts its clicks.';
  const campaign = choice.utm.campaign ? `the campaign “${choice.utm.campaign}”` : 'the name of the post’s first tag as the campaign';
  return `Each link becomes a short link of the service that counts its clicks, and leads to its target with UTM parameters (${campaign}).`;
}

function settingsPage(ctx: PageContext, o: { values?: LinkFormValues; errors?: string[]; status?: number } = {}): Response {
  const current = ctx.signedIn.organization.links;
  const v = o.values ?? formOf(current);
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
        const { values, choice, fields } = choiceOf(ctx.form);
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
