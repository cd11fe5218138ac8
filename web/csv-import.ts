// The CSV import page: a file chosen or pasted (GET /posts/import) → a table of its rows, each
// checked as POST /v1/posts/validate checks a post (POST /posts/import/preview) → cells fixed and
// rows dropped in the table, checked again → the rows kept created as one batch, all or nothing
// or each on its own (POST /posts/import) → what was created and what was refused. The reading,
// checking and creating are web/csv-import-rows.ts. Plain forms: it works without JavaScript.
import { BULK_MAX_ROWS } from '../domain/posts/bulk.ts';
import type { IChannel } from '../db/entities/index.ts';
import { router } from '../http/router.ts';
import { ApiError } from '../lib/errors.ts';
import { auditNote } from './audit.ts';
import { postActor } from './composer.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { checkRows, createRows, tableFromForm, tableFromUpload, type ImportTable, type RowOutcome } from './csv-import-rows.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { zoneOptions } from './settings.ts';
import { formatDateTime } from './time.ts';
import { excerpt, platformBadge } from './ui.ts';

const TITLE = 'Import posts from CSV';

/** The cells the table lets a person edit, with their labels; the other columns travel in hidden fields. */
const EDITABLE: Record<string, string> = { content: 'Text', channels: 'Channels', publishAt: 'Time' };

function page(ctx: PageContext, body: SafeHtml, status = 200): Response {
  return htmlResponse(layout({ title: TITLE, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'import' }), { status });
}

function zoneField(zone: string): SafeHtml {
  return html`<div class="field">
    <label for="import-tz">Time zone of the times without one</label>
    <select id="import-tz" name="timeZone" data-testid="import-tz">${zoneOptions(zone).map(
      (z) => html`<option value="${z}"${z === zone ? html` selected` : ''}>${z.replaceAll('_', ' ')}</option>`,
    )}</select>
  </div>`;
}

/** Whether rows without a time become drafts rather than posts published now. */
function draftsField(checked: boolean): SafeHtml {
  return html`<div class="field checkbox"><input type="checkbox" id="import-drafts" name="drafts" value="true" data-testid="import-drafts"${checked ? html` checked` : ''}>
    <label for="import-drafts">Rows without a time (or with <code>status</code> <code>draft</code>) become <a href="/drafts">drafts</a>, not posts published now</label></div>`;
}

function uploadPage(ctx: PageContext, o: { errors?: string[]; status?: number; csv?: string; timeZone?: string } = {}): Response {
  const body = html`<h1>${TITLE}</h1>
${formErrors(o.errors ?? [])}
<p>One post per line after the header line, as <code>POST /v1/posts/import</code> reads them: <code>content</code> and
<code>channels</code> (names or ids, <code>|</code> between several) are required; <code>publishAt</code>
(<code>YYYY-MM-DD HH:MM</code> in the time zone below or the row's <code>timeZone</code>, or ISO 8601 with an offset;
empty: now), <code>timeZone</code>, <code>content.MASTODON</code> (a platform's own text), <code>media</code> (media ids
from the <a href="/media">library</a>, <code>|</code> between them) and <code>queue</code> (<code>true</code>: the next
free slot) are optional. At most ${BULK_MAX_ROWS} rows. Nothing is created before you have seen every row checked.</p>
<pre class="example" data-testid="import-example">content,channels,publishAt
"Launch day, finally",Team News,2026-12-01 09:30</pre>
<form method="post" action="/posts/import/preview" enctype="multipart/form-data" class="stack" data-testid="import-upload-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <div class="field"><label for="import-file">CSV file</label>
    <input type="file" id="import-file" name="file" accept=".csv,text/csv" data-testid="import-file"></div>
  <div class="field"><label for="import-csv">Or paste the CSV</label>
    <textarea id="import-csv" name="csv" rows="8" data-testid="import-text">${o.csv ?? ''}</textarea></div>
  ${zoneField(o.timeZone ?? ctx.tz)}
  ${draftsField(ctx.form.get('drafts') === 'true')}
  <div class="actions"><button type="submit" class="primary" data-testid="import-preview">Check the rows</button>
    <a href="/calendar">Cancel</a></div>
</form>`;
  return page(ctx, body, o.status);
}

