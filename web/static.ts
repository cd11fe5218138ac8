// The app's CSS and JS, served from web/static as they are (no build step), and the chart
// library's files from its npm package (VENDOR). Each URL carries a
// hash of the file, so browsers may cache it for long and still see a new version at once.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { router } from '../http/router.ts';

const DIR = join(import.meta.dir, 'static');
/** Files of npm packages the pages use, served under these names (no CDN: the browser asks only this app). */
const VENDOR: Record<string, string> = {
  'uplot.js': join(import.meta.dir, '..', 'node_modules', 'uplot', 'dist', 'uPlot.iife.min.js'),
  'uplot.css': join(import.meta.dir, '..', 'node_modules', 'uplot', 'dist', 'uPlot.min.css'),
};
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
  const files: [string, string][] = [
    ...readdirSync(DIR).map((name): [string, string] => [name, join(DIR, name)]),
    ...Object.entries(VENDOR),
  ];
  for (const [name, path] of files) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const bytes = readFileSync(path);
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
