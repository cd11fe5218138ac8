// Workflow code runs in Temporal's deterministic sandbox and is replayed for months-old
// executions: it may import only the workflow SDK and other workflow modules. This check makes
// that a build failure (part of `npm test`), not a comment. Allowed in workflows/:
//   - '@temporalio/workflow' and '@temporalio/common';
//   - relative imports that stay inside workflows/;
//   - `import type` / `export type … from` activities/ (erased before bundling; proxyActivities<typeof …>).
// Refused: Node built-ins (`node:fs`, `fs`, `crypto`, …), Bun's, and everything else.
// `bun scripts/check-workflows.ts [dir]` (default: workflows/ and bench/bare/, the benchmarks' bare
// workflow, each checked as its own root) lists each offending import and exits 1.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const ALLOWED_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
/** Folders (relative to the checked workflows/ folder) that type-only imports may also name. */
export const TYPE_ONLY_FOLDERS = ['../activities'];

export interface Violation {
  /** Relative to the checked folder. */
  file: string;
  specifier: string;
  typeOnly: boolean;
  reason: string;
}

const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const NODE_BUILTINS = new Set(builtinModules);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sourceFiles(path);
      return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
    });
}

const transpiler = new Bun.Transpiler({ loader: 'tsx' });
// Import and re-export statements with their specifier; group 1 is `type` for type-only ones.
// With verbatimModuleSyntax (tsconfig.json) only `import type`/`export type` are erased, so an
// `import { type X } from 'y'` still loads 'y' and counts as a runtime import.
const STATEMENT = /^[ \t]*(?:import|export)\s+(type\s+)?[^;'"]*?\bfrom\s*(['"])([^'"\n]+)\2/gm;
const BARE = /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm;
const CALL = /\b(?:import|require)\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** Every specifier a file imports, each with whether only types are imported from it. */
export function importsOf(text: string): { specifier: string; typeOnly: boolean }[] {
  // Bun's parser finds what survives compilation (also import() and require()).
  const runtime = new Set(transpiler.scanImports(text).map((i) => i.path));
  const typeOnly = new Set<string>();
  for (const m of text.matchAll(STATEMENT)) (m[1] ? typeOnly : runtime).add(m[3]!);
  for (const re of [BARE, CALL]) for (const m of text.matchAll(re)) runtime.add(m[2]!);
  return [...new Set([...runtime, ...typeOnly])].map((specifier) => ({ specifier, typeOnly: !runtime.has(specifier) }));
}

const inside = (folder: string, path: string) => path === folder || path.startsWith(folder + sep);

function refusal(root: string, file: string, specifier: string, typeOnly: boolean): string | null {
  const bare = specifier.replace(/^node:/, '');
  if (specifier.startsWith('node:') || NODE_BUILTINS.has(bare) || NODE_BUILTINS.has(bare.split('/')[0]!)) {
    return 'a Node built-in: workflow code has no I/O (do it in an activity)';
  }
  if (specifier === 'bun' || specifier.startsWith('bun:')) return 'a Bun built-in: workflow code has no I/O (do it in an activity)';
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(file), specifier);
    if (inside(root, target)) return null;
    if (typeOnly && TYPE_ONLY_FOLDERS.some((f) => inside(resolve(root, f), target))) return null;
    return TYPE_ONLY_FOLDERS.some((f) => inside(resolve(root, f), target))
      ? 'activities may be imported as types only (`import type`): proxyActivities calls them'
      : 'outside workflows/: move what the workflow needs into workflows/ (plain data, no I/O)';
  }
  if (ALLOWED_PACKAGES.includes(specifier)) return null;
  return `not in the allow-list (${ALLOWED_PACKAGES.join(', ')})`;
}

/** Every import in `dir` (recursively) that workflow code may not have. */
export function checkWorkflows(dir: string): { files: number; violations: Violation[] } {
  const root = resolve(dir);
  const files = sourceFiles(root);
  const violations: Violation[] = [];
  for (const file of files) {
    for (const { specifier, typeOnly } of importsOf(readFileSync(file, 'utf8'))) {
      const reason = refusal(root, file, specifier, typeOnly);
      if (reason) violations.push({ file: relative(root, file), specifier, typeOnly, reason });
    }
  }
  return { files: files.length, violations };
}

/** The folders of workflow code checked by default: the service's, and the benchmarks' bare workflow. */
export const WORKFLOW_DIRS = ['workflows', 'bench/bare'];

if (import.meta.main) {
  const dirs = process.argv[2] ? [resolve(process.argv[2])] : WORKFLOW_DIRS.map((d) => join(import.meta.dir, '..', d));
  let failed = false;
  for (const dir of dirs) {
    const { files, violations } = checkWorkflows(dir);
    for (const v of violations)
      console.error(
        `check-workflows: ${join(relative(process.cwd(), dir), v.file)}: '${v.specifier}'${v.typeOnly ? ' (type)' : ''}: ${v.reason}`,
      );
    if (violations.length) {
      console.error(
        `check-workflows: ${violations.length} import(s) not allowed in workflow code (scripts/check-workflows.ts, docs/changing-workflows.md).`,
      );
      failed = true;
    }
    if (!files) {
      console.error(`check-workflows: no workflow sources in ${dir}`);
      failed = true;
    }
  }
  if (failed) process.exit(1);
}
