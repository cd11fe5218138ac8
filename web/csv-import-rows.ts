// The rows of the web app's CSV import: the file read as a table by the API import's reader
// (domain/posts/csv.ts), the table as the page's form holds it (each row's cells, the rows
// dropped), each row checked as POST /v1/posts/validate checks a post, and the rows kept created
// as one batch (domain/posts/bulk.ts) the way the app creates posts: source `app`, no API key,
// the member as requester (a contributor's posts wait for approval). Media cells take media ids:
// the page fetches no URLs (csvRowBody refuses such a row at `media`).
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { checkTimeZone } from '../lib/zoned-time.ts';
import { csvTable, readCsvRows, readCsvTable } from '../domain/posts/csv.ts';
import { BULK_MODES, CHECKS_AT_ONCE, inTurns, type BulkMode } from '../domain/posts/bulk.ts';
import { checkDraft } from '../domain/posts/drafts.ts';
import { listTags } from '../domain/tags.ts';
import { validatePost } from '../domain/posts/create.ts';
import type { Requester } from '../domain/posts/approval.ts';
import { csvRowBody } from '../services/post-csv.ts';
import { type BulkRows, createRowsInBulk, isDraftRow } from '../services/bulk-rows.ts';
import { newPostRequest, type NewPostBody } from '../services/post-requests.ts';
import { describeError } from './context.ts';
import { channelsOf, needTemporal, type Actor } from './post-actions.ts';

export interface ImportRow {
  /** Its row in the file, 0 being the first line after the header: kept while rows are dropped. */
  n: number;
  /** One per column (more when the file's line had more: the row is then refused). */
  cells: string[];
  dropped: boolean;
}

export interface ImportTable {
  /** The columns' canonical names (domain/posts/csv.ts), in the file's order. */
  columns: string[];
  rows: ImportRow[];
  /** For wall times in publishAt cells of rows without their own timeZone. */
  timeZone: string;
  mode: BulkMode;
  /** A row without a time (or with status `draft`) becomes a draft (domain/posts/csv.ts). */
  drafts: boolean;
}

/** What became of a row: checked (ready, or refused with each problem as `path: message`), created, or left out. */
export type RowOutcome =
  | { kind: 'ready'; publishAt: string | null; channels: { channelId: string; platform: string }[] }
  | { kind: 'refused'; problems: string[] }
  /** All or nothing: fine, but not created because another row was refused. */
  | { kind: 'held' }
  | { kind: 'created'; postId: string; publishAt: string; awaitsApproval: boolean }
  /** A row kept as a draft: checked, then written. */
  | { kind: 'draft-ready'; intendedAt: string | null }
  | { kind: 'drafted'; draftId: string }
  | { kind: 'dropped' };

/** The row numbers the form carries: small whole numbers, each once. */
const ROW_NUMBER = /^(0|[1-9]\d{0,4})$/;

function zoneFrom(form: URLSearchParams, fallback: string): string {
  const given = form.get('timeZone')?.trim();
  const fields: FieldError[] = [];
  const zone = checkTimeZone(given || fallback, 'timeZone', fields);
  if (zone === undefined) throw errors.validation(fields);
  return zone;
}

const modeFrom = (form: URLSearchParams): BulkMode =>
  (BULK_MODES as readonly string[]).includes(form.get('mode') ?? '') ? (form.get('mode') as BulkMode) : 'all_or_nothing';

const draftsFrom = (form: URLSearchParams) => form.get('drafts') === 'true';

const padded = (cells: string[], length: number) => (cells.length >= length ? cells : [...cells, ...Array(length - cells.length).fill('')]);

/**
 * An upload (the chosen file, else the pasted text) as a table to edit. A file without a publishAt
 * column gets one in front (empty: publish now), so each row's time can still be set.
 */
export function tableFromUpload(form: URLSearchParams, defaultZone: string): ImportTable {
  const text = [form.get('file'), form.get('csv')].find((t) => t && t.trim() !== '');
  if (!text) throw errors.validation([{ path: 'file', message: 'choose a CSV file or paste its text' }]);
  const timeZone = zoneFrom(form, defaultZone);
  const read = readCsvTable(text);
  const { columns, rows } = read.columns.includes('publishAt')
    ? read
    : { columns: ['publishAt', ...read.columns], rows: read.rows.map((cells) => ['', ...cells]) };
  return {
    columns,
    rows: rows.map((cells, n) => ({ n, cells: padded(cells, columns.length), dropped: false })),
    timeZone,
    mode: modeFrom(form),
    drafts: draftsFrom(form),
  };
}

/**
 * The table as the preview's form sends it back: `column` (each column, in order), `row` (each
 * row's number), `cell.<row>.<index>` (its cells), `drop` (the rows left out), `timeZone`, `mode`.
 * The columns and the count of rows are checked as a file's.
 */
