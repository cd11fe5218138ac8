// One channel's preview: a post as that channel gets it — its text as sent (each link as the short
// link it becomes while the post shortens links: domain/links/rewrite.ts), folded where the
// platform's feed folds a long text (platforms/feed-fold.ts: the rest behind the feed's "more", a
// <details> that needs no script), its media, and its follow-ups (the thread's replies or the
// first comment, domain/posts/thread.ts) in publishing order. One renderer for the public page of
// a preview link (web/previews.ts: a stored post) and the composer's live preview
// (web/composer-preview.ts: the form as it would be sent), so a reviewer and the author see the
// same thing. Every text is escaped here (web/html.ts).
import type { LinkChoice } from '../db/entities/index.ts';
import { httpLinks, linksShortened, placeholderShortUrl, textAndLinks } from '../domain/links/rewrite.ts';
import { isPlatform, type Platform } from '../platforms/catalog.ts';
import { FEED_FOLD, type FeedFold } from '../platforms/feed-fold.ts';
import { countingNote, measureText } from '../platforms/text-length.ts';
import { html, type SafeHtml } from './html.ts';
import { platformBadge, platformLabel, statusLabel } from './ui.ts';

export interface PreviewMedia {
  type: string;
  /** Null: not readable (not ready); it is left out. */
  url: string | null;
  thumbnailUrl?: string | null;
  altText?: string | null;
}

/** A text's length as its platform counts it once sent, and the limit (the composer measures; a stored post's page does not). */
export interface PreviewLength {
  length: number;
  maxChars: number;
}

export interface PreviewFollowUp {
  kind: 'reply' | 'comment';
  content: string;
  media: PreviewMedia[];
  measured?: PreviewLength;
}

export interface ChannelPreview {
  channelId: string;
  platform: string;
  name: string;
  /** Where the channel stands (a stored post); none in the composer. */
  status?: string;
  content: string;
  media: PreviewMedia[];
  followUps: PreviewFollowUp[];
  /** The post's links choice: while it shortens, each link shows as the short link it becomes. */
  links: LinkChoice | undefined;
  measured?: PreviewLength;
}

/** A run of the text as sent: plain text, or a link, whole (`short`: sent as the short link it becomes). */
type SentPart = string | { url: string; short: boolean };

/** The text as it is sent, in runs: each link whole, a short link while the post shortens links. */
function sentParts(text: string, links: LinkChoice | undefined): SentPart[] {
  const shortened = new Set(linksShortened(text, links).map((l) => l.start));
  return textAndLinks(text, httpLinks(text)).map((part) =>
    typeof part === 'string' ? part : { url: part.url, short: shortened.has(part.start) },
  );
}

/** Runs of the text as sent: each link that becomes a short link shown as one (its code is drawn at publish). */
function sentHtml(parts: SentPart[]): SafeHtml {
  const short = placeholderShortUrl();
  return html`${parts.map((part) =>
    typeof part === 'string'
      ? part
      : part.short
        ? html`<span class="short-link" data-testid="preview-short-link" data-url="${part.url}" title="A short link to ${part.url}, made when it is published">${short}</span>`
        : part.url,
  )}`;
}

const sentText = (text: string, links: LinkChoice | undefined): SafeHtml => sentHtml(sentParts(text, links));

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The runs before the fold and after it: as many as the platform counts `chars` of, each grapheme
 * and each link whole (a link that crosses the fold goes after it); null when the text fits.
 */
function foldParts(platform: Platform, parts: SentPart[], chars: number): [SentPart[], SentPart[]] | null {
  const short = placeholderShortUrl();
  let used = 0;
  for (const [i, part] of parts.entries()) {
    if (typeof part !== 'string') {
      used += measureText(platform, part.short ? short : part.url).length;
      if (used > chars) return [parts.slice(0, i), parts.slice(i)];
      continue;
    }
    for (const { segment, index } of graphemes.segment(part)) {
      used += measureText(platform, segment).length;
      if (used > chars)
        return [
          [...parts.slice(0, i), part.slice(0, index)],
          [part.slice(index), ...parts.slice(i + 1)],
        ];
    }
  }
  return null;
}

