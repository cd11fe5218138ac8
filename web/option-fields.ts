// The composer's per-platform options: a fieldset for each platform of the channels that has
// options (web/option-input.ts OPTION_FIELDS), shown for the chosen platforms (composer.js shows
// and hides them as channels are chosen), each field named by its path in the API's `options`,
// pre-filled with what the form or the post has, and the domain's errors at their fields
// (`options.tiktok.privacyLevel`, `options.youtube.madeForKids`).
// Everything works as plain HTML: the fields that depend on the account are a select of every
// TikTok privacy level, or text inputs for a board, category or flair id. composer.js fills them
// from GET /web/api/channels/{id}/capabilities (the levels, boards, categories and flairs the
// account has) and says why when the account cannot be read.
import type { IChannel } from '../db/entities/index.ts';
import type { MediaView } from '../domain/media.ts';
import type { FieldError } from '../lib/errors.ts';
import type { Bounds } from '../lib/schema-words.ts';
import { html, type SafeHtml } from './html.ts';
import { OPTION_FIELDS, optionBounds, optionChoices, optionName, type OptionField } from './option-input.ts';
import { platformBadge, platformLabel } from './ui.ts';

export interface OptionFieldsInput {
  channels: IChannel[];
  selected: (c: IChannel) => boolean;
  /** The option fields as typed, by field name (web/option-input.ts). */
  values: Record<string, string>;
  errors: FieldError[];
  /** An edit: the post's subreddit, whose flairs composer.js reads (a new post has the subreddit field). */
  subreddit?: string;
  /** The library's media (a per-media option has a field for each) and the post's (those fields are shown). */
  media: MediaView[];
  mediaIds: string[];
}

const SAYS_LIVE: Record<NonNullable<OptionField['live']>, string> = {
  privacyLevels: 'the privacy levels this TikTok account offers',
  boards: "the account's boards",
  categories: 'the categories a video may take',
  flairs: "the subreddit's flairs",
};

const fieldId = (platform: string, f: OptionField) => `opt-${platform}-${f.path.replace(/\./g, '-')}`;
const testId = (platform: string, f: OptionField) => `option-${platform}-${f.path.replace(/\./g, '-')}`;

const under = (name: string) => (e: FieldError) => e.path === name || e.path.startsWith(`${name}.`);

function errorList(id: string, errors: FieldError[]): SafeHtml {
  if (!errors.length) return html``;
  return html`<div class="field-error" id="${id}" data-testid="option-error">${errors.map((e) => html`<p data-path="${e.path}">${e.message}</p>`)}</div>`;
}

/** aria-describedby (its hint, what composer.js says of the account, its errors) and aria-invalid. */
function described(ids: (string | false)[], invalid: boolean): SafeHtml {
  const list = ids.filter(Boolean).join(' ');
  return html`${list ? html` aria-describedby="${list}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
}

const requiredMark = (f: OptionField) => (f.required ? html` <span class="hint">(required)</span>` : '');

/**
 * A schema's bounds (lib/schema-words.ts boundsOf) as an input's attributes: the browser checks
 * what the API will. A pattern on a text input only (`textInput`), as HTML has it.
 */
export function boundAttributes(b: Bounds, textInput: boolean): SafeHtml {
  return html`${b.maxLength !== undefined ? html` maxlength="${b.maxLength}"` : ''}${b.minimum !== undefined ? html` min="${b.minimum}"` : ''}${b.maximum !== undefined ? html` max="${b.maximum}"` : ''}${b.pattern !== undefined && textInput ? html` pattern="${b.pattern.replace(/^\^|\$$/g, '')}"` : ''}`;
}

const limits = (platform: string, f: OptionField) => boundAttributes(optionBounds(platform, f), f.kind === 'text');

