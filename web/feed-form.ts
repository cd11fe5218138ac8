// The feed form of the Feeds pages (domain/feeds/feeds.ts states the rules): the same fields add a
// feed and edit one (an edit also has its status, pausing and resuming it; only an addition has
// the backfill). What the form holds (`FeedFormValues`), read from the posted form, turned into the
// domain's FeedInput / FeedEdit after the checks the API's body schema makes (api/routes/feeds.ts),
// and drawn with each error at its field (`url`, `channelIds`, a chosen channel's `channelIds.N`,
// `template`, `templateByPlatform.MASTODON`, `filter.include`, `pollMinutes`…). A plain form: no
// JavaScript needed.
import type { IChannel } from '../db/entities/index.ts';
import {
  FEED_LIMITS,
  MAX_BACKFILL,
  POLL_MINUTES,
  TEMPLATE_MAX_CHARS,
  feedPlatformProblem,
  type FeedEdit,
  type FeedInput,
  type FeedView,
} from '../domain/feeds/feeds.ts';
import { DEFAULT_TEMPLATE, PLACEHOLDERS } from '../domain/feeds/items.ts';
import { POST_LIMITS } from '../domain/posts/limits.ts';
import type { FieldError } from '../lib/errors.ts';
import { isPlatform, PLATFORMS } from '../platforms/catalog.ts';
import { html, type SafeHtml } from './html.ts';
import { platformBadge, platformLabel, statusLabel } from './ui.ts';

/** The form as typed: every value a string, so a refused form comes back as it was sent. */
export interface FeedFormValues {
  url: string;
  name: string;
  channelIds: string[];
  template: string;
  /** Per platform, the text typed (empty: the template above). */
  templateByPlatform: Record<string, string>;
  mode: string;
  /** Words separated by commas. */
  include: string;
  exclude: string;
  pollMinutes: string;
  /** Only when adding. */
  backfill: string;
  /** Only when editing. */
  status: string;
}

export type FeedFormKind = 'create' | 'edit';

const { wordChars: WORD_MAX_CHARS, filterWords: WORDS_MAX, nameChars: NAME_MAX_CHARS, urlChars: URL_MAX_CHARS } = FEED_LIMITS;

export const emptyFeedForm = (): FeedFormValues => ({
  url: '',
  name: '',
  channelIds: [],
  template: DEFAULT_TEMPLATE,
  templateByPlatform: {},
  mode: 'now',
  include: '',
  exclude: '',
  pollMinutes: String(POLL_MINUTES.default),
  backfill: '0',
  status: 'active',
});

export function formOfFeed(f: FeedView): FeedFormValues {
  return {
    url: f.url,
    name: f.name,
    channelIds: f.channelIds,
    template: f.template,
    templateByPlatform: { ...f.templateByPlatform },
    mode: f.mode,
    include: (f.filter?.include ?? []).join(', '),
    exclude: (f.filter?.exclude ?? []).join(', '),
    pollMinutes: String(f.pollMinutes),
    backfill: '0',
    status: f.status,
  };
}

export function readFeedForm(form: URLSearchParams): FeedFormValues {
  const templateByPlatform: Record<string, string> = {};
  for (const p of PLATFORMS) {
    const v = form.get(`templateByPlatform.${p}`);
    if (v !== null) templateByPlatform[p] = v;
  }
  return {
    url: (form.get('url') ?? '').trim(),
    name: (form.get('name') ?? '').trim(),
    channelIds: [...new Set(form.getAll('channelIds'))],
    template: form.get('template') ?? '',
    templateByPlatform,
    mode: form.get('mode') ?? 'now',
    include: form.get('include') ?? '',
    exclude: form.get('exclude') ?? '',
    pollMinutes: (form.get('pollMinutes') ?? '').trim(),
    backfill: (form.get('backfill') ?? '').trim(),
    status: form.get('status') ?? 'active',
  };
}

const chars = (s: string) => [...s].length;

function words(path: string, value: string, fields: FieldError[]): string[] | undefined {
  const list = value
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
  if (list.length > WORDS_MAX) fields.push({ path, message: `has ${list.length} words; at most ${WORDS_MAX}` });
  for (const w of list)
    if (chars(w) > WORD_MAX_CHARS) fields.push({ path, message: `"${w.slice(0, 20)}…" is longer than ${WORD_MAX_CHARS} characters` });
  return list.length ? list : undefined;
}

