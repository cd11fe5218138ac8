// The OpenAPI document tells the whole truth. Requests are generated from the
// document's own schemas (test/harness/openapi-arbitrary.ts) for every operation, sent with a
// valid key to the real stack (Postgres, Temporal, disk store), and every answer is held to the
// document:
//   - its status is one the operation declares, never a 5xx;
//   - its body validates against the declared schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1
//     says), and its headers are declared (required ones present);
//   - a request the document calls valid is not refused with 422, except by the rules below that
//     the document states in words (each checked to be there, and to apply to the request it
//     refused) — referential ones (an id that names nothing) and ones no schema can say (a time
//     relative to now, a channel's own limits).
// Each run prints its fast-check seed; OPENAPI_PROPERTY_SEED=<seed> replays its requests.
// Then crafted requests (no key, a FREE plan, a missing scope, a body over 1 MB) must get declared
// answers too, and every path answers any method it does not list with 405 and `Allow`.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { newId } from '../lib/ids.ts';
import sharp from 'sharp';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { addChannel } from '../domain/channels.ts';
import { FOLLOW_UPS, type Platform } from '../platforms/catalog.ts';
import { feedPlatformProblem } from '../domain/feeds/feeds.ts';
import { startFeedServer, type FeedServer } from './fakes/feed-server.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai.ts';
import { chatCompletionsUrl } from '../lib/config.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { SCOPES } from '../lib/scopes.ts';
import { PLATFORMS } from '../platforms/catalog.ts';
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { BULK_MAX_BODY_BYTES } from '../domain/posts/bulk.ts';
import { createApiKey } from '../services/api-keys.ts';
import { startPostStack } from './harness/post-stack.ts';
import { arbitraryFor, resolve, type Hints } from './harness/openapi-arbitrary.ts';

type Json = Record<string, any>;
type Stack = Awaited<ReturnType<typeof startPostStack>>;

const DAY = 86_400_000;
const MB = 1024 * 1024;
/**
 * Runs per operation: enough to reach its success and its documented refusals, small enough for a
 * busy machine (validatePost writes nothing: cheap). Creates and series edits succeed in only a
 * few percent of generated requests (most combinations break a rule), hence their larger counts:
 * at 80 runs updateSeries once reached no success in a whole run.
 */
const RUNS: Record<string, number> = {
  createPost: 300,
  validatePost: 200,
  updatePost: 100,
  createUpload: 60,
  listPosts: 50,
  createSeries: 250,
  updateSeries: 250,
  createFeed: 60,
  updateFeed: 60,
};
const DEFAULT_RUNS = 25;

/**
 * fast-check's seed for every property of the run: OPENAPI_PROPERTY_SEED replays a run's
 * generated requests (the stack's state, e.g. its clock, is the new run's). Printed at the start
 * and the end of every run, with the command that replays it.
 */
const SEED = (() => {
  const given = process.env.OPENAPI_PROPERTY_SEED;
  if (given === undefined || given === '') return Date.now() ^ (Math.random() * 2 ** 31);
  if (!/^-?\d{1,10}$/.test(given) || (Number(given) | 0) !== Number(given))
    throw new Error(`OPENAPI_PROPERTY_SEED=${given} is not a 32-bit integer`);
  return Number(given);
})();
const REPLAY = `OPENAPI_PROPERTY_SEED=${SEED} .tools/bin/bun test --timeout 600000 test/openapi-property.test.ts`;
console.log(`[openapi-property] seed ${SEED}; replay with: ${REPLAY}`);

/** A refused field of a 422's `details.fields`. */
interface Refused {
  path: string;
  message: string;
}

/**
 * What a request refused with 422 asked for: its body, with what a PATCH leaves out taken from the
 * stored post or series (read after the 422, which changed nothing), as the server merges them.
 */
interface Asked {
  body: Json;
  query: Json;
  channelIds: string[];
  /** Platforms of the target channels. */
  platforms: string[];
  /** The places (`content`, `contentByPlatform.X`) and texts a platform's channels may get: one, or two where a stored post leaves it open. */
  texts: (platform: string) => { path: string; text: string }[];
  mediaIds: string[];
  reddit: unknown;
  /** The first occurrence or scheduled time asked for, and the stored one a refused value leaves in place. */
  publishAt: (string | undefined)[];
  /** The id in the path, if any. */
  pathId: string | undefined;
}

/** `<PLATFORM> channel <id> <rest>` (the channel rules' messages) → its parts; undefined for another message. */
function channelMessage(message: string): { platform: string; id: string; rest: string } | undefined {
  const m = /^([A-Z]+) channel (\S+) (.*)$/s.exec(message);
  return m ? { platform: m[1]!, id: m[2]!, rest: m[3]! } : undefined;
}

