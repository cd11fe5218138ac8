// Both SDKs' generated parts (scripts/generate-sdks.ts) are what the current OpenAPI document
// generates: a route, a field or a summary changed without regenerating fails here, and a changed
// document does change them.
import { expect, test } from 'bun:test';
import { apiDocument, generatedFiles, staleFiles } from '../scripts/generate-sdks.ts';

test('the committed SDK files are what the current document generates; a changed document is drift in both SDKs', async () => {
  const doc = await apiDocument();
  const changed = structuredClone(doc);
  changed.paths['/posts'].post.summary += ', now or later';
  changed.components.schemas.Post.properties.pinned = { type: 'boolean', description: 'Shown first.' };
  const [current, next] = await Promise.all([generatedFiles(doc), generatedFiles(changed)]);
  const paths = Object.keys(current).sort();
  expect(paths).toEqual([
    'sdk/python/src/postpilot/_generated/models.py',
    'sdk/python/src/postpilot/_generated/operations.py',
    'sdk/typescript/src/generated/openapi.ts',
    'sdk/typescript/src/generated/operations.ts',
  ]);
  expect(await staleFiles(current)).toEqual([]);
  expect((await staleFiles(next)).sort()).toEqual(paths);
});
