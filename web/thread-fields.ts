// The composer's "Thread and first comment" section: which chosen platforms get what
// (platforms/catalog.ts FOLLOW_UPS), the thread's items (text, media, a counter per channel that
// takes a thread), the first comment (a counter per channel that takes it), and the domain's
// errors at their fields (`thread[1].content`, `firstComment.content`, `threadByPlatform.X`).
// Without JavaScript the form offers the items it has plus blank slots; composer.js drops the
// blank slots and adds, removes and reorders items, renumbering their fields (thread_<n>).
import type { IChannel, LinkChoice, ThreadItem } from '../db/entities/index.ts';
import type { MediaView } from '../domain/media.ts';
import { Thread } from '../domain/posts/content.ts';
import type { FieldError } from '../lib/errors.ts';
import { FOLLOW_UPS, type Platform } from '../platforms/catalog.ts';
import { counter, followUpLength, postLength } from './char-count.ts';
import { html, type SafeHtml } from './html.ts';
import type { FollowUpValues } from './thread-input.ts';
import { platformBadge, platformLabel } from './ui.ts';

export interface ThreadFieldsInput {
  channels: IChannel[];
  selected: (c: IChannel) => boolean;
  media: MediaView[];
  values: FollowUpValues;
  errors: FieldError[];
  /** The post's own per-platform threads (set through the API): an edit keeps them, and says so. */
  ownThreads: Record<string, ThreadItem[]>;
  /** The post's links choice: each text is counted as it will be sent. */
  links: LinkChoice;
}

/** Items a form without JavaScript offers at least (blank slots included). */
const SLOTS = 3;

const takesThread = (c: IChannel) => FOLLOW_UPS[c.platform].kind === 'thread';
const takesComment = (c: IChannel) => FOLLOW_UPS[c.platform].kind !== null;

function fieldErrors(id: string, testId: string, errors: FieldError[]): SafeHtml {
  if (!errors.length) return html``;
  return html`<div class="field-error" id="${id}" data-testid="${testId}">${errors.map((e) => html`<p data-path="${e.path}">${e.message}</p>`)}</div>`;
}

const invalid = (id: string, errors: FieldError[]) => (errors.length ? html` aria-invalid="true" aria-describedby="${id}"` : '');

function ownThread(own: ThreadItem[]): string {
  const what = own.length ? `its own thread of ${own.length} ${own.length === 1 ? 'reply' : 'replies'}` : 'no thread';
  return `${what} (set through the API) instead of this one; the first comment is its first reply`;
}

function targetLine(platform: Platform, own: ThreadItem[] | undefined, chosen: boolean): SafeHtml {
  const follow = FOLLOW_UPS[platform];
  const what =
    own !== undefined && follow.kind === 'thread'
      ? ownThread(own)
      : follow.kind === 'thread'
        ? 'the thread, each item a reply to the one before; the first comment is the first reply'
        : follow.kind === 'comment'
          ? 'the first comment, under the post; no thread (the post goes there without it)'
          : 'neither: the post goes there without the thread, and a first comment cannot go with it';
  return html`<li data-testid="follow-up-target"${chosen ? '' : html` hidden`} data-follow-platform="${platform}" data-follow-kind="${follow.kind ?? 'none'}">${platformBadge(platform)} <strong>${platformLabel(platform)}</strong>: ${what}</li>`;
}

function mediaChoice(m: MediaView, slot: number, checked: boolean): SafeHtml {
  const id = `thread-${slot}-media-${m.id}`;
  return html`<li>
    <input type="checkbox" id="${id}" name="thread_${slot}_media" value="${m.id}" data-testid="thread-media-option" data-media-type="${m.type}"${checked ? html` checked` : ''}>
    <label for="${id}">${m.thumbnailUrl ? html`<img src="${m.thumbnailUrl}" alt="" width="64" height="64" loading="lazy">` : html`<span class="media-type">${m.type}</span>`}<span class="file-name">${m.fileName}</span>${m.altText ? html`<span class="visually-hidden">, ${m.altText}</span>` : ''}</label>
  </li>`;
}

