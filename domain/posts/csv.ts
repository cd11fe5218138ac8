// Posts as CSV: the columns an import reads and an export writes, and the cells' rules.
//
// Rules:
// - The first line names the columns, in any order and letter case; `content` and `channels`
//   are required. Columns: `content`; `channels` (channel ids or names, several separated by
//   `|`); `publishAt` (ISO 8601 with an offset, or a wall time `YYYY-MM-DD HH:MM[:SS]` /
//   `YYYY-MM-DDTHH:MM` read in the row's `timeZone`, else the import's time zone, else the
//   organization's); `timeZone` (IANA); `content.<PLATFORM>` (the text for that platform, e.g.
//   `content.MASTODON`); `media` (media ids or http(s) URLs, `|` between them); `tags` (the
//   organization's tags by name, any letter case, or id, `|` between them: a tag the organization
//   has not refuses the row at `tags`, for an import makes no tag: making one is an editor's,
//   domain/tags.ts); `queue` (`true`: the next free queue slot); and every other text field of a post's content
//   (domain/posts/content.ts TEXT_FIELDS), by its name, an empty cell leaving it out. An export
//   also writes `id` and `status`, which an import ignores, and `tags` by name. Any other column
//   refuses the file.
// - Drafts, when an import asks for them (`drafts`): a row whose `status` is `draft`, or that has
//   neither a `publishAt` nor `queue` true, is a draft (domain/posts/drafts.ts) rather than a post
//   published now: its `publishAt` its intended time, its channels and its content optional. An
//   export that asks for drafts writes each as such a row (status `draft`, its intended time in
//   `publishAt`), so it imports back to the same drafts.
// - Parsed by csv-parse: quotes, newlines and separators inside quoted cells, a UTF-8 BOM, and `,`
//   or `;` between cells (whichever the header line uses). Empty lines are skipped.
// - Formula injection: an exported cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
//   return gets a leading apostrophe (`'`), as spreadsheets take it for text; so does one that
//   begins with an apostrophe. An import removes one leading apostrophe from every cell, so an
//   export imports back to the same posts.
// - At most BULK_MAX_ROWS rows (POST /v1/posts/bulk's limit): each row then goes through the same
//   checks as a post of a batch, its problems at `posts.<row>.<column>`, row 0 being the first
//   line after the header.
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { checkTimeZone, isTimeZone, zonedToUtc } from '../../lib/zoned-time.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { BULK_MAX_ROWS } from './bulk.ts';
import type { DraftView } from './drafts.ts';
import type { PostView } from './view.ts';
import { TEXT_FIELDS } from './content.ts';

/** The text fields of a post's content beside `content`, each a column of its name. */
const TEXT_COLUMNS = TEXT_FIELDS.filter((f) => f !== 'content');
const FIXED_COLUMNS = ['id', 'status', 'content', 'channels', 'publishAt', 'timeZone', 'media', 'tags', 'queue', ...TEXT_COLUMNS] as const;
const PLATFORM_COLUMN = /^content\.([a-z]+)$/i;
const LIST_SEPARATOR = '|';

/** A row as read: a post's body, its media as given (ids or URLs, resolved by the caller). */
export interface CsvRow {
  content: string;
  channelIds: string[];
  contentByPlatform?: Record<string, string>;
  publishAt?: string;
  queue?: boolean;
  /** Media ids and URLs, in order. */
  media: string[];
  /** The organization's tags named. */
  tagIds?: string[];
  /** The other text fields of a post's content given (TEXT_COLUMNS), by name. */
  texts?: Record<string, string>;
  /** A draft (an import that asks for drafts): `publishAt` is its intended time. */
  draft?: true;
}

export interface CsvChannel {
  id: string;
  name: string;
  platform: string;
}

/** A tag of the organization, as a cell names it. */
export interface CsvTag {
  id: string;
  name: string;
}