/**
 * The post's text as the channel's feed shows it: up to the platform's fold, the rest behind its
 * "more" (open, the control marks where the feed folds). No white space between the elements: the
 * text keeps its own (pre-wrap).
 */
function postText(platform: string, text: string, links: LinkChoice | undefined): SafeHtml {
  const parts = sentParts(text, links);
  const fold: FeedFold | null = isPlatform(platform) ? FEED_FOLD[platform] : null;
  const cut = fold ? foldParts(platform as Platform, parts, fold.chars) : null;
  if (!fold || !cut) return html`<div class="post-content preview-text" data-testid="preview-text">${sentHtml(parts)}</div>`;
  const says = `${platformLabel(platform)}'s feed shows about the first ${fold.chars} characters, then “${fold.more}”`;
  return html`<div class="post-content preview-text" data-testid="preview-text" data-folded="true"><span data-testid="preview-text-shown">${sentHtml(cut[0])}</span><details class="preview-fold" data-testid="preview-fold" data-fold-chars="${fold.chars}"><summary title="${says}" data-testid="preview-fold-more"><span class="fold-more">${fold.more}</span><span class="fold-here">(folded here)</span><span class="visually-hidden"> ${says}</span></summary><span data-testid="preview-text-rest">${sentHtml(cut[1])}</span></details></div>`;
}

function mediaList(media: PreviewMedia[]): SafeHtml | '' {
  const shown = media.filter((m) => m.url !== null);
  if (!shown.length) return '';
  return html`<ul class="preview-media plain">${shown.map((m) =>
    m.type === 'image'
      ? html`<li><img src="${m.thumbnailUrl ?? m.url}" alt="${m.altText ?? ''}" loading="lazy" data-testid="preview-media" data-media-type="image"></li>`
      : m.type === 'video'
        ? html`<li><video src="${m.url}"${m.thumbnailUrl ? html` poster="${m.thumbnailUrl}"` : ''} controls preload="none" data-testid="preview-media" data-media-type="video"></video></li>`
        : html`<li><span class="media-type" data-testid="preview-media" data-media-type="${m.type}">${m.type}</span></li>`,
  )}</ul>`;
}

/** Said when a text is longer than the channel takes: the platform would refuse it. */
function overLimit(platform: string, m: PreviewLength | undefined): SafeHtml | '' {
  if (!m || m.length <= m.maxChars) return '';
  return html`<p class="error-text" data-testid="preview-over">Too long for ${platformLabel(platform)}: ${m.length} of ${m.maxChars} characters${isPlatform(platform) ? countingNote(platform) : ''}.</p>`;
}

export function channelPreview(p: ChannelPreview): SafeHtml {
  let reply = 0;
  return html`<article class="preview-channel" data-testid="preview-channel" data-channel-id="${p.channelId}" data-platform="${p.platform}">
  <header>${platformBadge(p.platform, p.name)} <strong>${p.name}</strong> <span class="hint" data-testid="preview-platform">${platformLabel(p.platform)}</span>${p.status ? html` <span class="status status-${p.status}">${statusLabel(p.status)}</span>` : ''}</header>
  ${p.content === '' ? html`<p class="hint" data-testid="preview-no-text">No text.</p>` : postText(p.platform, p.content, p.links)}
  ${overLimit(p.platform, p.measured)}
  ${mediaList(p.media)}
  ${
    p.followUps.length
      ? html`<ol class="preview-follow-ups" data-testid="preview-follow-ups">${p.followUps.map(
          (i) => html`<li data-kind="${i.kind}" data-testid="preview-follow-up">
      <span class="hint">${i.kind === 'comment' ? 'Comment' : `Reply ${++reply}`}</span>
      ${i.content === '' ? '' : html`<p class="post-content" data-testid="preview-follow-up-text">${sentText(i.content, p.links)}</p>`}
      ${overLimit(p.platform, i.measured)}
      ${mediaList(i.media)}
    </li>`,
        )}</ol>`
      : ''
  }
</article>`;
}
