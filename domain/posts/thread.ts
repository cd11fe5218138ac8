// Threads and first comments: which follow-up items each channel of a post gets, and their checks.
//
// Rules (platforms/catalog.ts FOLLOW_UPS says which platform takes what):
// - `thread` is a list of replies published after the post, each a reply to the item before.
//   `threadByPlatform[P]` replaces it on platform P; `threadByPlatform[P] = []` posts there
//   without a thread.
// - `firstComment` is, on a comment platform (Facebook, Instagram, LinkedIn, YouTube, Reddit),
//   one comment under the post; on a thread platform (X, Bluesky, Mastodon, Threads), the first
//   reply, before the thread's items.
// - A thread aimed at a comment platform, and a thread or first comment aimed at a platform that
//   takes neither (Telegram, Discord, Pinterest, TikTok), is refused with its path: nothing
//   asked for is dropped silently.
// - A thread item is checked as a post of its platform: its length as the platform counts it (of
//   the text as it will be sent: its links as short links when the post shortens them),
//   its media against the platform's limits, not empty; at most MAX_THREAD_ITEMS replies on a
//   channel (the first comment included).
// - A comment is text only, 1 to FOLLOW_UPS.maxChars characters (graphemes).
// - Positions: 0 is the post itself, follow-ups are 1, 2, …, in publishing order.
// - duplicate_post compares a channel's whole conversation: the post's text and its items', in order.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IChannel, IMediaItem, LinkChoice, ThreadItem } from '../../db/entities/index.ts';
import type { FieldError } from '../../lib/errors.ts';
import { FOLLOW_UPS } from '../../platforms/catalog.ts';
import { countingNote, graphemeLength } from '../../platforms/text-length.ts';
import type { MediaViewer } from '../media.ts';
import { loadPostMedia, measureSent, mediaProblems } from './checks.ts';
import { asSent } from '../links/rewrite.ts';

export interface ThreadInput {
  thread: ThreadItem[] | null;
  threadByPlatform: Record<string, ThreadItem[]>;
  firstComment: { content: string } | null;
}

/** A channel's follow-up item, as its post_channel_items row holds it. */
export interface FollowUpItem {
  position: number;
  kind: 'reply' | 'comment';
  content: string;
  mediaIds: string[];
}

/** A thread item as a request gives it (its media list may be left out). */
export interface ThreadItemBody {
  content: string;
  mediaIds?: string[];
}

const items = (list: ThreadItemBody[]): ThreadItem[] => list.map((i) => ({ content: i.content, mediaIds: i.mediaIds ?? [] }));

/** The follow-ups a request body asks for. */
export function threadInputOf(body: {
  thread?: ThreadItemBody[] | null;
  threadByPlatform?: Record<string, ThreadItemBody[]>;
  firstComment?: { content: string } | null;
}): ThreadInput {
  return {
    thread: body.thread ? items(body.thread) : null,
    threadByPlatform: Object.fromEntries(Object.entries(body.threadByPlatform ?? {}).map(([p, list]) => [p, items(list)])),
    firstComment: body.firstComment ?? null,
  };
}

export const NO_THREAD: ThreadInput = { thread: null, threadByPlatform: {}, firstComment: null };

/** Every media id the follow-ups name, with the path of its first mention (where an unknown one is reported). */
export function threadMedia(input: ThreadInput): Map<string, string> {
  const out = new Map<string, string>();
  const add = (items: ThreadItem[], base: string) =>
    items.forEach((item, i) => {
      for (const id of item.mediaIds) if (!out.has(id)) out.set(id, `${base}[${i}].mediaIds`);
    });
  add(input.thread ?? [], 'thread');
  for (const [platform, items] of Object.entries(input.threadByPlatform)) add(items, `threadByPlatform.${platform}`);
  return out;
}

/**
 * Each channel's follow-up items, by channel id; what breaks a rule goes to `fields` with its path
 * (`thread[1].content`, `threadByPlatform.X[0].mediaIds`, `firstComment.content`).
 */
