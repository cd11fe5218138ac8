import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created } from './base.ts';
import { PostChannel } from './post-channel.ts';

// Tracked links (domain/links/ states the rules): a short link of the service's own for each
// (post, channel, link) of a published text, and the clicks counted through it.

/**
 * Whether a post's links are published as short links, and whether their targets get UTM
 * parameters (a post's `links`, an organization's default for posts that give none).
 */
export interface LinkChoice {
  shorten: boolean;
  /** UTM parameters on each target; `campaign` names utm_campaign (else the post's first tag). Absent or null: none. */
  utm?: { campaign?: string } | null;
}

/**
 * One link of one channel's post: written by the first publish attempt that sends a text with it,
 * read by every later one, so a retried publish sends the same short link.
 */
export const TrackedLink = defineEntity({
  name: 'TrackedLink',
  tableName: 'tracked_links',
  extends: Created,
  properties: {
    /** The short link's code (`/l/{code}`): random, never derived from anything a client knows. */
    code: p.string().length(32).primary(),
    postChannel: () => p.manyToOne(PostChannel).mapToPk().deleteRule('cascade'),
    /** The link as the post's text has it. */
    url: p.text(),
    /** Where the short link leads: `url`, with the channel's UTM parameters when they were asked for. */
    target: p.text(),
    /** The short link as it was published. */
    shortUrl: p.text(),
  },
  // One short link per (post channel, link); also a channel's links, for its analytics.
  uniques: [{ properties: ['postChannel', 'url'] }],
});
export type ITrackedLink = InferEntity<typeof TrackedLink>;

/**
 * A click counted on a short link: at most one per (link, client address, minute), so repeated
 * requests of one client within a minute count once. The address is kept only as a keyed hash.
 */
export const LinkClick = defineEntity({
  name: 'LinkClick',
  tableName: 'link_clicks',
  properties: {
    link: () => p.manyToOne(TrackedLink).mapToPk().deleteRule('cascade').primary(),
    addressHash: p.string().length(64).primary(),
    /** The minute of the click (seconds zero). */
    minute: p.datetime().primary(),
  },
});
export type ILinkClick = InferEntity<typeof LinkClick>;
