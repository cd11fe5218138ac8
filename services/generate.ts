// The generate scope (docs/decisions.md "AI assistants"): drafts of a post, one per target channel,
// that fit the channel's rules as create counts them (platforms/text-length.ts), and alt text for
// a media item from the media library's vision pass. Nothing is created or stored.
//
// A draft over a limit gets one correction round (the model is told its count and the limit);
// still over after that, it is cut at a grapheme boundary and flagged `truncated`.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IChannel, IMediaItem } from '../db/entities/index.ts';
import { describeImage, type VisionConfig } from '../activities/vision.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { rulesFor, type Platform } from '../platforms/catalog.ts';
import { countingNote, lengthOptions, measureChannelText } from '../platforms/text-length.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { chatCompletion, generatorUnavailable, type ChatConfig, type ChatMessage } from './chat-completions.ts';
import { ALT_TEXT_CHARS, getMediaItem, type MediaViewer } from '../domain/media.ts';
import { POST_LIMITS } from '../domain/posts/limits.ts';
import { loadPostMedia, loadTargetChannels } from '../domain/posts/checks.ts';

export type GenerateConfig = ChatConfig;

/** Limits of a brief (the route's schema and the MCP tool's state them). */
export const GENERATE_LIMITS = { promptChars: 4000, toneChars: 100 } as const;

/** What to set, in the answer of a route whose backend the operator has not configured (501: not retryable). */
export function notConfigured(what: string, settings: string[]): ApiError {
  return new ApiError('internal_error', `${what} is not configured on this server; the operator sets ${settings.join(', ')}.`, {
    status: 501,
    details: { settings },
  });
}

export interface GenerateRequest {
  organizationId: string;
  /** The API key asking: its channel list limits the channels and the media it may use. */
  key: MediaViewer;
  prompt: string;
  tone?: string;
  channelIds: string[];
  mediaIds: string[];
}

export interface Draft {
  channelId: string;
  platform: Platform;
  /** The text for the channel (use it as `content`, or as `contentByPlatform[platform]`). */
  content: string;
  /** Its length as the platform counts it, as create counts it. */
  characters: number;
  maxChars: number;
  /** REDDIT only: the post's title (the subreddit is the caller's choice: see missingFields). */
  reddit: { title: string; characters: number; maxChars: number } | null;
  /** Still over a limit after one correction round: cut at a grapheme boundary to fit. */
  truncated: boolean;
  /** What create needs for this channel that a draft cannot choose (reddit.subreddit, mediaIds). */
  missingFields: string[];
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** Characters as create's schemas count them (code points): the Reddit title, alt text. */
const codePoints = (s: string) => [...s].length;

/**
 * The longest prefix of `text`, ended at a grapheme boundary, that `measure` puts at or under
 * `max`. Binary search, then a step back where a cut changed the count (a URL cut in two).
 */
export function cutToFit(text: string, max: number, measure: (s: string) => number): string {
  const parts = Array.from(segmenter.segment(text), (s) => s.segment);
  const prefix = (k: number) => parts.slice(0, k).join('').trimEnd();
  let lo = 0;
  let hi = parts.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(prefix(mid)) <= max) lo = mid;
    else hi = mid - 1;
  }
  while (lo > 0 && measure(prefix(lo)) > max) lo--;
  return prefix(lo);
}

/** The model's answer: `{"text", "title"?}` as asked, or (a model that ignored that) the bare text. */
export function parseDraftReply(reply: string): { text: string; title?: string } {
  const unfenced = reply
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  const start = unfenced.indexOf('{');
  const end = unfenced.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const parsed = JSON.parse(unfenced.slice(start, end + 1)) as { text?: unknown; title?: unknown };
      if (typeof parsed.text === 'string') {
        return { text: parsed.text.trim(), ...(typeof parsed.title === 'string' ? { title: parsed.title.trim() } : {}) };
      }
    } catch {
      // not JSON after all: the bare text below
    }
  }
  return { text: unfenced.trim() };
}