export function channelFollowUps(
  channels: IChannel[],
  input: ThreadInput,
  media: Map<string, Pick<IMediaItem, 'id' | 'type'>>,
  fields: FieldError[],
  /** The post's links choice: each text is measured as it will be sent. */
  links?: LinkChoice,
): Record<string, FollowUpItem[]> {
  const out: Record<string, FollowUpItem[]> = {};
  for (const platform of Object.keys(input.threadByPlatform)) {
    if (!channels.some((c) => c.platform === platform))
      fields.push({ path: `threadByPlatform.${platform}`, message: 'no target channel is on this platform' });
  }
  const reported = new Set<string>();
  const report = (f: FieldError) => {
    const key = `${f.path}\u0000${f.message}`;
    if (!reported.has(key)) fields.push(f);
    reported.add(key);
  };
  for (const c of channels) {
    const follow = FOLLOW_UPS[c.platform];
    const own = input.threadByPlatform[c.platform];
    const thread = own ?? input.thread ?? [];
    const threadPath = own !== undefined ? `threadByPlatform.${c.platform}` : 'thread';
    const where = `${c.platform} channel ${c.id}`;
    const items: FollowUpItem[] = [];
    if (follow.kind === 'thread') {
      if (input.firstComment) items.push(reply(input.firstComment.content, []));
      thread.forEach((item, i) => {
        items.push(reply(item.content, item.mediaIds));
        const path = `${threadPath}[${i}]`;
        const { length, exact, maxChars } = measureSent(c, item.content, links);
        if (length > maxChars) {
          const is = exact ? `is ${length}` : `is at least ${length}`;
          report({ path: `${path}.content`, message: `${is} characters${countingNote(c.platform)}; ${where} allows ${maxChars}` });
        }
        const itemMedia = item.mediaIds.map((id) => media.get(id)).filter((m) => m !== undefined);
        if (item.content.trim() === '' && itemMedia.length === 0) report({ path, message: 'is empty: give it content or media' });
        for (const p of mediaProblems(c, itemMedia)) report({ path: `${path}.mediaIds`, message: p.message });
      });
      if (items.length > follow.maxItems) {
        report({
          path: threadPath,
          message: `${where} takes at most ${follow.maxItems} replies after the post${input.firstComment ? ' (firstComment is the first)' : ''}; ${items.length} given`,
        });
      }
      if (input.firstComment) checkText(input.firstComment.content, links, c, 'firstComment.content', report);
    } else {
      if (thread.length) {
        const instead = follow.kind === 'comment' ? 'its follow-up is firstComment' : 'it takes no replies or comments';
        report({
          path: threadPath,
          message: `${where} takes no thread (${instead}); set threadByPlatform.${c.platform} to [] to publish the post there alone`,
        });
      }
      if (input.firstComment) {
        if (follow.kind === 'comment') {
          items.push({ position: 1, kind: 'comment', content: input.firstComment.content, mediaIds: [] });
          const length = graphemeLength(asSent(input.firstComment.content, links));
          if (length > follow.maxChars)
            report({ path: 'firstComment.content', message: `is ${length} characters; a comment on ${where} allows ${follow.maxChars}` });
          if (input.firstComment.content.trim() === '') report({ path: 'firstComment.content', message: 'is empty' });
        } else {
          report({ path: 'firstComment', message: `${where} takes no comments; post there without firstComment` });
        }
      }
    }
    out[c.id] = items.map((item, i) => ({ ...item, position: i + 1 }));
  }
  return out;
}

function reply(content: string, mediaIds: string[]): FollowUpItem {
  return { position: 0, kind: 'reply', content, mediaIds };
}

/** The first comment as the first reply of a thread: within the channel's own limit as sent, not empty. */
function checkText(text: string, links: LinkChoice | undefined, c: IChannel, path: string, report: (f: FieldError) => void): void {
  const { length, exact, maxChars } = measureSent(c, text, links);
  if (length > maxChars) {
    const is = exact ? `is ${length}` : `is at least ${length}`;
    report({ path, message: `${is} characters${countingNote(c.platform)}; ${c.platform} channel ${c.id} allows ${maxChars}` });
  }
  if (text.trim() === '') report({ path, message: 'is empty' });
}

/** What duplicate_post compares after the post's text: the items' texts, normalized, one per line. */
export function followUpKey(items: FollowUpItem[] | undefined): string {
  return (items ?? []).map((i) => i.content.trim().replace(/\s+/g, ' ')).join('\n');
}

/**
 * The follow-ups of a post (create, validate, edit): their media loaded (as the post's own,
 * within what the key may see), then channelFollowUps. Problems go to `fields`.
 */
export async function checkFollowUps(
  em: EntityManager,
  organizationId: string,
  channels: IChannel[],
  input: ThreadInput,
  viewer: MediaViewer | undefined,
  fields: FieldError[],
  links?: LinkChoice,
): Promise<Record<string, FollowUpItem[]>> {
  const paths = threadMedia(input);
  const media = await loadPostMedia(em, organizationId, [...paths.keys()], viewer, (id) => paths.get(id)!);
  return channelFollowUps(channels, input, new Map(media.map((m) => [m.id, m])), fields, links);
}

/** A follow-up's length as sent, as its kind is counted on the channel, and its limit (POST /v1/posts/validate). */
export function measureFollowUp(c: IChannel, item: FollowUpItem, links?: LinkChoice): { characters: number; maxChars: number } {
  const follow = FOLLOW_UPS[c.platform];
  if (item.kind === 'comment' && follow.kind === 'comment')
    return { characters: graphemeLength(asSent(item.content, links)), maxChars: follow.maxChars };
  const { length, maxChars } = measureSent(c, item.content, links);
  return { characters: length, maxChars };
}
