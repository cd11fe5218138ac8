// The composer's thread and first comment, as the form sends them: items `thread_<n>` (text) with
// `thread_<n>_media` (media ids), in the order of n, and `firstComment`; turned into what
// createPost and validateAndEditPost take (domain/posts/thread.ts ThreadInput), which
// web/post-actions.ts checks with the rest of the post's content against its schema.
import type { IChannel, ThreadItem } from '../db/entities/index.ts';
import type { ThreadInput } from '../domain/posts/thread.ts';
import { FOLLOW_UPS, isPlatform } from '../platforms/catalog.ts';

export interface FollowUpValues {
  /** The thread's items in order: a blank slot (no text, no media) is no item. */
  thread: ThreadItem[];
  firstComment: string;
}

export const NO_FOLLOW_UPS: FollowUpValues = { thread: [], firstComment: '' };

/** The marker field of the section: a form without it (a script's) leaves a post's follow-ups as they are. */
export const hasFollowUpFields = (form: URLSearchParams) => form.get('followUps') === '1';

export function followUpsFromForm(form: URLSearchParams): FollowUpValues {
  const slots = new Map<number, ThreadItem>();
  for (const [k, v] of form) {
    // At most three digits: the form never has more slots, and a forged name cannot make a huge one.
    const m = /^thread_(\d{1,3})(_media)?$/.exec(k);
    if (!m) continue;
    const n = Number(m[1]);
    const item = slots.get(n) ?? { content: '', mediaIds: [] };
    if (!m[2]) item.content = v;
    else if (v && !item.mediaIds.includes(v)) item.mediaIds.push(v);
    slots.set(n, item);
  }
  const thread = [...slots]
    .sort(([a], [b]) => a - b)
    .map(([, item]) => item)
    .filter((item) => item.content.trim() !== '' || item.mediaIds.length > 0);
  return { thread, firstComment: form.get('firstComment') ?? '' };
}

/**
 * The follow-ups for the domain. The form has one thread for all channels: a chosen platform that
 * takes none (the composer's hint names them) gets `threadByPlatform[P] = []`, so the post goes
 * there alone rather than being refused. `kept`: the post's own per-platform threads (set through
 * the API, not shown as fields), which an edit leaves as they are.
 */
export function threadInputFor(v: FollowUpValues, channels: IChannel[], kept: Record<string, ThreadItem[]> = {}): ThreadInput {
  const threadByPlatform: Record<string, ThreadItem[]> = {};
  for (const [p, items] of Object.entries(kept)) if (isPlatform(p) && FOLLOW_UPS[p].kind === 'thread') threadByPlatform[p] = items;
  if (v.thread.length) for (const c of channels) if (FOLLOW_UPS[c.platform].kind !== 'thread') threadByPlatform[c.platform] = [];
  return {
    thread: v.thread.length ? v.thread : null,
    threadByPlatform,
    firstComment: v.firstComment.trim() === '' ? null : { content: v.firstComment },
  };
}
