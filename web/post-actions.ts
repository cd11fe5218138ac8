// Creating and editing posts from the web application, through the same services as the API:
// createPost (domain/posts/create.ts) and validateAndEditPost (domain/posts/edit.ts), as
// POST /v1/posts and PATCH /v1/posts/{id}, with the same checks of the options against what each
// account can do now. Only the source differs ("app", no API key). Here: reading the form.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Channel, MediaItem, type IChannel } from '../db/entities/index.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import type { IOrganization, LinkChoice } from '../db/entities/index.ts';
import { createPost, type TemporalDeps } from '../domain/posts/create.ts';
import { validateAndEditPost } from '../domain/posts/edit.ts';
import { ChannelIds, ContentEdit, PostContent } from '../domain/posts/content.ts';
import { fieldErrors } from '../lib/schema-words.ts';
import { loadTargetChannels, parsePublishAt } from '../domain/posts/checks.ts';
import { assertEditable, getPostForKey, listPostsForKey, type PostView } from '../domain/posts/view.ts';
import { mediaView, type MediaView } from '../domain/media.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { isPlatform } from '../platforms/catalog.ts';
import { localInputValue, parseLocalInput } from './time.ts';
import { followUpsFromForm, threadInputFor, type FollowUpValues } from './thread-input.ts';
import { buildOptions, optionsFromForm, optionsWithoutFields } from './option-input.ts';
import type { CapabilityDeps } from '../domain/capabilities.ts';
import type { OptionsInput } from '../domain/posts/options.ts';
import type { Requester } from '../domain/posts/approval.ts';
import { hasLinkFields, linkChoiceOf, linkFieldsFromForm, type LinkFields } from './link-input.ts';

export function needTemporal(temporal: TemporalDeps | undefined): TemporalDeps {
  if (!temporal) throw new Error('Temporal is not configured for this app');
  return temporal;
}

