// The platform catalog's comments fact (platforms/catalog.ts COMMENTS) is what the connectors do:
// a platform reads comments exactly where its production connector has readComments, and says
// why not everywhere else; GET /v1/channels/{id}/capabilities shows it.
import { describe, expect, test } from 'bun:test';
import { COMMENTS, PLATFORMS } from '../platforms/catalog.ts';
import { createConnectors } from '../platforms/index.ts';

describe('the comments fact of each platform', () => {
  test('read, hide and delete exactly where the connector does; a reason where it reads none', () => {
    const connectors = createConnectors();
    for (const platform of PLATFORMS) {
      const fact = COMMENTS[platform];
      const c = connectors[platform];
      expect({ platform, read: fact.read }).toEqual({ platform, read: typeof c?.readComments === 'function' });
      if (!fact.read) {
        expect(fact.why.length).toBeGreaterThan(10);
        continue;
      }
      expect({ platform, hide: fact.hide, delete: fact.delete }).toEqual({
        platform,
        hide: typeof c?.hideComment === 'function',
        delete: typeof c?.deletePublished === 'function',
      });
    }
  });
});