function wholeNumber(path: string, value: string, min: number, max: number, fields: FieldError[]): number | undefined {
  const n = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isNaN(n) || n < min || n > max) {
    fields.push({ path, message: `must be a whole number from ${min} to ${max}` });
    return undefined;
  }
  return n;
}

/**
 * The domain's input from the form, or the fields the API's body schema would refuse (the domain
 * checks the rest, such as a template per platform having a chosen channel on that platform); an
 * empty one is no template.
 */
export function feedInputOf(v: FeedFormValues, kind: FeedFormKind): { input: FeedInput & FeedEdit; fields: FieldError[] } {
  const fields: FieldError[] = [];
  if (!v.url) fields.push({ path: 'url', message: 'is required' });
  else if (chars(v.url) > URL_MAX_CHARS || v.url.includes('\0'))
    fields.push({ path: 'url', message: `must be a URL of at most ${URL_MAX_CHARS} characters` });
  if (!v.channelIds.length) fields.push({ path: 'channelIds', message: 'choose at least one channel' });
  else if (v.channelIds.length > POST_LIMITS.channels)
    fields.push({ path: 'channelIds', message: `choose at most ${POST_LIMITS.channels} channels` });
  if (chars(v.name) > NAME_MAX_CHARS || v.name.includes('\0'))
    fields.push({ path: 'name', message: `must be at most ${NAME_MAX_CHARS} characters` });
  const tooLong = (path: string, t: string) => {
    if (chars(t) > TEMPLATE_MAX_CHARS || t.includes('\0'))
      fields.push({ path, message: `must be at most ${TEMPLATE_MAX_CHARS} characters` });
  };
  tooLong('template', v.template);
  const templateByPlatform: Record<string, string> = {};
  for (const [platform, text] of Object.entries(v.templateByPlatform)) {
    if (!text.trim() || !isPlatform(platform)) continue;
    const path = `templateByPlatform.${platform}`;
    tooLong(path, text);
    templateByPlatform[platform] = text;
  }
  if (v.mode !== 'now' && v.mode !== 'queue') fields.push({ path: 'mode', message: 'must be now or queue' });
  const include = words('filter.include', v.include, fields);
  const exclude = words('filter.exclude', v.exclude, fields);
  const pollMinutes = wholeNumber('pollMinutes', v.pollMinutes, POLL_MINUTES.min, POLL_MINUTES.max, fields);
  const input: FeedInput & FeedEdit = {
    url: v.url,
    channelIds: v.channelIds,
    ...(v.name ? { name: v.name } : {}),
    template: v.template,
    templateByPlatform,
    mode: v.mode === 'queue' ? 'queue' : 'now',
    filter: include || exclude ? { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) } : null,
    ...(pollMinutes !== undefined ? { pollMinutes } : {}),
  };
  if (kind === 'create') input.backfill = wholeNumber('backfill', v.backfill || '0', 0, MAX_BACKFILL, fields);
  else if (v.status === 'active' || v.status === 'paused') input.status = v.status;
  else fields.push({ path: 'status', message: 'must be active or paused' });
  return { input, fields };
}

export interface FeedFormInput {
  kind: FeedFormKind;
  action: string;
  csrfToken: string;
  values: FeedFormValues;
  /** The organization's channels. */
  channels: IChannel[];
  errors: FieldError[];
  /** Why the service paused the feed (an edit's status field says it). */
  pausedReason?: string | null;
}

/** A textarea per platform of the organization's channels, and of templates the feed already has. */
export const templatePlatforms = (channels: IChannel[], values: FeedFormValues): string[] =>
  PLATFORMS.filter((p) => channels.some((c) => c.platform === p) || values.templateByPlatform[p]?.trim());

const domId = (path: string) => `feed-${path.replace(/[^A-Za-z0-9]/g, '-')}`;

function errorsAt(path: string, errors: FieldError[]): SafeHtml {
  const mine = errors.filter((e) => e.path === path);
  if (!mine.length) return html``;
  return html`<div class="field-error" id="${domId(path)}-error" data-testid="feed-field-error" data-path="${path}">${mine.map((e) => html`<p>${e.message}</p>`)}</div>`;
}

