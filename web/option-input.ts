// The composer's per-platform options as the form sends them: one field per option, named by its
// path in the API's `options` (`options.tiktok.privacyLevel`, `options.x.poll.durationMinutes`),
// holding text as typed. OPTION_FIELDS says which fields each platform has and how each is read;
// web/option-fields.ts draws them. Only values given are sent (an untouched panel sends nothing for
// its platform), and what is sent is checked against the API's own schema (platforms/options.ts
// PostOptions), so the form's errors have the API's paths.
import { Value } from '@sinclair/typebox/value';
import { boundsOf, fieldErrors, recordValues, schemaAt } from '../lib/schema-words.ts';
import { PostOptions, type PlatformOptions } from '../platforms/options.ts';
import type { FieldError } from '../lib/errors.ts';
import type { OptionsInput } from '../domain/posts/options.ts';

/**
 * How a field's text becomes the option's value. Bounds and choices are not written here: they are
 * the API schema's (optionBounds), so the form offers what the API takes.
 */
export type OptionKind =
  /**
   * One of the schema's values, each with its words in `labels` (the value itself without); or,
   * for an option whose schema lists none (TikTok's privacy level: the account's), `choices`
   * ([value, label]). The placeholder (empty value) sends nothing.
   */
  | { kind: 'select'; labels?: Record<string, string>; choices?: readonly (readonly [string, string])[]; placeholder: string }
  | { kind: 'text'; inputType?: 'url' }
  | { kind: 'textarea' }
  | { kind: 'int' }
  /** Several strings: separated by commas, or one per line; `strip` is taken off each (a leading @). */
  | { kind: 'list'; separator: 'comma' | 'line'; strip?: RegExp }
  /** A checkbox: checked sends `value` (an option whose default is true is offered as "not …", sending false). */
  | { kind: 'check'; value: boolean }
  /** A yes / no radio pair with neither chosen at first. */
  | { kind: 'yesno' }
  /** A text per attached media item of `mediaType`, by media id (`options.instagram.altText.<mediaId>`). */
  | { kind: 'perMedia'; mediaType: 'image' };

/** What the account's live capabilities (domain/capabilities.ts) fill in, with composer.js. */
export type LiveSource = 'privacyLevels' | 'boards' | 'categories' | 'flairs';

export type OptionField = OptionKind & {
  /** The path under the platform's options: `privacyLevel`, `poll.options`. */
  path: string;
  label: string;
  hint?: string;
  /** The domain refuses a post without it (domain/posts/options.ts). */
  required?: boolean;
  live?: LiveSource;
  /** TikTok: the creator_info flag that turns this interaction off for the account (the box is then checked and locked). */
  creatorOff?: 'commentDisabled' | 'duetDisabled' | 'stitchDisabled';
};

/** TikTok's privacy levels with words for people; the account offers some of them (creator_info). */
export const TIKTOK_PRIVACY_LEVELS = [
  ['PUBLIC_TO_EVERYONE', 'Everyone'],
  ['MUTUAL_FOLLOW_FRIENDS', 'Friends (followers you follow back)'],
  ['FOLLOWER_OF_CREATOR', 'Followers'],
  ['SELF_ONLY', 'Only me'],
] as const;

/**
 * Every option of platforms/options.ts PostOptions, by the platform's name in `options`, except
 * `reddit.subreddit` and `reddit.title`: the composer's Reddit fields send those as `reddit`.
 */