/** The host of a URL as written (`[…]` kept), without parsing it. */
const hostOf = (url: string) => /^[a-z]+:\/\/(\[[^\]]*\]|[^/?#:]*)/.exec(url)?.[1] ?? '';
/** Hosts the test gives generated webhook URLs (see `unreachable`): they never resolve, or are refused. */
const UNRESOLVABLE_TLD = '.invalid';
const REFUSED_HOSTS = ['169.254.169.254', '[fe80::1]'];
/** Zone names the IANA database has (Intl's list; `UTC` besides), in lower case: the server takes any letter case. */
const IANA_ZONES = new Set(['utc', ...Intl.supportedValuesOf('timeZone').map((z) => z.toLowerCase())]);
const LATEST = Date.parse('9999-12-31T00:00:00Z');
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');

/** A refusal of one of these media ids is true: it names nothing, or it is the fixture's pending upload. */
function refusedMedia(message: string, ids: string[]): boolean {
  const unknown = /^unknown media (.*)$/s.exec(message);
  if (unknown) return ids.includes(unknown[1]!) && !pools.media.includes(unknown[1]!);
  const notReady = /^media (\S+) is (\w+); only ready media can be attached$/.exec(message);
  return !!notReady && ids.includes(notReady[1]!) && notReady[1] === pools.media[1] && notReady[2] !== 'ready';
}

/** An import's rows as the bodies of single creates (the columns the hints write), for the rules' checks; [] when unreadable. */
function csvRows(text: string): Json[] {
  try {
    const [header, ...rows] = parseCsv(text, {
      bom: true,
      delimiter: [',', ';'],
      skip_empty_lines: true,
      relax_column_count: true,
    }) as string[][];
    const col = (name: string) => (header ?? []).findIndex((h) => h.trim().toLowerCase() === name.toLowerCase());
    // As the document says an import reads a cell: one leading apostrophe removed (formula-safe export).
    const cellText = (cell: string | undefined) => (cell?.startsWith("'") ? cell.slice(1) : (cell ?? ''));
    return rows.map((cells) => ({
      content: cellText(cells[col('content')]),
      channelIds: (cells[col('channels')] ?? '').split('|').filter(Boolean),
      ...(col('publishAt') >= 0 && cells[col('publishAt')] ? { publishAt: cells[col('publishAt')] } : {}),
    }));
  } catch {
    return [];
  }
}

/** The file's records, header first; [] when unreadable. */
function csvCells(text: string): string[][] {
  try {
    return parseCsv(text, { bom: true, delimiter: [',', ';'], skip_empty_lines: true, relax_column_count: true }) as string[][];
  } catch {
    return [];
  }
}

/** What the import's whole-file rules say of this text: unreadable, its header's problems, how many rows. */
function csvFacts(text: string): { readable: boolean; header: string[]; rows: number } {
  try {
    const records = parseCsv(text, { bom: true, delimiter: [',', ';'], skip_empty_lines: true, relax_column_count: true }) as string[][];
    return { readable: true, header: (records[0] ?? []).map((h) => h.trim()), rows: Math.max(0, records.length - 1) };
  } catch {
    return { readable: false, header: [], rows: 0 };
  }
}

/** The operations that take a thread and a first comment. */
const THREAD_OPS = ['createPost', 'validatePost', 'updatePost'];

/** The operations that write channels and tags: posts, series, feeds and drafts. */
const WRITES_OF_TAGGED = [
  'createPost',
  'validatePost',
  'updatePost',
  'createSeries',
  'updateSeries',
  'createFeed',
  'updateFeed',
  'createDraft',
  'updateDraft',
];

/** The thread item a refusal's path names (`thread[1]`, `threadByPlatform.X[0]`), as the body gives it. */
function itemAt(a: Asked, path: string): { content?: string; mediaIds?: string[] } | undefined {
  const m = /^(thread|threadByPlatform\.([A-Z]+))\[(\d+)\]/.exec(path);
  if (!m) return undefined;
  const list = m[2] ? a.body.threadByPlatform?.[m[2]] : a.body.thread;
  return Array.isArray(list) ? list[Number(m[3])] : undefined;
}

/**
 * The 422s a document-valid request may still get: rules the document states in words because no
 * schema can (each `documented` pattern must be found in the operation's text). `holds` checks
 * that the rule really applied to this request: the fields the refusal names are the request's,
 * and the facts it states (a length over a limit, an id that names nothing, an empty text) are
 * true of what was asked. Anything else is a rule the document hides, or a wrong refusal.
 */
const PROSE_RULES: {
  ops: string[];
  path: RegExp;
  message: RegExp;
  documented: RegExp;
  why: string;
  holds: (f: Refused, a: Asked) => boolean;
}[] = [
  {
    ops: ['createDraft', 'updateDraft'],
    path: /^intendedAt$/,
    message: /^must be (before 9999-12-31T00:00:00\.000Z|at or after 1970-01-01T00:00:00\.000Z)$/,
    documented: /from 1970-01-01T00:00:00Z to before 9999-12-31T00:00:00Z/,
    why: 'a draft’s intended time within the instants a post may take',
    holds: (_f, a) => {
      const at = Date.parse(a.body.intendedAt ?? '');
      return at < 0 || at >= LATEST;
    },
  },
  {
    // What create refuses of the post a draft makes: the draft's content as the run's edits left it (state).
    ops: ['validateDraft', 'scheduleDraft'],
    path: /^(channelIds|content|contentByPlatform\.[A-Z]+|mediaIds|reddit|thread|threadByPlatform|firstComment|options|links|tagIds)\b/,
    message: /./,
    documented: /what create would refuse \(`details\.fields`\), or a draft without a channel/,
    why: 'a draft is checked as the post it makes (state)',
    holds: (_f, a) => [...pools.drafts, ...pools.schedulableDrafts, ...pools.validatableDrafts].includes(a.pathId ?? ''),
  },
  {
    ops: ['updateSeries'],
    path: /^publishAt$/,
    message: /^cannot change once an occurrence was created/,
    documented: /`publishAt` \(the first occurrence\) can change only before it is created/,
    why: 'a series’ first occurrence moves only before it is created (state)',
    holds: (_f, a) => a.body.publishAt !== undefined,
  },
  {
    ops: ['replyToComment'],
    path: /^content$/,
    message: /^is empty$/,
    documented: /`content` empty or over the platform’s limit/,
    why: 'a reply is not empty',
    holds: (_f, a) => typeof a.body.content === 'string' && a.body.content.trim() === '',
  },
  {
    ops: ['replyToComment'],
    path: /^content$/,
    message: /^is \d+ characters; .+ allows \d+$/,
    documented: /`content` empty or over the platform’s limit/,
    why: 'a reply within its platform’s limit',
    // The platform counts at most one character per code point (a URL may count less, never more).
    holds: (f, a) => {
      const m = /^is (\d+) characters; .+ allows (\d+)$/.exec(f.message);
      return !!m && Number(m[1]) > Number(m[2]) && typeof a.body.content === 'string' && [...a.body.content].length >= Number(m[1]);
    },
  },
  {
    ops: ['importPosts'],
    path: /^timeZone$/,
    message: /must be an IANA time zone/,
    documented: /An IANA time zone/,
    why: 'an import’s time zone the IANA database names',
    holds: (_f, a) => typeof a.query.timeZone === 'string' && !IANA_ZONES.has(a.query.timeZone.toLowerCase()),
  },
  {
    ops: ['importPosts'],
    path: /^posts\.\d+$/,
    message: /^has \d+ cells; the header names \d+$/,
    documented: /its first line names the columns/i,
    why: 'an import’s row has no more cells than its header',
    holds: (f, a) => {
      const cells = csvCells(String(a.body));
      const row = cells[Number(f.path.split('.')[1]) + 1];
      return !!row && row.length > (cells[0]?.length ?? 0);
    },
  },
  {
    ops: ['importPosts'],
    path: /^posts\.\d+\.channels$/,
    message: /^(unknown channel|name at least one channel|".*" names \d+ channels)/,
    documented: /`channels` \(ids or names/,
    why: 'an import’s channels name the organization’s (referential)',
    holds: (f, a) => {
      const refs = csvRows(String(a.body))[Number(f.path.split('.')[1])]?.channelIds as string[] | undefined;
      return !!refs && (refs.length === 0 || refs.some((r) => !pools.channels.includes(r)));
    },
  },
  {
    ops: ['importPosts'],
    path: /^body$/,
    message: /^is not CSV/,
    documented: /The body is a CSV file/,
    why: 'an import is a CSV file',
    holds: (_f, a) => !csvFacts(String(a.body)).readable,
  },
  {
    ops: ['importPosts'],
    path: /^(header|body)$/,
    message: /^(the file is empty|has no row after the header|has \d+ rows; at most 500)/,
    documented: /Each row \(at most 500\)/,
    why: 'an import has a header and 1 to 500 rows',
    holds: (_f, a) => {
      const facts = csvFacts(String(a.body));
      return facts.readable && (facts.header.length === 0 || facts.rows === 0 || facts.rows > 500);
    },
  },
  {
    ops: ['importPosts'],
    path: /^header$/,
    message: /(unknown column|no "(content|channels)" column|given twice)/,
    documented: /any other column refuses the file/,
    why: 'an import’s header names its columns',
    holds: (_f, a) => {
      const { readable, header } = csvFacts(String(a.body));
      const known = new RegExp(
        `^(id|status|content|channels|publishat|timezone|media|tags|queue|content\\.(${PLATFORMS.join('|')}))$`,
        'i',
      );
      const lower = header.map((h) => h.toLowerCase());
      return (
        readable &&
        (header.some((h) => !known.test(h)) ||
          !lower.includes('content') ||
          !lower.includes('channels') ||
          lower.some((h, i) => lower.indexOf(h) !== i))
      );
    },
  },
  {
    ops: [...WRITES_OF_TAGGED, 'generatePost'],
    path: /^channelIds$/,
    message: /^unknown channel /,
    documented: /channels of the organization/,
    why: 'ids must name the organization’s channels (referential)',
    holds: (f, a) => {
      const id = f.message.slice('unknown channel '.length);
      return a.channelIds.includes(id) && !pools.channels.includes(id);
    },
  },
  {
    ops: WRITES_OF_TAGGED,
    path: /^tagIds$/,
    message: /^unknown tag /,
    documented: /not the organization.s is `422` at `tagIds`/,
    why: 'ids must name the organization’s tags (referential)',
    holds: (f, a) => {
      const id = f.message.slice('unknown tag '.length);
      return ((a.body.tagIds ?? []) as string[]).includes(id) && !pools.tags.includes(id);
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries'],
    path: /^(content|contentByPlatform\.[A-Z]+)$/,
    message: /^is (at least )?\d+ characters.*allows \d+$/,
    documented: /`rules\.maxChars`/,
    why: 'each channel’s own length limit, published as its rules',
    // Over the limit GET /v1/channels publishes for that channel, a target, on the text it gets.
    holds: (f, a) => {
      const m = /^is (?:at least )?(\d+) characters.*; ([A-Z]+) channel (\S+) allows (\d+)$/s.exec(f.message);
      if (!m) return false;
      const [, length, platform, id, limit] = m;
      return (
        Number(length) > Number(limit) &&
        pools.maxChars.get(id!) === Number(limit) &&
        a.channelIds.includes(id!) &&
        platformOf(id!) === platform &&
        a.texts(platform!).some((t) => t.path === f.path && t.text !== '')
      );
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries'],
    path: /^(content|contentByPlatform\.[A-Z]+)$/,
    message: /^is empty for channel /,
    documented: /empty text needs media/i,
    why: 'an empty text is allowed only with media',
    holds: (f, a) => {
      const id = f.message.slice('is empty for channel '.length);
      return (
        a.channelIds.includes(id) &&
        a.mediaIds.length === 0 &&
        a.texts(platformOf(id) ?? '').some((t) => t.path === f.path && t.text === '')
      );
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries'],
    path: /^contentByPlatform\.[A-Z]+$/,
    message: /^no target channel is on this platform$/,
    documented: /platform of a target channel/,
    why: 'keys must be platforms of the target channels',
    holds: (f, a) => {
      const platform = f.path.slice('contentByPlatform.'.length);
      return a.body.contentByPlatform?.[platform] !== undefined && !a.platforms.includes(platform);
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'generatePost', 'createSeries', 'updateSeries'],
    path: /^mediaIds$/,
    message: /^(unknown media |media .* only ready media)/,
    documented: /`ready` media items of the organization/i,
    why: 'ids must name ready media items (referential)',
    holds: (f, a) => refusedMedia(f.message, a.mediaIds),
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries'],
    path: /^mediaIds$/,
    message:
      /(requires an image or video|takes at most \d+ attachment\(s\)|does not accept .* files|takes a video only on its own|requires a video|requires an image)$/,
    documented: /media limits/,
    why: 'each platform’s media limits (count, types), channel `rules.requiresMedia`',
    // The only ready media item of the fixtures is a PNG image.
    holds: (f, a) => {
      const c = channelMessage(f.message);
      if (!c || !a.channelIds.includes(c.id) || platformOf(c.id) !== c.platform) return false;
      const most = /^takes at most (\d+) attachment\(s\)$/.exec(c.rest);
      if (most) return a.mediaIds.length > Number(most[1]);
      if (c.rest === 'requires an image or video') return a.mediaIds.length === 0;
      if (c.rest === 'requires a video' || c.rest === 'does not accept image files') return a.mediaIds.length > 0;
      return false;
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries'],
    path: /^reddit$/,
    message: /^REDDIT channel .* requires reddit\.subreddit/,
    documented: /required when (a REDDIT channel is targeted|the post targets a REDDIT channel)/,
    why: 'channel `rules.requiredFields`',
    holds: (f, a) => {
      const c = channelMessage(f.message);
      return !!c && a.channelIds.includes(c.id) && platformOf(c.id) === 'REDDIT' && !a.reddit;
    },
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries', 'validateDraft', 'scheduleDraft'],
    path: /^publishAt$/,
    message: /^is more than 5 minutes in the past$/,
    documented: /at most 5 minutes in the past/,
    why: 'relative to the server’s clock',
    holds: (_f, a) => Date.parse(a.publishAt[0] ?? '') < serverNow - 5 * 60_000,
  },
  {
    ops: ['createPost', 'validatePost', 'updatePost', 'createSeries', 'updateSeries', 'validateDraft', 'scheduleDraft'],
    path: /^publishAt$/,
    message: /^must be before 9999-12-31T00:00:00\.000Z$/,
    documented: /before 9999-12-31T00:00:00Z/,
    why: 'JSON Schema has no bound on date-times',
    holds: (_f, a) => Date.parse(a.publishAt[0] ?? '') >= LATEST,
  },
  {
    // The audit log's cursor has the posts' form: a posts cursor from the pool reads as a position.
    ops: ['listPosts', 'listAuditEvents'],
    path: /^cursor$/,
    message: /^is not a cursor returned by this API$/,
    documented: /only a `nextCursor`/,
    why: 'an opaque cursor (referential)',
    holds: (_f, a) => !pools.cursors.includes(a.query.cursor as string),
  },
  {
    ops: ['updateComment'],
    path: /^assigneeUserId$/,
    message: /^is not a member of the organization$/,
    documented: /`assigneeUserId` is not a member of the organization/,
    why: 'a comment is given to a member (referential; the fixture organization has none)',
    holds: (_f, a) => typeof a.body.assigneeUserId === 'string',
  },
  {
    ops: ['listInbox'],
    path: /^cursor$/,
    message: /^is not a cursor returned by this API$/,
    documented: /only a `nextCursor`/,
    why: 'an opaque cursor of the inbox (referential)',
    holds: (_f, a) => !pools.inboxCursors.includes(a.query.cursor as string),
  },
  {
    ops: ['listDrafts'],
    path: /^cursor$/,
    message: /^is not a cursor returned by this API$/,
    documented: /only a `nextCursor`/,
    why: 'an opaque cursor of the drafts (referential)',
    holds: (_f, a) => !pools.draftCursors.includes(a.query.cursor as string),
  },
  {
    ops: ['listFeedItems'],
    path: /^cursor$/,
    message: /^is not a cursor returned by this API$/,
    documented: /only a `nextCursor`/,
    why: 'an opaque cursor of a feed’s items (referential)',
    holds: (_f, a) => !pools.feedCursors.includes(a.query.cursor as string),
  },
  {
    ops: ['createFeed', 'updateFeed'],
    path: /^(template|templateByPlatform\.[A-Z]+)$/,
    message: /^has unknown placeholders? /,
    documented: /Any other `\{word\}` is `422`/,
    why: 'a feed’s template names only its placeholders',
    holds: (f, a) => {
      const template = f.path === 'template' ? a.body.template : a.body.templateByPlatform?.[f.path.slice('templateByPlatform.'.length)];
      const known = ['title', 'link', 'summary', 'author', 'categories', 'feed'];
      return typeof template === 'string' && [...template.matchAll(/\{(\w+)\}/g)].some((m) => !known.includes(m[1]!));
    },
  },
  {
    ops: ['createFeed', 'updateFeed'],
    path: /^templateByPlatform\.[A-Z]+$/,
    message: /^no target channel is on this platform$/,
    documented: /the same placeholders\), instead of `template` on that platform’s channels/,
    why: 'a feed’s template per platform is for a platform of its channels',
    holds: (f, a) => {
      const platform = f.path.slice('templateByPlatform.'.length);
      return a.body.templateByPlatform?.[platform] !== undefined && !a.platforms.includes(platform);
    },
  },
  {
    ops: ['createFeed', 'updateFeed'],
    path: /^channelIds\.\d+$/,
    message: /^channel \S+: [A-Z]+ needs .*; a feed's posts /,
    documented: /A feed’s posts are text only/,
    why: 'a feed’s channels are on platforms a text-only post can go to',
    // The channel at that index is the one named, on a platform that requires media or fields.
    holds: (f, a) => {
      const m = /^channel (\S+): ([A-Z]+) needs /.exec(f.message);
      const id = a.channelIds[Number(f.path.slice('channelIds.'.length))];
      return !!m && id === m[1] && platformOf(id!) === m[2] && feedPlatformProblem(m[2] as Platform) !== null;
    },
  },
  {
    ops: ['createFeed', 'updateFeed'],
    path: /^(template|templateByPlatform\.[A-Z]+)$/,
    message: /^must not be empty$/,
    documented: /a template of only spaces/,
    why: 'a feed’s template has a text',
    holds: (f, a) => {
      const template = f.path === 'template' ? a.body.template : a.body.templateByPlatform?.[f.path.slice('templateByPlatform.'.length)];
      return typeof template === 'string' && template.trim() === '';
    },
  },
  {
    ops: ['listWebhookDeliveries'],
    path: /^cursor$/,
    message: /^is not a cursor returned by this API$/,
    documented: /only a `nextCursor`/,
    why: 'an opaque cursor of the delivery log (referential)',
    holds: (_f, a) => !pools.deliveries.includes(a.query.cursor as string),
  },
  {
    ops: ['createWebhook', 'updateWebhook', 'createFeed', 'updateFeed'],
    path: /^url$/,
    message: /^its host does not resolve/,
    documented: /Its host must resolve/,
    why: 'a webhook URL’s host must resolve',
    holds: (_f, a) => hostOf(a.body.url).replace(/\.$/, '').endsWith(UNRESOLVABLE_TLD),
  },
  {
    ops: ['createWebhook', 'updateWebhook', 'createFeed', 'updateFeed'],
    path: /^url$/,
    message: /is a link-local address .*this service does not connect there/,
    documented: /not to a private, loopback or link-local address/,
    why: 'a webhook URL must not reach a refused address',
    holds: (f, a) => REFUSED_HOSTS.includes(hostOf(a.body.url)) && f.message.startsWith(hostOf(a.body.url)),
  },
  {
    ops: ['createWebhook', 'updateWebhook', 'createFeed', 'updateFeed'],
    path: /^url$/,
    message: /^is not a URL$/,
    documented: /beginning `xn--` must be valid Punycode/,
    why: 'an xn-- host label must be valid Punycode',
    holds: (_f, a) => {
      if (!/(^|\.)xn--/i.test(hostOf(a.body.url))) return false;
      try {
        new URL(a.body.url);
        return false;
      } catch {
        return true;
      }
    },
  },
  // Threads and first comments (domain/posts/thread.ts).
  {
    ops: THREAD_OPS,
    path: /^(thread|threadByPlatform\.[A-Z]+)\[\d+\]\.mediaIds$/,
    message: /^(unknown media |media .* only ready media)/,
    documented: /`ready` media items of the organization/i,
    why: 'a thread item’s media ids must name ready media items (referential)',
    holds: (f, a) => refusedMedia(f.message, itemAt(a, f.path)?.mediaIds ?? []),
  },
  {
    ops: THREAD_OPS,
    path: /^(thread|threadByPlatform\.[A-Z]+)\[\d+\]\.mediaIds$/,
    message: /(takes at most \d+ attachment\(s\)|does not accept .* files|takes a video only on its own)$/,
    documented: /its media limits/,
    why: 'a thread item against its platform’s media limits',
    holds: (f, a) => {
      const c = channelMessage(f.message);
      const ids = itemAt(a, f.path)?.mediaIds ?? [];
      if (!c || !a.channelIds.includes(c.id) || platformOf(c.id) !== c.platform) return false;
      const most = /^takes at most (\d+) attachment\(s\)$/.exec(c.rest);
      if (most) return ids.length > Number(most[1]);
      return c.rest === 'does not accept image files' && ids.length > 0;
    },
  },
  {
    ops: THREAD_OPS,
    path: /^threadByPlatform\.[A-Z]+$/,
    message: /^no target channel is on this platform$/,
    documented: /platform of a target channel/,
    why: 'threadByPlatform keys must be platforms of the target channels',
    holds: (f, a) => {
      const platform = f.path.slice('threadByPlatform.'.length);
      return a.body.threadByPlatform?.[platform] !== undefined && !a.platforms.includes(platform);
    },
  },
  {
    ops: THREAD_OPS,
    path: /^(thread|threadByPlatform\.[A-Z]+)$/,
    message: / takes no thread /,
    documented: /A platform without threads refuses a thread/,
    why: 'a thread only where the platform has threads',
    holds: (f, a) => {
      const c = channelMessage(f.message);
      if (!c || !a.channelIds.includes(c.id) || platformOf(c.id) !== c.platform) return false;
      if (FOLLOW_UPS[c.platform as Platform].kind === 'thread') return false;
      const list = a.body.threadByPlatform?.[c.platform] ?? a.body.thread;
      const path = a.body.threadByPlatform?.[c.platform] !== undefined ? `threadByPlatform.${c.platform}` : 'thread';
      return path === f.path && Array.isArray(list) && list.length > 0;
    },
  },
  {
    ops: THREAD_OPS,
    path: /^firstComment$/,
    message: / takes no comments; /,
    documented: /a platform with neither refuses `firstComment`/,
    why: 'a first comment only where the platform has threads or comments',
    holds: (f, a) => {
      const c = channelMessage(f.message);
      return (
        !!c &&
        a.channelIds.includes(c.id) &&
        platformOf(c.id) === c.platform &&
        FOLLOW_UPS[c.platform as Platform].kind === null &&
        !!a.body.firstComment
      );
    },
  },
  {
    ops: THREAD_OPS,
    path: /^((thread|threadByPlatform\.[A-Z]+)\[\d+\]|firstComment\.content)$/,
    message: /^is empty/,
    documented: /an item without text needs media/,
    why: 'a thread item or a comment is not empty',
    holds: (f, a) => {
      if (f.path === 'firstComment.content') return (a.body.firstComment?.content ?? '').trim() === '';
      const item = itemAt(a, f.path);
      return !!item && (item.content ?? '').trim() === '' && !(item.mediaIds ?? []).length;
    },
  },
  {
    ops: THREAD_OPS,
    path: /^((thread|threadByPlatform\.[A-Z]+)\[\d+\]\.content|firstComment\.content)$/,
    message: /^is (at least )?\d+ characters.*allows \d+$/,
    documented: /`rules\.maxChars` as the platform counts it/,
    why: 'a thread item or a comment within its length limit',
    holds: (f, a) => {
      const m = /^is (?:at least )?(\d+) characters.*?([A-Z]+) channel (\S+) allows (\d+)$/s.exec(f.message);
      if (!m) return false;
      const [, length, platform, id, limit] = m;
      const follow = FOLLOW_UPS[platform as Platform];
      const text = f.path === 'firstComment.content' ? a.body.firstComment?.content : itemAt(a, f.path)?.content;
      return (
        Number(length) > Number(limit) &&
        a.channelIds.includes(id!) &&
        platformOf(id!) === platform &&
        (pools.maxChars.get(id!) === Number(limit) || (follow.kind === 'comment' && follow.maxChars === Number(limit))) &&
        typeof text === 'string' &&
        text.length > 0
      );
    },
  },
  {
    ops: THREAD_OPS,
    path: /^(thread|threadByPlatform\.[A-Z]+)$/,
    message: /takes at most \d+ replies after the post/,
    documented: /at most 25 replies/,
    why: 'at most 25 replies on a channel',
    holds: (f, a) => {
      const m = /^([A-Z]+) channel \S+ takes at most (\d+) replies.*; (\d+) given$/.exec(f.message);
      if (!m) return false;
      const list = a.body.threadByPlatform?.[m[1]!] ?? a.body.thread ?? [];
      return Number(m[3]) > Number(m[2]) && Number(m[3]) === list.length + (a.body.firstComment ? 1 : 0);
    },
  },
  {
    ops: ['getChannelCapabilities'],
    path: /^subreddit$/,
    message: /^applies to REDDIT channels only$/,
    documented: /given for a channel that is not REDDIT/,
    why: 'a subreddit is asked of a REDDIT channel only',
    holds: (_f, a) => typeof a.query.subreddit === 'string' && a.platforms.every((p) => p !== 'REDDIT'),
  },
  {
    ops: [...THREAD_OPS, 'createSeries', 'updateSeries'],
    path: /^options\.reddit\.(subreddit|title)$/,
    message: /^(differs from reddit\.(subreddit|title)|is required with options\.reddit\.(subreddit|title))/,
    documented: /given both ways they must agree, and without `reddit` each needs the other/,
    why: 'options.reddit.subreddit and title agree with reddit, and come together',
    holds: (f, a) => {
      const field = f.path.slice('options.reddit.'.length) as 'subreddit' | 'title';
      const given = a.body.options?.reddit ?? {};
      const reddit = a.body.reddit;
      if (f.message.startsWith('differs'))
        return reddit?.[field] !== undefined && given[field] !== undefined && reddit[field] !== given[field];
      const other = field === 'title' ? 'subreddit' : 'title';
      return !reddit && given[field] === undefined && given[other] !== undefined;
    },
  },
  {
    ops: [...THREAD_OPS, 'createSeries', 'updateSeries'],
    path: /^options\.[a-z]+$/,
    message: /^no target channel is on this platform$/,
    documented: /each key must be the platform of a target channel/,
    why: 'options keys must be platforms of the target channels',
    holds: (f, a) => {
      const platform = f.path.slice('options.'.length);
      return a.body.options?.[platform] !== undefined && !a.platforms.some((p) => p.toLowerCase() === platform);
    },
  },
  // Queues and series.
  {
    ops: ['setQueue', 'createSeries', 'updateSeries'],
    path: /^timeZone$/,
    message: /must be an IANA time zone/,
    documented: /IANA time zone/,
    why: 'a time zone the IANA database names',
    holds: (_f, a) => typeof a.body.timeZone === 'string' && !IANA_ZONES.has(a.body.timeZone.toLowerCase()),
  },
  {
    ops: ['createPost', 'validatePost', 'validateDraft', 'scheduleDraft'],
    path: /^queue$/,
    message: /^cannot be combined with publishAt/,
    documented: /instead of `publishAt`/,
    why: '`queue` and `publishAt` exclude each other',
    holds: (_f, a) => a.body.queue === true && a.body.publishAt !== undefined,
  },
  {
    ops: ['createPost', 'validatePost', 'validateDraft', 'scheduleDraft'],
    path: /^queue$/,
    message: /(has no queue slots|no free slot common to every target channel)/,
    documented: /Within 90 days, else `422`/,
    why: 'the target channels’ queues (state)',
    // A channel named as without slots is a target whose queue the run emptied (setQueue).
    holds: (f, a) => {
      if (a.body.queue !== true) return false;
      const empty = /^channel (\S+) has no queue slots/.exec(f.message);
      return !empty || (a.channelIds.includes(empty[1]!) && pools.queueSlots.get(empty[1]!) === 0);
    },
  },
  {
    ops: ['createSeries', 'updateSeries'],
    path: /^repeat\.until$/,
    message: /^(must not be before publishAt|must be before 9999-12-31T00:00:00\.000Z$)/,
    documented: /not before `publishAt`/,
    why: 'repeat.until relative to publishAt',
    holds: (f, a) => {
      const until = Date.parse(a.body.repeat?.until ?? '');
      if (f.message.startsWith('must be before')) return until >= LATEST;
      return a.publishAt.some((at) => until < Date.parse(at ?? ''));
    },
  },
  {
    ops: ['getAnalytics'],
    path: /^(from|to)$/,
    message: /^(must be before to|must be at most 366 days after from)$/,
    documented: /`from` not before `to`, a range over 366 days/,
    why: 'the range: from before to, at most 366 days (to defaults to now, from to 30 days before to)',
    // Checked on what was asked: the bounds (or their defaults) really are backwards or too far apart.
    holds: (f, a) => {
      const bound = (v: unknown) => Math.max(Math.min(Date.parse(String(v)), LATEST), EARLIEST);
      // An absent `to` is the server's now: the API's clock, which the stack holds at serverNow.
      const to = a.query.to === undefined ? serverNow : bound(a.query.to);
      const from = a.query.from === undefined ? Math.max(to - 30 * 86_400_000, EARLIEST) : bound(a.query.from);
      if (f.message === 'must be before to') return from >= to;
      return to - from > 366 * 86_400_000;
    },
  },
];

/** Operations whose 422s the stated rules cover: their refusals are checked against what was asked. */
const RULED_OPS = new Set(PROSE_RULES.flatMap((r) => r.ops));

/** The platform of a fixture channel; undefined for any other id. */
const platformOf = (id: string) => {
  const i = pools.channels.indexOf(id);
  return i < 0 ? undefined : pools.platforms[i];
};

/** What the request asked for (see Asked); a PATCH's target is read with a key of the same organization. */
async function asked(o: Operation, g: Generated): Promise<Asked> {
  const body = (g.body ?? {}) as Json;
  let stored: Json | undefined;
  // What the request changes or is made from (a draft: the post it makes): as stored now.
  if (['updatePost', 'updateSeries', 'updateFeed', 'validateDraft', 'scheduleDraft'].includes(o.id)) {
    const collection = ({ updatePost: 'posts', updateSeries: 'series', updateFeed: 'feeds' } as Record<string, string>)[o.id] ?? 'drafts';
    const url = `http://localhost/v1/${collection}/${encode(g.path.id)}`;
    const res = await stack.app.handle(new Request(url, { headers: { authorization: `Bearer ${nextKey()}` } }));
    if (res.status === 200) stored = (await res.json()) as Json;
  }
  // A series answers with its request's fields; a post with the text each channel gets.
  const storedChannels: Json[] = stored?.channels ?? [];
  const storedIds: string[] = stored?.channelIds ?? storedChannels.map((c) => c.channelId);
  // A channel's own operations name it in the path.
  const channelIds: string[] = body.channelIds ?? (o.path.startsWith('/channels/') ? [g.path.id as string] : storedIds);
  const platforms = channelIds.map((id) => platformOf(id) ?? '?');
  const texts = (platform: string): { path: string; text: string }[] => {
    const given = body.contentByPlatform as Record<string, string> | undefined;
    const content: string = body.content ?? stored?.content ?? '';
    // New texts replace the stored ones; without them a target platform keeps its stored text.
    if (given)
      return [
        given[platform] !== undefined
          ? { path: `contentByPlatform.${platform}`, text: given[platform]! }
          : { path: 'content', text: content },
      ];
    const storedText: string | undefined = stored?.contentByPlatform?.[platform];
    if (storedText !== undefined) return [{ path: `contentByPlatform.${platform}`, text: storedText }];
    const onChannel = storedChannels.find((c) => c.platform === platform)?.content as string | undefined;
    // A post shows each channel's text, not whether it is an entry: one equal to the old content may be either.
    if (onChannel !== undefined && onChannel !== stored?.content) return [{ path: `contentByPlatform.${platform}`, text: onChannel }];
    if (onChannel !== undefined)
      return [
        { path: 'content', text: content },
        { path: `contentByPlatform.${platform}`, text: onChannel },
      ];
    return [{ path: 'content', text: content }];
  };
  // A series edit whose options name a subreddit or title replaces the stored target with theirs (null when one is missing).
  const given = body.options?.reddit as Json | undefined;
  const namesTarget = given?.subreddit !== undefined || given?.title !== undefined;
  const optionsTarget =
    given?.subreddit !== undefined && given?.title !== undefined ? { subreddit: given.subreddit, title: given.title } : null;
  return {
    body,
    query: g.query as Json,
    pathId: typeof g.path?.id === 'string' ? g.path.id : undefined,
    channelIds,
    platforms,
    texts,
    mediaIds: body.mediaIds ?? stored?.mediaIds ?? (stored?.media ?? []).map((m: Json) => m.id),
    reddit: body.reddit !== undefined ? body.reddit : o.id === 'updateSeries' && namesTarget ? optionsTarget : (stored?.reddit ?? null),
    publishAt: [body.publishAt ?? stored?.publishAt ?? stored?.scheduledAt, stored?.publishAt ?? stored?.scheduledAt],
  };
}

/** Response headers the API may send that a client acts on: each must be declared where it appears. */
const MEANINGFUL_HEADERS = [
  'location',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'idempotent-replayed',
  'allow',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

let stack: Stack;
/** The API's clock (the stack's, synced once). */
let serverNow = 0;
let fake: FakeMastodon;
/** The model endpoint of the generate scope (a fake OpenAI-compatible server). */
let model: FakeOpenAI;
let doc: Json;
let keys: string[] = [];
let keyTurn = 0;
const nextKey = () => keys[keyTurn++ % keys.length]!;
let readOnlyKey: string;
let receiver: ReturnType<typeof Bun.serve> | undefined;
let feedServer: FeedServer | undefined;
let freeKey: string;
const pools = {
  channels: [] as string[],
  platforms: ['MASTODON', 'BLUESKY', 'REDDIT'],
  posts: [] as string[],
  /** Scheduled posts for deletePost to cancel (each once: then 404), so the others keep theirs. */
  deletable: [] as string[],
  /** Failed posts for retryPost (each retried once: then 409). */
  failed: [] as string[],
  /** Published posts for refreshPostAnalytics and refreshPostComments (each read once: then 429 for a while). */
  published: [] as string[],
  /** Scheduled posts waiting for approval, for approvePost and rejectPost (the same decision twice: 409). */
  awaitingApproval: [] as string[],
  media: [] as string[],
  cursors: [] as string[],
  /** Webhook endpoints (pointing at `webhookUrl`) for the read, PATCH and rotate operations. */
  webhooks: [] as string[],
  /** Endpoints for deleteWebhook (each deleted once: then 404). */
  deletableWebhooks: [] as string[],
  /** Endpoints that only testWebhook uses (a PATCH may disable the others: then 409). */
  testWebhooks: [] as string[],
  /** An endpoint and its delivered deliveries, for redeliverWebhook and the delivery log's cursor. */
  redeliverWebhook: [] as string[],
  deliveries: [] as string[],
  webhookUrl: '',
  /** Series far ahead (read and PATCH targets), and series for deleteSeries (each deleted once: then 404). */
  series: [] as string[],
  deletableSeries: [] as string[],
  /** A feed served on this machine (allowed: the stack's outbound policy allows private addresses). */
  feedUrl: '',
  /** Feeds for the read and PATCH operations; feeds only pollFeed uses (a PATCH may pause the others: then 409); feeds for deleteFeed (each once). */
  feeds: [] as string[],
  pollableFeeds: [] as string[],
  deletableFeeds: [] as string[],
  feedCursors: [] as string[],
  /** Comments someone wrote under the fixture's posts (the read and PATCH targets), and a cursor of a real page of the inbox. */
  comments: [] as string[],
  inboxCursors: [] as string[],
  /** Drafts: for the reads, edits, checks and deletes; drafts to schedule (each once); a cursor of a real page of drafts. */
  drafts: [] as string[],
  schedulableDrafts: [] as string[],
  deletableDrafts: [] as string[],
  validatableDrafts: [] as string[],
  draftCursors: [] as string[],
  /** Comments under a post on an X channel, where hiding is offered (the hide and unhide targets). */
  hideable: [] as string[],
  /** Replies to the comments: for the reads and deletes; waiting for approval, for approve and for reject (each decided once). */
  replies: [] as string[],
  approvableReplies: [] as string[],
  rejectableReplies: [] as string[],
  /** Tags (the read and PATCH targets, and the ids of bodies' `tagIds`), and tags for deleteTag (each deleted once: then 404). */
  tags: [] as string[],
  deletableTags: [] as string[],
  /** Future instants within the bounds of `publishAt` (set once the server's clock is known). */
  futures: [] as string[],
  /** Each fixture channel's published `rules.maxChars`. */
  maxChars: new Map<string, number>(),
  /** The number of posting slots of each fixture channel's queue, as the run leaves it. */
  queueSlots: new Map<string, number>(),
};

// ---------------------------------------------------------------------------------------------
// The document as a validator.

const BASE = 'https://openapi.invalid/';
let ajv: InstanceType<typeof Ajv2020>;
let serial = 0;

/** `#/components/schemas/X` → an absolute id, so any schema of the document compiles on its own. */
function absolute(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absolute);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', BASE) : absolute(v);
  }
  return out;
}

function makeAjv(document: Json) {
  const a = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  addFormats(a);
  for (const [name, schema] of Object.entries(document.components.schemas as Json))
    a.addSchema({ ...(absolute(schema) as Json), $id: `${BASE}${name}` });
  return a;
}

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(key: string, schema: Json) {
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile({ ...(absolute(schema) as Json), $id: `${BASE}local/${serial++}` });
    validators.set(key, v);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Operations, requests and the oracle.

interface Operation {
  id: string;
  method: string;
  path: string;
  op: Json;
}

function operations(): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({
      id: (op as Json).operationId,
      method: method.toUpperCase(),
      path,
      op: op as Json,
    })),
  );
}

interface Generated {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  body?: unknown;
}

const bodySchema = (op: Json): Json | undefined =>
  op.requestBody?.content?.['application/json']?.schema ?? op.requestBody?.content?.['text/csv']?.schema;
/** The body's media type: JSON, or a CSV file (POST /v1/posts/import). */
const bodyType = (op: Json): string => (op.requestBody?.content?.['text/csv'] ? 'text/csv' : 'application/json');

function requestArbitrary(o: Operation, hints: Hints): fc.Arbitrary<Generated> {
  const opts = { doc, now: () => serverNow, hints };
  const group = (where: string) => {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of (o.op.parameters ?? []) as Json[]) {
      if (p.in !== where) continue;
      const arb = arbitraryFor(p.schema, `${where}.${p.name}`, opts);
      model[p.name] = p.required ? arb : fc.option(arb, { nil: undefined });
    }
    return fc.record(model);
  };
  const body = bodySchema(o.op);
  return fc.record({
    path: group('path'),
    query: group('query'),
    header: group('header'),
    ...(body ? { body: arbitraryFor(body, 'body', opts) } : {}),
  }) as fc.Arbitrary<Generated>;
}

/** Every generated request must be valid by the document, or the generator is wrong. */
function documentProblems(o: Operation, g: Generated): string[] {
  const out: string[] = [];
  for (const p of (o.op.parameters ?? []) as Json[]) {
    const value = (g as unknown as Record<string, Record<string, unknown>>)[p.in]?.[p.name];
    if (value === undefined) continue;
    const v = validatorFor(`${o.id}:${p.in}:${p.name}`, p.schema);
    if (!v(value)) out.push(`${p.in} ${p.name}: ${JSON.stringify(v.errors)}`);
  }
  const body = bodySchema(o.op);
  if (body) {
    const v = validatorFor(`${o.id}:body`, body);
    if (!v(g.body)) out.push(`body: ${JSON.stringify(v.errors)}`);
  }
  return out;
}

const encode = (v: unknown) => encodeURIComponent(String(v));

function toRequest(o: Operation, g: Generated, key: string | undefined): Request {
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) => encode(g.path[name]));
  const query = Object.entries(g.query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .join('&');
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  for (const [k, v] of Object.entries(g.header)) if (v !== undefined) headers[k] = String(v);
  const type = bodyType(o.op);
  if (g.body !== undefined) headers['content-type'] = type;
  return new Request(`http://localhost${doc.servers[0].url}${path}${query ? `?${query}` : ''}`, {
    method: o.method,
    headers,
    body: g.body === undefined ? undefined : type === 'text/csv' ? String(g.body) : JSON.stringify(g.body),
  });
}