/** aria-describedby (hint, errors) and aria-invalid for the field at `path`. */
function described(path: string, errors: FieldError[], hint = false): SafeHtml {
  const invalid = errors.some((e) => e.path === path);
  const ids = [hint ? `${domId(path)}-hint` : '', invalid ? `${domId(path)}-error` : ''].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
}

const checked = (on: boolean) => (on ? html` checked` : '');

function channelChoices(input: FeedFormInput): SafeHtml {
  const { channels, values, errors } = input;
  if (!channels.length)
    return html`<p data-testid="feed-no-channels">No channels yet: <a href="/channels">connect one</a> first.</p>${errorsAt('channelIds', errors)}`;
  return html`<fieldset id="${domId('channelIds')}"${described('channelIds', errors)}>
  <legend>Channels</legend>
  <ul class="choice-list">${channels.map((c) => {
    // The domain refuses a chosen channel at its index among the chosen (`channelIds.2`).
    const at = values.channelIds.indexOf(c.id);
    const path = `channelIds.${at}`;
    const mine = at >= 0 ? errors : [];
    return html`<li class="check"><input type="checkbox" id="feed-channel-${c.id}" name="channelIds" value="${c.id}" data-testid="feed-channel" data-channel-id="${c.id}"${checked(at >= 0)}${described(path, mine)}><label for="feed-channel-${c.id}">${platformBadge(c.platform)} ${c.name}${
      c.status === 'active' ? '' : html` <span class="hint">(${statusLabel(c.status)})</span>`
    }${feedPlatformProblem(c.platform) ? html` <span class="hint" data-testid="feed-channel-text-only">(a feed's text-only posts cannot go here)</span>` : ''}</label>${errorsAt(path, mine)}</li>`;
  })}</ul>
  ${errorsAt('channelIds', errors)}
</fieldset>`;
}

function platformTemplates(input: FeedFormInput): SafeHtml {
  const platforms = templatePlatforms(input.channels, input.values);
  if (!platforms.length) return html``;
  return html`<fieldset data-testid="feed-platform-templates">
  <legend>Text per platform <span class="hint">(optional)</span></legend>
  <p class="hint">For the chosen channels on a platform, instead of the template above; empty: the template above.</p>
  ${platforms.map((p) => {
    const path = `templateByPlatform.${p}`;
    return html`<div class="field">
    <label for="${domId(path)}">${platformBadge(p)} ${platformLabel(p)}</label>
    <textarea id="${domId(path)}" name="${path}" rows="2" maxlength="${TEMPLATE_MAX_CHARS}" data-testid="feed-template-platform" data-platform="${p}"${described(path, input.errors)}>${input.values.templateByPlatform[p] ?? ''}</textarea>
    ${errorsAt(path, input.errors)}
  </div>`;
  })}
</fieldset>`;
}

function statusField(input: FeedFormInput): SafeHtml {
  const { values, errors } = input;
  return html`<fieldset id="${domId('status')}" data-testid="feed-status-field"${described('status', errors)}>
  <legend>Status</legend>
  ${input.pausedReason ? html`<p class="hint" data-testid="feed-form-paused-reason">Paused by the service: ${input.pausedReason} Choose Active to read it again: you become its maker, and its posts are made as yours.</p>` : ''}
  <div class="radio"><input type="radio" id="feed-status-active" name="status" value="active" data-testid="feed-status-active"${checked(values.status === 'active')}><label for="feed-status-active">Active: read every ${values.pollMinutes || POLL_MINUTES.default} minutes</label></div>
  <div class="radio"><input type="radio" id="feed-status-paused" name="status" value="paused" data-testid="feed-status-paused"${checked(values.status === 'paused')}><label for="feed-status-paused">Paused: not read, nothing posted</label></div>
  ${errorsAt('status', errors)}
</fieldset>`;
}