/** The organization's channels by id (names for badges), oldest first. */
export async function channelsOf(em: EntityManager, organizationId: string): Promise<IChannel[]> {
  return em.find(Channel, { organization: organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export const byId = <T extends { id: string }>(items: T[]) => new Map(items.map((i) => [i.id, i]));

/**
 * Posts scheduled in [from, to), oldest first, with `tagId` only those with that tag (the filter of
 * GET /v1/posts); at most `max` (the calendar says when there are more).
 */
export async function postsInRange(
  em: EntityManager,
  organizationId: string,
  from: Date,
  to: Date,
  o: { tagId?: string; max?: number } = {},
): Promise<{ posts: PostView[]; truncated: boolean }> {
  const max = o.max ?? 1000;
  const out: PostView[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPostsForKey(em, organizationId, 'all', { from, to, tagId: o.tagId, limit: 100, cursor });
    out.push(...page.data);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && out.length < max);
  return { posts: out.slice(0, max).reverse(), truncated: Boolean(cursor) || out.length > max };
}

/** Ready media of the organization, newest first, with signed thumbnail URLs. */
export async function readyMedia(
  em: EntityManager,
  organizationId: string,
  storage: ObjectStorage | undefined,
  limit = 100,
): Promise<MediaView[]> {
  if (!storage) return [];
  const items = await em.find(
    MediaItem,
    { organization: organizationId, status: 'ready' },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit },
  );
  return Promise.all(items.map((m) => mediaView(m, storage)));
}

/** What the composer form holds (new post and edit). */
export interface ComposerValues {
  channelIds: string[];
  content: string;
  /** Per-platform text as typed (empty = use the main text). */
  platformTexts: Record<string, string>;
  mediaIds: string[];
  subreddit: string;
  redditTitle: string;
  /** queue: the earliest free queue slot of every chosen channel (domain/queues/queues.ts), as `queue: true`. */
  when: 'now' | 'later' | 'queue';
  /** datetime-local value in the viewer's zone. */
  publishAtLocal: string;
  /** The thread and first comment (web/thread-input.ts). */
  followUps: FollowUpValues;
  /** The per-platform option fields as typed, by field name (`options.tiktok.privacyLevel`: web/option-input.ts). */
  options: Record<string, string>;
  /** The Links section as typed (web/link-input.ts); absent: the form has none, and the choice stays as it is. */
  links?: LinkFields;
}

export function composerValuesFromForm(form: URLSearchParams): ComposerValues {
  const platformTexts: Record<string, string> = {};
  for (const [k, v] of form) {
    const m = /^text_([A-Z]+)$/.exec(k);
    if (m && isPlatform(m[1]!)) platformTexts[m[1]!] = v;
  }
  return {
    channelIds: [...new Set(form.getAll('channelIds').filter(Boolean))],
    content: form.get('content') ?? '',
    platformTexts,
    mediaIds: [...new Set(form.getAll('mediaIds').filter(Boolean))],
    subreddit: (form.get('subreddit') ?? '').trim(),
    redditTitle: (form.get('redditTitle') ?? '').trim(),
    when: form.get('when') === 'now' ? 'now' : form.get('when') === 'queue' ? 'queue' : 'later',
    publishAtLocal: form.get('publishAt') ?? '',
    followUps: followUpsFromForm(form),
    options: optionsFromForm(form),
    ...(hasLinkFields(form) ? { links: linkFieldsFromForm(form) } : {}),
  };
}

/** The links choice the form's Links section makes (its problems into `fields`); none without the section. */
export function formLinkChoice(v: Pick<ComposerValues, 'links'>, fields: FieldError[]): LinkChoice | undefined {
  if (!v.links) return undefined;
  const { choice, fields: wrong } = linkChoiceOf(v.links);
  fields.push(...wrong);
  return choice;
}

/**
 * What the API's schema of a post's content (domain/posts/content.ts) refuses of the content the
 * form sends, in the schema's words: a thread item's at its path as the domain writes it and the
 * form shows it (`thread[1].content`, web/thread-fields.ts), any other as the API's (`reddit.title`).
 */
export function contentErrors(schema: TSchema, content: Record<string, unknown>): FieldError[] {
  const sent = Object.fromEntries(Object.entries(content).filter(([, v]) => v !== undefined));
  return fieldErrors(Value.Errors(schema, sent)).map((f) => ({
    ...f,
    path: f.path.replace(/^(thread|threadByPlatform\.[A-Z]+)\.(\d+)/, '$1[$2]'),
  }));
}

/** The platforms of the channels as `options` names them (lower case). */
export const optionPlatforms = (channels: IChannel[]) => new Set(channels.map((c) => c.platform.toLowerCase()));

/** Per-platform texts that were filled in, for platforms among the channels. */
export function contentByPlatform(v: Pick<ComposerValues, 'platformTexts'>, channels: IChannel[]): Record<string, string> {
  const platforms = new Set(channels.map((c) => c.platform as string));
  return Object.fromEntries(Object.entries(v.platformTexts).filter(([p, t]) => t.trim() !== '' && platforms.has(p)));
}

/** A datetime-local value in the viewer's zone, as an ISO instant; null (and a field error) if unreadable. */
export function localInstant(local: string, tz: string, fields: FieldError[]): string | null {
  const at = parseLocalInput(local, tz);
  if (!at) {
    fields.push({ path: 'publishAt', message: 'choose a date and time' });
    return null;
  }
  return at.toISOString();
}

function publishAtFrom(local: string, tz: string, now: Date, fields: FieldError[]): Date | undefined {
  const at = localInstant(local, tz, fields);
  return at === null ? undefined : parsePublishAt(at, now, fields);
}

export interface Actor {
  em: EntityManager;
  organization: IOrganization;
  temporal: TemporalDeps | undefined;
  now: Date;
  tz: string;
  /** Reads what each channel's account can do now, to check the options against it (as the API does); absent: not read. */
  capabilities?: CapabilityDeps;
  /** The member, for approval (domain/posts/approval.ts). */
  requester: Requester;
}

/** The form's own checks, then the one create path (domain/posts/create.ts createPost); returns the post id. */
export async function createAppPost(actor: Actor, values: ComposerValues): Promise<string> {
  const fields: FieldError[] = [];
  // No channel in the form's words; any other refusal of the ids in the API schema's.
  if (!values.channelIds.length) fields.push({ path: 'channelIds', message: 'choose at least one channel' });
  else fields.push(...fieldErrors(Value.Errors(ChannelIds, values.channelIds), 'channelIds'));
  const publishAt = values.when === 'later' ? localInstant(values.publishAtLocal, actor.tz, fields) : null;
  // The form keeps texts for platforms no longer chosen and Reddit fields: only what applies is sent.
  const chosen = (await channelsOf(actor.em, actor.organization.id)).filter((c) => values.channelIds.includes(c.id));
  const content = {
    content: values.content,
    contentByPlatform: contentByPlatform(values, chosen),
    mediaIds: values.mediaIds,
    reddit: redditFields(values, chosen),
  };
  const followUps = threadInputFor(values.followUps, chosen);
  fields.push(...contentErrors(PostContent, { ...content, ...followUps }));
  // Hidden panels of platforms no longer chosen keep their fields: only the chosen platforms' go.
  const options = buildOptions(values.options, optionPlatforms(chosen), values.mediaIds, fields);
  // Without a choice of its own the post gets the organization's default (domain/links/choice.ts).
  const links = formLinkChoice(values, fields);
  const created = await createPost(
    actor.em,
    actor.temporal,
    {
      organization: actor.organization,
      source: 'app',
      key: null,
      channelIds: values.channelIds,
      ...content,
      publishAt,
      queue: values.when === 'queue',
      now: actor.now,
      followUps,
      options,
      ...(links ? { given: { links } } : {}),
      capabilities: actor.capabilities,
      requester: actor.requester,
    },
    fields,
  );
  return created.id;
}

/** The Reddit fields, with a Reddit channel chosen and either filled in (the schema then wants both); the subreddit without `r/`. */
export function redditFields(
  v: Pick<ComposerValues, 'subreddit' | 'redditTitle'>,
  channels: IChannel[],
): { subreddit: string; title: string } | null {
  if (!channels.some((c) => c.platform === 'REDDIT')) return null;
  if (!v.subreddit && !v.redditTitle) return null;
  return { subreddit: v.subreddit.replace(/^\/?r\//i, ''), title: v.redditTitle };
}

export interface AppEdit {
  content?: string;
  platformTexts?: Record<string, string>;
  mediaIds?: string[];
  /** A datetime-local value; unchanged from the post's own (to the minute) means "keep the time". */
  publishAtLocal?: string;
  /** An exact new time (drag and drop). */
  publishAt?: Date;
  /** The thread and first comment as the form has them; absent: unchanged. */
  followUps?: FollowUpValues;
  /** The option fields as the form has them (web/option-input.ts); absent: unchanged. */
  options?: Record<string, string>;
  /** The Links section as the form has it (web/link-input.ts); absent: unchanged. */
  links?: LinkFields;
}

/** The same checks and the same workflow Update as PATCH /v1/posts/{id}. */
export async function editAppPost(actor: Actor, postId: string, edit: AppEdit): Promise<PostView> {
  const orgId = actor.organization.id;
  const current = await getPostForKey(actor.em, orgId, postId, 'all');
  assertEditable(current);
  const fields: FieldError[] = [];
  let publishAt: Date | undefined;
  if (edit.publishAt) publishAt = parsePublishAt(edit.publishAt.toISOString(), actor.now, fields);
  else if (edit.publishAtLocal !== undefined && edit.publishAtLocal !== localInputValue(new Date(current.scheduledAt), actor.tz)) {
    publishAt = publishAtFrom(edit.publishAtLocal, actor.tz, actor.now, fields);
  }
  const channels = await loadTargetChannels(
    actor.em,
    orgId,
    current.channels.map((c) => c.channelId),
    'all',
  );
  const byPlatform = edit.platformTexts ? contentByPlatform({ platformTexts: edit.platformTexts }, channels) : undefined;
  const followUps = edit.followUps ? threadInputFor(edit.followUps, channels, current.threadByPlatform) : undefined;
  fields.push(
    ...contentErrors(ContentEdit, { content: edit.content, contentByPlatform: byPlatform, mediaIds: edit.mediaIds, ...followUps }),
  );
  // The form's options replace the post's (as PATCH does), but for those it has no field for.
  let options: Record<string, Record<string, unknown>> | undefined;
  if (edit.options) {
    const targeted = optionPlatforms(channels);
    const mediaIds = edit.mediaIds ?? current.media.map((m) => m.id);
    const given = buildOptions(edit.options, targeted, mediaIds, fields) as Record<string, Record<string, unknown>>;
    const kept = optionsWithoutFields(current.options);
    options = {};
    for (const p of targeted) {
      const merged = { ...kept[p], ...given[p] };
      if (Object.keys(merged).length) options[p] = merged;
    }
  }
  const links = formLinkChoice(edit, fields);
  if (fields.length) throw errors.validation(fields);
  await validateAndEditPost(
    actor.em,
    needTemporal(actor.temporal),
    orgId,
    current,
    {
      content: edit.content,
      contentByPlatform: byPlatform,
      publishAt,
      mediaIds: edit.mediaIds,
      // null clears: a thread or comment emptied in the form goes.
      ...(followUps ?? {}),
      ...(options ? { options: options as OptionsInput } : {}),
      ...(links ? { links } : {}),
    },
    null,
    actor.capabilities,
    actor.requester,
  );
  return getPostForKey(actor.em.fork(), orgId, postId, 'all');
}