interface Violation {
  op: string;
  why: string;
  request: string;
  status: number;
  response: string;
}
const violations: Violation[] = [];
const stats = new Map<string, { runs: number; byStatus: Map<number, number> }>();
/** How often each stated rule refused a generated request (printed: shows what the runs reached). */
const proseHits = new Map<string, number>();

function record(opId: string, status: number) {
  const s = stats.get(opId) ?? { runs: 0, byStatus: new Map() };
  s.runs++;
  s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
  stats.set(opId, s);
}

/**
 * What is wrong with this answer by the document; [] when nothing. `generated`: the document-valid
 * request, if it was one; `request`: what it asked for, when it was refused with 422.
 */
function answerProblems(
  o: Operation,
  status: number,
  headers: Headers,
  text: string,
  generated: Generated | undefined,
  request?: Asked,
  /** POST /v1/posts/bulk: what each row asked for (its refusals are a single create's, at `posts.<index>.…`). */
  rows?: Asked[],
): string[] {
  const out: string[] = [];
  if (status >= 500) out.push(`status ${status}`);
  const declared = o.op.responses[String(status)] ?? o.op.responses.default;
  if (!declared) return [...out, `status ${status} is not declared (declared: ${Object.keys(o.op.responses).join(', ')})`];
  const response = resolve(doc, declared);
  const declaredHeaders = Object.fromEntries(
    Object.entries((response.headers ?? {}) as Json).map(([k, v]) => [k.toLowerCase(), resolve(doc, v as Json)]),
  );
  if (!headers.get('x-request-id')) out.push('no X-Request-Id');
  for (const [name, h] of Object.entries(declaredHeaders))
    if (h.required && !headers.has(name)) out.push(`required header ${name} missing`);
  for (const name of MEANINGFUL_HEADERS)
    if (headers.has(name) && !declaredHeaders[name]) out.push(`header ${name} sent but not declared for ${status}`);
  const schema = response.content?.['application/json']?.schema;
  let body: unknown;
  if (response.content?.['text/csv']) {
    if (!(headers.get('content-type') ?? '').startsWith('text/csv')) out.push(`content-type ${headers.get('content-type')}`);
  } else if (schema) {
    if (!(headers.get('content-type') ?? '').startsWith('application/json')) out.push(`content-type ${headers.get('content-type')}`);
    try {
      body = JSON.parse(text);
    } catch {
      return [...out, 'body is not JSON'];
    }
    const v = validatorFor(`${o.id}:response:${status}`, schema);
    if (!v(body)) out.push(`body does not match the declared schema: ${JSON.stringify(v.errors).slice(0, 400)}`);
  } else if (text !== '') out.push('a body where none is declared');
  if (status === 422 && generated) {
    const fields = ((body as Json)?.error?.details?.fields ?? [{ path: '?', message: '?' }]) as { path: string; message: string }[];
    for (const given of fields) {
      // A batch's row is refused as a single create is, at its own paths.
      // A row's own CSV cells are the import's rules; its post's fields a single create's.
      const csvCell = o.id === 'importPosts' && /^posts\.\d+(\.(channels|timeZone|queue|media))?$/.test(given.path);
      const row = !csvCell && (o.id === 'createPostsInBulk' || o.id === 'importPosts') ? /^posts\.(\d+)\.(.+)$/s.exec(given.path) : null;
      const opId = row ? 'createPost' : o.id;
      const f = row ? { path: row[2]!, message: given.message } : given;
      const asked = row ? rows?.[Number(row[1])] : request;
      const rules = PROSE_RULES.filter((r) => r.ops.includes(opId) && r.path.test(f.path) && r.message.test(f.message));
      const rule = asked && rules.find((r) => r.holds(f, asked));
      if (!rules.length) out.push(`a document-valid request refused: ${f.path}: ${f.message}`);
      else if (!rule) out.push(`refused by a stated rule that does not apply to it (${rules[0]!.why}): ${f.path}: ${f.message}`);
      else proseHits.set(rule.why, (proseHits.get(rule.why) ?? 0) + 1);
    }
  }
  return out;
}