function cellInput(table: ImportTable, n: number, j: number, value: string): SafeHtml {
  const column = table.columns[j]!;
  const id = `cell-${n}-${j}`;
  const label = html`<label for="${id}" class="visually-hidden">${EDITABLE[column]} of row ${n + 1}</label>`;
  if (column === 'content')
    return html`${label}<textarea id="${id}" name="cell.${n}.${j}" rows="3" data-testid="import-content">${value}</textarea>`;
  return html`${label}<input id="${id}" name="cell.${n}.${j}" value="${value}" data-testid="import-${column === 'channels' ? 'channels' : 'publish-at'}"${
    column === 'publishAt' ? html` placeholder="YYYY-MM-DD HH:MM"` : ''
  }>`;
}

function outcomeCell(zone: string, o: RowOutcome, channels: Map<string, IChannel>): SafeHtml {
  switch (o.kind) {
    case 'ready':
      return html`<span class="status status-scheduled" data-testid="import-ok">OK</span> ${
        o.publishAt ? html`<time datetime="${o.publishAt}">${formatDateTime(new Date(o.publishAt), zone)}</time>` : 'now'
      } ${o.channels.map((c) => platformBadge(c.platform, channels.get(c.channelId)?.name ?? c.channelId, c.channelId))}`;
    case 'refused':
      return html`<ul class="error-text plain" data-testid="import-errors">${o.problems.map((p) => html`<li data-testid="import-error">${p}</li>`)}</ul>`;
    case 'held':
      return html`<span data-testid="import-held">Fine, but not created: another row was refused.</span>`;
    case 'dropped':
      return html`<span class="hint" data-testid="import-dropped">Dropped</span>`;
    case 'created':
      return html`<a href="/posts/${o.postId}">Created</a>`;
    case 'draft-ready':
      return html`<span class="status" data-testid="import-draft-ok">A draft</span>${
        o.intendedAt ? html`, meant for <time datetime="${o.intendedAt}">${formatDateTime(new Date(o.intendedAt), zone)}</time>` : ''
      }`;
    case 'drafted':
      return html`<a href="/drafts/${o.draftId}/edit">Draft</a>`;
  }
}

