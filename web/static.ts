// The app's CSS and JS, served from web/static as they are (no build step). Each URL carries a
// hash of the file, so browsers may cache it for long and still see a new version at once.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { router } from '../http/router.ts';

const DIR = join(import.meta.dir, 'static');
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  bytes: Buffer;
  type: string;
  version: string;
}

let assets: Map<string, Asset> | undefined;
function load(): Map<string, Asset> {
  if (assets) return assets;
  assets = new Map();
  for (const name of readdirSync(DIR)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const bytes = readFileSync(join(DIR, name));
    assets.set(name, { bytes, type, version: createHash('sha256').update(bytes).digest('hex').slice(0, 12) });
  }
  return assets;
}

/** `/static/<name>?v=<hash>` */
export function assetUrl(name: string): string {
  const a = load().get(name);
  if (!a) throw new Error(`no static asset ${name}`);
  return `/static/${name}?v=${a.version}`;
}

export function staticRoutes() {
  return router().get('/static/:name', ({ params, request }) => {
    const a = load().get(params.name);
    if (!a) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    const versioned = new URL(request.url).searchParams.get('v') === a.version;
    return new Response(a.bytes, {
      headers: {
        'content-type': a.type,
        'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
        'x-content-type-options': 'nosniff',
        etag: `"${a.version}"`,
      },
    });
  });
}