export const OPTION_FIELDS: Record<string, OptionField[]> = {
  instagram: [
    {
      path: 'type',
      label: 'Post type',
      kind: 'select',
      placeholder: 'Default (feed)',
      labels: { feed: 'Feed post', reel: 'Reel (one video)', story: 'Story (one image or video)', carousel: 'Carousel (2 to 10 items)' },
    },
    { path: 'shareToFeed', label: 'Keep the reel out of the feed', kind: 'check', value: false, hint: 'Reels only.' },
    { path: 'thumbOffsetMs', label: 'Cover frame', kind: 'int', hint: 'Reels only: milliseconds from the start.' },
    {
      path: 'collaborators',
      label: 'Collaborators',
      kind: 'list',
      separator: 'comma',
      strip: /^@/,
      hint: 'Up to 3 usernames, separated by commas.',
    },
    {
      path: 'altText',
      label: 'Alt text on Instagram',
      kind: 'perMedia',
      mediaType: 'image',
      hint: "Feed and carousel images. Empty: the image's own alt text.",
    },
  ],
  tiktok: [
    {
      path: 'privacyLevel',
      label: 'Who can see it',
      kind: 'select',
      placeholder: 'Choose who can see it',
      choices: TIKTOK_PRIVACY_LEVELS,
      required: true,
      live: 'privacyLevels',
      hint: 'TikTok asks you to choose each time; nothing is chosen for you.',
    },
    { path: 'disableComment', label: 'Comments off', kind: 'check', value: true, creatorOff: 'commentDisabled' },
    { path: 'disableDuet', label: 'Duets off', kind: 'check', value: true, creatorOff: 'duetDisabled' },
    { path: 'disableStitch', label: 'Stitches off', kind: 'check', value: true, creatorOff: 'stitchDisabled' },
    { path: 'brandContentToggle', label: 'Paid partnership (branded content)', kind: 'check', value: true },
    { path: 'brandOrganicToggle', label: 'Promotes your own business', kind: 'check', value: true },
    { path: 'isAigc', label: 'Made with AI', kind: 'check', value: true, hint: 'Videos only.' },
    { path: 'autoAddMusic', label: 'Add recommended music', kind: 'check', value: true, hint: 'Photo posts only.' },
  ],
  youtube: [
    { path: 'madeForKids', label: 'Made for kids?', kind: 'yesno', required: true, hint: 'YouTube asks this of every upload.' },
    { path: 'title', label: 'Title', kind: 'text', hint: 'Empty: the first line of the text.' },
    { path: 'description', label: 'Description', kind: 'textarea', hint: 'Empty: the text.' },
    { path: 'tags', label: 'Tags', kind: 'list', separator: 'comma', hint: 'Separated by commas.' },
    {
      path: 'privacyStatus',
      label: 'Visibility',
      kind: 'select',
      placeholder: 'Default (public)',
      labels: { public: 'Public', unlisted: 'Unlisted', private: 'Private' },
    },
    {
      path: 'categoryId',
      label: 'Category',
      kind: 'text',
      live: 'categories',
      hint: 'A category number, e.g. 22 (People & Blogs).',
    },
    { path: 'notifySubscribers', label: 'Do not notify subscribers', kind: 'check', value: false },
    { path: 'short', label: 'A Short', kind: 'check', value: true, hint: 'A vertical or square video of at most 180 s.' },
  ],
  pinterest: [
    {
      path: 'boardId',
      label: 'Board',
      kind: 'text',
      live: 'boards',
      hint: "The board's id (digits). Empty: the channel's board.",
    },
    { path: 'title', label: 'Pin title', kind: 'text' },
    { path: 'link', label: 'Link', kind: 'text', inputType: 'url', hint: 'Where the Pin leads.' },
    { path: 'altText', label: 'Alt text', kind: 'textarea', hint: 'Describes the image for screen readers.' },
  ],
  linkedin: [
    {
      path: 'visibility',
      label: 'Visibility',
      kind: 'select',
      placeholder: 'Default (public)',
      labels: { PUBLIC: 'Anyone', CONNECTIONS: 'Connections only', LOGGED_IN: 'Signed-in LinkedIn members' },
    },
  ],
  reddit: [
    { path: 'flairId', label: 'Flair', kind: 'text', live: 'flairs', hint: "The flair's id in the subreddit." },
    { path: 'nsfw', label: 'NSFW', kind: 'check', value: true },
    { path: 'spoiler', label: 'Spoiler', kind: 'check', value: true },
  ],
  x: [
    {
      path: 'replySettings',
      label: 'Who can reply',
      kind: 'select',
      placeholder: 'Default (everyone)',
      labels: {
        following: 'Accounts you follow',
        mentionedUsers: 'Accounts you mention',
        subscribers: 'Your subscribers',
        verified: 'Verified accounts',
      },
    },
    {
      path: 'poll.options',
      label: 'Poll choices',
      kind: 'list',
      separator: 'line',
      hint: '2 to 4 choices, one per line (a post with a poll has no media).',
    },
    { path: 'poll.durationMinutes', label: 'Poll length (minutes)', kind: 'int', hint: '5 minutes to 7 days (10080).' },
  ],
  facebook: [{ path: 'link', label: 'Link', kind: 'text', inputType: 'url', hint: 'Shown with its preview.' }],
  telegram: [
    { path: 'disableNotification', label: 'Send silently', kind: 'check', value: true },
    { path: 'protectContent', label: 'No forwarding or saving', kind: 'check', value: true },
  ],
  discord: [{ path: 'username', label: 'Name shown', kind: 'text', hint: "Empty: the webhook's own name." }],
};

/** What the API's schema (platforms/options.ts) allows a field: its length, range, pattern and values. */
export function optionBounds(platform: string, f: Pick<OptionField, 'path' | 'kind'>) {
  const own = schemaAt(PostOptions, `${platform}.${f.path}`);
  return boundsOf(f.kind === 'perMedia' ? recordValues(own) : own);
}

/** A select's choices: the schema's values with their words, or the field's own list when the schema has none. */
export function optionChoices(platform: string, f: Extract<OptionField, { kind: 'select' }>): readonly (readonly [string, string])[] {
  const values = optionBounds(platform, f).values;
  return values ? values.map((v) => [v, f.labels?.[v] ?? v] as const) : (f.choices ?? []);
}

/** The form field of an option: `options.tiktok.privacyLevel`. */
export const optionName = (platform: string, f: Pick<OptionField, 'path'>) => `options.${platform}.${f.path}`;

