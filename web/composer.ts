// The composer (new post, edit a scheduled post) and a post's own page (with its unread comments,
// linked to the Inbox). Plain HTML forms that work without JavaScript; composer.js adds live
// character counts (per selected channel, of the text as it will be sent: graphemes in the page;
// X's and Mastodon's weighted counts, and every count while links become short links, from
// POST /web/api/text-lengths), a live preview per chosen channel (web/composer-preview.ts, from
// POST /web/api/composer/preview; drawn with the page too), per-platform text fields for the
// selected platforms, uploads, the thread's add / remove / reorder (web/thread-fields.ts), and the
// per-platform options (web/option-fields.ts) filled from what each chosen account can do
// (GET /web/api/channels/{id}/capabilities). The Links section is the post's own links choice
// (web/link-input.ts; it starts as the post's, the draft's, else the organization's default): the
// counters and the preview follow its "Shorten links" box as it changes.
// The new-post form is also a draft's: its Save as draft button sends the same form to the drafts'
// routes (web/drafts.ts) by its formaction, so it needs no script; a draft opens here again.
import { t } from 'elysia';
import { router } from '../http/router.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import type { IChannel, IPreviewLink, LinkChoice } from '../db/entities/index.ts';
import { rulesFor } from '../platforms/catalog.ts';
import { assertEditable, getPostForKey, type PostView } from '../domain/posts/view.ts';
import { postAnalyticsForKey, type PostAnalytics } from '../domain/analytics/post-analytics.ts';
import { postFigures } from './analytics.ts';
import { ALT_TEXT_CHARS, type MediaView } from '../domain/media.ts';
import { describeError, jsonRoute, pageRoute, WEB_BODY_BYTES, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, jsonResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import {
  byId,
  channelsOf,
  composerValuesFromForm,
  contentByPlatform,
  createAppPost,
  editAppPost,
  readyMedia,
  type Actor,
  type ComposerValues,
} from './post-actions.ts';
import { memberRequester } from '../domain/posts/approval.ts';
import { approvalPanel } from './approvals.ts';
import { previewLinksOfPost } from '../domain/posts/preview-links.ts';
import { dayKey, formatDateTime, isTimeZone, localInputValue, parseDayKey } from './time.ts';
import { liveLink, platformBadge, platformLabel, postErrors, statusLabel } from './ui.ts';
import { postLifecycleActions } from './post-lifecycle.ts';
import { counter, postLength } from './char-count.ts';
import { postItems } from './post-items.ts';
import { postComments } from './inbox.ts';
import { commentCountsByPost } from '../domain/inbox/comments.ts';
import { threadFields } from './thread-fields.ts';
import { hasFollowUpFields, NO_FOLLOW_UPS } from './thread-input.ts';
import { boundAttributes, optionFields } from './option-fields.ts';
import { hasOptionFields, optionValues } from './option-input.ts';
import { channelCapabilities } from '../domain/capabilities.ts';
import { Post } from '../db/entities/index.ts';
import { PostContent } from '../domain/posts/content.ts';
import { boundsOf, schemaAt } from '../lib/schema-words.ts';
import { getDraft, type DraftView } from '../domain/posts/drafts.ts';
import { composerValuesOfDraft } from './draft-input.ts';
import { composerLinks, composerMedia, composerPreviews, ownThreadsOf, type ComposerMedia } from './composer-preview.ts';
import { CAMPAIGN_BOUNDS, linkFieldsOf, type LinkFields } from './link-input.ts';
import { measureSent } from '../domain/posts/checks.ts';
import { measureFollowUp } from '../domain/posts/thread.ts';
import { LinkChoiceSchema } from '../domain/links/choice.ts';
import { BodyId } from '../lib/chars.ts';
import { listTags, type TagView } from '../domain/tags.ts';
import { postTagsPanel } from './tags.ts';

interface ComposerPage {
  mode: 'new' | 'edit';
  post?: PostView;
  /** A draft opened in the composer (mode new): Save draft keeps the form in it; Create post makes the post from it (web/drafts.ts). */
  draft?: DraftView;
  /** Channels to choose from (new) or the post's channels (edit). */
  channels: IChannel[];
  media: MediaView[];
  values: ComposerValues;
  errors: string[];
  /** The same problems by field path, shown at their fields too (the thread's items, the first comment, the options). */
  fields?: FieldError[];
}

/** What the page works out beside the form: the links choice the post will have (the form's, else its origin's) and the preview's media. */
interface ComposerExtras {
  links: LinkChoice;
  media: Map<string, ComposerMedia>;
}

/** The channel's text: its platform's own when one is typed, else the main text (as the post is made). */
const textFor = (v: ComposerValues, c: IChannel): string => contentByPlatform(v, [c])[c.platform] ?? v.content;

function channelChoice(c: IChannel, p: ComposerPage): SafeHtml {
  const rules = rulesFor(c.platform, c.maxChars);
  const usable = c.status === 'active';
  const checked = p.mode === 'edit' || p.values.channelIds.includes(c.id);
  // A draft keeps a channel that needs reconnecting since it was chosen (a disabled box would drop
  // it on save); scheduling it then says to reconnect first.
  const keptByDraft = p.draft?.channelIds.includes(c.id) ?? false;
  const id = `channel-${c.id}`;
  return html`<li>
    <input type="checkbox" id="${id}" name="channelIds" value="${c.id}" data-testid="channel-option" data-channel-id="${c.id}" data-platform="${c.platform}" data-max-chars="${rules.maxChars}" data-requires-media="${rules.requiresMedia ? 'true' : 'false'}"${checked ? html` checked` : ''}${p.mode === 'edit' || (!usable && !keptByDraft) ? html` disabled` : ''}>
    <label for="${id}">${platformBadge(c.platform)} ${c.name}${usable ? '' : html` <span class="status status-${c.status}">(${statusLabel(c.status)})</span>`}${rules.requiresMedia ? html` <span class="hint">needs media</span>` : ''}</label>
  </li>`;
}

const isSelected = (p: ComposerPage) => (c: IChannel) => p.mode === 'edit' || p.values.channelIds.includes(c.id);

function charCount(c: IChannel, p: ComposerPage, links: LinkChoice): SafeHtml {
  return counter(c, postLength(c, textFor(p.values, c), links), { testId: 'char-count', selected: isSelected(p)(c) });
}

/** The preview per chosen channel, beside the counters; composer.js redraws it as the form changes. */
function previewSection(p: ComposerPage, x: ComposerExtras): SafeHtml {
  const previews = composerPreviews({
    channels: p.channels.filter(isSelected(p)),
    values: p.values,
    media: x.media,
    links: x.links,
    ownThreads: ownThreadsOf(p),
  });
  return html`<aside class="composer-preview" aria-labelledby="preview-title" data-testid="composer-preview"><div class="composer-preview-body">
    <h2 id="preview-title" class="small-heading">Preview</h2>
    <p class="hint">As each chosen channel will publish it<span data-shorten-hint${x.links.shorten ? '' : html` hidden`}>, each link as the short link it becomes</span>; a long text folded where the platform's feed folds it.</p>
    <p class="error-text" role="status" data-preview-status data-testid="preview-status"></p>
    <div class="preview-channels" data-testid="preview-channels" data-preview-url="/web/api/composer/preview">${previews}</div>
  </div></aside>`;
}

function platformText(platform: string, p: ComposerPage): SafeHtml {
  const value = p.values.platformTexts[platform] ?? '';
  const selected = p.channels.some((c) => c.platform === platform && (p.mode === 'edit' || p.values.channelIds.includes(c.id)));
  const id = `text-${platform}`;
  return html`<details class="platform-text" data-platform-text="${platform}" data-testid="platform-text-${platform}"${value ? html` open` : ''}${selected || value ? '' : html` hidden`}>
    <summary>Different text for ${platformLabel(platform)}</summary>
    <label for="${id}">${platformLabel(platform)} text <span class="hint">(leave empty to use the main text)</span></label>
    <textarea id="${id}" name="text_${platform}" rows="4" data-platform="${platform}" data-testid="platform-text-input-${platform}">${value}</textarea>
  </details>`;
}

function mediaChoice(m: MediaView, selected: boolean): SafeHtml {
  const id = `media-${m.id}`;
  return html`<li>
    <input type="checkbox" id="${id}" name="mediaIds" value="${m.id}" data-testid="media-option" data-media-type="${m.type}"${selected ? html` checked` : ''}>
    <label for="${id}">${m.thumbnailUrl ? html`<img src="${m.thumbnailUrl}" alt="" width="64" height="64" loading="lazy">` : html`<span class="media-type">${m.type}</span>`}<span class="file-name">${m.fileName}</span>${m.altText ? html`<span class="visually-hidden">, ${m.altText}</span>` : ''}</label>
  </li>`;
}

/**
 * The post's links choice as fields (web/link-input.ts), what was refused of it at the campaign
 * field. The hidden `linkFields` says the form has them (an unticked box sends nothing).
 */
function linksSection(v: LinkFields, errors: FieldError[]): SafeHtml {
  const wrong = errors.filter((e) => e.path === 'links' || e.path.startsWith('links.'));
  return html`<fieldset class="links" data-testid="composer-links">
    <legend>Links</legend>
    <input type="hidden" name="linkFields" value="1">
    <div class="check"><input type="checkbox" id="links-shorten" name="shorten" value="yes" data-testid="composer-links-shorten" data-links-shorten${v.shorten ? html` checked` : ''}><label for="links-shorten">Shorten links: each link of the text, the thread and the first comment is published as a short link that counts its clicks</label></div>
    <div class="check"><input type="checkbox" id="links-utm" name="utm" value="yes" data-testid="composer-links-utm"${v.utm ? html` checked` : ''}><label for="links-utm">Add UTM parameters to the short links' targets (utm_source the platform, utm_medium social)</label></div>
    <div class="field"><label for="links-campaign">Campaign <span class="hint">(utm_campaign; empty: the name of the post's first tag, else none)</span></label>
      <input type="text" id="links-campaign" name="campaign" value="${v.campaign}"${CAMPAIGN_BOUNDS} data-testid="composer-links-campaign"${wrong.length ? html` aria-describedby="links-errors" aria-invalid="true"` : ''}>
      ${wrong.length ? html`<div class="field-error" id="links-errors" data-testid="composer-links-error">${wrong.map((e) => html`<p data-path="${e.path}">${e.message}</p>`)}</div>` : ''}</div>
    <p class="hint">The post keeps the choice it is saved with; a new post starts from the organization's default (Settings → Tracked links).</p>
  </fieldset>`;
}

/** The Reddit fields take what the post's content schema does (domain/posts/content.ts), as the API checks it. */
const REDDIT_SUBREDDIT = boundAttributes(boundsOf(schemaAt(PostContent, 'reddit.subreddit')), true);
const REDDIT_TITLE = boundAttributes(boundsOf(schemaAt(PostContent, 'reddit.title')), true);

function composer(ctx: PageContext, p: ComposerPage, x: ComposerExtras): SafeHtml {
  const v = p.values;
  const platforms = [...new Set(p.channels.map((c) => c.platform as string))];
  const hasReddit = platforms.includes('REDDIT');
  const action = p.draft ? `/drafts/${p.draft.id}/schedule` : p.mode === 'new' ? '/posts' : `/posts/${p.post!.id}/edit`;
  const cancel = p.draft ? '/drafts' : p.mode === 'new' ? '/calendar' : `/posts/${p.post!.id}`;
  const mediaIds = new Set(v.mediaIds);
  // Attached media first, in their order, then the rest of the library.
  const media = [
    ...v.mediaIds.map((id) => p.media.find((m) => m.id === id)).filter((m): m is MediaView => Boolean(m)),
    ...p.media.filter((m) => !mediaIds.has(m.id)),
  ];
  return html`<form method="post" action="${action}" class="composer" data-testid="composer-form" data-mode="${p.draft ? 'draft' : p.mode}"${p.draft ? html` data-draft-id="${p.draft.id}"` : ''}${p.post ? html` data-post-id="${p.post.id}"` : ''} novalidate>
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <input type="hidden" name="tz" value="${ctx.tz}" data-tz-input>
  ${p.draft ? html`<input type="hidden" name="composer" value="1">` : ''}
  ${formErrors(p.errors)}
  <fieldset class="channels" data-testid="composer-channels">
    <legend>Channels</legend>
    ${
      p.channels.length
        ? html`<ul class="choice-list">${p.channels.map((c) => channelChoice(c, p))}</ul>`
        : html`<p>No channels yet. <a href="/channels">Connect a channel</a> first.</p>`
    }
    ${p.mode === 'edit' ? html`<p class="hint">The channels of a scheduled post cannot be changed.</p>` : ''}
  </fieldset>
  <div class="field">
    <label for="content">Text</label>
    <textarea id="content" name="content" rows="6" data-testid="composer-content" aria-describedby="char-counts-title">${v.content}</textarea>
  </div>
  <section class="counts" aria-labelledby="char-counts-title">
    <h2 id="char-counts-title" class="small-heading">Characters per channel</h2>
    <p class="hint" data-no-counts${p.mode === 'edit' || p.values.channelIds.length ? html` hidden` : ''}>Choose channels to see how many characters each allows.</p>
    <ul data-testid="char-counts" aria-live="polite">${p.channels.map((c) => charCount(c, p, x.links))}</ul>
  </section>
  ${previewSection(p, x)}
  ${platforms.map((pl) => platformText(pl, p))}
  ${linksSection(v.links ?? linkFieldsOf(x.links), p.fields ?? [])}
  ${
    hasReddit && p.mode === 'new'
      ? html`<fieldset class="reddit" data-testid="composer-reddit">
    <legend>Reddit</legend>
    <div class="field"><label for="subreddit">Subreddit</label><input id="subreddit" name="subreddit" value="${v.subreddit}"${REDDIT_SUBREDDIT} data-testid="reddit-subreddit"></div>
    <div class="field"><label for="redditTitle">Title</label><input id="redditTitle" name="redditTitle" value="${v.redditTitle}"${REDDIT_TITLE} data-testid="reddit-title"></div>
  </fieldset>`
      : ''
  }
  ${optionFields({
    channels: p.channels,
    selected: isSelected(p),
    values: v.options,
    errors: p.fields ?? [],
    subreddit: p.mode === 'edit' ? p.post?.reddit?.subreddit : undefined,
    media: p.media,
    mediaIds: v.mediaIds,
  })}
  <fieldset class="media-picker" data-testid="composer-media">
    <legend>Media</legend>
    <ul class="media-choices" data-testid="media-choices">${media.map((m) => mediaChoice(m, mediaIds.has(m.id)))}</ul>
    ${media.length ? '' : html`<p class="hint" data-empty-media>No media in the library yet.</p>`}
    <div class="field upload-field">
      <label for="composer-upload">Upload a file</label>
      <input type="file" id="composer-upload" data-testid="composer-upload" data-upload-into="media-choices" accept="image/jpeg,image/png,image/webp,image/gif,video/mp4,video/quicktime,application/pdf,audio/mpeg,audio/mp4,audio/wav">
      <label for="composer-upload-alt">Alt text for the upload</label>
      <input type="text" id="composer-upload-alt" maxlength="${ALT_TEXT_CHARS}" data-testid="composer-upload-alt">
      <p class="upload-status" role="status" data-testid="upload-status"></p>
    </div>
  </fieldset>
  ${threadFields({
    channels: p.channels,
    selected: isSelected(p),
    media: p.media,
    values: v.followUps,
    errors: p.fields ?? [],
    ownThreads: ownThreadsOf(p),
    links: x.links,
  })}
  <fieldset class="when" data-testid="composer-when">
    <legend>When</legend>
    ${
      p.mode === 'new'
        ? html`<div class="radio"><input type="radio" id="when-now" name="when" value="now" data-testid="composer-when-now"${v.when === 'now' ? html` checked` : ''}><label for="when-now">Publish now</label></div>
    <div class="radio"><input type="radio" id="when-later" name="when" value="later" data-testid="composer-when-later"${v.when === 'later' ? html` checked` : ''}><label for="when-later">Schedule</label></div>
    <div class="radio"><input type="radio" id="when-queue" name="when" value="queue" data-testid="composer-when-queue" aria-describedby="when-queue-hint"${v.when === 'queue' ? html` checked` : ''}><label for="when-queue">Add to queue</label>
      <span class="hint" id="when-queue-hint">the earliest free slot of every chosen channel (<a href="/channels">each channel's queue</a>)</span></div>`
        : ''
    }
    <div class="field">
      <label for="publishAt">Date and time <span class="hint">(${ctx.tz})</span></label>
      <input type="datetime-local" id="publishAt" name="publishAt" value="${v.publishAtLocal}" data-testid="composer-publish-at"${p.mode === 'new' ? html` aria-describedby="draft-time-hint"` : ''}>
      ${p.mode === 'new' ? html`<span class="hint" id="draft-time-hint">A draft keeps it as the time it is meant for (empty: none).</span>` : ''}
    </div>
  </fieldset>
  <div class="actions">
    <button type="submit" class="primary" data-testid="composer-submit">${p.mode === 'new' ? 'Create post' : 'Save changes'}</button>
    ${
      // The same form kept as a draft, unchecked: formaction sends it to the drafts' route (no script needed).
      p.mode === 'new'
        ? html`<button type="submit" formaction="${p.draft ? `/drafts/${p.draft.id}` : '/drafts'}" data-testid="composer-save-draft">${p.draft ? 'Save draft' : 'Save as draft'}</button>`
        : ''
    }
    <a href="${cancel}">Cancel</a>
  </div>
</form>`;
}

const COMPOSER_NOTICES: Record<string, string> = { 'draft-saved': 'Draft saved.' };

async function composerResponse(web: Web, ctx: PageContext, p: ComposerPage, status = 200): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  // A fork: the page may be drawn again after a create or an edit that failed halfway.
  const em = ctx.em.fork();
  const x: ComposerExtras = {
    links: await composerLinks(em, orgId, p, p.values),
    media: await composerMedia(em, orgId, web.deps.storage, p.values, ownThreadsOf(p)),
  };
  const tzReload = ctx.request.method === 'GET';
  const title = p.draft ? 'Edit draft' : p.mode === 'new' ? 'New post' : 'Edit post';
  const intro = p.draft
    ? html`<p class="hint" data-testid="composer-draft-intro">A draft: <strong>Save draft</strong> keeps what is in the form; <strong>Create post</strong> makes the post from it, checked as any post, and the draft then shows it. <a href="/drafts">All drafts</a></p>`
    : p.mode === 'new'
      ? html`<p class="hint">Many posts at once? <a href="/posts/import" data-testid="composer-import-link">Import them from a CSV file</a>. Not ready yet? <strong>Save as draft</strong> keeps it, unchecked, in <a href="/drafts">Drafts</a>.</p>`
      : '';
  const body = html`<h1>${title}</h1>${intro}${composer(ctx, p, x)}`;
  return htmlResponse(
    layout({
      title,
      body,
      signedIn: ctx.signedIn,
      tz: ctx.tz,
      nav: p.draft ? 'drafts' : p.mode === 'new' ? 'compose' : null,
      scripts: ['composer.js'],
      tzReload,
      notice: status === 200 ? (COMPOSER_NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null) : null,
    }),
    { status },
  );
}

/** Validation and conflicts go back to the form (422/409 …); anything else is thrown on. */
export function formFailure(err: unknown): { status: number; messages: string[]; fields: FieldError[] } {
  if (err instanceof ApiError && err.code !== 'unauthorized' && err.code !== 'internal_error' && err.code !== 'not_found') {
    const fields = (err.details as { fields?: FieldError[] } | undefined)?.fields ?? [];
    return { status: err.status, messages: describeError(err), fields };
  }
  throw err;
}

/** What the capability reads need (domain/capabilities.ts), as the API's routes give it. */
const capabilityDeps = (web: Web, now: Date) => ({ orm: web.deps.orm, ...web.deps.platforms, now: () => now });

/** Who creates or edits a post in the web app: the signed-in member, in the session's organization. */
export function postActor(web: Web, ctx: Pick<PageContext, 'em' | 'signedIn' | 'now' | 'tz'>): Actor {
  const { user, organization, role } = ctx.signedIn;
  return {
    em: ctx.em,
    organization,
    temporal: web.deps.temporal,
    now: ctx.now,
    tz: ctx.tz,
    capabilities: capabilityDeps(web, ctx.now),
    requester: memberRequester({ userId: user.id, email: user.email, role }),
  };
}

/** The form's hidden tz field wins over the cookie: the wall time was typed in that zone. */
export function withFormZone(ctx: PageContext): PageContext {
  const tz = ctx.form.get('tz');
  return isTimeZone(tz) && tz !== ctx.tz ? { ...ctx, tz } : ctx;
}

function postPage(
  ctx: PageContext,
  post: PostView,
  channels: Map<string, IChannel>,
  figures: PostAnalytics,
  links: IPreviewLink[],
  comments: { unread: number; total: number } | undefined,
  tags: TagView[],
): Response {
  const errors = postErrors(post, channels);
  const body = html`<article class="post-detail" data-testid="post-detail" data-post-id="${post.id}" data-status="${post.status}" data-feed="/web/api/posts/${post.id}" data-live-posts>
  <h1>Post <span class="status status-${post.status}" data-testid="post-status" data-status="${post.status}"${errors.length ? html` title="${errors.join('\n')}"` : ''}>${statusLabel(post.status)}</span></h1>
  <dl class="facts">
    <dt>Scheduled for</dt><dd><time datetime="${post.scheduledAt}" data-testid="post-scheduled-at">${formatDateTime(new Date(post.scheduledAt), ctx.tz)}</time> <span class="hint" data-testid="post-tz">(${ctx.tz})</span></dd>
    <dt>Created in</dt><dd data-testid="post-source">${post.source === 'app' ? 'the app' : 'the API'}</dd>
    ${post.publishedAt ? html`<dt>Published</dt><dd><time datetime="${post.publishedAt}">${formatDateTime(new Date(post.publishedAt), ctx.tz)}</time></dd>` : ''}
  </dl>
  ${postTagsPanel(ctx, post, tags)}
  <h2>Text</h2>
  <p class="post-content" data-testid="post-content">${post.content}</p>
  ${post.media.length ? html`<h2>Media</h2><ul class="plain">${post.media.map((m) => html`<li data-testid="post-media" data-media-id="${m.id}">${m.type} ${m.id}</li>`)}</ul>` : ''}
  <h2>Channels</h2>
  <table class="table" data-testid="post-channels">
    <thead><tr><th scope="col">Channel</th><th scope="col">Status</th><th scope="col">Result</th></tr></thead>
    <tbody>${post.channels.map(
      (c) => html`<tr data-testid="post-channel-row" data-pc-channel="${c.channelId}" data-status="${c.status}">
      <th scope="row">${platformBadge(c.platform)} ${channels.get(c.channelId)?.name ?? c.channelId}</th>
      <td><span class="status status-${c.status}" data-testid="post-channel-status">${statusLabel(c.status)}</span></td>
      <td data-testid="post-channel-result">${c.error ? html`<span class="error-text" data-testid="post-channel-error">${c.error}</span>` : liveLink(c.url)}</td>
    </tr>`,
    )}</tbody>
  </table>
  ${postItems(post, channels)}
  ${postComments(post.id, comments, post.publishedAt !== null)}
  ${approvalPanel(ctx, post, links)}
  ${postFigures(figures, channels)}
  <p class="post-deleted notice" role="status" data-testid="post-deleted" hidden>This post has been deleted.</p>
  <div class="actions">${post.status === 'scheduled' ? html`<a class="button primary" href="/posts/${post.id}/edit" data-testid="post-edit">Edit or reschedule</a>` : ''}
  ${postLifecycleActions(ctx, post, channels)}
  <a href="/calendar?date=${dayKey(new Date(post.scheduledAt), ctx.tz)}">Back to the calendar</a></div>
</article>`;
  const notice = ctx.url.searchParams.get('notice');
  return htmlResponse(
    layout({
      title: 'Post',
      body,
      signedIn: ctx.signedIn,
      tz: ctx.tz,
      nav: null,
      scripts: ['calendar.js', 'uplot.js', 'analytics.js'],
      styles: ['uplot.css'],
      tzReload: true,
      notice:
        notice === 'created'
          ? post.approval?.status === 'pending'
            ? 'Post created. It waits for approval before it is published.'
            : 'Post created.'
          : notice === 'saved'
            ? 'Changes saved.'
            : notice === 'retrying'
              ? 'Publishing again on the channels that failed.'
              : notice === 'approved'
                ? 'Post approved.'
                : notice === 'rejected'
                  ? 'Post rejected.'
                  : null,
    }),
  );
}

async function editPage(
  web: Web,
  ctx: PageContext,
  post: PostView,
  values: ComposerValues | null,
  errors: string[],
  status = 200,
  fields: FieldError[] = [],
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const all = byId(await channelsOf(ctx.em, orgId));
  const channels = post.channels.map((c) => all.get(c.channelId)).filter((c): c is IChannel => Boolean(c));
  let v = values;
  if (!v) {
    const stored = await ctx.em.findOneOrFail(Post, { id: post.id, organization: orgId });
    v = {
      channelIds: channels.map((c) => c.id),
      content: post.content,
      platformTexts: { ...(stored.contentByPlatform ?? {}) },
      mediaIds: post.media.map((m) => m.id),
      subreddit: post.reddit?.subreddit ?? '',
      redditTitle: post.reddit?.title ?? '',
      when: 'later',
      publishAtLocal: localInputValue(new Date(post.scheduledAt), ctx.tz),
      followUps: { thread: post.thread ?? [], firstComment: post.firstComment?.content ?? '' },
      options: optionValues(post.options),
    };
  }
  const media = await readyMedia(ctx.em, orgId, web.deps.storage);
  return composerResponse(web, ctx, { mode: 'edit', post, channels, media, values: v, errors, fields }, status);
}

/** The new-post composer again, with the form as sent and what was refused (a draft that could not be kept). */
export async function newComposerPage(
  web: Web,
  ctx: PageContext,
  values: ComposerValues,
  errors: string[],
  status: number,
  fields: FieldError[],
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const [channels, media] = await Promise.all([channelsOf(ctx.em, orgId), readyMedia(ctx.em, orgId, web.deps.storage)]);
  return composerResponse(web, ctx, { mode: 'new', channels, media, values, errors, fields }, status);
}

/**
 * A draft in the composer: its fields (or the form as sent, shown again with what was refused),
 * every channel of the organization to choose from, as for a new post.
 */
export async function draftComposerPage(
  web: Web,
  ctx: PageContext,
  draft: DraftView,
  values: ComposerValues | null,
  errors: string[] = [],
  status = 200,
  fields: FieldError[] = [],
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const [channels, media] = await Promise.all([channelsOf(ctx.em, orgId), readyMedia(ctx.em, orgId, web.deps.storage)]);
  const v = values ?? composerValuesOfDraft(draft, ctx.tz);
  return composerResponse(web, ctx, { mode: 'new', draft, channels, media, values: v, errors, fields }, status);
}

/**
 * The live counts: each text measured as it will be sent on its channel, by the functions the
 * post's checks call. `kind` comment: a comment under the post (the composer's first comment on a
 * comment platform); `links`: the post's links choice (the composer's form says it).
 */
const TextLengthsBody = t.Object(
  {
    texts: t.Array(
      t.Object(
        {
          channelId: t.String({ maxLength: 100 }),
          text: t.String(),
          kind: t.Optional(t.Union([t.Literal('post'), t.Literal('comment')])),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
    links: t.Optional(LinkChoiceSchema),
  },
  { additionalProperties: false },
);

async function textLengths(
  ctx: { em: PageContext['em']; signedIn: PageContext['signedIn'] },
  body: typeof TextLengthsBody.static,
): Promise<Response> {
  const channels = byId(await channelsOf(ctx.em, ctx.signedIn.organization.id));
  const unknown = body.texts.flatMap((x, i) =>
    channels.has(x.channelId) ? [] : [{ path: `texts.${i}.channelId`, message: `unknown channel ${x.channelId}` }],
  );
  if (unknown.length) throw errors.validation(unknown);
  const counts = body.texts.map(({ channelId, text, kind }) => {
    const c = channels.get(channelId)!;
    if (kind === 'comment') {
      const { characters, maxChars } = measureFollowUp(c, { position: 1, kind, content: text, mediaIds: [] }, body.links);
      return { channelId, length: characters, exact: true, maxChars, over: characters > maxChars };
    }
    const { length, exact, maxChars } = measureSent(c, text, body.links);
    return { channelId, length, exact, maxChars, over: length > maxChars };
  });
  return jsonResponse({ counts });
}

/**
 * The composer's preview: `form` is the composer's form as the browser would send it (urlencoded),
 * read as POST /posts reads it, its Links section included; `postId` (an edit: its channels,
 * threads, and links choice for a form without the section) or `draftId` (the draft's threads, and
 * links choice likewise) say what it belongs to.
 */
const PreviewBody = t.Object(
  { form: t.String({ maxLength: WEB_BODY_BYTES }), postId: t.Optional(BodyId()), draftId: t.Optional(BodyId()) },
  { additionalProperties: false },
);

async function composerPreview(
  web: Web,
  ctx: { em: PageContext['em']; signedIn: PageContext['signedIn'] },
  body: typeof PreviewBody.static,
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const values = composerValuesFromForm(new URLSearchParams(body.form));
  const all = await channelsOf(ctx.em, orgId);
  const post = body.postId ? await getPostForKey(ctx.em, orgId, body.postId, 'all') : undefined;
  const draft = !post && body.draftId ? await getDraft(ctx.em, orgId, body.draftId, 'all') : undefined;
  const known = byId(all);
  // An edit's channels are its post's (the form's boxes are disabled, so it sends none).
  const channels = post
    ? post.channels.map((c) => known.get(c.channelId)).filter((c): c is IChannel => Boolean(c))
    : all.filter((c) => values.channelIds.includes(c.id));
  const ownThreads = ownThreadsOf({ post, draft });
  const previews = composerPreviews({
    channels,
    values,
    media: await composerMedia(ctx.em, orgId, web.deps.storage, values, ownThreads),
    links: await composerLinks(ctx.em, orgId, { post, draft }, values),
    ownThreads,
  });
  return jsonResponse({ html: previews.value });
}

/** A subreddit as GET /v1/channels/{id}/capabilities takes it. */
const SUBREDDIT = /^[A-Za-z0-9][A-Za-z0-9_]{1,20}$/;

/** The composer's option fields: what a chosen channel's account can do, as GET /v1/channels/{id}/capabilities. */
async function capabilities(
  web: Web,
  ctx: { em: PageContext['em']; signedIn: PageContext['signedIn']; url: URL; now: Date; params: Record<string, string> },
) {
  const subreddit = ctx.url.searchParams.get('subreddit') ?? undefined;
  if (subreddit !== undefined && !SUBREDDIT.test(subreddit))
    throw errors.validation([{ path: 'subreddit', message: 'must be a subreddit name without r/ (2 to 21 letters, digits or _)' }]);
  const caps = await channelCapabilities(ctx.em, capabilityDeps(web, ctx.now), ctx.signedIn.organization.id, ctx.params.id!, 'all', {
    subreddit,
  });
  return jsonResponse(caps);
}

export function composerRoutes(web: Web) {
  return router()
    .post(
      '/web/api/text-lengths',
      jsonRoute(web, 'read', (ctx) => textLengths(ctx, ctx.body as typeof TextLengthsBody.static)),
      { body: TextLengthsBody },
    )
    .post(
      '/web/api/composer/preview',
      jsonRoute(web, 'posts.write', (ctx) => composerPreview(web, ctx, ctx.body as typeof PreviewBody.static)),
      { body: PreviewBody },
    )
    .get(
      '/web/api/channels/:id/capabilities',
      jsonRoute(web, 'read', (ctx) => capabilities(web, ctx)),
    )
    .get(
      '/posts/new',
      pageRoute(web, 'posts.write', async (ctx) => {
        const orgId = ctx.signedIn.organization.id;
        const [channels, media] = await Promise.all([channelsOf(ctx.em, orgId), readyMedia(ctx.em, orgId, web.deps.storage)]);
        const day = parseDayKey(ctx.url.searchParams.get('date'));
        const active = channels.filter((c) => c.status === 'active');
        const preselect = ctx.url.searchParams.getAll('channel').filter((id) => active.some((c) => c.id === id));
        const values: ComposerValues = {
          channelIds: preselect.length ? preselect : active.length === 1 ? [active[0]!.id] : [],
          content: '',
          platformTexts: {},
          mediaIds: [],
          subreddit: '',
          redditTitle: '',
          when: 'later',
          // ?time=HH:MM with ?date: a free queue slot picked on the calendar.
          publishAtLocal: day
            ? `${ctx.url.searchParams.get('date')}T${/^([01]\d|2[0-3]):[0-5]\d$/.test(ctx.url.searchParams.get('time') ?? '') ? ctx.url.searchParams.get('time') : '09:00'}`
            : localInputValue(new Date(ctx.now.getTime() + 60 * 60 * 1000), ctx.tz),
          followUps: NO_FOLLOW_UPS,
          options: {},
        };
        return composerResponse(web, ctx, { mode: 'new', channels, media, values, errors: [] });
      }),
    )
    .post(
      '/posts',
      pageRoute(web, 'posts.write', async (raw) => {
        const ctx = withFormZone(raw);
        const values = composerValuesFromForm(ctx.form);
        try {
          const id = await createAppPost(postActor(web, ctx), values);
          return redirect(`/posts/${id}?notice=created`);
        } catch (err) {
          const { status, messages, fields } = formFailure(err);
          const orgId = ctx.signedIn.organization.id;
          const [channels, media] = await Promise.all([
            channelsOf(ctx.em.fork(), orgId),
            readyMedia(ctx.em.fork(), orgId, web.deps.storage),
          ]);
          return composerResponse(web, ctx, { mode: 'new', channels, media, values, errors: messages, fields }, status);
        }
      }),
      { parse: 'text' },
    )
    .get(
      '/posts/:id',
      pageRoute(web, 'read', async (ctx) => {
        const orgId = ctx.signedIn.organization.id;
        const post = await getPostForKey(ctx.em, orgId, ctx.params.id!, 'all', web.deps.storage);
        const figures = await postAnalyticsForKey(ctx.em, orgId, post.id, 'all', web.deps.storage);
        const comments = (await commentCountsByPost(ctx.em, orgId, [post.id])).get(post.id);
        return postPage(
          ctx,
          post,
          byId(await channelsOf(ctx.em, orgId)),
          figures,
          await previewLinksOfPost(ctx.em, orgId, post.id),
          comments,
          await listTags(ctx.em, orgId),
        );
      }),
    )
    .get(
      '/posts/:id/edit',
      pageRoute(web, 'posts.write', async (ctx) => {
        const post = await getPostForKey(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all');
        assertEditable(post);
        return editPage(web, ctx, post, null, []);
      }),
    )
    .post(
      '/posts/:id/edit',
      pageRoute(web, 'posts.write', async (raw) => {
        const ctx = withFormZone(raw);
        const values = composerValuesFromForm(ctx.form);
        const id = ctx.params.id!;
        try {
          await editAppPost(postActor(web, ctx), id, {
            content: values.content,
            platformTexts: values.platformTexts,
            mediaIds: values.mediaIds,
            publishAtLocal: values.publishAtLocal,
            followUps: hasFollowUpFields(ctx.form) ? values.followUps : undefined,
            options: hasOptionFields(ctx.form) ? values.options : undefined,
            links: values.links,
          });
          return redirect(`/posts/${id}?notice=saved`);
        } catch (err) {
          const { status, messages, fields } = formFailure(err);
          const post = await getPostForKey(ctx.em.fork(), ctx.signedIn.organization.id, id, 'all');
          // A post that has started publishing cannot be edited any more: say so, without the form.
          assertEditable(post);
          return editPage(web, { ...ctx, em: ctx.em.fork() }, post, values, messages, status, fields);
        }
      }),
      { parse: 'text' },
    );
}
