// A links choice (domain/links/choice.ts states the rules) as a form's fields and back: "Shorten
// links" (`shorten`), "Add UTM parameters" (`utm`) and the campaign (`campaign`). The composer's
// Links section (a post's or a draft's own choice) and Settings → Tracked links (the
// organization's default) read them alike, checked by the schema the API checks `links` with.
import { Value } from '@sinclair/typebox/value';
import { LinkChoiceSchema, type LinkChoice } from '../domain/links/choice.ts';
import type { FieldError } from '../lib/errors.ts';
import { boundsOf, fieldErrors, schemaAt } from '../lib/schema-words.ts';
import { boundAttributes } from './option-fields.ts';

/** The campaign field takes what the schema takes for `utm.campaign`. */
export const CAMPAIGN_BOUNDS = boundAttributes(boundsOf(schemaAt(LinkChoiceSchema, 'utm.campaign')), true);

/** The fields as typed (or a choice as fields): shown again as they were when refused. */
export interface LinkFields {
  shorten: boolean;
  utm: boolean;
  campaign: string;
}

export const linkFieldsOf = (choice: LinkChoice): LinkFields => ({
  shorten: choice.shorten,
  utm: choice.utm !== undefined && choice.utm !== null,
  campaign: choice.utm?.campaign ?? '',
});

export const linkFieldsFromForm = (form: URLSearchParams): LinkFields => ({
  shorten: form.get('shorten') === 'yes',
  utm: form.get('utm') === 'yes',
  campaign: form.get('campaign') ?? '',
});

/**
 * The composer's form has the Links section (its hidden `linkFields`, as an unticked box sends
 * nothing): a form without it leaves the choice as it is (an edit's post's, a draft's, else the
 * organization's default).
 */
export const hasLinkFields = (form: URLSearchParams): boolean => form.get('linkFields') === '1';

/**
 * The choice the fields make, as `org set-links` makes it from its flags, and what is wrong with
 * it at the API's paths (`links.utm.campaign`): an empty campaign names none (the post's first
 * tag's name is used, else none); a campaign goes only with UTM parameters.
 */
export function linkChoiceOf(v: LinkFields): { choice: LinkChoice; fields: FieldError[] } {
  const campaign = v.campaign.trim() === '' ? undefined : v.campaign;
  const choice: LinkChoice = {
    shorten: v.shorten,
    ...(v.utm ? { utm: campaign !== undefined ? { campaign } : {} } : {}),
  };
  const fields: FieldError[] =
    campaign !== undefined && !v.utm
      ? [{ path: 'links.utm.campaign', message: 'names the UTM campaign: tick “Add UTM parameters”, or leave it empty' }]
      : fieldErrors(Value.Errors(LinkChoiceSchema, choice), 'links');
  return { choice, fields };
}
