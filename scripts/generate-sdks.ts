// The SDKs' generated parts, from the API's own OpenAPI document (the app's GET /v1/openapi.json,
// built in process: no database is needed for it): `bun scripts/generate-sdks.ts` writes them;
// `--check` only says which differ from what the current document generates (exit 1), as the
// test suite does (test/sdk-generated.test.ts).
import { relative, resolve } from 'node:path';
import { createApp } from '../server/app.ts';
import { sdkOperations } from './sdk/operations.ts';
import { pythonFiles } from './sdk/python.ts';
import { typescriptOperations, typescriptTypes } from './sdk/typescript.ts';

const ROOT = resolve(import.meta.dir, '..');

export async function apiDocument(): Promise<any> {
  const app = createApp({ orm: undefined as never, log: () => {} });
  const res = await app.handle(new Request('http://localhost/v1/openapi.json'));
  if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  return res.json();
}

/** Each generated file (its path from the repository's root) and its text. */
export async function generatedFiles(doc: any): Promise<Record<string, string>> {
  const ops = sdkOperations(doc);
  return {
    'sdk/typescript/src/generated/openapi.ts': await typescriptTypes(doc),
    'sdk/typescript/src/generated/operations.ts': typescriptOperations(ops),
    ...(await pythonFiles(ops, doc)),
  };
}

/** The generated files that differ from what is written. */
export async function staleFiles(files: Record<string, string>): Promise<string[]> {
  const stale: string[] = [];
  for (const [path, text] of Object.entries(files)) {
    const file = Bun.file(resolve(ROOT, path));
    if (!(await file.exists()) || (await file.text()) !== text) stale.push(path);
  }
  return stale;
}

if (import.meta.main) {
  const files = await generatedFiles(await apiDocument());
  if (process.argv.includes('--check')) {
    const stale = await staleFiles(files);
    if (stale.length) {
      console.error(`not what the current document generates (run bun scripts/generate-sdks.ts): ${stale.join(', ')}`);
      process.exit(1);
    }
  } else {
    for (const [path, text] of Object.entries(files)) {
      await Bun.write(resolve(ROOT, path), text);
      console.log(`wrote ${relative(ROOT, resolve(ROOT, path))}`);
    }
  }
}