/** The table of rows as a form: each row's cells (the editable ones as inputs), a drop box, its check. */
function previewPage(
  ctx: PageContext,
  table: ImportTable,
  outcomes: RowOutcome[],
  channels: Map<string, IChannel>,
  o: { errors?: string[]; status?: number } = {},
): Response {
  const count = (kind: RowOutcome['kind']) => outcomes.filter((x) => x.kind === kind).length;
  const rows = table.rows.map((row, i) => {
    const outcome = outcomes[i]!;
    const others = row.cells.flatMap((value, j) => (j < table.columns.length && EDITABLE[table.columns[j]!] ? [] : [{ value, j }]));
    return html`<tr data-testid="import-row" data-row="${row.n}" data-outcome="${outcome.kind}">
  <th scope="row">${row.n + 1}<input type="hidden" name="row" value="${row.n}"></th>
  <td><input type="checkbox" id="drop-${row.n}" name="drop" value="${row.n}" data-testid="import-drop"${row.dropped ? html` checked` : ''}>
    <label for="drop-${row.n}" class="visually-hidden">Drop row ${row.n + 1}</label></td>
  ${table.columns.map((column, j) => (EDITABLE[column] ? html`<td>${cellInput(table, row.n, j, row.cells[j] ?? '')}</td>` : ''))}
  <td data-testid="import-other-cells">${others.map(
    ({ value, j }) =>
      html`<input type="hidden" name="cell.${row.n}.${j}" value="${value}">${
        value ? html`<span class="hint">${table.columns[j] ?? `extra cell ${j + 1}`}: ${excerpt(value, 40)}</span> ` : ''
      }`,
  )}</td>
  <td data-testid="import-result">${outcomeCell(table.timeZone, outcome, channels)}</td>
</tr>`;
  });
  const body = html`<h1>${TITLE}</h1>
${formErrors(o.errors ?? [])}
<p data-testid="import-summary">${table.rows.length} rows: ${count('ready')} ready${
    count('draft-ready') ? `, ${count('draft-ready')} as drafts` : ''
  }, ${count('refused')} with problems${
    count('held') ? `, ${count('held')} held back` : ''
  }, ${count('dropped')} dropped. Fix a row's cells or drop it, then check again or create the posts.</p>
<form method="post" action="/posts/import" class="stack" data-testid="import-table-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  ${table.columns.map((c) => html`<input type="hidden" name="column" value="${c}">`)}
  <div class="table-wrap"><table class="table import-rows" data-testid="import-rows">
    <thead><tr><th scope="col">Row</th><th scope="col">Drop</th>${table.columns.map((c) =>
      EDITABLE[c]
        ? html`<th scope="col">${EDITABLE[c]}${c === 'publishAt' ? html` <span class="hint">(${table.timeZone})</span>` : ''}</th>`
        : '',
    )}<th scope="col">Other cells</th><th scope="col">Check</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>
  ${zoneField(table.timeZone)}
  ${draftsField(table.drafts)}
  <fieldset data-testid="import-mode"><legend>When a row is refused</legend>
    <div class="radio"><input type="radio" id="mode-all" name="mode" value="all_or_nothing" data-testid="import-mode-all"${table.mode === 'all_or_nothing' ? html` checked` : ''}>
      <label for="mode-all">Create nothing (all or nothing)</label></div>
    <div class="radio"><input type="radio" id="mode-each" name="mode" value="each" data-testid="import-mode-each"${table.mode === 'each' ? html` checked` : ''}>
      <label for="mode-each">Create the other rows</label></div>
  </fieldset>
  <div class="actions">
    <button type="submit" formaction="/posts/import/preview" data-testid="import-check">Check again</button>
    <button type="submit" class="primary" data-testid="import-create">Create the posts</button>
    <a href="/posts/import">Start over</a>
  </div>
</form>`;
  return page(ctx, body, o.status);
}

function resultPage(ctx: PageContext, table: ImportTable, outcomes: RowOutcome[]): Response {
  const rows = table.rows.map((row, i) => ({ row, outcome: outcomes[i]! }));
  const content = (cells: string[]) => excerpt(cells[table.columns.indexOf('content')] ?? '') || '(no text)';
  const created = rows.flatMap(({ row, outcome }) => (outcome.kind === 'created' ? [{ row, outcome }] : []));
  const refused = rows.flatMap(({ row, outcome }) => (outcome.kind === 'refused' ? [{ row, outcome }] : []));
  const drafted = rows.flatMap(({ row, outcome }) => (outcome.kind === 'drafted' ? [{ row, outcome }] : []));
  const body = html`<h1>${TITLE}</h1>
<p data-testid="import-result-summary">${created.length} post${created.length === 1 ? '' : 's'} created, ${
    drafted.length ? `${drafted.length} draft${drafted.length === 1 ? '' : 's'} kept, ` : ''
  }${refused.length} row${refused.length === 1 ? '' : 's'} refused.</p>
${
  created.length
    ? html`<h2>Created</h2><ul class="plain" data-testid="import-created-list">${created.map(
        ({ row, outcome }) => html`<li data-testid="import-created" data-row="${row.n}" data-post-id="${outcome.postId}">Row ${row.n + 1}:
  <a href="/posts/${outcome.postId}" data-testid="import-created-link">${content(row.cells)}</a>,
  <time datetime="${outcome.publishAt}">${formatDateTime(new Date(outcome.publishAt), table.timeZone)}</time>${
    outcome.awaitsApproval
      ? html` <span class="status approval-pending" data-testid="import-awaits-approval">waits for approval</span>`
      : ''
  }</li>`,
      )}</ul>`
    : ''
}
${
  drafted.length
    ? html`<h2>Drafts</h2><ul class="plain" data-testid="import-drafted-list">${drafted.map(
        ({ row, outcome }) => html`<li data-testid="import-drafted" data-row="${row.n}" data-draft-id="${outcome.draftId}">Row ${row.n + 1}:
  <a href="/drafts/${outcome.draftId}/edit">${content(row.cells)}</a></li>`,
      )}</ul>`
    : ''
}
${
  refused.length
    ? html`<h2>Refused</h2><ul class="plain" data-testid="import-refused-list">${refused.map(
        ({ row, outcome }) => html`<li data-testid="import-refused" data-row="${row.n}">Row ${row.n + 1}: ${content(row.cells)}
  <ul class="error-text">${outcome.problems.map((p) => html`<li data-testid="import-error">${p}</li>`)}</ul></li>`,
      )}</ul>`
    : ''
}
<p><a href="/posts/import" data-testid="import-again">Import another file</a> · <a href="/calendar">Calendar</a></p>`;
  return page(ctx, body);
}

