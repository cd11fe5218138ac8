// scripts/check-imports.ts keeps every import pointing down the layers (docs/architecture.md):
// it passes on this project and fails, naming the import, on a copy with one planted.
import { afterAll, describe, expect, test } from 'bun:test';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { check } from '../scripts/check-imports.ts';

const ROOT = join(import.meta.dir, '..');
const SCRIPT = join(ROOT, 'scripts/check-imports.ts');
const tmp = mkdtempSync(join(tmpdir(), 'postpilot-check-imports-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(root: string) {
  const p = Bun.spawnSync([process.execPath, SCRIPT, root], { stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, stderr: p.stderr.toString() };
}

/** The project's sources, copied (no node_modules, no data): a tree to plant imports in. */
let copies = 0;
function copyOfProject(): string {
  const dir = join(tmp, `copy-${++copies}`);
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (src) => !['node_modules', '.git', '.data', '.tools', 'test-results'].includes(basename(src)),
  });
  return dir;
}

/** A small tree with one file per layer, every import pointing down. */
function plant(name: string, files: Record<string, string>): string {
  const root = join(tmp, name);
  const all: Record<string, string> = {
    'server/app.ts': `import { v1 } from '../api/v1.ts';\nimport { webApp } from '../web/app.ts';\nexport const app = [v1, webApp];\n`,
    'api/v1.ts': `import { router } from '../http/router.ts';\nexport const v1 = router;\n`,
    'api/main.ts': `import { app } from '../server/app.ts';\nconsole.log(app);\n`,
    'web/app.ts': `import { router } from '../http/router.ts';\nexport const webApp = router;\n`,
    'http/router.ts': `import { errorBody } from '../lib/errors.ts';\nexport const router = errorBody;\n`,
    'services/posts.ts': `import { errorBody } from '../lib/errors.ts';\nimport type { PostInput } from '../workflows/post-types.ts';\nexport const s = errorBody;\nexport type P = PostInput;\n`,
    'workflows/post.ts': `import type { createActivities } from '../activities/index.ts';\nimport { FAILURE } from './post-types.ts';\nexport type A = typeof createActivities;\nexport const f = FAILURE;\n`,
    'workflows/post-types.ts': `export const FAILURE = { permanent: 'PermanentPublishError' };\nexport interface PostInput { postId: string }\n`,
    'activities/index.ts': `import { FAILURE } from '../workflows/post-types.ts';\nexport const createActivities = () => FAILURE;\n`,
    'platforms/catalog.ts': `export type Platform = 'x';\n`,
    'lib/errors.ts': `export const errorBody = (code: string) => ({ error: { code } });\n`,
    'test/app.test.ts': `import { app } from '../server/app.ts';\nimport '../api/main.ts';\nexport const t = app;\n`,
    ...files,
  };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

describe('check-imports', () => {
  test('this project passes', () => {
    const { findings, cycles, files } = check(ROOT);
    expect(findings).toEqual([]);
    expect(cycles).toEqual([]);
    expect(files).toBeGreaterThan(100);
  });

  test('an import planted in a copy of the project fails the check, naming it', () => {
    const copy = copyOfProject();
    expect(run(copy).code).toBe(0);
    // Arrows the layers forbid: a service importing the API, the API importing the web app.
    appendFileSync(join(copy, 'services/idempotency.ts'), `\nimport type { ApiKey } from '../api/auth.ts';\n`);
    appendFileSync(join(copy, 'api/v1.ts'), `\nimport { webApp } from '../web/app.ts';\nvoid webApp;\n`);
    const { code, stderr } = run(copy);
    expect(code).toBe(1);
    expect(stderr).toContain('services/idempotency.ts → api/auth.ts (type): upward (services → interfaces)');
    expect(stderr).toContain('api/v1.ts → web/app.ts: between peers of one layer (interfaces)');
    expect(stderr).toContain('folders that import each other: api, http, services, web');
    expect(stderr).toContain('3 problem(s)');
  });

  test('the small tree passes: imports down the layers, entry points, workflow contracts at the bottom', () => {
    const root = plant('good', {});
    expect(check(root)).toMatchObject({ findings: [], cycles: [] });
    expect(run(root).code).toBe(0);
  });

  const bad: [string, Record<string, string>, string][] = [
    [
      'a service importing the API',
      { 'services/x.ts': `import { v1 } from '../api/v1.ts';\n` },
      'services/x.ts → api/v1.ts: upward (services → interfaces)',
    ],
    [
      'the web app importing the API',
      { 'web/x.ts': `import { v1 } from '../api/v1.ts';\n` },
      'web/x.ts → api/v1.ts: between peers of one layer (interfaces)',
    ],
    [
      'the API importing the web app, as a type',
      { 'api/x.ts': `import type { webApp } from '../web/app.ts';\n` },
      'api/x.ts → web/app.ts (type): between peers',
    ],
    [
      'http/ importing the API',
      { 'http/x.ts': `export { v1 } from '../api/v1.ts';\n` },
      'http/x.ts → api/v1.ts: upward (http → interfaces)',
    ],
    [
      'an activity importing a service',
      { 'activities/x.ts': `import { s } from '../services/posts.ts';\n` },
      'activities/x.ts → services/posts.ts: upward (activities → services)',
    ],
    [
      'an activity importing workflow code',
      { 'activities/x.ts': `const m = await import('../workflows/post.ts');\n` },
      'activities/x.ts → workflows/post.ts: upward (activities → workflows)',
    ],
    [
      'a contract importing workflow code',
      { 'workflows/x-types.ts': `import { f } from './post.ts';\n` },
      'workflows/x-types.ts → workflows/post.ts: upward (foundations → workflows)',
    ],
    [
      'lib/ importing a platform type',
      { 'lib/x.ts': `import type { Platform } from '../platforms/catalog.ts';\n` },
      'lib/x.ts → platforms/catalog.ts (type): upward (foundations → platforms)',
    ],
    [
      'anything importing an entry point',
      { 'server/x.ts': `import '../api/main.ts';\n` },
      'server/x.ts → api/main.ts: upward (processes → entry points)',
    ],
    ['a folder in no layer', { 'misc/x.ts': `export const x = 1;\n` }, 'misc/x.ts: misc/ is in no layer'],
  ];
  for (const [what, files, message] of bad) {
    test(`fails on ${what}`, () => {
      const { code, stderr } = run(plant(what.replace(/\W+/g, '-'), files));
      expect(code).toBe(1);
      expect(stderr).toContain(message);
    });
  }

  test('fails on folders that import each other, and names them', () => {
    const { code, stderr } = run(
      plant('cycle', {
        'lib/x.ts': `import type { Platform } from '../platforms/catalog.ts';\n`,
        'platforms/y.ts': `import { errorBody } from '../lib/errors.ts';\n`,
      }),
    );
    expect(code).toBe(1);
    expect(stderr).toContain('folders that import each other: lib, platforms');
  });
});
