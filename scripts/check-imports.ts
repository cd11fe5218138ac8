// The import-graph check (docs/architecture.md): every import between the project's
// folders points down the layer table below, and no two folders import each other.
// `bun scripts/check-imports.ts [root]` lists each offending import and exits 1; `--graph` also
// prints the folder graph. Part of `npm test`; test/check-imports.test.ts plants bad imports.
// (What workflow code may import at all is scripts/check-workflows.ts's job.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';

/**
 * Top to bottom. A module may import from a layer below its own, never from above and never from
 * another folder of its own layer (peers). A member is a folder, or a file pattern that takes
 * files out of their folder's layer (the longest matching member wins).
 */
export const LAYERS: { name: string; members: string[] }[] = [
  // Processes start here and nothing imports them; tests and benchmarks may import anything.
  { name: 'entry points', members: ['scripts', 'cli', 'bench', 'deploy', 'test', 'api/main.ts', 'worker/main.ts', 'mcp/main.ts'] },
  // The client libraries (sdk/): packages of their own, generated from the API's document by
  // scripts/generate-sdks.ts and tested against the service; they import nothing of it.
  { name: 'SDKs', members: ['sdk'] },
  // What a process runs: the HTTP app (the API and the web app mounted together), the worker.
  { name: 'processes', members: ['server', 'worker'] },
  // Peers: the public API, the web app, the MCP server for AI assistants.
  { name: 'interfaces', members: ['api', 'web', 'mcp'] },
  // What the API and the web app share: router factory, request bodies, error mapping, deps.
  { name: 'http', members: ['http'] },
  // What faces a request: key scope, idempotency, admission, the request-side views.
  { name: 'services', members: ['services'] },
  // Workflow code names its activities as types (proxyActivities<typeof …>).
  { name: 'workflows', members: ['workflows'] },
  { name: 'activities', members: ['activities'] },
  // What the request side and the worker side share: posts, series, queues, the webhook outbox.
  { name: 'domain', members: ['domain'] },
  { name: 'db', members: ['db'] },
  { name: 'platforms', members: ['platforms'] },
  { name: 'media and storage', members: ['media', 'storage'] },
  // A workflow's contract (its type name, Updates, Queries, payloads, failure types) is plain data
  // that the API, the worker and the activities share with the workflow code: the bottom.
  { name: 'foundations', members: ['lib', 'workflows/*-types.ts', 'workflows/search-attributes.ts'] },
];

export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Finding {
  edge: Edge;
  reason: string;
}

const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** Source files below the root's folders (root-level files are configuration), as `dir/file.ts`. */
function sourceFiles(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir)).sort()) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const rel = dir ? `${dir}/${name}` : name;
    if (statSync(join(root, rel)).isDirectory()) out.push(...sourceFiles(root, rel));
    else if (dir && SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const ts = new Bun.Transpiler({ loader: 'ts' });
const tsx = new Bun.Transpiler({ loader: 'tsx' });
const js = new Bun.Transpiler({ loader: 'js' });
const transpilerFor = (file: string) => (/\.[mc]?ts$/.test(file) ? ts : /\.tsx$/.test(file) ? tsx : js);
// Bun's scanner finds what survives compilation (import, export … from, import(), require()) but
// drops type-only imports; these find those. Comments never start a line with `import`.
const STATEMENT = /^[ \t]*(?:import|export)\b[^;'"]*?\bfrom\s*(['"])([^'"\n]+)\1/gm;
const CALL = /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/**
 * The relative imports of one file, as project paths. Type-only imports count too: a type
 * imported from above ties two folders together as much as a value does.
 */
export function importsOf(root: string, file: string): Edge[] {
  const text = readFileSync(join(root, file), 'utf8');
  const runtime = new Set(
    transpilerFor(file)
      .scanImports(text)
      .map((i) => i.path),
  );
  const all = new Set(runtime);
  for (const re of [STATEMENT, CALL]) for (const m of text.matchAll(re)) all.add(m[2]!);
  return [...all]
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => ({ from: file, to: normalize(join(dirname(file), spec)), typeOnly: !runtime.has(spec) }));
}

