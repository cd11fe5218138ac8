// Following a short link, and the clicks it counts.
//
// Rules:
// - `GET /l/{code}` answers 302 to the link's recorded target, and only to it: a code is looked up,
//   never read as an address, so the route is no open redirect. An unknown code, or one not
//   shaped as the service makes them (domain/links/rewrite.ts SHORT_CODE), is 404 with no
//   Location. `HEAD` answers as GET does and counts nothing.
// - A GET counts a click, at most once per (link, client address, minute): the address is the
//   socket's peer or, behind TRUST_PROXY, the trusted X-Forwarded-For entry; IPv6 per /64
//   (services/sign-in-throttle.ts clientAddress). It is stored only as a keyed hash, per link, so
//   clicks of one visitor on two links cannot be joined.
// - A request whose User-Agent names a link-preview crawler or a search engine (CRAWLERS), or that
//   has none, counts nothing: platforms fetch every link of a post to show its card, and that is
//   no click.
// - A post's links, each with its clicks, are part of its analytics; where the platform reports
//   no `clicks` for a channel, the channel's is the sum of its links', marked `clicksSource:
//   service` (domain/analytics/post-analytics.ts).
import { createHmac, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import { SHORT_CODE } from './rewrite.ts';

/**
 * User-Agent words of the crawlers that fetch a link without a person clicking it: the platforms'
 * link-preview fetchers (Meta, X, Slack, LinkedIn, Discord, Telegram, WhatsApp, Mastodon and other
 * fediverse servers, Bluesky's Cardyb, Pinterest, Reddit, Skype and Teams, embed services) and
 * the search engines' crawlers. Matched case-insensitively anywhere in the header.
 */
export const CRAWLERS = [
  'facebookexternalhit',
  'facebookcatalog',
  'meta-externalagent',
  'Twitterbot',
  'Slackbot',
  'Slack-ImgProxy',
  'LinkedInBot',
  'Discordbot',
  'TelegramBot',
  'WhatsApp',
  'Mastodon',
  'Pleroma',
  'Akkoma',
  'Misskey',
  'Cardyb',
  'Bluesky',
  'Pinterestbot',
  'redditbot',
  'SkypeUriPreview',
  'MicrosoftPreview',
  'Embedly',
  'Iframely',
  'vkShare',
  'Googlebot',
  'Google-InspectionTool',
  'GoogleOther',
  'AdsBot-Google',
  'bingbot',
  'Applebot',
  'DuckDuckBot',
  'YandexBot',
  'Baiduspider',
  'Yahoo! Slurp',
  'Bytespider',
  'PetalBot',
  'AhrefsBot',
  'SemrushBot',
] as const;

const CRAWLER = new RegExp(CRAWLERS.map((w) => w.replace(/[.*+?^${}()|[\]\\!]/g, '\\$&')).join('|'), 'i');

/** Whether a request with this User-Agent counts no click (a crawler's, or none at all). */
export const isCrawler = (userAgent: string | null): boolean => !userAgent?.trim() || CRAWLER.test(userAgent);

/** A click to count: who (the client's address) and when. */
export interface Click {
  address: string;
  at: Date;
}

/**
 * The hash of a client's address on a link: an HMAC with the service's key (a process without
 * one makes a key of its own at start, so its hashes are still no plain digests of addresses).
 */
export function clickHasher(key: Buffer | undefined): (code: string, address: string) => string {
  const secret = key ? createHmac('sha256', key).update('postpilot tracked-link clicks').digest() : randomBytes(32);
  return (code, address) => createHmac('sha256', secret).update(`${code}\u0000${address}`).digest('hex');
}

const minuteOf = (at: Date) => new Date(Math.floor(at.getTime() / 60_000) * 60_000);

/**
 * The target of a short link, or null when there is none (the rules above); with `click`, the
 * click is counted in the same statement (once per address hash and minute).
 */
export async function followLink(em: EntityManager, code: string, click: { addressHash: string; at: Date } | null): Promise<string | null> {
  if (!SHORT_CODE.test(code)) return null;
  const rows = click
    ? await sql<{ target: string }>(
        em,
        `with l as (select code, target from tracked_links where code = ?),
           counted as (insert into link_clicks (link_code, address_hash, minute) select code, ?, ? from l on conflict do nothing)
         select target from l`,
        [code, click.addressHash, minuteOf(click.at)],
      )
    : await sql<{ target: string }>(em, 'select target from tracked_links where code = ?', [code]);
  return rows[0]?.target ?? null;
}

/** SQL: the clicks counted on the short link of the row aliased `link`. */
const linkClicksSql = (link: string) => `(select count(*)::int from link_clicks c where c.link_code = ${link}.code)`;

/** SQL: the clicks of the post_channels row aliased `pc` on all its short links; null when it has none. */
export const CHANNEL_CLICKS_SQL = `(select sum(${linkClicksSql('l')})::int from tracked_links l where l.post_channel_id = pc.id)`;

/** A post's short link with its clicks (GET /v1/posts/{id}/analytics `links`). */
export interface LinkClicks {
  url: string;
  shortUrl: string;
  channelId: string;
  clicks: number;
}

/** A post's short links, each with its clicks counted so far, by channel, then in the order they were made. */
export async function postLinkClicks(em: EntityManager, postId: string): Promise<LinkClicks[]> {
  return sql<LinkClicks>(
    em,
    `select l.url, l.short_url as "shortUrl", pc.channel_id as "channelId",
       ${linkClicksSql('l')} as clicks
     from tracked_links l join post_channels pc on pc.id = l.post_channel_id
     where pc.post_id = ? order by pc.id, l.created_at, l.url`,
    [postId],
  );
}