function describeMedia(media: IMediaItem[]): string {
  if (!media.length) return '';
  const lines = media.map((m, i) => {
    const what = [m.description, m.altText ? `alt text: ${m.altText}` : null].filter(Boolean).join('; ');
    return `${i + 1}. ${m.type}${what ? `: ${what}` : ''}`;
  });
  return `\nAttached media (the post is published with them):\n${lines.join('\n')}`;
}

function systemPrompt(c: IChannel, maxChars: number, wantsTitle: boolean): string {
  const shape = wantsTitle
    ? `{"title": "<the post's title, at most ${POST_LIMITS.redditTitleChars} characters>", "text": "<the post's body>"}`
    : '{"text": "<the post>"}';
  return [
    `You write social media posts. Write one post for a ${c.platform} account.`,
    `The text must be at most ${maxChars} characters as ${c.platform} counts them${countingNote(c.platform)}; stay well under it.`,
    'Write only the post itself, ready to publish: no preamble, no notes, no quotation marks around it.',
    `Reply with only this JSON object and nothing else: ${shape}`,
  ].join('\n');
}

/** Channels that get the same draft: the same platform, limit and way of counting. */
function targetOf(c: IChannel): string {
  return JSON.stringify([c.platform, rulesFor(c.platform, c.maxChars).maxChars, lengthOptions(c.settings)]);
}

interface Measured {
  text: string;
  title: string | null;
  characters: number;
  titleCharacters: number;
  fits: boolean;
}

/** One draft for channels that count alike: a first answer, one correction round, then the cut. */
async function draftFor(cfg: GenerateConfig, c: IChannel, brief: string, fetchImpl: typeof fetch) {
  const { maxChars } = rulesFor(c.platform, c.maxChars);
  const wantsTitle = c.platform === 'REDDIT';
  const titleMax = POST_LIMITS.redditTitleChars;
  const measure = (s: string) => measureChannelText(c, s, maxChars).length;
  const check = (reply: string): Measured => {
    const { text, title } = parseDraftReply(reply);
    const t = wantsTitle ? (title ?? '') : null;
    const characters = measure(text);
    const titleCharacters = t === null ? 0 : codePoints(t);
    const fits = text !== '' && characters <= maxChars && (t === null || (t !== '' && titleCharacters <= titleMax));
    return { text, title: t, characters, titleCharacters, fits };
  };
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt(c, maxChars, wantsTitle) },
    { role: 'user', content: brief },
  ];
  const firstReply = await chatCompletion(cfg, messages, fetchImpl);
  let draft = check(firstReply);
  if (!draft.fits) {
    const problems = [
      draft.text === '' ? 'the text is empty' : null,
      draft.characters > maxChars
        ? `the text is ${draft.characters} characters as ${c.platform} counts them${countingNote(c.platform)}, over the limit of ${maxChars}`
        : null,
      draft.title === '' ? 'the title is missing' : null,
      draft.titleCharacters > titleMax ? `the title is ${draft.titleCharacters} characters, over the limit of ${titleMax}` : null,
    ].filter(Boolean);
    messages.push(
      { role: 'assistant', content: firstReply },
      {
        role: 'user',
        content: `That does not fit: ${problems.join('; ')}. Rewrite it to at most ${Math.floor(maxChars * 0.9)} characters, keeping the meaning. Reply with only the JSON object.`,
      },
    );
    draft = check(await chatCompletion(cfg, messages, fetchImpl));
  }
  if (draft.text === '') throw generatorUnavailable('its answer held no post text');
  let truncated = false;
  let { text, title } = draft;
  if (draft.characters > maxChars) {
    text = cutToFit(text, maxChars, measure);
    truncated = true;
  }
  if (title !== null) {
    // A title the model left out: the text's first line, as far as it fits.
    if (title === '') title = cutToFit(text.split('\n')[0]!, titleMax, codePoints);
    else if (codePoints(title) > titleMax) {
      title = cutToFit(title, titleMax, codePoints);
      truncated = true;
    }
  }
  return {
    content: text,
    characters: measure(text),
    maxChars,
    reddit: title === null ? null : { title, characters: codePoints(title), maxChars: titleMax },
    truncated,
  };
}

/**
 * POST /v1/generate/post and the MCP tool generate_post: a draft per channel, in the order asked.
 * The channels and media are checked as create checks them (the organization's, within the key's
 * list; ready media the key may see), so a draft can go straight into create.
 */
