// The composer's live preview: each chosen channel's post as it will be published, from the form as
// it would be sent (web/post-actions.ts composerValuesFromForm), drawn by the preview links'
// renderer (web/channel-preview.ts). What each channel gets is worked out by the create path's own
// functions: its text (a per-platform text, else the main one: contentByPlatform), its follow-ups
// (threadInputFor → domain/posts/thread.ts channelFollowUps: the thread's replies on a thread
// platform, the first comment as its first reply there or as a comment under the post), each
// measured as sent (measureSent, measureFollowUp) with the links choice the post will have (the
// form's Links section, ticked or not, as it stands).
// composer.js asks POST /web/api/composer/preview for it a moment after typing stops; the page's
// first one is drawn with the page.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaItem, type IChannel, type IMediaItem, type LinkChoice, type ThreadItem } from '../db/entities/index.ts';
import { linkChoiceFor, NO_LINKS } from '../domain/links/choice.ts';
import { mediaView } from '../domain/media.ts';
import { measureSent } from '../domain/posts/checks.ts';
import type { DraftView } from '../domain/posts/drafts.ts';
import { POST_LIMITS } from '../domain/posts/limits.ts';
import { channelFollowUps, measureFollowUp } from '../domain/posts/thread.ts';
import type { PostView } from '../domain/posts/view.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { channelPreview, type PreviewMedia } from './channel-preview.ts';
import { draftContent, draftThreads } from './draft-input.ts';
import { html, type SafeHtml } from './html.ts';
import { linkChoiceOf } from './link-input.ts';
import { contentByPlatform, type ComposerValues } from './post-actions.ts';
import { threadInputFor } from './thread-input.ts';

/** What the composer's post is, besides its form: an edit's post, or the draft it was opened from. */
export interface ComposerOrigin {
  post?: PostView;
  draft?: DraftView;
}

/** The per-platform threads the post (or draft) has of its own (set through the API): the form keeps them. */
export const ownThreadsOf = (o: ComposerOrigin): Record<string, ThreadItem[]> =>
  o.post?.threadByPlatform ?? (o.draft ? draftThreads(o.draft) : {});

/**
 * The links choice the post will be published with: the form's Links section's; without it, an
 * edit keeps its post's; a draft's own, else (as a new post's) the organization's default, as the
 * create path decides it (domain/links/choice.ts). What the section gets wrong is the submit's to
 * say; the preview shows what it asks for.
 */
export async function composerLinks(
  em: EntityManager,
  organizationId: string,
  o: ComposerOrigin,
  values?: Pick<ComposerValues, 'links'>,
): Promise<LinkChoice> {
  if (values?.links) return linkChoiceOf(values.links).choice;
  if (o.post) return o.post.links ?? NO_LINKS;
  return linkChoiceFor(em, organizationId, o.draft ? draftContent(o.draft).links : undefined);
}

/** At most the media a post and its thread can name: a forged form asks for no more. */
const MAX_PREVIEW_MEDIA = POST_LIMITS.mediaItems + POST_LIMITS.threadItems * POST_LIMITS.threadItemMedia;

/** A media item of the form: what the follow-ups' checks read of it, and what the preview shows. */
export type ComposerMedia = Pick<IMediaItem, 'id' | 'type'> & PreviewMedia;

/** The post's media (the form's, its thread items', its own per-platform threads'), each ready item of the organization with its signed URLs. */
export async function composerMedia(
  em: EntityManager,
  organizationId: string,
  storage: ObjectStorage | undefined,
  values: ComposerValues,
  ownThreads: Record<string, ThreadItem[]>,
): Promise<Map<string, ComposerMedia>> {
  const items = [...values.followUps.thread, ...Object.values(ownThreads).flat()];
  const ids = [...new Set([...values.mediaIds, ...items.flatMap((i) => i.mediaIds)])].slice(0, MAX_PREVIEW_MEDIA);
  if (!storage || !ids.length) return new Map();
  const found = await em.find(MediaItem, { organization: organizationId, id: { $in: ids }, status: 'ready' });
  return new Map(
    await Promise.all(
      found.map(async (m) => {
        const { url, thumbnailUrl, altText } = await mediaView(m, storage);
        return [m.id, { id: m.id, type: m.type, url, thumbnailUrl, altText }] as const;
      }),
    ),
  );
}

export interface ComposerPreviewInput {
  /** The chosen channels, in the composer's order. */
  channels: IChannel[];
  values: ComposerValues;
  media: Map<string, ComposerMedia>;
  links: LinkChoice;
  ownThreads: Record<string, ThreadItem[]>;
}

/** Each chosen channel's preview; a hint while none is chosen. */
export function composerPreviews(p: ComposerPreviewInput): SafeHtml {
  if (!p.channels.length)
    return html`<p class="hint" data-testid="preview-empty">Choose channels to see the post as each of them will publish it.</p>`;
  const texts = contentByPlatform(p.values, p.channels);
  // The follow-ups as the create path makes them; what it would refuse is the counters' and the submit's to say.
  const followUps = channelFollowUps(p.channels, threadInputFor(p.values.followUps, p.channels, p.ownThreads), p.media, [], p.links);
  const media = (ids: string[]): PreviewMedia[] => ids.flatMap((id) => p.media.get(id) ?? []);
  return html`${p.channels.map((c) => {
    const content = texts[c.platform] ?? p.values.content;
    const { length, maxChars } = measureSent(c, content, p.links);
    return channelPreview({
      channelId: c.id,
      platform: c.platform,
      name: c.name,
      content,
      media: media(p.values.mediaIds),
      followUps: (followUps[c.id] ?? []).map((item) => {
        const measured = measureFollowUp(c, item, p.links);
        return {
          kind: item.kind,
          content: item.content,
          media: media(item.mediaIds),
          measured: { length: measured.characters, maxChars: measured.maxChars },
        };
      }),
      links: p.links,
      measured: { length, maxChars },
    });
  })}`;
}