function control(platform: string, f: OptionField, value: string, aria: SafeHtml): SafeHtml {
  const id = fieldId(platform, f);
  const name = optionName(platform, f);
  const tid = testId(platform, f);
  const req = f.required ? html` aria-required="true"` : '';
  switch (f.kind) {
    case 'select': {
      const listed = optionChoices(platform, f);
      // A value the list does not have (set through the API) stays chosen rather than lost.
      const choices = value && !listed.some(([v]) => v === value) ? [...listed, [value, value] as const] : listed;
      return html`<select id="${id}" name="${name}" data-testid="${tid}"${req}${aria}>
        <option value="">${f.placeholder}</option>
        ${choices.map(([v, label]) => html`<option value="${v}"${v === value ? html` selected` : ''}>${label}</option>`)}
      </select>`;
    }
    case 'text':
      return html`<input type="${f.inputType ?? 'text'}" id="${id}" name="${name}" value="${value}"${limits(platform, f)} data-testid="${tid}"${req}${aria}>`;
    case 'textarea':
      return html`<textarea id="${id}" name="${name}" rows="3"${limits(platform, f)} data-testid="${tid}"${aria}>${value}</textarea>`;
    case 'int':
      return html`<input type="number" id="${id}" name="${name}" value="${value}"${limits(platform, f)} step="1" inputmode="numeric" data-testid="${tid}"${aria}>`;
    case 'list':
      return f.separator === 'line'
        ? html`<textarea id="${id}" name="${name}" rows="4" data-testid="${tid}"${aria}>${value}</textarea>`
        : html`<input type="text" id="${id}" name="${name}" value="${value}" data-testid="${tid}"${aria}>`;
    default:
      return html``;
  }
}

/**
 * A text per media item of the kind (Instagram's alt text): a field for each in the library, shown
 * for the post's own (composer.js follows the media picker); only those of the post are sent.
 */
function perMedia(platform: string, f: Extract<OptionField, { kind: 'perMedia' }>, input: OptionFieldsInput): SafeHtml {
  const id = fieldId(platform, f);
  const name = optionName(platform, f);
  const items = input.media.filter((m) => m.type === f.mediaType);
  // Errors of an item without a field here (not an image of the library) go with the section's own.
  const general = input.errors.filter((e) => under(name)(e) && !items.some((m) => under(`${name}.${m.id}`)(e)));
  const attached = items.some((m) => input.mediaIds.includes(m.id));
  return html`<fieldset class="option-per-media" data-option-field="${name}" data-testid="${testId(platform, f)}"${f.hint ? html` aria-describedby="${id}-hint"` : ''}>
    <legend>${f.label}</legend>
    ${f.hint ? html`<span class="hint" id="${id}-hint">${f.hint}</span>` : ''}
    <p class="hint" data-no-media-fields${attached ? html` hidden` : ''}>Choose ${f.mediaType}s under Media to give them one here.</p>
    ${items.map((m) => {
      const own = `${name}.${m.id}`;
      const mine = input.errors.filter(under(own));
      const fid = `${id}-${m.id}`;
      return html`<div class="field" data-media-field="${m.id}"${input.mediaIds.includes(m.id) ? '' : html` hidden`}>
        <label for="${fid}">${m.fileName}</label>
        <textarea id="${fid}" name="${own}" rows="2"${limits(platform, f)} placeholder="${m.altText ?? ''}" data-testid="${testId(platform, f)}-input" data-media-id="${m.id}"${described([mine.length ? `${fid}-error` : false], mine.length > 0)}>${input.values[own] ?? ''}</textarea>
        ${errorList(`${fid}-error`, mine)}
      </div>`;
    })}
    ${errorList(`${id}-error`, general)}
  </fieldset>`;
}