export async function generatePostDrafts(
  em: EntityManager,
  cfg: GenerateConfig | undefined,
  r: GenerateRequest,
  fetchImpl: typeof fetch = fetch,
): Promise<{ data: Draft[] }> {
  if (!cfg) throw notConfigured('Text generation', ['GENERATE_API_URL', 'GENERATE_MODEL', 'GENERATE_API_KEY (if the endpoint needs one)']);
  const channels = await loadTargetChannels(em, r.organizationId, r.channelIds, r.key.channels);
  const media = await loadPostMedia(em, r.organizationId, r.mediaIds, r.key);
  const brief = [`Brief: ${r.prompt}`, r.tone ? `Tone: ${r.tone}` : '', describeMedia(media)].filter(Boolean).join('\n');
  const byTarget = new Map<string, IChannel>();
  for (const c of channels) if (!byTarget.has(targetOf(c))) byTarget.set(targetOf(c), c);
  const drafts = new Map(
    await Promise.all([...byTarget].map(async ([target, c]) => [target, await draftFor(cfg, c, brief, fetchImpl)] as const)),
  );
  return {
    data: channels.map((c) => {
      const rules = rulesFor(c.platform, c.maxChars);
      return {
        channelId: c.id,
        platform: c.platform,
        ...drafts.get(targetOf(c))!,
        missingFields: [
          ...(rules.requiredFields.includes('reddit.subreddit') ? ['reddit.subreddit'] : []),
          ...(rules.requiresMedia && media.length === 0 ? ['mediaIds'] : []),
        ],
      };
    }),
  };
}

export interface AltText {
  mediaId: string;
  altText: string;
  characters: number;
  truncated: boolean;
}

/**
 * POST /v1/generate/alt-text: the vision pass (activities/vision.ts, VISION_* settings) on a ready
 * image, or on a video's thumbnail. A suggestion: the media item is not changed.
 */
export async function generateAltText(
  em: EntityManager,
  storage: ObjectStorage | undefined,
  vision: VisionConfig | undefined,
  r: { organizationId: string; key: MediaViewer; mediaId: string },
  fetchImpl: typeof fetch = fetch,
): Promise<AltText> {
  if (!vision) throw notConfigured('The vision pass', ['VISION_API_URL', 'VISION_MODEL', 'VISION_API_KEY (if the endpoint needs one)']);
  const item = await getMediaItem(em, r.organizationId, r.mediaId, r.key);
  if (item.status !== 'ready') {
    throw errors.conflict(`The media item is ${item.status}; alt text is generated for ready media only.`, { mediaId: item.id });
  }
  const image = item.type === 'image' || item.type === 'gif';
  if (!image && !(item.type === 'video' && item.thumbnailKey)) {
    throw errors.validation([
      {
        path: 'mediaId',
        message: `is ${item.type === 'video' ? 'a video without a thumbnail' : `a ${item.type}`}; alt text is generated for images and videos`,
      },
    ]);
  }
  if (!storage) throw new Error('object storage must be configured for media');
  // As the vision pass of the upload workflow: the thumbnail is small enough to send inline.
  const bytes = await storage.read(item.thumbnailKey ?? item.storageKey);
  const contentType = item.thumbnailKey ? 'image/webp' : item.mimeType;
  let described: string;
  try {
    described = await describeImage(
      { ...vision, timeoutMs: vision.timeoutMs ?? 30_000 },
      bytes,
      contentType,
      item.altText ?? null,
      fetchImpl,
    );
  } catch {
    throw generatorUnavailable('the vision endpoint gave no description');
  }
  // describeImage cuts its answer by UTF-16 units: never end on half a surrogate pair.
  described = described.replace(/[\ud800-\udbff]$/, '');
  // As the upload's `altText` takes it (characters: code points).
  const truncated = codePoints(described) > ALT_TEXT_CHARS;
  const altText = truncated ? cutToFit(described, ALT_TEXT_CHARS, codePoints) : described;
  return { mediaId: item.id, altText, characters: codePoints(altText), truncated };
}