const short = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length})` : s);

async function send(
  o: Operation,
  req: Request,
  generated: Generated | undefined,
  label?: string,
): Promise<{ status: number; body: any; headers: Headers }> {
  const described = `${req.method} ${new URL(req.url).pathname}${new URL(req.url).search.slice(0, 200)} ${label ?? ''}`;
  const bodyText = req.body ? await req.clone().text() : '';
  const res = await stack.app.handle(req);
  const text = await res.text();
  record(o.id, res.status);
  const request = res.status === 422 && generated && RULED_OPS.has(o.id) ? await asked(o, generated) : undefined;
  const create = operations().find((x) => x.id === 'createPost')!;
  const rows =
    res.status === 422 && generated && (o.id === 'createPostsInBulk' || o.id === 'importPosts')
      ? await Promise.all(
          (o.id === 'importPosts' ? csvRows(String(generated.body)) : ((generated.body as Json)?.posts ?? [])).map((row: Json) =>
            asked(create, { ...generated, body: row }),
          ),
        )
      : undefined;
  for (const why of answerProblems(o, res.status, res.headers, text, generated, request, rows)) {
    violations.push({ op: o.id, why, request: `${described} ${short(bodyText)}`, status: res.status, response: short(text) });
  }
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  // A queue the run changed: the queue rule's check needs to know which channels have no slots.
  if (o.id === 'setQueue' && res.status === 200 && generated) pools.queueSlots.set(String(generated.path.id), body.slots.length);
  return { status: res.status, body, headers: res.headers };
}

function report(label: string, from: number) {
  const seen = new Set<string>();
  const distinct = violations.slice(from).filter((v) => {
    const id = `${v.op} ${v.why.replace(/\d+/g, 'N').slice(0, 120)}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  if (distinct.length) {
    console.log(`[openapi-property] ${label}: ${violations.length - from} violation(s), ${distinct.length} distinct:`);
    for (const v of distinct.slice(0, 40)) console.log(`  - ${v.op}: ${v.why}\n      ${v.request}\n      → ${v.status} ${v.response}`);
  }
  return distinct.map((v) => `${v.op}: ${v.why}`);
}

