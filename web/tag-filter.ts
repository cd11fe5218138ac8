// The tag filter of a list page (the calendar, Drafts, Approvals, Feeds; the Analytics page's
// select): a GET form with a select of the organization's tags, so it works without script, shown
// only while the organization has tags. The page narrows by its list's own `tagId` filter (in
// SQL, as its /v1 list does); a tag the organization has not (deleted since the link was made, or
// another organization's) narrows nothing, as the Analytics page's channel.
import type { TagView } from '../domain/tags.ts';
import { html, type SafeHtml } from './html.ts';
import { tagChip } from './ui.ts';

/** The tag the query's `tagId` names among the organization's tags; null: the page narrows to none. */
export function tagOfQuery(tags: readonly TagView[], query: URLSearchParams): TagView | null {
  const id = query.get('tagId');
  return tags.find((t) => t.id === id) ?? null;
}

/** The `tagId` select: `all` (no tag) first, then the tags in the order given, `current` chosen. */
export function tagSelect(o: { id: string; testId: string; tags: readonly TagView[]; current: TagView | null; all: string }): SafeHtml {
  return html`<select id="${o.id}" name="tagId" data-testid="${o.testId}"><option value="">${o.all}</option>${o.tags.map(
    (t) => html`<option value="${t.id}"${t.id === o.current?.id ? html` selected` : ''}>${t.name}</option>`,
  )}</select>`;
}

export interface TagFilter {
  /** The page's path: the form's action. */
  action: string;
  /** The prefix of the form's ids and test ids: `{name}-tag-filter`, `-tag-select`, `-tag-apply`, `-tag-current`, `-tag-clear`. */
  name: string;
  /** What the page lists, in the plural ("posts", "drafts"). */
  noun: string;
  /** The page's other query parameters, kept by the form and by its link to every tag's. */
  keep?: Record<string, string>;
  /** The organization's tags (listTags). */
  tags: readonly TagView[];
  current: TagView | null;
}

/** The filter's form, and which tag narrows the page now; nothing while the organization has no tags. */
export function tagFilter(f: TagFilter): SafeHtml {
  if (!f.tags.length) return html``;
  const keep = Object.entries(f.keep ?? {});
  const every = keep.length ? `${f.action}?${new URLSearchParams(keep)}` : f.action;
  const all = `All ${f.noun}`;
  return html`<form method="get" action="${f.action}" class="filters tag-filter" data-testid="${f.name}-tag-filter">
  ${keep.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <div class="field"><label for="${f.name}-tag">Tag</label>
    ${tagSelect({ id: `${f.name}-tag`, testId: `${f.name}-tag-select`, tags: f.tags, current: f.current, all })}</div>
  <div class="actions"><button type="submit" data-testid="${f.name}-tag-apply">Show</button>${
    f.current
      ? html` <span data-testid="${f.name}-tag-current">Only ${f.noun} tagged ${tagChip(f.current)}</span> <a href="${every}" data-testid="${f.name}-tag-clear">${all}</a>`
      : ''
  }</div>
</form>`;
}
