// Pieces of markup shared by several pages: platform badges, status labels, post items.
import type { IChannel } from '../db/entities/index.ts';
import type { Platform } from '../platforms/catalog.ts';
import type { PostView } from '../domain/posts/view.ts';
import type { TagView } from '../domain/tags.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { formatTime } from './time.ts';

export const PLATFORM_LABEL: Record<Platform, string> = {
  X: 'X',
  BLUESKY: 'Bluesky',
  THREADS: 'Threads',
  LINKEDIN: 'LinkedIn',
  MASTODON: 'Mastodon',
  INSTAGRAM: 'Instagram',
  FACEBOOK: 'Facebook',
  TIKTOK: 'TikTok',
  YOUTUBE: 'YouTube',
  PINTEREST: 'Pinterest',
  REDDIT: 'Reddit',
  TELEGRAM: 'Telegram',
  DISCORD: 'Discord',
};

const PLATFORM_SHORT: Record<Platform, string> = {
  X: 'X',
  BLUESKY: 'Bs',
  THREADS: 'Th',
  LINKEDIN: 'in',
  MASTODON: 'Ma',
  INSTAGRAM: 'Ig',
  FACEBOOK: 'f',
  TIKTOK: 'Tt',
  YOUTUBE: 'Yt',
  PINTEREST: 'P',
  REDDIT: 'R',
  TELEGRAM: 'Tg',
  DISCORD: 'Dc',
};

export const platformLabel = (p: string) => PLATFORM_LABEL[p as Platform] ?? p;

/** A small text badge with an accessible name ("Mastodon: Team account"). */
export function platformBadge(platform: string, channelName?: string, channelId?: string): SafeHtml {
  const label = channelName ? `${platformLabel(platform)}: ${channelName}` : platformLabel(platform);
  return html`<span class="badge badge-${platform.toLowerCase()}" role="img" aria-label="${label}" title="${label}" data-testid="platform-badge" data-platform="${platform}"${channelId ? html` data-channel-id="${channelId}" data-channel-name="${channelName ?? channelId}"` : ''}>${PLATFORM_SHORT[platform as Platform] ?? platform.slice(0, 2)}</span>`;
}

export const STATUS_LABEL: Record<string, string> = {
  scheduled: 'Scheduled',
  publishing: 'Publishing',
  published: 'Published',
  failed: 'Failed',
  draft: 'Waiting',
  active: 'Active',
  reauth_required: 'Needs reconnecting',
  disabled: 'Disabled',
  pending: 'Processing',
  ready: 'Ready',
};
export const statusLabel = (s: string) => STATUS_LABEL[s] ?? s;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
export function excerpt(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const parts: string[] = [];
  for (const { segment } of segmenter.segment(flat)) {
    if (parts.length === max) return `${parts.join('')}…`;
    parts.push(segment);
  }
  return parts.join('');
}

/** "Mastodon (Team account): the error" for every failed channel of a post. */
export function postErrors(post: PostView, channels: Map<string, IChannel>): string[] {
  return post.channels
    .filter((c) => c.status === 'failed' && c.error)
    .map((c) => `${platformLabel(c.platform)} (${channels.get(c.channelId)?.name ?? c.channelId}): ${c.error}`);
}

/**
 * A tag as a chip: a swatch of its colour and its name. The colour is an SVG fill, a presentation
 * attribute: the pages' Content-Security-Policy allows no inline style.
 */
export function tagChip(tag: Pick<TagView, 'id' | 'name' | 'colour'>): SafeHtml {
  return html`<span class="tag-chip" data-testid="tag-chip" data-tag-id="${tag.id}" data-colour="${tag.colour}"><svg class="tag-swatch" width="10" height="10" viewBox="0 0 10 10" aria-hidden="true" focusable="false"><circle cx="5" cy="5" r="5" fill="${tag.colour}"/></svg>${tag.name}</span>`;
}

/** A post's tags as chips, in the post's order (id order); an id the map has not (a tag deleted since) shows nothing. */
export function tagChips(tagIds: readonly string[], tags: ReadonlyMap<string, TagView>): SafeHtml {
  const known = tagIds.flatMap((id) => tags.get(id) ?? []);
  return known.length ? html`<span class="tag-chips" data-testid="tag-chips">${known.map(tagChip)}</span>` : html``;
}

/**
 * One post in the calendar: time, channel badges, its tags, excerpt, source and status (with the
 * error when failed), and its unread comments when it has any.
 */
export function postItem(
  post: PostView,
  channels: Map<string, IChannel>,
  tz: string,
  unread = 0,
  tags: ReadonlyMap<string, TagView> = new Map(),
): SafeHtml {
  const errors = postErrors(post, channels);
  const scheduled = post.status === 'scheduled';
  const when = new Date(post.scheduledAt);
  return html`<li class="post status-${post.status}" data-testid="post-item" data-post-id="${post.id}" data-status="${post.status}" data-source="${post.source}" data-scheduled-at="${post.scheduledAt}"${scheduled ? html` draggable="true"` : ''}>
  <a class="post-link" href="/posts/${post.id}" data-testid="post-link">
    <time datetime="${post.scheduledAt}" data-testid="post-time">${formatTime(when, tz)}</time>
    <span class="excerpt" data-testid="post-excerpt">${excerpt(post.content) || '(media only)'}</span>
  </a>
  <span class="badges">${post.channels.map((c) => platformBadge(c.platform, channels.get(c.channelId)?.name ?? c.channelId, c.channelId))}</span>
  ${tagChips(post.tagIds, tags)}
  <span class="meta">
    <span class="source source-${post.source}" data-testid="post-source">${post.source === 'app' ? 'App' : 'API'}</span>${post.seriesId ? html` <span class="mark-occurrence" data-testid="post-series" data-series-id="${post.seriesId}" title="An occurrence of a recurring post">↻ Repeats</span>` : ''}
    <span class="status status-${post.status}" data-testid="post-status" data-status="${post.status}"${errors.length ? html` title="${errors.join('\n')}"` : ''}>${statusLabel(post.status)}</span>
    ${unread > 0 ? html`<a class="unread-comments" href="/inbox?postId=${post.id}" data-testid="post-unread" data-count="${unread}" title="Open its unread comments in the Inbox">${unread} unread<span class="visually-hidden"> comment${unread === 1 ? '' : 's'}</span></a>` : ''}
  </span>
  <details class="post-error" data-testid="post-error"${errors.length ? '' : html` hidden`}>
    <summary>Why it failed</summary>
    <ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>
  </details>
</li>`;
}

/** A channel's (or one of its items') live URL as a link, if it is an http(s) URL. */
export function liveLink(url: string | null, testId = 'post-channel-url'): SafeHtml {
  const safe = safeHttpUrl(url);
  return safe
    ? html`<a href="${safe}" rel="noopener noreferrer" target="_blank" data-testid="${testId}">View post<span class="visually-hidden"> (opens in a new tab)</span></a>`
    : html``;
}