// ---------------------------------------------------------------------------------------------

/**
 * A generated webhook URL with a host nothing answers at, so no endpoint of the run points at a
 * real server: a name under `.invalid` (never resolves, RFC 6761), an address a link-local one
 * (refused even where private addresses are allowed). The rest of the URL is as generated;
 * test/webhooks.test.ts holds the pattern's hosts to the URL parser.
 */
function unreachable(url: string): string {
  const host = hostOf(url);
  const at = url.indexOf(host, url.indexOf('//'));
  const safe = host.startsWith('[')
    ? REFUSED_HOSTS[1]!
    : /^[\d.]+$/.test(host)
      ? REFUSED_HOSTS[0]!
      : `${host.replace(/\.$/, '')}${UNRESOLVABLE_TLD}`;
  return url.slice(0, at) + safe + url.slice(at + host.length);
}

/**
 * Ids (and platform keys) from the fixtures most of the time, so runs reach past the referential
 * rules to the success; generated ones the rest of the time (those may meet a stated rule).
 */
function hintsFor(o: Operation): Hints {
  const real = (values: string[], generated: () => fc.Arbitrary<unknown>, weight = 6) =>
    fc.oneof({ weight, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: generated() });
  return (asked, generated) => {
    // A batch's rows are bodies of POST /v1/posts: the same hints.
    const at = asked.startsWith('body.posts[].') ? `body.${asked.slice('body.posts[].'.length)}` : asked;
    // An import's file: rows on the fixture's channels mostly, a generated text now and then.
    if (at === 'body' && o.id === 'importPosts')
      return fc.oneof(
        {
          weight: 6,
          arbitrary: fc
            .array(fc.tuple(fc.string({ maxLength: 40 }), fc.constantFrom(...pools.channels), fc.constantFrom(...pools.futures)), {
              minLength: 1,
              maxLength: 3,
            })
            .map((rows) => stringify([['content', 'channels', 'publishAt'], ...rows])),
        },
        { weight: 1, arbitrary: generated() },
      );
    if (at === 'path.id' && o.id === 'deleteWebhook') return real(pools.deletableWebhooks, generated);
    if (at === 'path.id' && o.id === 'testWebhook') return real(pools.testWebhooks, generated);
    if (at === 'path.id' && o.id === 'redeliverWebhook') return real(pools.redeliverWebhook, generated);
    // The redeliver endpoint is only read by the others (a PATCH could disable it: then 409).
    if (at === 'path.id' && o.id === 'listWebhookDeliveries') return real([...pools.redeliverWebhook, ...pools.webhooks], generated);
    if (at === 'path.id' && o.path.startsWith('/webhooks')) return real(pools.webhooks, generated);
    if (at === 'path.deliveryId') return real(pools.deliveries, generated);
    if (at === 'body.url' && o.path.startsWith('/webhooks'))
      return real([pools.webhookUrl], () => (generated() as fc.Arbitrary<string>).map(unreachable).filter((u) => u.length <= 2048));
    if (at === 'query.cursor' && o.id === 'listWebhookDeliveries') return real(pools.deliveries, generated);
    if (at === 'path.id' && o.id === 'deletePost') return real(pools.deletable, generated);
    if (at === 'path.id' && o.id === 'deleteSeries') return real(pools.deletableSeries, generated);
    if (at === 'path.id' && o.id === 'deleteFeed') return real(pools.deletableFeeds, generated);
    if (at === 'path.id' && o.id === 'pollFeed') return real(pools.pollableFeeds, generated);
    if (at === 'path.id' && o.path.startsWith('/feeds')) return real(pools.feeds, generated);
    if (at === 'body.url' && o.path.startsWith('/feeds'))
      return real([pools.feedUrl], () => (generated() as fc.Arbitrary<string>).map(unreachable).filter((u) => u.length <= 2048));
    if (at === 'query.cursor' && o.id === 'listFeedItems') return real(pools.feedCursors, generated);
    if (at === 'query.cursor' && o.id === 'listInbox') return real(pools.inboxCursors, generated);
    if (at === 'query.cursor' && o.id === 'listDrafts') return real(pools.draftCursors, generated);
    if (at === 'path.id' && o.id === 'scheduleDraft') return real(pools.schedulableDrafts, generated);
    if (at === 'path.id' && o.id === 'deleteDraft') return real(pools.deletableDrafts, generated);
    if (at === 'path.id' && o.id === 'validateDraft') return real(pools.validatableDrafts, generated);
    if (at === 'body.publishAt' && (o.id === 'validateDraft' || o.id === 'scheduleDraft')) return real(pools.futures, generated);
    if (at === 'path.id' && o.path.startsWith('/drafts')) return real(pools.drafts, generated);
    if (at === 'path.id' && (o.id === 'hideComment' || o.id === 'unhideComment')) return real(pools.hideable, generated);
    if (at === 'path.id' && o.path.startsWith('/comments')) return real(pools.comments, generated);
    if (at === 'path.id' && o.id === 'approveReply') return real(pools.approvableReplies, generated);
    if (at === 'path.id' && o.id === 'rejectReply') return real(pools.rejectableReplies, generated);
    if (at === 'path.id' && o.path.startsWith('/replies')) return real(pools.replies, generated);
    if (at === 'path.id' && o.path.startsWith('/series')) return real(pools.series, generated);
    if (at === 'path.id' && o.id === 'deleteTag') return real(pools.deletableTags, generated);
    if (at === 'path.id' && o.path.startsWith('/tags')) return real(pools.tags, generated);
    if (at === 'body.tagIds[]' || at === 'query.tagId') return real(pools.tags, generated);
    if (at === 'path.id' && o.path.startsWith('/channels')) return real(pools.channels, generated);
    if (at === 'body.publishAt' && (o.path.startsWith('/series') || o.id === 'updatePost')) return real(pools.futures, generated);
    if (at === 'body.timeZone' || at === 'query.timeZone') return real(['UTC', 'Europe/Berlin', 'America/New_York'], generated);
    // A feed's template per platform now and then: a generated one names platforms none of its channels is on.
    if (at === 'body.templateByPlatform')
      return fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: generated() });
    if (at === 'path.id' && (o.id === 'approvePost' || o.id === 'rejectPost')) return real(pools.awaitingApproval, generated);
    if (at === 'path.id' && o.id === 'retryPost') return real([...pools.failed, ...pools.posts], generated);
    if (at === 'path.id' && (o.id === 'refreshPostAnalytics' || o.id === 'refreshPostComments'))
      return real([...pools.published, ...pools.posts], generated);
    if (at === 'path.id') return real(o.path.startsWith('/posts') ? pools.posts : pools.media, generated);
    if (at === 'body.channelIds[]') return real(pools.channels, generated, 15);
    // generateAltText: the ready image mostly; the pending one (409) now and then.
    if (at === 'body.mediaId') return real([pools.media[0]!, pools.media[0]!, pools.media[1]!], generated);
    if (at === 'query.channelId') return real(pools.channels, generated);
    // The ready item mostly; the pending one (refused: not ready) now and then.
    if (at === 'body.mediaIds[]') return real([pools.media[0]!, pools.media[0]!, pools.media[0]!, pools.media[1]!], generated);
    // A follow-up or options now and then: most generated ones break a rule (a platform without
    // threads, an empty item, options for a platform not targeted), and a request that carries
    // one rarely reaches success.
    if (at === 'body.thread' || at === 'body.threadByPlatform' || at === 'body.firstComment' || at === 'body.options')
      return fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: generated() });
    if (at === 'body.thread[].mediaIds[]' || at === 'body.threadByPlatform.*[].mediaIds[]')
      return real([pools.media[0]!, pools.media[0]!, pools.media[1]!], generated);
    if (at === 'body.contentByPlatform{key}' || at === 'body.threadByPlatform{key}') return real(pools.platforms, generated);
    if (at === 'query.cursor') return real(pools.cursors, generated);
    return undefined;
  };
}

