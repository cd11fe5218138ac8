// Checks a post (or an edit) against its channels' rules (DESIGN.md §3): ownership, the key's
// channel list, reauth, text length per channel as its platform counts it (platforms/text-length.ts)
// of the text as it will be sent (its links as short links when the post shortens them:
// domain/links/rewrite.ts asSent), media and required fields.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel, MediaItem, type IChannel, type IMediaItem, type LinkChoice } from '../../db/entities/index.ts';
import { parseInstant } from '../../lib/date-time.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { countingNote, measureChannelText, type Measured } from '../../platforms/text-length.ts';
import { MEDIA_LIMITS, TIKTOK_PHOTO_MIME_TYPES, rulesFor } from '../../platforms/catalog.ts';
import { channelsOutsideKey } from '../key-channels.ts';
import { hiddenMediaIds, type MediaViewer } from '../media.ts';
import { asSent } from '../links/rewrite.ts';

export { graphemeLength } from '../../platforms/text-length.ts';

export const PUBLISH_AT_GRACE_MS = 5 * 60 * 1000;
/**
 * The pg driver writes an instant past year 9999 as `+010000-…`, which Postgres refuses, and the
 * duplicate_post check looks a day either side of publishAt: a later publishAt would be a 500.
 */
export const LATEST_PUBLISH_AT = new Date(Date.UTC(9999, 11, 31));

/** A post's (or a series' first) publish time: a date-time with an offset, at most 5 minutes past, before LATEST_PUBLISH_AT. */
export function parsePublishAt(value: string, now: Date, fields: FieldError[]): Date | undefined {
  const at = parseInstant(value, 'publishAt', fields);
  if (!at) return undefined;
  if (at.getTime() < now.getTime() - PUBLISH_AT_GRACE_MS) {
    fields.push({ path: 'publishAt', message: 'is more than 5 minutes in the past' });
    return undefined;
  }
  if (at.getTime() >= LATEST_PUBLISH_AT.getTime()) {
    fields.push({ path: 'publishAt', message: `must be before ${LATEST_PUBLISH_AT.toISOString()}` });
    return undefined;
  }
  return at;
}

export interface ContentInput {
  content: string;
  contentByPlatform: Record<string, string>;
  media: Pick<IMediaItem, 'id' | 'type'>[];
  reddit?: { subreddit: string; title: string } | null;
  /** The post's links choice: its texts are measured as they will be sent. */
  links?: LinkChoice;
}

/** Loads the target channels, enforcing organization, key limits and channel status. */
export async function loadTargetChannels(
  em: EntityManager,
  organizationId: string,
  channelIds: string[],
  keyChannels: 'all' | string[],
): Promise<IChannel[]> {
  const outside = channelsOutsideKey(keyChannels, channelIds);
  if (outside.length) {
    throw new ApiError('forbidden_scope', 'This API key is limited to other channels.', { details: { channelIds: outside } });
  }
  const found = await em.find(Channel, { id: { $in: channelIds }, organization: organizationId });
  const unknown = channelIds.filter((id) => !found.some((c) => c.id === id));
  if (unknown.length) {
    throw errors.validation(unknown.map((id) => ({ path: 'channelIds', message: `unknown channel ${id}` })));
  }
  const byId = new Map(found.map((c) => [c.id, c]));
  return channelIds.map((id) => byId.get(id)!);
}

export function assertChannelsUsable(channels: IChannel[]): void {
  const reauth = channels.filter((c) => c.status === 'reauth_required').map((c) => c.id);
  if (reauth.length) {
    throw new ApiError('reauth_required', 'A target channel must be reconnected before posting to it.', {
      details: { channelIds: reauth },
    });
  }
  const disabled = channels.filter((c) => c.status === 'disabled').map((c) => c.id);
  if (disabled.length) {
    throw errors.validation(disabled.map((id) => ({ path: 'channelIds', message: `channel ${id} is disabled` })));
  }
}

/** Returns the text per channel id, or throws validation_failed listing every broken rule (with those already in `fields`). */
export function channelTexts(channels: IChannel[], input: ContentInput, fields: FieldError[] = []): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const [platform] of Object.entries(input.contentByPlatform)) {
    if (!channels.some((c) => c.platform === platform)) {
      fields.push({ path: `contentByPlatform.${platform}`, message: 'no target channel is on this platform' });
    }
  }
  for (const c of channels) {
    const rules = rulesFor(c.platform, c.maxChars);
    const override = input.contentByPlatform[c.platform];
    const path = override !== undefined ? `contentByPlatform.${c.platform}` : 'content';
    const text = override ?? input.content;
    texts[c.id] = text;
    const { length, exact } = measureSent(c, text, input.links);
    if (length > rules.maxChars) {
      const is = exact ? `is ${length}` : `is at least ${length}`;
      fields.push({
        path,
        message: `${is} characters${countingNote(c.platform)}${input.links?.shorten ? ' with its links as short links' : ''}; ${c.platform} channel ${c.id} allows ${rules.maxChars}`,
      });
    }
    if (text === '' && input.media.length === 0) fields.push({ path, message: `is empty for channel ${c.id}` });
    if (rules.requiresMedia && input.media.length === 0) {
      fields.push({ path: 'mediaIds', message: `${c.platform} channel ${c.id} requires an image or video` });
    }
    fields.push(...mediaProblems(c, input.media));
    if (rules.requiredFields.includes('reddit.subreddit') && !input.reddit) {
      fields.push({ path: 'reddit', message: `REDDIT channel ${c.id} requires reddit.subreddit and reddit.title` });
    }
  }
  if (fields.length) throw errors.validation(fields);
  return texts;
}

