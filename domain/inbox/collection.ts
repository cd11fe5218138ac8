// When the comments under a published channel post are read, and how a conversation is put
// together, pure (no database). Rules:
//
// 1. A channel post is read first when the comments sweep finds it published (the sweep runs
//    every minute), then more often while it is young: every 5 minutes in its first hour, every
//    15 minutes until 6 hours, hourly until a day, every 6 hours until a week, daily until 30
//    days (CADENCE). The age is counted from when it was published.
// 2. The last read is at 30 days (FOLLOW_FOR); after it the post is no longer followed, unless a
//    read is asked for (which reads once and moves nothing).
// 3. A read that fails is tried again after RETRY_AFTER, or at its next time by the cadence if
//    that comes first; within the 30 days only, as rule 2 says.
// 4. A conversation is a tree by the platforms' ids: a comment hangs under the comment it answers;
//    one that answers the post, one of its thread items, or something no longer shown (removed,
//    blocked) is at the top, in the order written. A comment listed twice counts once.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Rule 1: up to each age, the time between reads. */
export const CADENCE: readonly { until: number; every: number }[] = [
  { until: HOUR, every: 5 * MINUTE },
  { until: 6 * HOUR, every: 15 * MINUTE },
  { until: DAY, every: HOUR },
  { until: 7 * DAY, every: 6 * HOUR },
  { until: 30 * DAY, every: DAY },
];
/** Rule 2. */
export const FOLLOW_FOR = 30 * DAY;
/** Rule 3. */
export const RETRY_AFTER = 15 * MINUTE;

/** The time between reads at this age (rule 1); the last band's past its end. */
function every(age: number): number {
  return (CADENCE.find((band) => age < band.until) ?? CADENCE[CADENCE.length - 1]!).every;
}

/** After a read at `at` (ok or failed): when the next one is, or null once the post is no longer followed (rules 1–3). */
export function nextReadAt(publishedAt: Date, at: Date, ok: boolean): Date | null {
  const end = publishedAt.getTime() + FOLLOW_FOR;
  if (at.getTime() >= end) return null;
  const gap = every(at.getTime() - publishedAt.getTime());
  const next = at.getTime() + (ok ? gap : Math.min(gap, RETRY_AFTER));
  return new Date(Math.min(next, end));
}

/** What rule 4 needs of a comment. */
export interface Threadable {
  platformCommentId: string;
  parentPlatformId: string;
  /** When it was written (ISO 8601). */
  createdAt: string;
}

export type Thread<T extends Threadable> = T & { replies: Thread<T>[] };

/** Rule 4: the comments as a tree, each level in the order written (ties by platform id). */
export function conversation<T extends Threadable>(comments: T[]): Thread<T>[] {
  const nodes = new Map<string, Thread<T>>(comments.map((c) => [c.platformCommentId, { ...c, replies: [] }]));
  const top: Thread<T>[] = [];
  // A platform answering nonsense (a comment answering itself, two answering each other) puts
  // them at the top rather than in a loop.
  const circular = (node: Thread<T>) => {
    let at = nodes.get(node.parentPlatformId);
    for (let steps = 0; at && steps <= nodes.size; steps++, at = nodes.get(at.parentPlatformId)) if (at === node) return true;
    return false;
  };
  for (const node of nodes.values()) {
    const parent = nodes.get(node.parentPlatformId);
    (parent && !circular(node) ? parent.replies : top).push(node);
  }
  const order = (list: Thread<T>[]) => {
    list.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.platformCommentId < b.platformCommentId ? -1 : 1));
    for (const n of list) order(n.replies);
  };
  order(top);
  return top;
}