/** A file or table that cannot be read at all (not CSV, a bad header, a zone unknown) goes back to the upload form. */
function unreadable(ctx: PageContext, err: unknown, csv?: string): Response {
  if (err instanceof ApiError && err.code === 'validation_failed')
    return uploadPage(ctx, { errors: describeError(err), status: 422, csv, timeZone: ctx.form.get('timeZone') ?? undefined });
  throw err;
}

async function preview(web: Web, ctx: PageContext): Promise<Response> {
  const fromTable = ctx.form.has('column');
  let table: ImportTable;
  try {
    table = fromTable ? tableFromForm(ctx.form, ctx.tz) : tableFromUpload(ctx.form, ctx.tz);
  } catch (err) {
    return unreadable(ctx, err, fromTable ? undefined : (ctx.form.get('csv') ?? undefined));
  }
  const outcomes = await checkRows(postActor(web, ctx), table);
  return previewPage(ctx, table, outcomes, byId(await channelsOf(ctx.em, ctx.signedIn.organization.id)));
}

async function create(web: Web, ctx: PageContext): Promise<Response> {
  let table: ImportTable;
  try {
    table = tableFromForm(ctx.form, ctx.tz);
  } catch (err) {
    return unreadable(ctx, err);
  }
  const channels = byId(await channelsOf(ctx.em, ctx.signedIn.organization.id));
  let outcomes: RowOutcome[];
  try {
    outcomes = await createRows(postActor(web, ctx), table);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'validation_failed') throw err;
    return previewPage(ctx, table, await checkRows(postActor(web, ctx), table), channels, { errors: describeError(err), status: 422 });
  }
  const postIds = outcomes.flatMap((o) => (o.kind === 'created' ? [o.postId] : []));
  const draftIds = outcomes.flatMap((o) => (o.kind === 'drafted' ? [o.draftId] : []));
  if (!postIds.length && !draftIds.length && table.mode === 'all_or_nothing') {
    const refused = outcomes.filter((o) => o.kind === 'refused').length;
    const message = `No post was created: ${refused} row${refused === 1 ? ' was' : 's were'} refused. Fix or drop ${refused === 1 ? 'it' : 'them'}, then create again.`;
    return previewPage(ctx, table, outcomes, channels, { errors: [message], status: 422 });
  }
  // Mode each with every row refused: nothing was created, so no event.
  auditNote(
    ctx,
    postIds.length || draftIds.length
      ? { details: { mode: table.mode, postIds, ...(draftIds.length ? { draftIds } : {}) } }
      : { unchanged: true },
  );
  return resultPage(ctx, table, outcomes);
}

export function csvImportRoutes(web: Web) {
  return router()
    .get(
      '/posts/import',
      pageRoute(web, 'posts.write', (ctx) => uploadPage(ctx)),
    )
    .post(
      '/posts/import/preview',
      pageRoute(web, 'posts.write', (ctx) => preview(web, ctx)),
      { parse: 'text' },
    )
    .post(
      '/posts/import',
      pageRoute(web, 'posts.write', (ctx) => create(web, ctx)),
      { parse: 'text' },
    );
}