beforeAll(async () => {
  model = startFakeOpenAI();
  const modelEndpoint = { url: chatCompletionsUrl(model.url), model: 'property-model' };
  // Feeds are read from a server on this machine: private addresses allowed, as for the webhooks.
  stack = await startPostStack({
    storage: 'disk',
    appDeps: { generate: modelEndpoint, vision: modelEndpoint, outbound: { allowPrivate: true } },
  });
  fake = await startFakeMastodon();
  const at = (await stack.syncClock()).getTime();
  serverNow = at;
  const org = await makeOrg('ENTERPRISE', 'OpenAPI property org');
  const mastodon = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'fake',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  pools.channels = [mastodon.id, (await makeChannel(org.id, 'BLUESKY')).id, (await makeChannel(org.id, 'REDDIT')).id];
  keys = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => (await makeKey(org.id, { name: `property ${i}`, scopes: [...SCOPES] })).key),
  );
  readOnlyKey = (await makeKey(org.id, { scopes: ['read'] })).key;
  const free = await makeOrg('FREE', 'OpenAPI free org');
  freeKey = (await makeKey(free.id)).key;
  const key = keys[0]!;

  // A ready image and a pending upload.
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();
  const made = await call(stack.app, 'POST', '/v1/media/uploads', {
    key,
    body: { fileName: 'ready.png', mimeType: 'image/png', fileSize: png.length },
  });
  expect(made.status).toBe(201);
  expect(
    (await stack.app.handle(new Request(made.body.upload.url, { method: 'PUT', headers: made.body.upload.headers, body: png }))).status,
  ).toBe(200);
  const done = await call(stack.app, 'POST', `/v1/media/${made.body.media.id}/complete`, { key });
  expect(done.body.status).toBe('ready');
  const pending = await call(stack.app, 'POST', '/v1/media/uploads', {
    key,
    body: { fileName: 'pending.png', mimeType: 'image/png', fileSize: 100 },
  });
  pools.media = [done.body.id, pending.body.media.id];

  // Tags: read and PATCH targets, the ids bodies' `tagIds` name; and tags for deleteTag.
  const newTag = async (name: string) => {
    const res = await call(stack.app, 'POST', '/v1/tags', { key, body: { name } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  for (let i = 0; i < 3; i++) pools.tags.push(await newTag(`property tag ${i}`));
  for (let i = 0; i < 4; i++) pools.deletableTags.push(await newTag(`property deletable tag ${i}`));

  // Every channel has the same posting queue (a slot each hour), so `queue: true` can succeed.
  const hourly = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].flatMap((weekday) =>
    [0, 4, 8, 12, 16, 20].map((h) => ({ weekday, time: `${String(h).padStart(2, '0')}:00` })),
  );
  for (const id of pools.channels) {
    expect((await call(stack.app, 'PUT', `/v1/channels/${id}/queue`, { key, body: { slots: hourly } })).status).toBe(200);
    pools.queueSlots.set(id, hourly.length);
  }
  for (const c of (await call(stack.app, 'GET', '/v1/channels', { key })).body.data) pools.maxChars.set(c.id, c.rules.maxChars);
  // Series far ahead (their first occurrence a year away: none is created during the run).
  pools.futures = [1, 2, 3].map((i) => new Date(at + (300 + i) * DAY).toISOString());
  for (let i = 0; i < 7; i++) {
    const series = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: `property series ${i}`, channelIds: [mastodon.id], publishAt: pools.futures[0], repeat: { every: 'week' } },
    });
    expect(series.status).toBe(201);
    (i < 3 ? pools.series : pools.deletableSeries).push(series.body.id);
  }
  // Scheduled posts far ahead (PATCH targets), and cursors of real pages.
  for (let i = 0; i < 3; i++) {
    const post = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `property target ${i}`, channelIds: [mastodon.id], publishAt: new Date(at + (400 + i) * DAY).toISOString() },
    });
    expect(post.status).toBe(201);
    pools.posts.push(post.body.id);
  }
  for (let i = 0; i < 4; i++) {
    const post = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `property deletable ${i}`, channelIds: [mastodon.id], publishAt: new Date(at + (500 + i) * DAY).toISOString() },
    });
    expect(post.status).toBe(201);
    pools.deletable.push(post.body.id);
  }
  // Made with a key whose posts need approval, far ahead: approve and reject take turns on them.
  const author = await createApiKey(stack.h.orm.em.fork(), {
    organizationId: org.id,
    name: 'property author',
    scopes: ['publish'],
    channels: 'all',
    requiresApproval: true,
  });
  for (let i = 0; i < 3; i++) {
    const post = await call(stack.app, 'POST', '/v1/posts', {
      key: author.key,
      body: { content: `property awaiting ${i}`, channelIds: [mastodon.id], publishAt: new Date(at + (600 + i) * DAY).toISOString() },
    });
    expect(post.body.approval?.status).toBe('pending');
    pools.awaitingApproval.push(post.body.id);
  }
  // Failed now (Mastodon refuses each once, for good): their workflows wait for a retry.
  for (let i = 0; i < 2; i++) {
    fake.failNext(1, { status: 422, body: { error: 'Validation failed: refused' } });
    const post = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: `property failed ${i}`, channelIds: [mastodon.id] } });
    expect(post.status).toBe(201);
    expect((await stack.settle(post.body.id)).phase).toBe('failed');
    pools.failed.push(post.body.id);
  }
  // Published now: their figures can be asked for.
  for (let i = 0; i < 2; i++) {
    const post = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `property published ${i}`, channelIds: [mastodon.id] },
    });
    expect(post.status).toBe(201);
    await stack.settle(post.body.id);
    pools.published.push(post.body.id);
  }
  for (const limit of [1, 2]) pools.cursors.push((await call(stack.app, 'GET', `/v1/posts?limit=${limit}`, { key })).body.nextCursor);

  // Webhook endpoints on a receiver that accepts everything, and delivered deliveries.
  receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') });
  pools.webhookUrl = `http://127.0.0.1:${receiver.port}/hook`;
  const endpoint = async () => {
    const res = await call(stack.app, 'POST', '/v1/webhooks', { key, body: { url: pools.webhookUrl, events: 'all' } });
    expect(res.status).toBe(201);
    return res.body.endpoint.id as string;
  };
  for (let i = 0; i < 3; i++) pools.webhooks.push(await endpoint());
  for (let i = 0; i < 4; i++) pools.deletableWebhooks.push(await endpoint());
  for (let i = 0; i < 2; i++) pools.testWebhooks.push(await endpoint());
  pools.redeliverWebhook.push(await endpoint());
  for (let i = 0; i < 3; i++) {
    const sent = await call(stack.app, 'POST', `/v1/webhooks/${pools.redeliverWebhook[0]}/test`, { key });
    expect(sent.status).toBe(202);
    pools.deliveries.push(sent.body.deliveryId);
  }
  for (let i = 0; ; i++) {
    const log = await call(stack.app, 'GET', `/v1/webhooks/${pools.redeliverWebhook[0]}/deliveries`, { key });
    if (log.body.data.every((d: { status: string }) => d.status === 'delivered')) break;
    if (i > 500) throw new Error('the test deliveries never arrived');
    await Bun.sleep(20);
  }

  // Feeds on a feed of three items (backlog: none is posted), and a cursor of a real page of items.
  feedServer = startFeedServer(
    [1, 2, 3].map((n) => ({ guid: `urn:p:${n}`, title: `property item ${n}`, link: `https://blog.example/${n}` })),
  );
  pools.feedUrl = feedServer.url;
  const feed = async () => {
    const res = await call(stack.app, 'POST', '/v1/feeds', { key, body: { url: pools.feedUrl, channelIds: [mastodon.id] } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  for (let i = 0; i < 3; i++) pools.feeds.push(await feed());
  for (let i = 0; i < 2; i++) pools.pollableFeeds.push(await feed());
  for (let i = 0; i < 4; i++) pools.deletableFeeds.push(await feed());
  pools.feedCursors.push((await call(stack.app, 'GET', `/v1/feeds/${pools.feeds[0]}/items?limit=1`, { key })).body.nextCursor);

  // Comments under a published post (whose channels no PATCH replaces), as the comments sweep stores them.
  for (let i = 0; i < 3; i++) {
    const id = newId('cmt');
    await stack.h.pool.query(
      `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
         author_handle, text, written_at, ours, created_at, updated_at)
       select $1, $2, pc.post_id, pc.id, pc.channel_id, $3, 'root', 'someone@else.example', 'a comment', now(), false, now(), now()
         from post_channels pc where pc.post_id = $4 limit 1`,
      [id, org.id, `c-${i}`, pools.published[0]],
    );
    pools.comments.push(id);
  }
  pools.inboxCursors.push((await call(stack.app, 'GET', '/v1/inbox?limit=1', { key })).body.nextCursor);
  // Comments under a post on an X channel (kept out of pools.channels): a hide is offered there.
  const x = await makeChannel(org.id, 'X');
  const onX = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: { content: 'property on X', channelIds: [x.id], publishAt: new Date(at + 450 * DAY).toISOString() },
  });
  expect(onX.status).toBe(201);
  for (let i = 0; i < 3; i++) {
    const id = newId('cmt');
    await stack.h.pool.query(
      `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
         author_handle, text, written_at, ours, created_at, updated_at)
       select $1, $2, pc.post_id, pc.id, pc.channel_id, $3, 'root', 'someone', 'a comment on X', now(), false, now(), now()
         from post_channels pc where pc.post_id = $4 limit 1`,
      [id, org.id, `x-${i}`, onX.body.id],
    );
    pools.hideable.push(id);
  }
  // Drafts on the Mastodon channel, far ahead.
  for (let i = 0; i < 16; i++) {
    const d = await call(stack.app, 'POST', '/v1/drafts', {
      key,
      body: { content: `property draft ${i}`, channelIds: [mastodon.id], intendedAt: new Date(at + (700 + i) * DAY).toISOString() },
    });
    expect(d.status).toBe(201);
    [pools.drafts, pools.schedulableDrafts, pools.deletableDrafts, pools.validatableDrafts][Math.floor(i / 4)]!.push(d.body.id);
  }
  pools.draftCursors.push((await call(stack.app, 'GET', '/v1/drafts?limit=1', { key })).body.nextCursor);
  // Replies: the author's (whose replies need approval) wait for a decision.
  for (let i = 0; i < 10; i++) {
    const r = await call(stack.app, 'POST', `/v1/comments/${pools.comments[i % 3]}/reply`, {
      key: author.key,
      body: { content: `property reply ${i}` },
    });
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('pending_approval');
    (i < 2 ? pools.replies : i < 6 ? pools.approvableReplies : pools.rejectableReplies).push(r.body.id);
  }

  doc = (await call(stack.app, 'GET', '/v1/openapi.json')).body;
  ajv = makeAjv(doc);
});

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  model?.stop();
  receiver?.stop(true);
  feedServer?.stop();
  const lines = [...stats.entries()].map(
    ([op, s]) =>
      `${op} ${s.runs} (${[...s.byStatus.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([st, n]) => `${st}×${n}`)
        .join(' ')})`,
  );
  console.log(`[openapi-property] requests: ${lines.join('; ')}`);
  console.log(`[openapi-property] 422 by stated rules: ${[...proseHits].map(([why, n]) => `${why} ×${n}`).join('; ')}`);
  console.log(`[openapi-property] seed ${SEED}; replay with: ${REPLAY}`);
});

