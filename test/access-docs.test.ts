// The role × action table of docs/decisions.md is the code's (domain/access.ts), as
// scripts/access-table.ts writes it: a changed role, scope or action fails here until the
// document is written again (`bun scripts/access-table.ts --write`).
import { describe, expect, test } from 'bun:test';
import { accessTable, documentedTable } from '../scripts/access-table.ts';

describe('docs/decisions.md', () => {
  test('holds the role × action table of domain/access.ts', () => {
    expect(documentedTable()).toBe(accessTable());
  });
});