/** Spreadsheets run a cell that begins with one of these as a formula. */
const FORMULA_START = /^[=+\-@\t\r']/;

export const neutralizeCell = (cell: string) => (FORMULA_START.test(cell) ? `'${cell}` : cell);
const restoreCell = (cell: string) => (cell.startsWith("'") ? cell.slice(1) : cell);

const split = (cell: string) =>
  cell
    .split(LIST_SEPARATOR)
    .map((s) => s.trim())
    .filter(Boolean);

/** `YYYY-MM-DD HH:MM[:SS]` or with a `T`, without an offset. */
const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

/** The header's columns, each canonical ('publishAt', 'content.MASTODON'), or the file's refusal. */
function columnsOf(header: string[]): string[] {
  const problems: string[] = [];
  const columns = header.map((raw) => {
    const name = raw.trim();
    const fixed = FIXED_COLUMNS.find((c) => c.toLowerCase() === name.toLowerCase());
    if (fixed) return fixed;
    const platform = PLATFORM_COLUMN.exec(name)?.[1]?.toUpperCase();
    if (platform && (PLATFORMS as readonly string[]).includes(platform)) return `content.${platform}`;
    problems.push(`unknown column "${name}"`);
    return name;
  });
  for (const required of ['content', 'channels']) if (!columns.includes(required)) problems.push(`no "${required}" column`);
  const repeated = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (repeated.length) problems.push(`column "${repeated[0]}" given twice`);
  if (problems.length) {
    throw errors.validation([
      {
        path: 'header',
        message: `${problems.join('; ')}: the first line names the columns content, channels, and any of ${['publishAt', 'timeZone', 'media', 'tags', 'queue', ...TEXT_COLUMNS, 'content.<PLATFORM>'].join(', ')} (id and status are ignored)`,
      },
    ]);
  }
  return columns;
}

/** A file as a table: its columns (canonical names) and each row's cells as they mean (one leading apostrophe removed). */
export interface CsvTable {
  columns: string[];
  rows: string[][];
}

/** The file's table, or the file's refusal (not CSV, empty, a bad header, no rows or too many). */
export function readCsvTable(text: string): CsvTable {
  let records: string[][];
  try {
    records = parse(text, { bom: true, delimiter: [',', ';'], skip_empty_lines: true, relax_column_count: true }) as string[][];
  } catch (err) {
    throw errors.validation([{ path: 'body', message: `is not CSV: ${(err as Error).message}` }]);
  }
  if (records.length === 0) throw errors.validation([{ path: 'header', message: 'the file is empty: the first line names the columns' }]);
  return csvTable(
    records[0]!,
    records.slice(1).map((cells) => cells.map(restoreCell)),
  );
}

/**
 * A table from a header and rows of cells as they mean: a file's, or the web app's import form,
 * which holds a file's table to edit it. The header is checked as a file's, the rows counted.
 */
export function csvTable(header: string[], rows: string[][]): CsvTable {
  const columns = columnsOf(header);
  if (rows.length === 0) throw errors.validation([{ path: 'body', message: 'has no row after the header' }]);
  if (rows.length > BULK_MAX_ROWS)
    throw errors.validation([{ path: 'body', message: `has ${rows.length} rows; at most ${BULK_MAX_ROWS}` }]);
  return { columns, rows };
}

/**
 * The rows of an import, each a post's body or the refusal of that row alone. `channels`: the
 * organization's (a row names them by id or name); `timeZone`: for wall times without a zone;
 * `tags`: the organization's (a row names them by name or id).
 */
export function readPostsCsv(
  text: string,
  channels: CsvChannel[],
  timeZone: string,
  tags: CsvTag[] = [],
  o: { drafts?: boolean } = {},
): (CsvRow | ApiError)[] {
  return readCsvRows(readCsvTable(text), channels, timeZone, tags, o);
}

/** The rows of a table, as readPostsCsv reads a file's. */
export function readCsvRows(
  { columns, rows }: CsvTable,
  channels: CsvChannel[],
  timeZone: string,
  tags: CsvTag[] = [],
  o: { drafts?: boolean } = {},
): (CsvRow | ApiError)[] {
  return rows.map((cells) => {
    const fields: FieldError[] = [];
    // Paths within the row: the batch answers them at `posts.<row>.<column>`.
    const at = (path: string, message: string) => fields.push({ path, message });
    if (cells.length > columns.length) at('', `has ${cells.length} cells; the header names ${columns.length}`);
    const cell = (name: string) => {
      const i = columns.indexOf(name);
      return i < 0 ? '' : (cells[i] ?? '');
    };
    const channelIds = split(cell('channels')).map((ref) => {
      const byId = channels.find((c) => c.id === ref);
      if (byId) return byId.id;
      const named = channels.filter((c) => c.name.toLowerCase() === ref.toLowerCase());
      if (named.length === 1) return named[0]!.id;
      at('channels', named.length ? `"${ref}" names ${named.length} channels: use their ids` : `unknown channel "${ref}"`);
      return ref;
    });
    const queueCell = cell('queue').trim().toLowerCase();
    const when = cell('publishAt').trim();
    const draft = o.drafts === true && (cell('status').trim().toLowerCase() === 'draft' || (!when && queueCell !== 'true'));
    if (draft && queueCell === 'true') at('queue', 'a draft takes no queue slot: leave it empty, or give the row a time');
    if (!channelIds.length && !draft) at('channels', 'name at least one channel (id or name)');
    const tagIds = split(cell('tags')).map((ref) => {
      const tag = tags.find((t) => t.id === ref) ?? tags.find((t) => t.name.toLowerCase() === ref.toLowerCase());
      if (!tag) at('tags', `unknown tag "${ref}": tags are made first (POST /v1/tags), an import makes none`);
      return tag?.id ?? ref;
    });
    const zoneCell = cell('timeZone').trim();
    const zone = zoneCell ? (checkTimeZone(zoneCell, 'timeZone', fields) ?? '') : timeZone;
    let publishAt: string | undefined;
    if (when) {
      const wall = WALL_TIME.exec(when);
      if (wall && isTimeZone(zone)) {
        const [, y, mo, d, h, mi, s] = wall.map(Number) as number[];
        publishAt = zonedToUtc({ year: y!, month: mo!, day: d!, hour: h!, minute: mi!, second: s || 0 }, zone).toISOString();
      } else publishAt = when; // ISO 8601, checked as a single create checks it
    }
    if (queueCell && queueCell !== 'true' && queueCell !== 'false') at('queue', 'must be true, false or empty');
    const contentByPlatform = Object.fromEntries(
      columns
        .filter((c) => c.startsWith('content.'))
        .map((c) => [c.slice('content.'.length), cell(c)] as const)
        .filter(([, text]) => text !== ''),
    );
    if (fields.length) return errors.validation(fields);
    return {
      content: cell('content'),
      channelIds,
      ...(Object.keys(contentByPlatform).length ? { contentByPlatform } : {}),
      ...(publishAt ? { publishAt } : {}),
      ...(queueCell === 'true' ? { queue: true } : {}),
      ...(draft ? { draft: true as const } : {}),
      media: split(cell('media')),
      ...(tagIds.length ? { tagIds: [...new Set(tagIds)] } : {}),
      ...(TEXT_COLUMNS.some((f) => cell(f) !== '')
        ? { texts: Object.fromEntries(TEXT_COLUMNS.filter((f) => cell(f) !== '').map((f) => [f, cell(f)])) }
        : {}),
    };
  });
}

/** A line of an export: a post's, or a draft's (status `draft`, its intended time as `publishAt`). */
interface CsvLine {
  id: string;
  status: string;
  publishAt: string | null;
  channelIds: string[];
  content: string;
  /** A platform's own text, where it differs from `content`. */
  byPlatform: Record<string, string>;
  mediaIds: string[];
  tagIds: string[];
  texts: Record<string, unknown>;
}

function postLine(p: PostView): CsvLine {
  const byPlatform: Record<string, string> = {};
  for (const c of p.channels) if (c.content !== p.content) byPlatform[c.platform] = c.content;
  return {
    id: p.id,
    status: p.status,
    publishAt: p.scheduledAt,
    channelIds: p.channels.map((c) => c.channelId),
    content: p.content,
    byPlatform,
    mediaIds: p.media.map((m) => m.id),
    tagIds: p.tagIds,
    texts: p as unknown as Record<string, unknown>,
  };
}

function draftLine(d: DraftView): CsvLine {
  return {
    id: d.id,
    status: 'draft',
    publishAt: d.intendedAt,
    channelIds: d.channelIds,
    content: typeof d.content === 'string' ? d.content : '',
    byPlatform: (d.contentByPlatform as Record<string, string> | undefined) ?? {},
    mediaIds: (d.mediaIds as string[] | undefined) ?? [],
    tagIds: d.tagIds,
    texts: d,
  };
}

/**
 * Posts, then drafts, as CSV (UTF-8, comma-separated, a header line), every cell neutralized
 * against formulas; `tags`: the organization's, to name a post's.
 */
export function writePostsCsv(posts: PostView[], tags: CsvTag[] = [], drafts: DraftView[] = []): string {
  const tagName = new Map(tags.map((t) => [t.id, t.name]));
  const lines = [...posts.map(postLine), ...drafts.map(draftLine)];
  const platforms = [...new Set(lines.flatMap((l) => Object.keys(l.byPlatform)))].sort();
  const header = [
    'id',
    'status',
    'publishAt',
    'channels',
    'content',
    ...platforms.map((p) => `content.${p}`),
    'media',
    'tags',
    ...TEXT_COLUMNS,
  ];
  const rows = lines.map((l) => [
    l.id,
    l.status,
    l.publishAt ?? '',
    l.channelIds.join(LIST_SEPARATOR),
    l.content,
    ...platforms.map((platform) => l.byPlatform[platform] ?? ''),
    l.mediaIds.join(LIST_SEPARATOR),
    l.tagIds.map((id) => tagName.get(id) ?? id).join(LIST_SEPARATOR),
    ...TEXT_COLUMNS.map((f) => (typeof l.texts[f] === 'string' ? (l.texts[f] as string) : '')),
  ]);
  return stringify([header, ...rows].map((cells) => cells.map(neutralizeCell)));
}

/** A refusal of one row, kept beside the rows that pass (mode each). */
export const isRowRefusal = (row: CsvRow | ApiError): row is ApiError => row instanceof ApiError;