export function tableFromForm(form: URLSearchParams, defaultZone: string): ImportTable {
  const numbers = form.getAll('row');
  if (numbers.some((k) => !ROW_NUMBER.test(k)) || new Set(numbers).size !== numbers.length)
    throw errors.validation([{ path: 'row', message: 'the table was changed: upload the file again' }]);
  const dropped = new Set(form.getAll('drop'));
  const rows = numbers.map((key) => {
    const cells: string[] = [];
    for (let j = 0; form.has(`cell.${key}.${j}`); j++) cells.push(form.get(`cell.${key}.${j}`)!);
    return { n: Number(key), cells, dropped: dropped.has(key) };
  });
  const { columns } = csvTable(
    form.getAll('column'),
    rows.map((r) => r.cells),
  );
  return { columns, rows, timeZone: zoneFrom(form, defaultZone), mode: modeFrom(form), drafts: draftsFrom(form) };
}

/** Each kept row's body (a post's, or a draft's when the table asks for drafts), or the row's refusal by the reader. */
async function bodiesOf(actor: Actor, table: ImportTable, kept: ImportRow[]): Promise<BulkRows> {
  const channels = await channelsOf(actor.em, actor.organization.id);
  const tags = await listTags(actor.em, actor.organization.id);
  const rows = readCsvRows({ columns: table.columns, rows: kept.map((r) => r.cells) }, channels, table.timeZone, tags, {
    drafts: table.drafts,
  });
  return Promise.all(rows.map((row) => (row instanceof ApiError ? row : csvRowBody(row))));
}

/** A body's request as the app makes it (the member's, source `app`). */
const requestOf = (actor: Actor, requester?: Requester) => (body: NewPostBody) =>
  newPostRequest({ organization: actor.organization, source: 'app', key: null, now: actor.now }, body, actor.capabilities, requester);

/** A row's refusal for people; anything but a refusal (a lost connection) fails the request. */
function refusal(err: unknown): RowOutcome {
  if (err instanceof ApiError && err.status < 500) return { kind: 'refused', problems: describeError(err) };
  throw err;
}

/** The outcomes of the kept rows, in the table's order, the dropped rows among them. */
function alongside(table: ImportTable, kept: ImportRow[], outcomes: RowOutcome[]): RowOutcome[] {
  const of = new Map(kept.map((r, i) => [r.n, outcomes[i]!]));
  return table.rows.map((r) => of.get(r.n) ?? { kind: 'dropped' });
}

/** Each row checked by validatePost, as POST /v1/posts/validate checks a post (no requester: a check approves nothing); a draft's as its create checks it. */
export async function checkRows(actor: Actor, table: ImportTable): Promise<RowOutcome[]> {
  const kept = table.rows.filter((r) => !r.dropped);
  const bodies = await bodiesOf(actor, table, kept);
  const outcomes = await inTurns(bodies, CHECKS_AT_ONCE, async (body): Promise<RowOutcome> => {
    try {
      if (body instanceof ApiError) return refusal(body);
      if (isDraftRow(body)) {
        const d = await checkDraft(actor.em.fork(), { organizationId: actor.organization.id, keyChannels: 'all' }, body.draft);
        return { kind: 'draft-ready', intendedAt: d.intendedAt?.toISOString() ?? null };
      }
      const checked = await validatePost(actor.em.fork(), requestOf(actor)(body));
      return { kind: 'ready', publishAt: checked.publishAt, channels: checked.channels };
    } catch (err) {
      return refusal(err);
    }
  });
  return alongside(table, kept, outcomes);
}

/** The rows kept, created as one batch in the table's mode (createRowsInBulk, as POST /v1/posts/import). */
export async function createRows(actor: Actor, table: ImportTable): Promise<RowOutcome[]> {
  const kept = table.rows.filter((r) => !r.dropped);
  if (!kept.length) throw errors.validation([{ path: 'drop', message: 'every row is dropped: keep at least one to create' }]);
  const bodies = await bodiesOf(actor, table, kept);
  const results = await createRowsInBulk({ em: actor.em, temporal: needTemporal(actor.temporal) }, bodies, table.mode, {
    requestOf: requestOf(actor, actor.requester),
    drafts: { organizationId: actor.organization.id, keyChannels: 'all', actor: actor.requester.actor, now: actor.now },
  });
  const outcomes = await Promise.all(
    results.map(async (r): Promise<RowOutcome> => {
      if ('draft' in r) return { kind: 'drafted', draftId: r.draft.id };
      if ('created' in r) {
        const post = await r.created.view();
        return { kind: 'created', postId: post.id, publishAt: post.scheduledAt, awaitsApproval: post.approval?.status === 'pending' };
      }
      return r.error.details?.notCreated ? { kind: 'held' } : refusal(r.error);
    }),
  );
  return alongside(table, kept, outcomes);
}
