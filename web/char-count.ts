// The character counters: a text's length on one channel, measured by the rule post validation
// applies (platforms/text-length.ts), against the limit. One markup for the composer's post text,
// each thread item and the first comment (composer.js keeps them live), and the Inbox's replies
// (inbox.js): graphemes in the page, or, data-count-rule="server", X's and Mastodon's weighted
// counts from POST /web/api/text-lengths.
import type { IChannel } from '../db/entities/index.ts';
import { measureFollowUp } from '../domain/posts/thread.ts';
import { FOLLOW_UPS, rulesFor } from '../platforms/catalog.ts';
import { countedOnServer, graphemeLength, measureChannelText } from '../platforms/text-length.ts';
import { html, type SafeHtml } from './html.ts';
import { platformBadge, platformLabel } from './ui.ts';

export interface Measured {
  length: number;
  maxChars: number;
  /** "server": X's and Mastodon's counts need twitter-text's URL rules, so composer.js asks the server. */
  rule: 'server' | 'graphemes';
}

/** A text published as a post of the channel: the post itself, a thread's reply, a first reply. */
export function postLength(c: IChannel, text: string): Measured {
  const { maxChars } = rulesFor(c.platform, c.maxChars);
  const { length } = measureChannelText(c, text, maxChars);
  return { length, maxChars, rule: countedOnServer(c.platform) ? 'server' : 'graphemes' };
}

/** A text as the channel's follow-up counts it: a comment on a comment platform, else a reply. */
export function followUpLength(c: IChannel, text: string): Measured {
  const follow = FOLLOW_UPS[c.platform];
  if (follow.kind === 'comment') return { length: graphemeLength(text), maxChars: follow.maxChars, rule: 'graphemes' };
  return postLength(c, text);
}

/**
 * A reply to a comment, measured by the function the API's check of a reply calls
 * (domain/inbox/replies.ts): a comment answering it on a comment platform, else a reply post.
 */
export function replyLength(c: IChannel, text: string): Measured {
  const kind = FOLLOW_UPS[c.platform].kind === 'comment' ? 'comment' : 'reply';
  const { characters, maxChars } = measureFollowUp(c, { position: 1, kind, content: text, mediaIds: [] });
  return { length: characters, maxChars, rule: kind === 'reply' && countedOnServer(c.platform) ? 'server' : 'graphemes' };
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
  return html`<li class="count${over ? ' over' : ''}" data-testid="${o.testId}" data-channel-id="${c.id}" data-platform="${c.platform}" data-max-chars="${m.maxChars}" data-count-rule="${m.rule}" data-count="${m.length}" data-over="${over ? 'true' : 'false'}"${o.source ? html` data-count-source="${o.source}"` : ''}${o.selected ? '' : html` hidden`}>
    <span>${platformBadge(c.platform)} ${c.name}</span>
    <output data-testid="char-count-value" aria-label="${platformLabel(c.platform)} ${c.name}: ${m.length} of ${m.maxChars} characters">${m.length} / ${m.maxChars}</output>
  </li>`;
}
