// The role × action table of docs/decisions.md ("Who may do what"), written from domain/access.ts.
// `bun scripts/access-table.ts` prints it; `--write` puts it between the markers in the document.
// test/access-docs.test.ts fails when the document and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACCESS, ACTIONS, can, ROLES } from '../domain/access.ts';

export const DOC = join(import.meta.dir, '..', 'docs', 'decisions.md');
export const BEGIN = '<!-- access-table: written by scripts/access-table.ts -->';
export const END = '<!-- /access-table -->';

export function accessTable(): string {
  const head = `| action | ${ROLES.join(' | ')} | key scope | covers |`;
  const rule = `|---|${ROLES.map(() => ':-:').join('|')}|---|---|`;
  const rows = ACTIONS.map(
    (a) =>
      `| \`${a}\` | ${ROLES.map((r) => (can(r, a) ? '✓' : '')).join(' | ')} | ${ACCESS[a].scope ? `\`${ACCESS[a].scope}\`` : 'none (web app, CLI)'} | ${ACCESS[a].covers} |`,
  );
  return [head, rule, ...rows].join('\n');
}

/** The table as the document holds it now (null: the markers are missing). */
export function documentedTable(text = readFileSync(DOC, 'utf8')): string | null {
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  return from < 0 || to < from ? null : text.slice(from + BEGIN.length, to).trim();
}

if (import.meta.main) {
  if (process.argv.includes('--write')) {
    const text = readFileSync(DOC, 'utf8');
    if (documentedTable(text) === null) throw new Error(`${DOC} has no ${BEGIN} … ${END} block`);
    const from = text.indexOf(BEGIN) + BEGIN.length;
    writeFileSync(DOC, `${text.slice(0, from)}\n${accessTable()}\n${text.slice(text.indexOf(END))}`);
  } else console.log(accessTable());
}
