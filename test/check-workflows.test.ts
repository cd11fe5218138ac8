// scripts/check-workflows.ts keeps Node built-ins (and anything else outside the allow-list) out
// of workflows/: it passes on ours and fails on a planted folder of bad imports.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkWorkflows } from '../scripts/check-workflows.ts';

const SCRIPT = join(import.meta.dir, '../scripts/check-workflows.ts');
const tmp = mkdtempSync(join(tmpdir(), 'postpilot-check-workflows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A throwaway tree: <root>/workflows/<files>, beside an activities/ folder. */
function plant(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name, 'workflows');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

function run(dir: string) {
  const p = Bun.spawnSync([process.execPath, SCRIPT, dir], { stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, stderr: p.stderr.toString() };
}

const GOOD = {
  'post.ts': [
    `import { proxyActivities, sleep } from '@temporalio/workflow';`,
    `import { ApplicationFailure } from '@temporalio/common';`,
    `import type { createActivities } from '../activities/index.ts';`,
    `import { FAILURE } from './contracts/post.ts';`,
    `// import { readFileSync } from 'node:fs';  (a comment, not an import)`,
    `export const x = [proxyActivities, sleep, ApplicationFailure, FAILURE];`,
    `export type A = ReturnType<typeof createActivities>;`,
  ].join('\n'),
  'contracts/post.ts': `export const FAILURE = { permanent: 'PermanentPublishError' } as const;\n`,
};

describe('check-workflows', () => {
  test('our workflows/ passes', () => {
    const { files, violations } = checkWorkflows(join(import.meta.dir, '../workflows'));
    expect(violations).toEqual([]);
    expect(files).toBeGreaterThan(3);
    expect(run(join(import.meta.dir, '../workflows')).code).toBe(0);
  });

  test('the SDK, workflow modules and type-only activity imports pass', () => {
    const dir = plant('good', GOOD);
    expect(checkWorkflows(dir).violations).toEqual([]);
    expect(run(dir)).toEqual({ code: 0, stderr: '' });
  });

  test('Node built-ins, other packages, runtime activity imports and files outside workflows/ fail the build', () => {
    const dir = plant('bad', {
      ...GOOD,
      'clock.ts': [
        `import { readFileSync } from 'node:fs';`,
        `import { randomUUID } from 'crypto';`,
        `import { createActivities } from '../activities/index.ts';`,
        `import type { Orm } from '../db/orm.ts';`,
        `import { Client } from '@temporalio/client';`,
        `export * from 'events';`,
        `export const later = () => import('node:child_process');`,
        `export const os = require('os');`,
      ].join('\n'),
    });
    const found = checkWorkflows(dir).violations.map((v) => `${v.file} ${v.specifier}`);
    expect(found.sort()).toEqual(
      ['node:fs', 'crypto', '../activities/index.ts', '../db/orm.ts', '@temporalio/client', 'events', 'node:child_process', 'os']
        .map((s) => `clock.ts ${s}`)
        .sort(),
    );
    const { code, stderr } = run(dir);
    expect(code).toBe(1);
    expect(stderr).toContain(`clock.ts: 'node:fs': a Node built-in`);
    expect(stderr).toContain(`clock.ts: '../activities/index.ts': activities may be imported as types only`);
    expect(stderr).toContain(`clock.ts: '@temporalio/client': not in the allow-list`);
    expect(stderr).toContain('8 import(s) not allowed');
  });
});