/** One item; the template's (for composer.js) is slot 0, blank, without errors. */
function threadItem(f: ThreadFieldsInput, slot: number, item: ThreadItem, blank: boolean): SafeHtml {
  const id = `thread-${slot}`;
  const errors = f.errors.filter((e) => e.path === `thread[${slot}]` || e.path.startsWith(`thread[${slot}].`));
  const n = slot + 1;
  return html`<li class="thread-item" data-testid="thread-item" data-thread-item${blank ? html` data-blank-slot` : ''}>
    <div class="field">
      <label for="${id}">Reply <span data-thread-number>${n}</span></label>
      <textarea id="${id}" name="thread_${slot}" rows="3" data-testid="thread-item-content"${invalid(`${id}-error`, errors)}>${item.content}</textarea>
    </div>
    ${fieldErrors(`${id}-error`, 'thread-item-error', errors)}
    <ul class="thread-counts" data-testid="thread-item-counts">${f.channels
      .filter(takesThread)
      .map((c) => counter(c, postLength(c, item.content, f.links), { testId: 'thread-count', selected: f.selected(c), source: id }))}</ul>
    ${
      f.media.length
        ? html`<details class="thread-media"${item.mediaIds.length ? html` open` : ''}>
      <summary>Media for reply <span data-thread-number>${n}</span></summary>
      <ul class="media-choices">${orderedMedia(f.media, item.mediaIds).map((m) => mediaChoice(m, slot, item.mediaIds.includes(m.id)))}</ul>
    </details>`
        : ''
    }
    <div class="thread-item-actions" data-js-only hidden>
      <button type="button" data-thread-move="up" data-testid="thread-move-up" aria-label="Move reply ${n} up">Move up</button>
      <button type="button" data-thread-move="down" data-testid="thread-move-down" aria-label="Move reply ${n} down">Move down</button>
      <button type="button" data-thread-remove data-testid="thread-remove" aria-label="Remove reply ${n}">Remove</button>
    </div>
  </li>`;
}

/** An item's media first, in its order, then the rest of the library (as the post's picker). */
function orderedMedia(media: MediaView[], ids: string[]): MediaView[] {
  const attached = ids.map((id) => media.find((m) => m.id === id)).filter((m): m is MediaView => Boolean(m));
  return [...attached, ...media.filter((m) => !ids.includes(m.id))];
}

export function threadFields(f: ThreadFieldsInput): SafeHtml {
  const platforms = [...new Set(f.channels.map((c) => c.platform))];
  const chosen = new Set(f.channels.filter(f.selected).map((c) => c.platform));
  const { thread, firstComment } = f.values;
  const blank: ThreadItem = { content: '', mediaIds: [] };
  const slots = [...thread, ...Array.from({ length: Math.max(1, SLOTS - thread.length) }, () => blank)];
  const threadErrors = f.errors.filter((e) => e.path === 'thread' || e.path.startsWith('threadByPlatform'));
  const commentErrors = f.errors.filter((e) => e.path === 'firstComment' || e.path.startsWith('firstComment.'));
  return html`<fieldset class="follow-ups" data-testid="composer-follow-ups">
    <legend>Thread and first comment</legend>
    <input type="hidden" name="followUps" value="1">
    <p class="hint" data-no-follow-targets${chosen.size ? html` hidden` : ''}>Choose channels to see which of them get the thread and the first comment.</p>
    <ul class="plain follow-up-targets" data-testid="follow-up-targets" aria-live="polite">${platforms.map((pl) => targetLine(pl, f.ownThreads[pl], chosen.has(pl)))}</ul>
    <h3 class="small-heading" id="thread-title">Thread <span class="hint">(replies published after the post, in this order)</span></h3>
    ${fieldErrors('thread-error', 'thread-error', threadErrors)}
    <ol class="thread-items" data-testid="thread-items" data-max-items="${Thread.maxItems}" aria-labelledby="thread-title">${slots.map((item, i) => threadItem(f, i, item, i >= thread.length))}</ol>
    <template data-thread-template>${threadItem({ ...f, errors: [] }, 0, blank, false)}</template>
    <p data-js-only hidden><button type="button" data-thread-add data-testid="thread-add">Add a reply</button></p>
    <p class="visually-hidden" role="status" data-thread-status></p>
    <div class="field">
      <label for="firstComment">First comment <span class="hint">(optional)</span></label>
      <textarea id="firstComment" name="firstComment" rows="3" data-testid="first-comment"${invalid('firstComment-error', commentErrors)}>${firstComment}</textarea>
    </div>
    ${fieldErrors('firstComment-error', 'first-comment-error', commentErrors)}
    <ul class="thread-counts" data-testid="first-comment-counts">${f.channels.filter(takesComment).map((c) =>
      counter(c, followUpLength(c, firstComment, f.links), {
        testId: 'first-comment-count',
        selected: f.selected(c),
        source: 'firstComment',
      }),
    )}</ul>
  </fieldset>`;
}
