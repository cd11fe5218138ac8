// A draft as the composer's form holds it, both ways: the form's values kept as a draft's fields
// (domain/posts/drafts.ts: the post-content fields as given, its channels, its intended time), and
// a draft's fields as the form's values when it opens in the composer. Saving a draft runs none of
// a post's checks (its text may be too long for a channel, its channels may be none); only the
// shapes the API's draft body takes (domain/posts/content.ts ContentEdit), so a draft kept here
// reads back through GET /v1/drafts as one kept there.
import { Value } from '@sinclair/typebox/value';
import type { IChannel, ThreadItem } from '../db/entities/index.ts';
import { DraftChannelIds, type DraftInput, type DraftView } from '../domain/posts/drafts.ts';
import { ContentEdit, type ContentBody } from '../domain/posts/content.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { fieldErrors } from '../lib/schema-words.ts';
import { buildOptions, optionValues } from './option-input.ts';
import {
  contentByPlatform,
  contentErrors,
  formLinkChoice,
  localInstant,
  optionPlatforms,
  redditFields,
  type ComposerValues,
} from './post-actions.ts';
import { threadInputFor } from './thread-input.ts';
import { localInputValue, zonedParts, zonedToUtc, type CalendarDay } from './time.ts';

/** A draft's channels as the API's draft body bounds them: maybe none. */

/** A draft's content fields, typed as the post-content schema has them (a draft view holds them loosely). */
export const draftContent = (d: DraftView) => d as unknown as Partial<ContentBody>;

/** Thread items as the composer holds them: a draft kept through the API may leave out an item's media. */
const threadItems = (items: { content: string; mediaIds?: string[] }[] | null | undefined): ThreadItem[] =>
  (items ?? []).map((i) => ({ content: i.content, mediaIds: i.mediaIds ?? [] }));

/** A draft's own per-platform threads (set through the API): the composer names them and keeps them, as a post's. */
export const draftThreads = (d: DraftView): Record<string, ThreadItem[]> =>
  Object.fromEntries(Object.entries(draftContent(d).threadByPlatform ?? {}).map(([p, items]) => [p, threadItems(items)]));

/**
 * The form's values as a draft's fields. Every content field the form has a field for is given: a
 * value, or null when the form leaves it empty (so an update removes it, and the draft is what the
 * form shows); `links` the Links section's choice (a form without the section leaves the draft's
 * as it is); fields it has none for (set through the API) are left out, so they stay.
 * The per-platform parts (texts, options, the Reddit fields) apply to the chosen channels, as a
 * post's do; while no channel is chosen, to every channel of the organization, so nothing typed
 * for a platform is dropped before a channel is picked. `kept`: the draft being saved again (its
 * per-platform threads, set through the API, stay as a post's do on edit).
 */
export function draftInputFromForm(v: ComposerValues, channels: IChannel[], kept: DraftView | null, tz: string): DraftInput {
  const fields: FieldError[] = [];
  fields.push(...fieldErrors(Value.Errors(DraftChannelIds, v.channelIds), 'channelIds'));
  const chosen = channels.filter((c) => v.channelIds.includes(c.id));
  const scope = chosen.length ? chosen : channels;
  const followUps = threadInputFor(v.followUps, chosen, kept ? draftThreads(kept) : {});
  const options = buildOptions(v.options, optionPlatforms(scope), v.mediaIds, fields);
  const byPlatform = contentByPlatform(v, scope);
  const links = formLinkChoice(v, fields);
  const content = {
    content: v.content === '' ? null : v.content,
    contentByPlatform: Object.keys(byPlatform).length ? byPlatform : null,
    mediaIds: v.mediaIds.length ? v.mediaIds : null,
    reddit: redditFields(v, scope),
    thread: followUps.thread,
    threadByPlatform: Object.keys(followUps.threadByPlatform).length ? followUps.threadByPlatform : null,
    firstComment: followUps.firstComment,
    options: Object.keys(options).length ? options : null,
  };
  fields.push(...contentErrors(ContentEdit, Object.fromEntries(Object.entries(content).filter(([, x]) => x !== null))));
  // The time field, if filled in: the draft's intended time; empty, none.
  const intendedAt = v.publishAtLocal.trim() === '' ? null : localInstant(v.publishAtLocal, tz, fields);
  if (fields.length) throw errors.validation(fields);
  // `links` is checked by formLinkChoice, not again by ContentEdit: one message for one problem.
  return { ...content, ...(links ? { links } : {}), channelIds: v.channelIds, intendedAt };
}

/** A draft's fields as the composer's values: what it was saved with, its time in the viewer's zone. */
export function composerValuesOfDraft(d: DraftView, tz: string): ComposerValues {
  const c = draftContent(d);
  return {
    channelIds: d.channelIds,
    content: c.content ?? '',
    platformTexts: { ...(c.contentByPlatform ?? {}) },
    mediaIds: c.mediaIds ?? [],
    subreddit: c.reddit?.subreddit ?? '',
    redditTitle: c.reddit?.title ?? '',
    // Without a time, "now" is what scheduling it would do; with one, the composer offers it.
    when: d.intendedAt ? 'later' : 'now',
    publishAtLocal: d.intendedAt ? localInputValue(new Date(d.intendedAt), tz) : '',
    followUps: { thread: threadItems(c.thread), firstComment: c.firstComment?.content ?? '' },
    options: optionValues(c.options ?? {}),
  };
}

/** The time of day a draft without one gets on a day it is given (the composer's default for a day, too). */
const DEFAULT_HOUR = 9;

/** A draft moved to a day (the viewer's zone): its time of day kept, or 09:00 when it had no time. */
export function intendedOnDay(current: string | null, day: CalendarDay, tz: string): Date {
  if (!current) return zonedToUtc({ ...day, hour: DEFAULT_HOUR, minute: 0 }, tz);
  const at = zonedParts(new Date(current), tz);
  return zonedToUtc({ ...day, hour: at.hour, minute: at.minute, second: at.second }, tz);
}
