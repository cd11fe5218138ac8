// Editing a scheduled post, from the API, the MCP tools and the web app: the same rules as
// creating it, then the workflow's editPost Update, whose validator makes the final "still
// scheduled?" check atomic with the workflow.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Post } from '../../db/entities/index.ts';
import { ApiError } from '../../lib/errors.ts';
import { editPostUpdate, FAILURE, postWorkflowId, type PostEdit } from '../../workflows/post-types.ts';
import type { MediaViewer } from '../media.ts';
import { releaseQueueClaims } from '../queues/queues.ts';
import { executeUpdateInRequest, type TemporalDeps, updateFailureType } from '../temporal-calls.ts';
import { assertChannelsUsable, channelTexts, loadPostMedia, loadTargetChannels } from './checks.ts';
import { assertNotDuplicate } from './create.ts';
import type { PostView } from './view.ts';
import { checkFollowUps, threadInputOf, type ThreadInput } from './thread.ts';
import { contentOf, type ContentBody } from './content.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { liveOptionProblems, optionProblems, redditFromOptions } from './options.ts';
import { liveCapabilitiesOf, type CapabilityDeps } from '../capabilities.ts';
import { approvalFor, type Requester } from './approval.ts';
import { checkTagIds, setPostTags } from '../tags.ts';

/** Sends a validated edit through the workflow's Update; its validator refuses unless still scheduled. */
export async function editPost(temporal: TemporalDeps, postId: string, edit: PostEdit): Promise<void> {
  try {
    await executeUpdateInRequest(
      temporal,
      postWorkflowId(postId),
      editPostUpdate,
      [edit],
      // No answer in time (Temporal down, or no worker): the Update may still be applied once a
      // worker polls again. The edit only sets values, so retrying it is safe.
      'Scheduling is unavailable right now; the edit was not confirmed and may still be applied later. Check the post and retry shortly.',
    );
  } catch (err) {
    // Refused by the validator (publishing) or the workflow has ended (published, failed).
    if (updateFailureType(err) === FAILURE.notScheduled || err instanceof WorkflowNotFoundError) {
      throw new ApiError('conflict', 'The post is no longer scheduled; it cannot be edited.');
    }
    throw err;
  }
}

/**
 * An edit: any field of a post's content (domain/posts/content.ts; absent: unchanged, null: removed
 * where the field may be null; `options` replaces the post's), a new time, new target channels,
 * new tags (they replace the post's).
 */
export type EditRequest = Partial<ContentBody> & { publishAt?: Date; channelIds?: string[]; tagIds?: string[] };

/** An edit that gives the post's tags and nothing else: no part of what is published (domain/tags.ts), so any post takes it. */
export const onlyTags = (edit: Record<string, unknown>): boolean =>
  edit.tagIds !== undefined && Object.entries(edit).every(([field, value]) => field === 'tagIds' || value === undefined);

/** A post's tags become these (the organization's, or 422 at `tagIds`), whatever its status, without its workflow. */
export async function retagPost(em: EntityManager, organizationId: string, postId: string, tagIds: string[]): Promise<void> {
  await setPostTags(em, postId, await checkTagIds(em, organizationId, tagIds));
}

/**
 * An edit of a scheduled post, from the API or the web app: the same rules as creating it
 * (channels' text limits, media, duplicates; new channels within the key's list and usable),
 * then the workflow's editPost Update, whose validator makes the final "still scheduled?" check
 * atomic with the workflow. `key`: the API key editing (its channel list and the media it may
 * see); null for the web app.
 */