/**
 * A text's length on the channel as it will be sent (its links as short links when the post
 * shortens them), as its platform counts it, and the channel's limit: what the checks of a post,
 * its thread items and the composer's counters measure.
 */
export function measureSent(c: IChannel, text: string, links?: LinkChoice): Measured & { maxChars: number } {
  const { maxChars } = rulesFor(c.platform, c.maxChars);
  return { ...measureChannelText(c, asSent(text, links), maxChars), maxChars };
}

/** A valid text's length on the channel as it will be sent, as its platform counts it, and the channel's limit. */
export function measureForChannel(c: IChannel, text: string, links?: LinkChoice): { characters: number; maxChars: number } {
  const { length, maxChars } = measureSent(c, text, links);
  return { characters: length, maxChars };
}

/**
 * The media of a post, in order. `viewer` (a channel-limited API key) cannot attach what it may
 * not see (domain/media.ts hiddenMediaIds): such an id is answered exactly like an unknown one.
 */
export async function loadPostMedia(
  em: EntityManager,
  organizationId: string,
  mediaIds: string[],
  viewer?: MediaViewer,
  /** Where an id is named in the request (a thread item's media): `mediaIds` by default. */
  pathOf: (id: string) => string = () => 'mediaIds',
): Promise<IMediaItem[]> {
  if (!mediaIds.length) return [];
  const found = await em.find(MediaItem, { id: { $in: mediaIds }, organization: organizationId });
  const hidden = viewer ? await hiddenMediaIds(em, organizationId, viewer, mediaIds) : new Set<string>();
  const fields: FieldError[] = [];
  for (const id of mediaIds) {
    const item = found.find((m) => m.id === id);
    if (!item || hidden.has(id)) fields.push({ path: pathOf(id), message: `unknown media ${id}` });
    else if (item.status !== 'ready')
      fields.push({ path: pathOf(id), message: `media ${id} is ${item.status}; only ready media can be attached` });
  }
  if (fields.length) throw errors.validation(fields);
  return mediaIds.map((id) => found.find((m) => m.id === id)!);
}

/**
 * Each platform's media limits: count, accepted types, a video alone, the kind it requires.
 * TikTok: one video, or a photo post of 1 to 35 JPEG or WEBP images (checked where the items'
 * MIME types are known).
 */
export function mediaProblems(
  c: IChannel,
  media: (Pick<IMediaItem, 'id' | 'type'> & Partial<Pick<IMediaItem, 'mimeType'>>)[],
): FieldError[] {
  if (!media.length) return [];
  const limits = MEDIA_LIMITS[c.platform];
  const out: FieldError[] = [];
  const where = `${c.platform} channel ${c.id}`;
  const tiktok = c.platform === 'TIKTOK';
  if (media.length > limits.maxItems) out.push({ path: 'mediaIds', message: `${where} takes at most ${limits.maxItems} attachment(s)` });
  const wrong = media.filter((m) => !limits.types.includes(m.type));
  if (wrong.length)
    out.push({ path: 'mediaIds', message: `${where} does not accept ${[...new Set(wrong.map((m) => m.type))].join(', ')} files` });
  if (limits.videoAlone && media.length > 1 && media.some((m) => m.type === 'video')) {
    out.push({
      path: 'mediaIds',
      message: tiktok
        ? `${where} takes one video, or a photo post of 1 to ${limits.maxItems} images, not both`
        : `${where} takes a video only on its own`,
    });
  }
  const unformatted = tiktok ? media.filter((m) => m.type === 'image' && m.mimeType && !TIKTOK_PHOTO_MIME_TYPES.includes(m.mimeType)) : [];
  if (unformatted.length) {
    const which = unformatted.map((m) => `${m.id} is ${m.mimeType}`).join(', ');
    out.push({ path: 'mediaIds', message: `${where} takes JPEG or WEBP images in a photo post (${which})` });
  }
  if (limits.requires === 'video' && !media.some((m) => m.type === 'video'))
    out.push({ path: 'mediaIds', message: `${where} requires a video` });
  if (limits.requires === 'image' && !media.some((m) => m.type === 'image' || m.type === 'gif')) {
    out.push({ path: 'mediaIds', message: `${where} requires an image` });
  }
  return out;
}
