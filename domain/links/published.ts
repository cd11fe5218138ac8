// The text a channel's post (or follow-up item) is sent with, its links made short links
// (domain/links/rewrite.ts). The first attempt that sends a text writes its links' rows, before
// the text leaves; every later attempt (a retry, a replay, POST /retry) reads them: the same
// codes, so the same text, byte for byte, and the same targets.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LinkChoice } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import type { Platform } from '../../platforms/catalog.ts';
import { linksToShorten, newShortCode, replaceLinks, shortUrlOf, withUtm } from './rewrite.ts';

/** The channel's post a text is sent on, and its post's links choice. */
export interface LinkedChannel {
  postId: string;
  postChannelId: string;
  platform: Platform;
  links: LinkChoice;
}

/** The utm_campaign of a post's new links: the given name, else its first tag's (id order), else none. */
async function campaignOf(em: EntityManager, postId: string, given: string | undefined): Promise<string | null> {
  if (given) return given;
  const [row] = await sql<{ name: string }>(
    em,
    'select t.name from post_tags pt join tags t on t.id = pt.tag_id where pt.post_id = ? order by t.id limit 1',
    [postId],
  );
  return row?.name ?? null;
}

/** The channel's rows of these links: link → short link. */
async function shortLinksOf(em: EntityManager, postChannelId: string, urls: string[]): Promise<Map<string, string>> {
  const rows = await sql<{ url: string; short_url: string }>(
    em,
    'select url, short_url from tracked_links where post_channel_id = ? and url in (select jsonb_array_elements_text(?::jsonb))',
    [postChannelId, JSON.stringify(urls)],
  );
  return new Map(rows.map((r) => [r.url, r.short_url]));
}

/** The text as it is sent on the channel: unchanged unless its post shortens links. */
export async function sentText(em: EntityManager, channel: LinkedChannel, text: string): Promise<string> {
  if (!channel.links.shorten) return text;
  const found = linksToShorten(text);
  if (!found.length) return text;
  const urls = [...new Set(found.map((l) => l.url))];
  let short = await shortLinksOf(em, channel.postChannelId, urls);
  const missing = urls.filter((u) => !short.has(u));
  if (missing.length) {
    const utm = channel.links.utm
      ? {
          source: channel.platform.toLowerCase(),
          medium: 'social',
          campaign: await campaignOf(em, channel.postId, channel.links.utm.campaign),
        }
      : null;
    const rows = missing.map((url) => {
      const code = newShortCode();
      return { code, url, target: utm ? withUtm(url, utm) : url, short_url: shortUrlOf(code) };
    });
    // An attempt running beside this one (a lost heartbeat) may write first: its rows win, and
    // both read the same ones below.
    await sql(
      em,
      `insert into tracked_links (code, post_channel_id, url, target, short_url, created_at)
       select g.code, ?, g.url, g.target, g.short_url, ?
       from jsonb_to_recordset(?::jsonb) as g(code text, url text, target text, short_url text)
       on conflict (post_channel_id, url) do nothing`,
      [channel.postChannelId, new Date(), JSON.stringify(rows)],
    );
    short = await shortLinksOf(em, channel.postChannelId, urls);
  }
  return replaceLinks(text, found, (url) => short.get(url)!);
}