export function feedForm(input: FeedFormInput): SafeHtml {
  const { values: v, errors, kind } = input;
  const placeholders = PLACEHOLDERS.map((p, i) => html`${i ? ', ' : ''}<code>{${p}}</code>`);
  return html`<form method="post" action="${input.action}" class="stack" data-testid="feed-form" data-kind="${kind}">
  <input type="hidden" name="_csrf" value="${input.csrfToken}">
  <div class="field">
    <label for="${domId('url')}">Feed URL</label>
    <input id="${domId('url')}" name="url" type="url" required maxlength="${URL_MAX_CHARS}" value="${v.url}" data-testid="feed-url"${described('url', errors, true)}>
    <p class="hint" id="${domId('url')}-hint">An RSS or Atom feed (http or https). It is read when saved: its items now are its backlog, never posted.</p>
    ${errorsAt('url', errors)}
  </div>
  ${channelChoices(input)}
  <div class="field">
    <label for="${domId('name')}">Name <span class="hint">(optional: the feed's own title)</span></label>
    <input id="${domId('name')}" name="name" maxlength="${NAME_MAX_CHARS}" value="${v.name}" data-testid="feed-name"${described('name', errors)}>
    ${errorsAt('name', errors)}
  </div>
  <div class="field">
    <label for="${domId('template')}">Text of each post</label>
    <textarea id="${domId('template')}" name="template" rows="3" maxlength="${TEMPLATE_MAX_CHARS}" data-testid="feed-template"${described('template', errors, true)}>${v.template}</textarea>
    <p class="hint" id="${domId('template')}-hint" data-testid="feed-placeholders">Placeholders: ${placeholders}. {summary} is plain text of at most 300 characters; {categories} comma-separated; {feed} is the feed's name.</p>
    ${errorsAt('template', errors)}
  </div>
  ${platformTemplates(input)}
  <fieldset id="${domId('mode')}"${described('mode', errors)}>
    <legend>Each new item</legend>
    <div class="radio"><input type="radio" id="feed-mode-now" name="mode" value="now" data-testid="feed-mode-now"${checked(v.mode !== 'queue')}><label for="feed-mode-now">is published at once</label></div>
    <div class="radio"><input type="radio" id="feed-mode-queue" name="mode" value="queue" data-testid="feed-mode-queue"${checked(v.mode === 'queue')}><label for="feed-mode-queue">goes into the channels' posting queue</label></div>
    ${errorsAt('mode', errors)}
  </fieldset>
  <fieldset>
    <legend>Filter <span class="hint">(words separated by commas, in the title, summary or categories, any letter case)</span></legend>
    <div class="field">
      <label for="${domId('filter.include')}">Only items with one of these words</label>
      <input id="${domId('filter.include')}" name="include" value="${v.include}" data-testid="feed-include"${described('filter.include', errors)}>
      ${errorsAt('filter.include', errors)}
    </div>
    <div class="field">
      <label for="${domId('filter.exclude')}">Never items with one of these words</label>
      <input id="${domId('filter.exclude')}" name="exclude" value="${v.exclude}" data-testid="feed-exclude"${described('filter.exclude', errors)}>
      ${errorsAt('filter.exclude', errors)}
    </div>
  </fieldset>
  <div class="field">
    <label for="${domId('pollMinutes')}">Read it every (minutes, ${POLL_MINUTES.min}–${POLL_MINUTES.max})</label>
    <input id="${domId('pollMinutes')}" name="pollMinutes" type="number" min="${POLL_MINUTES.min}" max="${POLL_MINUTES.max}" step="1" inputmode="numeric" value="${v.pollMinutes}" data-testid="feed-poll-minutes"${described('pollMinutes', errors)}>
    ${errorsAt('pollMinutes', errors)}
  </div>
  ${
    kind === 'create'
      ? html`<div class="field">
    <label for="${domId('backfill')}">Post the newest items it has now (0–${MAX_BACKFILL})</label>
    <input id="${domId('backfill')}" name="backfill" type="number" min="0" max="${MAX_BACKFILL}" step="1" inputmode="numeric" value="${v.backfill}" data-testid="feed-backfill"${described('backfill', errors, true)}>
    <p class="hint" id="${domId('backfill')}-hint">0: only items that appear from now on are posted.</p>
    ${errorsAt('backfill', errors)}
  </div>`
      : statusField(input)
  }
  <button type="submit" class="primary" data-testid="feed-save">${kind === 'create' ? 'Add feed' : 'Save feed'}</button>
</form>`;
}