describe('the OpenAPI document tells the whole truth', () => {
  test('every rule the property test tolerates is stated in the document', () => {
    const missing: string[] = [];
    for (const rule of PROSE_RULES) {
      for (const id of rule.ops) {
        const o = operations().find((x) => x.id === id);
        const body = o && bodySchema(o.op) ? resolve(doc, bodySchema(o.op)!) : {};
        const text = JSON.stringify([o?.op, body]);
        if (!rule.documented.test(text)) missing.push(`${id}: ${rule.why} (looked for ${rule.documented})`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('requests generated from the document get declared, schema-valid answers and no undocumented 422', async () => {
    const before = violations.length;
    const ran = new Map<string, number>();
    for (const o of operations()) {
      const numRuns = RUNS[o.id] ?? DEFAULT_RUNS;
      await fc.assert(
        fc.asyncProperty(requestArbitrary(o, hintsFor(o)), async (g) => {
          const invalid = documentProblems(o, g);
          if (invalid.length)
            throw new Error(
              `the generator made a request the document calls invalid: ${o.id} ${invalid.join('; ')} ${JSON.stringify(g).slice(0, 500)}`,
            );
          ran.set(o.id, (ran.get(o.id) ?? 0) + 1);
          let req: Request;
          try {
            req = toRequest(o, g, nextKey());
          } catch (err) {
            // A value the document allows but HTTP cannot carry (a header with a control character).
            violations.push({
              op: o.id,
              why: `the document allows a request HTTP cannot carry: ${(err as Error).message}`,
              request: JSON.stringify(g).slice(0, 300),
              status: 0,
              response: '',
            });
            return;
          }
          await send(o, req, g);
        }),
        { numRuns, seed: SEED },
      );
    }
    const found = report(`generated requests (seed ${SEED}; replay with: ${REPLAY})`, before);
    expect(found).toEqual([]);
    // Every run really ran (no time limit cuts a property short), and each operation reached its success.
    for (const o of operations()) {
      expect({ op: o.id, ran: (ran.get(o.id) ?? 0) >= (RUNS[o.id] ?? DEFAULT_RUNS) }).toEqual({ op: o.id, ran: true });
      const ok = [...(stats.get(o.id)?.byStatus.entries() ?? [])].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
      expect({ op: o.id, successes: ok > 0 }).toEqual({ op: o.id, successes: true });
    }
    // About 70 s on 2 quiet cores: every operation's runs (above), checked by the rules they meet.
  }, 240_000);

  test('no key, a FREE plan, a missing scope and a body over 1 MB (8 MB for a batch) get declared answers', async () => {
    const before = violations.length;
    const bigger = (bytes: number) => JSON.stringify({ content: 'x'.repeat(bytes + 10), channelIds: [pools.channels[0]] });
    for (const o of operations()) {
      const g: Generated = { path: { id: o.path.startsWith('/posts') ? pools.posts[0] : pools.media[1] }, query: {}, header: {} };
      const statuses: number[] = [];
      for (const key of [undefined, freeKey, readOnlyKey])
        statuses.push(
          (await send(o, toRequest(o, g, key), undefined, `key ${key === undefined ? 'none' : key === freeKey ? 'FREE' : 'read-only'}`))
            .status,
        );
      expect(statuses.slice(0, 2)).toEqual([401, 403]);
      if (o.method !== 'GET') {
        const req = new Request(toRequest(o, g, nextKey()), {
          body: bigger(o.id === 'createPostsInBulk' || o.id === 'importPosts' ? BULK_MAX_BODY_BYTES : MB),
          headers: { authorization: `Bearer ${nextKey()}`, 'content-type': 'application/json' },
        });
        expect((await send(o, req, undefined, '1 MB body')).status).toBe(413);
      }
    }
    const found = report('crafted requests', before);
    expect(found).toEqual([]);
  });

  test('every path answers a method it does not list with 405 and Allow; OPTIONS with 204 and Allow', async () => {
    const problems: string[] = [];
    const errorSchema = validatorFor('Error', { $ref: '#/components/schemas/Error' });
    // Most literal first: a segment written out wins over a parameter (`/media/uploads` over `/media/{id}`).
    const rank = (path: string) =>
      path
        .split('/')
        .map((seg) => (seg.startsWith('{') ? '1' : '0'))
        .join('');
    const templates = Object.entries(doc.paths as Json)
      .map(([path, item]) => ({
        rank: rank(path),
        pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`),
        methods: Object.keys(item as Json).map((m) => m.toUpperCase()),
      }))
      .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
    for (const path of Object.keys(doc.paths as Json)) {
      const concrete = `/v1${path.replace('{id}', path.startsWith('/posts') ? pools.posts[0]! : pools.media[0]!)}`;
      // A concrete path that fits several templates takes the methods of the most literal one only.
      const listed = templates.find((t) => t.pattern.test(concrete.slice(3)))!.methods;
      const allow = [...new Set([...listed, ...(listed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].sort();
      for (const method of METHODS.filter((m) => !listed.includes(m) && !(m === 'HEAD' && listed.includes('GET')))) {
        for (const target of [concrete, `${concrete}/`]) {
          const res = await stack.app.handle(
            new Request(`http://localhost${target}`, { method, headers: { authorization: `Bearer ${nextKey()}` } }),
          );
          const text = await res.text();
          const got = (res.headers.get('allow') ?? '')
            .split(',')
            .map((m) => m.trim())
            .filter(Boolean)
            .sort();
          const where = `${method} ${target}`;
          if (!res.headers.get('x-request-id')) problems.push(`${where}: no X-Request-Id`);
          if (JSON.stringify(got) !== JSON.stringify(allow))
            problems.push(`${where}: Allow ${JSON.stringify(got)}, expected ${JSON.stringify(allow)} (status ${res.status})`);
          if (method === 'OPTIONS') {
            if (res.status !== 204 || text !== '')
              problems.push(`${where}: ${res.status} ${text.slice(0, 100)}, expected 204 without a body`);
            continue;
          }
          if (res.status !== 405) {
            problems.push(`${where}: ${res.status}, expected 405`);
            continue;
          }
          const body = text ? JSON.parse(text) : null;
          if (method !== 'HEAD' && (!errorSchema(body) || body.error.code !== 'not_found'))
            problems.push(`${where}: body ${text.slice(0, 200)}`);
        }
      }
      // What Allow lists is answered (not 405), a key or not.
      for (const method of allow) {
        const res = await stack.app.handle(new Request(`http://localhost${concrete}`, { method }));
        if (res.status === 405) problems.push(`${method} ${concrete}: 405 though Allow lists it`);
      }
    }
    // Unknown paths stay 404, whatever the method.
    for (const method of ['GET', 'TRACE', 'DELETE', 'OPTIONS']) {
      const res = await stack.app.handle(new Request('http://localhost/v1/nothing-here', { method }));
      if (res.status !== 404) problems.push(`${method} /v1/nothing-here: ${res.status}, expected 404`);
    }
    expect(problems).toEqual([]);
  });
});
