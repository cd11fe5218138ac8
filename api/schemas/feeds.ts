// RSS and Atom feeds and their items.
import { t } from 'elysia';
import { strict, DateTime, NullableDateTime, NullableString, oneOf } from './primitives.ts';

export const FeedFilterSchema = t.Object(
  {
    include: t.Optional(
      t.Array(t.String(), { description: 'Posted only if the title, summary or categories contain one of these (any letter case).' }),
    ),
    exclude: t.Optional(t.Array(t.String(), { description: 'Never posted if the title, summary or categories contain one of these.' })),
  },
  strict,
);

export const FeedSchema = t.Object(
  {
    id: t.String(),
    name: t.String({ description: 'The feed’s own title unless given.' }),
    url: t.String(),
    channelIds: t.Array(t.String()),
    tagIds: t.Array(t.String(), { description: 'The organization’s tags each of its posts gets (GET /tags), in id order.' }),
    template: t.String({
      description: 'The text of each item’s post: `{title}`, `{link}`, `{summary}`, `{author}`, `{categories}`, `{feed}`.',
    }),
    templateByPlatform: t.Record(t.String(), t.String(), {
      description: 'A template per platform (upper-case platform name), instead of `template` there.',
    }),
    mode: oneOf(
      ['now', 'queue'],
      '`now`: each new item is published at once; `queue`: at the next free slot of the channels’ posting queues.',
    ),
    filter: t.Union([FeedFilterSchema, t.Null()], { description: 'Which items are posted; null: all.' }),
    pollMinutes: t.Integer({ description: 'Minutes between two reads.' }),
    status: oneOf(['active', 'paused'], '`paused` by its owner, or by the service after 5 failed reads in a row (`pausedReason`).'),
    pausedReason: NullableString('Why the service paused it; null when it is active or its owner paused it.'),
    consecutiveFailures: t.Integer({ description: 'Failed reads since the last that succeeded.' }),
    lastPolledAt: NullableDateTime('The last read; null before the first.'),
    lastSuccessAt: NullableDateTime('The last read that succeeded (a 304 included).'),
    lastError: t.Union([t.Object({ at: t.String({ format: 'date-time' }), message: t.String() }, strict), t.Null()], {
      description: 'The last failed read since the last success; null when none.',
    }),
    nextPollAt: NullableDateTime('When it is read next; null while paused.'),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const FeedListSchema = t.Object({ data: t.Array(FeedSchema, { description: 'Oldest first.' }) }, strict);

export const FeedItemSchema = t.Object(
  {
    itemKey: t.String({ description: 'The item’s identity: its RSS guid or Atom id, else its link, else its title and summary.' }),
    title: NullableString('Its title when it was seen.'),
    link: NullableString('Its link when it was seen.'),
    outcome: oneOf(
      ['posted', 'backlog', 'filtered', 'refused'],
      '`posted`: its post was created (`postId`); `backlog`: in the feed when it was added, not posted; `filtered`: left out by the filter; `refused`: the post could not be created (`error`).',
    ),
    postId: NullableString('The post made of it.'),
    error: t.Union([t.Object({ code: t.String(), message: t.String() }, strict), t.Null()], {
      description: 'Why its post was refused, as Schedule a post would answer.',
    }),
    seenAt: DateTime('When the feed first showed it.'),
  },
  strict,
);

export const FeedItemListSchema = t.Object(
  {
    data: t.Array(FeedItemSchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);