function field(platform: string, f: OptionField, input: OptionFieldsInput): SafeHtml {
  const { values, errors } = input;
  if (f.kind === 'perMedia') return perMedia(platform, f, input);
  const id = fieldId(platform, f);
  const name = optionName(platform, f);
  const tid = testId(platform, f);
  const value = values[name] ?? '';
  const mine = errors.filter(under(name));
  const hintId = f.hint ? `${id}-hint` : false;
  const liveId = f.live ? `${id}-live` : false;
  const errorId = mine.length ? `${id}-error` : false;
  const aria = described([hintId, liveId, errorId], mine.length > 0);
  const hint = f.hint ? html`<span class="hint" id="${id}-hint">${f.hint}</span>` : '';
  if (f.kind === 'check') {
    const checked = value !== '' && value === String(f.value);
    // The hint is part of the label here.
    return html`<div class="check" data-option-field="${name}">
      <input type="checkbox" id="${id}" name="${name}" value="${String(f.value)}" data-testid="${tid}"${f.creatorOff ? html` data-creator-off="${f.creatorOff}"` : ''}${checked ? html` checked` : ''}${described([errorId], mine.length > 0)}>
      <label for="${id}">${f.label} ${hint}${f.creatorOff ? html` <span class="hint" data-creator-hint></span>` : ''}</label>
    </div>
    ${errorList(`${id}-error`, mine)}`;
  }
  if (f.kind === 'yesno') {
    const radio = (v: 'true' | 'false', label: string, suffix: string) =>
      html`<div class="radio"><input type="radio" id="${id}-${suffix}" name="${name}" value="${v}" data-testid="${tid}-${suffix}"${value === v ? html` checked` : ''}${f.required ? html` aria-required="true"` : ''}${mine.length ? html` aria-invalid="true"` : ''}><label for="${id}-${suffix}">${label}</label></div>`;
    return html`<fieldset class="option-yesno" data-option-field="${name}" data-testid="${tid}"${described([hintId, errorId], false)}>
      <legend>${f.label}${requiredMark(f)}</legend>
      ${radio('true', 'Yes', 'yes')}
      ${radio('false', 'No', 'no')}
      ${hint}
      ${errorList(`${id}-error`, mine)}
    </fieldset>`;
  }
  return html`<div class="field" data-option-field="${name}"${f.live ? html` data-live="${f.live}"` : ''}>
    <label for="${id}">${f.label}${requiredMark(f)}</label>
    ${control(platform, f, value, aria)}
    ${hint}
    ${f.live ? html`<span class="hint" id="${id}-live" data-live-hint aria-live="polite" data-says="${SAYS_LIVE[f.live]}"></span>` : ''}
    ${errorList(`${id}-error`, mine)}
  </div>`;
}

function panel(platform: string, fields: OptionField[], f: OptionFieldsInput, chosen: boolean): SafeHtml {
  const upper = platform.toUpperCase();
  const prefix = `options.${platform}`;
  const names = fields.map((x) => optionName(platform, x));
  // Problems of the platform's options as a whole (`options.x.poll`, `options.tiktok`), above its fields.
  const general = f.errors.filter((e) => under(prefix)(e) && !names.some((n) => under(n)(e)));
  return html`<fieldset class="platform-options" data-options-platform="${upper}" data-testid="options-${upper}"${platform === 'reddit' && f.subreddit ? html` data-subreddit="${f.subreddit}"` : ''}${chosen ? '' : html` hidden`}>
    <legend>${platformBadge(upper)} ${platformLabel(upper)} options</legend>
    ${general.length ? html`<div class="field-error" id="options-${platform}-error" data-testid="options-error">${general.map((e) => html`<p data-path="${e.path}">${e.message}</p>`)}</div>` : ''}
    ${platform === 'tiktok' ? html`<p class="hint" data-live-info aria-live="polite"></p>` : ''}
    ${fields.map((x) => field(platform, x, f))}
  </fieldset>`;
}

/** The options section; nothing when no channel's platform has options. */
export function optionFields(f: OptionFieldsInput): SafeHtml {
  const platforms = [...new Set(f.channels.map((c) => c.platform.toLowerCase()))].filter((p) => OPTION_FIELDS[p]);
  if (!platforms.length) return html``;
  const chosen = new Set(f.channels.filter(f.selected).map((c) => c.platform.toLowerCase()));
  return html`<section class="composer-options" data-testid="composer-options" aria-label="Options per platform">
    <input type="hidden" name="optionFields" value="1">
    ${platforms.map((p) => panel(p, OPTION_FIELDS[p]!, f, chosen.has(p)))}
  </section>`;
}