/** How well a member matches a file (its length), or -1: a folder matches all below it. */
function matches(member: string, file: string): number {
  if (member.includes('*')) {
    const pattern = member
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*');
    return new RegExp(`^${pattern}$`).test(file) ? member.length : -1;
  }
  return file === member || file.startsWith(`${member}/`) ? member.length : -1;
}

/** The layer of a file and the member that put it there; undefined when none does. */
export function layerOf(file: string): { index: number; member: string } | undefined {
  let best: { index: number; member: string; score: number } | undefined;
  LAYERS.forEach((layer, index) => {
    for (const member of layer.members) {
      const score = matches(member, file);
      if (score >= 0 && (!best || score > best.score)) best = { index, member, score };
    }
  });
  return best && { index: best.index, member: best.member };
}

const topFolder = (file: string) => file.split('/')[0]!;
/** A top-level folder, or the group a file pattern of LAYERS carves out of one (workflow contracts). */
const groupOf = (file: string) => layerOf(file)?.member ?? topFolder(file);

/** Every import against the layer table, every file in no layer, and every cycle between folders. */
export function check(root: string): { files: number; edges: Edge[]; findings: Finding[]; cycles: string[][] } {
  const files = sourceFiles(root);
  const edges = files.flatMap((f) => importsOf(root, f));
  const findings: Finding[] = [];
  for (const f of files) {
    if (!layerOf(f))
      findings.push({ edge: { from: f, to: f, typeOnly: false }, reason: `${topFolder(f)}/ is in no layer of scripts/check-imports.ts` });
  }
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    // Unknown places are reported above; entry points may import anything, each other included.
    if (!from || !to || from.index === 0 || groupOf(edge.from) === groupOf(edge.to)) continue;
    if (to.index < from.index) findings.push({ edge, reason: `upward (${LAYERS[from.index]!.name} → ${LAYERS[to.index]!.name})` });
    else if (to.index === from.index && topFolder(edge.from) !== topFolder(edge.to)) {
      findings.push({ edge, reason: `between peers of one layer (${LAYERS[to.index]!.name})` });
    }
  }
  return { files: files.length, edges, findings, cycles: folderCycles(edges) };
}

/** Sets of folders that import each other, round and round (entry points left out). */
export function folderCycles(edges: Edge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    const [a, b] = [groupOf(e.from), groupOf(e.to)];
    if (a === b || layerOf(e.from)?.index === 0) continue;
    (graph.get(a) ?? graph.set(a, new Set()).get(a)!).add(b);
    if (!graph.has(b)) graph.set(b, new Set());
  }
  // Tarjan's strongly connected components; one of two or more folders is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component = stack.splice(stack.indexOf(v));
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** Folder → folder with the number of imports (type-only ones counted apart). */
function folderGraph(edges: Edge[]): string[] {
  const counts = new Map<string, { values: number; types: number }>();
  for (const e of edges) {
    const key = `${groupOf(e.from)} → ${groupOf(e.to)}`;
    if (groupOf(e.from) === groupOf(e.to)) continue;
    const c = counts.get(key) ?? { values: 0, types: 0 };
    c[e.typeOnly ? 'types' : 'values']++;
    counts.set(key, c);
  }
  return [...counts].sort().map(([k, c]) => `${k}  ${c.values}${c.types ? ` (+${c.types} type-only)` : ''}`);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const root = resolve(args.find((a) => !a.startsWith('--')) ?? join(import.meta.dir, '..'));
  const { files, edges, findings, cycles } = check(root);
  if (args.includes('--graph')) console.log(folderGraph(edges).join('\n'));
  for (const { edge, reason } of findings) {
    const where = edge.from === edge.to ? edge.from : `${edge.from} → ${edge.to}${edge.typeOnly ? ' (type)' : ''}`;
    console.error(`check-imports: ${where}: ${reason}`);
  }
  for (const c of cycles) console.error(`check-imports: folders that import each other: ${c.join(', ')}`);
  if (findings.length || cycles.length) {
    console.error(
      `check-imports: ${findings.length + cycles.length} problem(s); the layers: docs/architecture.md, scripts/check-imports.ts.`,
    );
    process.exit(1);
  }
  console.log(`check-imports: ${files} files, ${edges.length} relative imports, all pointing down the layers.`);
}