export async function validateAndEditPost(
  em: EntityManager,
  temporal: TemporalDeps,
  organizationId: string,
  current: PostView,
  edit: EditRequest,
  key: MediaViewer | null = null,
  /** Reads what each channel's account can do now, to check the options against it; absent: not read. */
  capabilities?: CapabilityDeps,
  /** Who edits: one whose posts need approval puts the post back to pending (domain/posts/approval.ts). */
  requester?: Requester,
): Promise<void> {
  const fields: FieldError[] = [];
  const currentIds = current.channels.map((c) => c.channelId);
  const channels = await loadTargetChannels(
    em,
    organizationId,
    edit.channelIds ?? currentIds,
    edit.channelIds ? (key?.channels ?? 'all') : 'all',
  );
  // A channel the post already has keeps it whatever its status (as an edit of the text does);
  // an added one must be usable, as on create.
  assertChannelsUsable(channels.filter((c) => !currentIds.includes(c.id)));
  const tagIds = edit.tagIds === undefined ? undefined : await checkTagIds(em, organizationId, edit.tagIds);
  const stored = await em.findOneOrFail(Post, { id: current.id, organization: organizationId });
  const media = await loadPostMedia(em, organizationId, edit.mediaIds ?? current.media.map((m) => m.id), key ?? undefined);
  // New channels without new per-platform texts: the texts of platforms no longer targeted go.
  const contentByPlatform =
    edit.contentByPlatform ??
    (edit.channelIds
      ? Object.fromEntries(Object.entries(stored.contentByPlatform ?? {}).filter(([p]) => channels.some((c) => c.platform === p)))
      : (stored.contentByPlatform ?? {}));
  // Options given by the edit may name the subreddit and title (domain/posts/options.ts).
  const moved = edit.options ? redditFromOptions(edit.reddit ?? null, edit.options, fields) : null;
  const namedInOptions = edit.options?.reddit?.subreddit !== undefined || edit.options?.reddit?.title !== undefined;
  // Undefined: unchanged; null: removed.
  const newReddit = moved && namedInOptions ? moved.reddit : edit.reddit;
  const reddit = newReddit !== undefined ? newReddit : current.reddit;
  // The follow-ups after the edit: what it gives, else what the post has; threads of platforms no
  // longer targeted go, as their texts do.
  const asked = threadInputOf(edit);
  const followUps: ThreadInput = {
    thread: edit.thread !== undefined ? asked.thread : current.thread,
    threadByPlatform:
      edit.threadByPlatform !== undefined
        ? asked.threadByPlatform
        : Object.fromEntries(Object.entries(current.threadByPlatform).filter(([p]) => channels.some((c) => c.platform === p))),
    firstComment: edit.firstComment !== undefined ? asked.firstComment : current.firstComment,
  };
  // The texts are checked as they will be sent: with the links choice the edit gives, else the post's.
  const links = edit.links ?? current.links;
  const items = await checkFollowUps(em, organizationId, channels, followUps, key ?? undefined, fields, links);
  // New channels keep the options of platforms still targeted, unless new options are given.
  const options =
    moved?.options ??
    (edit.channelIds
      ? Object.fromEntries(Object.entries(current.options).filter(([p]) => channels.some((c) => c.platform.toLowerCase() === p)))
      : current.options);
  fields.push(...optionProblems(channels, options, media, { requireChoices: !current.seriesId }));
  const texts = channelTexts(channels, { content: edit.content ?? current.content, contentByPlatform, media, reddit, links }, fields);
  if (capabilities) {
    const live = await liveCapabilitiesOf(capabilities, channels, reddit?.subreddit);
    const problems = liveOptionProblems(channels, live, { options, media, reddit });
    if (problems.length) throw errors.validation(problems);
  }
  await assertNotDuplicate(
    em,
    channels,
    texts,
    edit.publishAt ?? new Date(current.scheduledAt),
    current.id,
    current.seriesId ?? undefined,
    items,
  );
  const approval = await approvalFor(em, organizationId, requester, new Date());
  const followUpsChanged =
    edit.thread !== undefined || edit.threadByPlatform !== undefined || edit.firstComment !== undefined || edit.channelIds !== undefined;
  await editPost(temporal, current.id, {
    // The fields no rule reads, as given; those below as their rules decide.
    ...contentOf(edit),
    content: edit.content,
    contentByPlatform: edit.contentByPlatform ?? (edit.channelIds ? contentByPlatform : undefined),
    publishAt: edit.publishAt?.toISOString(),
    mediaIds: edit.mediaIds,
    channelIds: edit.channelIds,
    reddit: newReddit,
    channelContent: texts,
    ...(followUpsChanged ? { ...followUps, channelItems: items } : {}),
    ...(edit.options !== undefined || edit.channelIds !== undefined ? { options: options as Record<string, Record<string, unknown>> } : {}),
    ...(approval ? { approval } : {}),
  });
  // Rescheduled: a queue slot it held is free again (tidiness; a moved post's claim is stale anyway).
  if (edit.publishAt) await releaseQueueClaims(em, current.id, edit.publishAt);
  // Once the workflow took the edit: a refused edit changes none of the post.
  if (tagIds) await setPostTags(em, current.id, tagIds);
}