const NAMES = new Set(Object.entries(OPTION_FIELDS).flatMap(([p, fs]) => fs.map((f) => optionName(p, f))));
/** The fields of per-media options, by the prefix of their names (`options.instagram.altText.`). */
const PER_MEDIA = Object.entries(OPTION_FIELDS).flatMap(([p, fs]) =>
  fs.filter((f) => f.kind === 'perMedia').map((f) => `${optionName(p, f)}.`),
);
const MEDIA_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The marker field of the options section: a form without it (a script's) leaves a post's options as they are. */
export const hasOptionFields = (form: URLSearchParams) => form.get('optionFields') === '1';

/** The option fields of the form, as typed, by field name. */
export function optionsFromForm(form: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of form) {
    const perMedia = PER_MEDIA.some((prefix) => k.startsWith(prefix) && MEDIA_ID.test(k.slice(prefix.length)));
    if ((NAMES.has(k) || perMedia) && !(k in out)) out[k] = v;
  }
  return out;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = target;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys.at(-1)!] = value;
}

function getPath(source: Record<string, unknown> | undefined, path: string): unknown {
  let at: unknown = source;
  for (const k of path.split('.')) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
  return at;
}

/** One field's text as its value; undefined: not given. */
function read(f: OptionField, text: string, name: string, fields: FieldError[]): unknown {
  if (text.trim() === '') return undefined;
  switch (f.kind) {
    case 'select':
    case 'text':
      return text.trim();
    case 'textarea':
      return text;
    case 'int':
      if (!/^\s*-?\d+\s*$/.test(text)) {
        fields.push({ path: name, message: 'must be a whole number' });
        return undefined;
      }
      return Number(text);
    case 'list': {
      const parts = text.split(f.separator === 'comma' ? ',' : /\r?\n/);
      return parts.map((s) => (f.strip ? s.trim().replace(f.strip, '') : s.trim())).filter((s) => s !== '');
    }
    case 'check':
    case 'yesno':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'perMedia':
      return undefined;
  }
}

/** A per-media option: the texts given for the post's media, by media id; undefined: none given. */
function readPerMedia(name: string, values: Record<string, string>, mediaIds: string[]): Record<string, string> | undefined {
  const given = mediaIds.flatMap((id) => {
    const text = values[`${name}.${id}`] ?? '';
    return text.trim() === '' ? [] : [[id, text] as const];
  });
  return given.length ? Object.fromEntries(given) : undefined;
}

/**
 * The options to send for the targeted platforms (lower-case names): only values given, each
 * platform only when one of its values is, per-media texts only for the post's media (`mediaIds`:
 * the form keeps fields for every image of the library). Problems go to `fields` at the API's paths.
 */
export function buildOptions(
  values: Record<string, string>,
  platforms: Set<string>,
  mediaIds: string[],
  fields: FieldError[],
): OptionsInput {
  const options: Record<string, Record<string, unknown>> = {};
  for (const [platform, list] of Object.entries(OPTION_FIELDS)) {
    if (!platforms.has(platform)) continue;
    const own: Record<string, unknown> = {};
    for (const f of list) {
      const name = optionName(platform, f);
      const value = f.kind === 'perMedia' ? readPerMedia(name, values, mediaIds) : read(f, values[name] ?? '', name, fields);
      if (value !== undefined) setPath(own, f.path, value);
    }
    if (Object.keys(own).length) options[platform] = own;
  }
  fields.push(...fieldErrors(Value.Errors(PostOptions, options), 'options'));
  return options as OptionsInput;
}

/** A post's options as the form's fields (an edit starts from them). */
export function optionValues(stored: PlatformOptions): Record<string, string> {
  const options = stored as Record<string, Record<string, unknown> | undefined>;
  const out: Record<string, string> = {};
  for (const [platform, list] of Object.entries(OPTION_FIELDS)) {
    for (const f of list) {
      const v = getPath(options[platform], f.path);
      if (v === undefined || v === null) continue;
      const name = optionName(platform, f);
      if (f.kind === 'perMedia') {
        if (typeof v === 'object')
          for (const [id, text] of Object.entries(v as Record<string, unknown>)) out[`${name}.${id}`] = String(text);
      } else if (Array.isArray(v)) out[name] = v.map(String).join(f.kind === 'list' && f.separator === 'line' ? '\n' : ', ');
      else if (typeof v === 'boolean' && f.kind === 'check') {
        if (v === f.value) out[name] = String(v);
      } else out[name] = String(v);
    }
  }
  return out;
}

/**
 * A post's options the form has no field for (set through the API): an edit keeps them, as it
 * keeps a platform's own thread. By platform, for the platforms given.
 */
export function optionsWithoutFields(options: PlatformOptions): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [platform, own] of Object.entries(options as Record<string, Record<string, unknown> | undefined>)) {
    const covered = new Set((OPTION_FIELDS[platform] ?? []).map((f) => f.path.split('.')[0]!));
    const kept = Object.fromEntries(Object.entries(own ?? {}).filter(([k]) => !covered.has(k)));
    if (Object.keys(kept).length) out[platform] = kept;
  }
  return out;
}
