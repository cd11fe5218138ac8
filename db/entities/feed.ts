import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created, Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { POST_SOURCES } from './post.ts';

// RSS and Atom feeds that post by themselves (domain/feeds/feeds.ts states the rules): a feed is a
// URL, target channels and a text template; the feed poll (workflows/feed-poll.ts) reads it and
// creates one post per new item. Every item seen is a row of feed_items, so an item is posted at
// most once whatever the feed does with its order or dates.

export const FEED_MODES = ['now', 'queue'] as const;
export type FeedMode = (typeof FEED_MODES)[number];
/** active: polled; paused: by its owner, or by the service after repeated failures (pausedReason). */
export const FEED_STATUSES = ['active', 'paused'] as const;
export type FeedStatus = (typeof FEED_STATUSES)[number];

export interface FeedFilter {
  /** The item is posted only if its title, summary or categories contain one of these (any letter case). */
  include?: string[];
  /** The item is never posted if its title, summary or categories contain one of these. */
  exclude?: string[];
}

export const Feed = defineEntity({
  name: 'Feed',
  tableName: 'feeds',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    name: p.string().length(200),
    url: p.text(),
    channelIds: p.json<string[]>(),
    /** The organization's tags (domain/tags.ts) each of its posts gets, in id order. */
    tagIds: p.json<string[]>().default('[]'),
    template: p.text(),
    templateByPlatform: p.json<Record<string, string>>().default('{}'),
    mode: p.enum(FEED_MODES).default('now'),
    filter: p.json<FeedFilter>().nullable(),
    pollMinutes: p.integer().default(15),
    status: p.enum(FEED_STATUSES).default('active'),
    pausedReason: p.text().nullable(),
    consecutiveFailures: p.integer().default(0),
    lastPolledAt: p.datetime().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    lastError: p.json<{ at: string; message: string }>().nullable(),
    /** The validators of the last answer, sent back as If-None-Match / If-Modified-Since. */
    etag: p.text().nullable(),
    lastModified: p.text().nullable(),
    /** When the poll sweep takes it next. */
    nextPollAt: p.datetime(),
    /** Held by a read under way until it ends, or until this time at most (a read cut off): no other read claims it. */
    readUntil: p.datetime().nullable(),
    source: p.enum(POST_SOURCES),
    /** The key that created it (null for the web application): its posts are that key's. */
    apiKeyId: p.string().nullable(),
    /** The member who created it in the web app: its posts wait for approval as theirs would. */
    createdByUserId: p.string().nullable(),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [
    {
      name: 'feeds_due_index',
      expression: 'create index "feeds_due_index" on "feeds" ("next_poll_at") where "status" = \'active\' and "deleted_at" is null',
    },
  ],
});
export type IFeed = InferEntity<typeof Feed>;

/** posted: its post was created; backlog: present when the feed was added; filtered: the filter left it out; refused: the post could not be created (error). */
export const FEED_ITEM_OUTCOMES = ['posted', 'backlog', 'filtered', 'refused'] as const;
export type FeedItemOutcome = (typeof FEED_ITEM_OUTCOMES)[number];

export const FeedItem = defineEntity({
  name: 'FeedItem',
  tableName: 'feed_items',
  extends: Created,
  properties: {
    feed: () => p.manyToOne(Feed).mapToPk().deleteRule('cascade').primary(),
    /** sha256 of the item's identity (domain/feeds/items.ts itemKey), hex. */
    keyHash: p.string().length(64).primary(),
    itemKey: p.text(),
    link: p.text().nullable(),
    title: p.text().nullable(),
    outcome: p.enum(FEED_ITEM_OUTCOMES),
    postId: p.string().nullable(),
    error: p.json<{ code: string; message: string }>().nullable(),
  },
  indexes: [{ name: 'feed_items_link_index', properties: ['feed', 'link'] }],
});
export type IFeedItem = InferEntity<typeof FeedItem>;
