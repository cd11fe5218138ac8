// A post's items on its page: per channel, the post itself (position 0) and its follow-ups (a
// thread's replies or the first comment), each with its own outcome (domain/posts/view.ts
// PostChannelView.items). Shown when some channel has follow-ups; calendar.js keeps the statuses
// and results live, as it does the channels' rows.
import type { IChannel } from '../db/entities/index.ts';
import type { PostItemView, PostView } from '../domain/posts/view.ts';
import { html, type SafeHtml } from './html.ts';
import { excerpt, liveLink, platformBadge, statusLabel } from './ui.ts';

const KIND_LABEL: Record<PostItemView['kind'], string> = { post: 'Post', reply: 'Reply', comment: 'Comment' };

function itemRow(item: PostItemView): SafeHtml {
  return html`<tr data-testid="post-channel-item" data-position="${item.position}" data-kind="${item.kind}" data-status="${item.status}">
    <td data-testid="post-item-position">${item.position}</td>
    <td data-testid="post-item-kind">${KIND_LABEL[item.kind]}</td>
    <td class="item-text" data-testid="post-item-text">${excerpt(item.content) || '(media only)'}</td>
    <td><span class="status status-${item.status}" data-testid="post-item-status">${statusLabel(item.status)}</span></td>
    <td data-testid="post-item-result">${item.error ? html`<span class="error-text" data-testid="post-item-error">${item.error}</span>` : liveLink(item.url, 'post-item-url')}</td>
  </tr>`;
}

export function postItems(post: PostView, channels: Map<string, IChannel>): SafeHtml {
  if (!post.channels.some((c) => c.items.length > 1)) return html``;
  return html`<h2>Thread and comments</h2>
  ${post.channels.map(
    (c) => html`<table class="table post-items" data-testid="post-channel-items" data-pc-items="${c.channelId}">
    <caption>${platformBadge(c.platform)} ${channels.get(c.channelId)?.name ?? c.channelId}</caption>
    <thead><tr><th scope="col">Position</th><th scope="col">Item</th><th scope="col">Text</th><th scope="col">Status</th><th scope="col">Result</th></tr></thead>
    <tbody>${c.items.map(itemRow)}</tbody>
  </table>`,
  )}`;
}
