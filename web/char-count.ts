// The character counters: a text's length on one channel, measured by the functions post
// validation calls (domain/posts/checks.ts measureSent, domain/posts/thread.ts measureFollowUp: the
// text as it will be sent, its links as short links when the post shortens them), against the
// limit. One markup for the composer's post text, each thread item and the first comment
// (composer.js keeps them live), and the Inbox's replies (inbox.js): graphemes in the page, or,
// data-count-rule="server", counts from POST /web/api/text-lengths: X's and Mastodon's weighted
// counts, and every count while links become short links (the page does not rewrite them).
import type { IChannel, LinkChoice } from '../db/entities/index.ts';
import { measureSent } from '../domain/posts/checks.ts';
import { measureFollowUp } from '../domain/posts/thread.ts';
import { FOLLOW_UPS } from '../platforms/catalog.ts';
import { countedOnServer } from '../platforms/text-length.ts';
import { html, type SafeHtml } from './html.ts';
import { platformBadge, platformLabel } from './ui.ts';

export interface Measured {
  length: number;
  maxChars: number;
  /** "server": counted by POST /web/api/text-lengths (twitter-text's URL rules, short links), which composer.js asks. */
  rule: 'server' | 'graphemes';
  /** A comment under the post (a comment platform's follow-up): the server counts it as one. */
  comment?: true;
}

/** A text published as a post of the channel: the post itself, or a thread's reply. */
export function postLength(c: IChannel, text: string, links?: LinkChoice): Measured {
  const { length, maxChars } = measureSent(c, text, links);
  return { length, maxChars, rule: countedOnServer(c.platform) || links?.shorten ? 'server' : 'graphemes' };
}

/**
 * A follow-up of the channel's post, measured by the function the API's checks call: a comment on
 * a comment platform, else a reply. The first comment in the composer, and a reply to a comment in
 * the Inbox (domain/inbox/replies.ts measures it so).
 */
export function followUpLength(c: IChannel, text: string, links?: LinkChoice): Measured {
  if (FOLLOW_UPS[c.platform].kind !== 'comment') return postLength(c, text, links);
  const { characters, maxChars } = measureFollowUp(c, { position: 1, kind: 'comment', content: text, mediaIds: [] }, links);
  return { length: characters, maxChars, rule: links?.shorten ? 'server' : 'graphemes', comment: true };
}

export interface CounterOptions {
  testId: string;
  /** Shown only while the channel is chosen (composer.js keeps it so). */
  selected: boolean;
  /** The id of the field counted, when it is not the post's text (composer.js reads it). */
  source?: string;
}

export function counter(c: IChannel, m: Measured, o: CounterOptions): SafeHtml {
  const over = m.length > m.maxChars;
  return html`<li class="count${over ? ' over' : ''}" data-testid="${o.testId}" data-channel-id="${c.id}" data-platform="${c.platform}" data-max-chars="${m.maxChars}" data-count-rule="${m.rule}" data-count="${m.length}" data-over="${over ? 'true' : 'false'}"${o.source ? html` data-count-source="${o.source}"` : ''}${m.comment ? html` data-count-kind="comment"` : ''}${o.selected ? '' : html` hidden`}>
    <span>${platformBadge(c.platform)} ${c.name}</span>
    <output data-testid="char-count-value" aria-label="${platformLabel(c.platform)} ${c.name}: ${m.length} of ${m.maxChars} characters">${m.length} / ${m.maxChars}</output>
  </li>`;
}
