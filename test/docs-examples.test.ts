// The curl examples of docs/api.md, run against a post stack (a fake Mastodon behind real
// Temporal workflows) so the walkthrough cannot drift from the API: each ```sh example is parsed,
// its placeholders (`ch_…`, `post_…`, `med_…`, `wh_…`, `whd_…`, `ser_…`, `feed_…`, `$APPROVER`)
// become ids of rows made here first, and its answer is held to the status and the shape the
// doc's `# →` comment shows (each key shown, with its value where the doc gives a literal). An
// example that cannot run here is listed in NOT_RUN with the reason; one that is neither run nor
// listed fails the test.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { addChannel } from '../domain/channels.ts';
import { createApiKey } from '../services/api-keys.ts';
import { MediaItem } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { createTikTokConnector } from '../platforms/tiktok.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { FAKE_APP, startFakeTikTok, type FakeTikTok } from './fakes/tiktok.ts';
import { call, makeChannel, makeKey, makeOrg, readyMedia } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

const DOC = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
/** The instant the doc's examples are written at (its `readAt`, its queue's next free slots). */
const DOC_NOW = new Date('2026-11-27T09:00:00.000Z');

interface Example {
  /** The 1-based line of docs/api.md the command starts at. */
  line: number;
  /** The command as written, continuation lines joined. */
  command: string;
  /** The section heading it is under (which key it runs with). */
  section: string;
  words: string[];
  /** A status from the `# →` comment after it, or from its own trailing comment (`# 204: …`). */
  status?: number;
  /** The answer's shape from the `# →` comment, as written. */
  shape?: string;
}

/** Examples that are not run, by a piece of their command, with why. Each must match one example. */
const NOT_RUN: { match: string; reason: string }[] = [
  { match: '/v1/media/uploads', reason: 'its fileSize is $(stat) of a local photo.png' },
  { match: '--data-binary @photo.png', reason: 'PUTs a local file to the URL of the previous answer (jq upload.json)' },
  { match: '/complete', reason: 'the media id comes from upload.json (jq), written by the skipped upload' },
  { match: '"content\\":\\"Team photo', reason: 'the media id comes from upload.json (jq), written by the skipped upload' },
  { match: '--data-binary @posts.csv', reason: 'the body is a local file, posts.csv' },
  {
    match: '/v1/generate/post',
    reason: 'needs a model endpoint (GENERATE_* settings); without one the answer is the documented 501',
  },
];

/** Examples run whose answer shape is not compared, with why. */
const SHAPE_NOT_COMPARED: { match: string; reason: string }[] = [
  { match: '/v1/audit-events?limit=2', reason: 'the events shown (a member changing a role) are not in the fixture organization' },
];

/** External URLs of the examples, unreachable here, and what stands in for them. */
const EXTERNAL: Record<string, string> = {};

function parseExamples(doc: string): Example[] {
  const lines = doc.split('\n');
  const out: Example[] = [];
  let section = '';
  let inSh = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!inSh && line.startsWith('#')) section = line.replace(/^#+\s*/, '');
    if (line.startsWith('```')) {
      inSh = !inSh && line.trim() === '```sh';
      continue;
    }
    if (!inSh || !line.startsWith('curl ')) continue;
    // Join the command's lines: a trailing backslash, or a quote still open.
    const start = i;
    let text = '';
    let trailing = '';
    let quote: string | null = null;
    for (;;) {
      const l = lines[i]!;
      let j = 0;
      let cont = false;
      for (; j < l.length; j++) {
        const c = l[j]!;
        if (quote) {
          if (c === '\\' && quote === '"') {
            text += c + (l[j + 1] ?? '');
            j++;
            continue;
          }
          if (c === quote) quote = null;
          text += c;
          continue;
        }
        if (c === "'" || c === '"') quote = c;
        else if (c === '#' && /\s/.test(l[j - 1] ?? ' ')) {
          trailing += l.slice(j + 1).trim();
          break;
        } else if (c === '\\' && j === l.trimEnd().length - 1) {
          cont = true;
          break;
        }
        text += c;
      }
      if (quote) text += '\n';
      if (!quote && !cont) break;
      text += ' ';
      i++;
    }
    const ex: Example = { line: start + 1, command: text.trim(), section, words: shellWords(text) };
    const own = /^(\d{3})\b/.exec(trailing) ?? /\((\d{3})\)/.exec(trailing);
    if (own) ex.status = Number(own[1]);
    // The `# →` comment: `# → 201 {…}`, `# 201 → {…}`, `# → {…}`, continued by `#` and 2+ spaces.
    const m = /^#\s*(?:(\d{3})\s*)?→\s*(?:(\d{3})\s*)?(.*)$/.exec(lines[i + 1] ?? '');
    if (m) {
      i++;
      if (m[1] ?? m[2]) ex.status = Number(m[1] ?? m[2]);
      let shape = m[3] ?? '';
      while (/^#\s{2,}/.test(lines[i + 1] ?? '')) shape += lines[++i]!.slice(1);
      if (shape.trim()) ex.shape = shape.trim();
    }
    out.push(ex);
  }
  return out;
}

/** Shell words: quotes removed, `\"` inside double quotes kept as `"`. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let cur = '';
  let has = false;
  let quote: string | null = null;
  for (let j = 0; j < text.length; j++) {
    const c = text[j]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (quote === '"' && c === '\\' && text[j + 1] === '"') cur += text[++j];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) words.push(cur);
      cur = '';
      has = false;
    } else cur += c;
  }
  if (has || cur) words.push(cur);
  return words;
}

/** The doc's shape as JSON: `…` parts dropped, values with `…` kept as strings that match anything. */
function shapeOf(text: string): unknown {
  const json = text
    .replace(/\{…\}/g, '{}')
    .replace(/\[…\]/g, '[]')
    .replace(/,\s*…(?=\s*[}\]])/g, '')
    .replace(/…\s*,\s*/g, '')
    .replace(/:\s*…/g, ':"…"');
  try {
    return JSON.parse(json);
  } catch {
    throw new Error(`the doc's answer shape is not JSON once its … parts are dropped: ${json}`);
  }
}

/** Where `actual` departs from the doc's `expected`: keys shown must be there, literals equal. */
function mismatches(expected: unknown, actual: unknown, path = ''): string[] {
  if (typeof expected === 'string' && expected.includes('…')) return [];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    return expected.flatMap((e, k) => mismatches(e, actual[k], `${path}[${k}]`));
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object') return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([k, v]) =>
      k in actual ? mismatches(v, (actual as Record<string, unknown>)[k], `${path}.${k}`) : [`${path}.${k}: missing`],
    );
  }
  return Object.is(expected, actual) ? [] : [`${path}: doc ${JSON.stringify(expected)}, API ${JSON.stringify(actual)}`];
}

const examples = parseExamples(DOC);
const matching = (match: string) => examples.filter((e) => e.command.includes(match));

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let tiktok: FakeTikTok;
let feedServer: ReturnType<typeof Bun.serve>;
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  fake = await startFakeMastodon();
  // The creator the capabilities example shows.
  tiktok = await startFakeTikTok();
  tiktok.validTokens.add('tok');
  Object.assign(tiktok.creator, {
    creator_username: 'acme',
    privacy_level_options: ['PUBLIC_TO_EVERYONE', 'SELF_ONLY'],
    stitch_disabled: true,
    max_video_post_duration_sec: 600,
  });
  // A webhook receiver that takes everything, in place of example.com.
  receiver = Bun.serve({ port: 0, fetch: () => new Response(null, { status: 204 }) });
  EXTERNAL['https://example.com/hooks/postpilot'] = `http://127.0.0.1:${receiver.port}/hooks/postpilot`;
  feedServer = Bun.serve({
    port: 0,
    fetch: () =>
      new Response(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title><link>https://blog.example</link><description>d</description>' +
          '<item><title>Spring</title><link>https://blog.example/spring</link><guid>urn:spring</guid></item></channel></rss>',
        { headers: { 'content-type': 'application/rss+xml' } },
      ),
  });
  EXTERNAL['https://blog.example/feed.xml'] = `http://127.0.0.1:${feedServer.port}/feed.xml`;
  stack = await startPostStack({
    storage: 'disk',
    connectors: {
      MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }),
      TIKTOK: createTikTokConnector({ baseUrl: tiktok.url, oauth: FAKE_APP, timeoutMs: 2000 }),
    },
    appDeps: { now: () => DOC_NOW, outbound: { allowPrivate: true } },
  });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  await tiktok?.stop();
  feedServer?.stop(true);
  receiver?.stop(true);
});

test('every curl example of docs/api.md is run or listed as not run, and every listing matches one example', () => {
  expect(examples.length).toBeGreaterThan(30);
  for (const { match } of [...NOT_RUN, ...SHAPE_NOT_COMPARED])
    expect({ match, examples: matching(match).length }).toEqual({ match, examples: 1 });
  for (const e of examples) expect(e.words[0]).toBe('curl');
});

test('the examples answer as docs/api.md says', async () => {
  const h = stack.h;
  const org = await makeOrg('PRO', 'Acme');
  const mastodon = async (name: string) =>
    (
      await addChannel(h.orm.em.fork(), h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name,
        credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
      })
    ).id;
  const channels = [await mastodon('Team News'), await mastodon('Team Updates')];
  const named: Record<string, string> = {
    mastodon: channels[0]!,
    bluesky: (await makeChannel(org.id, 'BLUESKY')).id,
    reddit: (await makeChannel(org.id, 'REDDIT')).id,
    x: (await makeChannel(org.id, 'X')).id,
    linkedin: (await makeChannel(org.id, 'LINKEDIN')).id,
    tiktok: (await makeChannel(org.id, 'TIKTOK')).id,
    youtube: (await makeChannel(org.id, 'YOUTUBE')).id,
  };
  const { key } = await makeKey(org.id, { scopes: ['read', 'publish', 'generate', 'approve'] });
  const author = (
    await createApiKey(h.orm.em.fork(), {
      organizationId: org.id,
      name: 'Zapier',
      scopes: ['read', 'publish'],
      channels: 'all',
      requiresApproval: true,
    })
  ).key;
  const approver = (await makeKey(org.id, { scopes: ['read', 'approve'], name: 'approver' })).key;
  const media: Record<string, string> = { '': await readyMedia(stack.storage!, org.id) };
  // A ready 30 s vertical video (its bytes are never read: the example's post is not published).
  media.video = newId('med');
  const em = h.orm.em.fork();
  em.create(MediaItem, {
    id: media.video,
    organization: org.id,
    type: 'video',
    status: 'ready',
    fileName: 'studio.mp4',
    mimeType: 'video/mp4',
    sizeBytes: 1_000_000,
    storageKey: `${org.id}/${media.video}/final`,
    uploadKey: `${org.id}/${media.video}/final`,
    apiKeyId: null,
    width: 1080,
    height: 1920,
    durationSeconds: 30,
    uploadExpiresAt: new Date(Date.now() + 60_000),
  });
  await em.flush();

  const api = (method: string, path: string, body?: unknown) => call(stack.app, method, path, { key, body });
  // A post that waits, for examples that name a post_… of their own.
  const scheduled = await api('POST', '/v1/posts', {
    content: 'Fixture post',
    channelIds: [channels[0]],
    publishAt: '2026-12-20T09:00:00Z',
  });
  expect(scheduled.status).toBe(201);
  // A failed post, for retry: the instance refuses it once, for good.
  fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is invalid' } });
  const failing = await api('POST', '/v1/posts', { content: 'Fixture post that fails', channelIds: [channels[1]] });
  expect(failing.status).toBe(201);
  await stack.settle(failing.body.id);
  expect((await api('GET', `/v1/posts/${failing.body.id}`)).body.status).toBe('failed');
  const webhook = await api('POST', '/v1/webhooks', { url: `http://127.0.0.1:${receiver.port}/fixture`, events: ['webhook.test'] });
  expect(webhook.status).toBe(201);
  expect((await api('POST', `/v1/webhooks/${webhook.body.endpoint.id}/test`)).status).toBe(202);
  // A delivery done (a pending one cannot be redelivered).
  let deliveryId: string | undefined;
  for (let i = 0; i < 200 && !deliveryId; i++) {
    const d = (await api('GET', `/v1/webhooks/${webhook.body.endpoint.id}/deliveries`)).body.data?.[0];
    if (d && d.status !== 'pending') deliveryId = d.id;
    else await Bun.sleep(50);
  }
  expect(deliveryId).toBeDefined();
  const series = await api('POST', '/v1/series', {
    content: 'Fixture tips',
    channelIds: [channels[0]],
    publishAt: '2026-12-14T09:00:00Z',
    repeat: { every: 'week' },
  });
  expect(series.status).toBe(201);
  const feed = await api('POST', '/v1/feeds', {
    url: EXTERNAL['https://blog.example/feed.xml'],
    channelIds: [channels[1]],
    template: 'Fixture {title} {link}',
  });
  expect(feed.status).toBe(201);

  let lastPostId: string | undefined;
  let lastPostSection = '';
  let lastCursor: string | undefined;
  const problems: string[] = [];
  let ran = 0;
  for (const ex of examples) {
    if (NOT_RUN.some((n) => ex.command.includes(n.match))) continue;
    const approvalSection = ex.section === 'Approval';
    let method = 'GET';
    let url = '';
    let body: string | undefined;
    const headers: Record<string, string> = {};
    const w = ex.words;
    for (let k = 1; k < w.length; k++) {
      const a = w[k]!;
      if (a === '-s') continue;
      if (a === '-X') method = w[++k]!;
      else if (a === '-H') {
        const [name, ...rest] = w[++k]!.split(':');
        headers[name!.trim().toLowerCase()] = rest.join(':').trim();
      } else if (a === '-d') {
        body = w[++k]!;
        if (method === 'GET') method = 'POST';
      } else if (a === '-o') k++;
      else if (a.startsWith('$BASE')) url = a.slice('$BASE'.length);
      else problems.push(`line ${ex.line}: unknown curl argument ${a}`);
    }
    // Placeholders: ids of the rows made above, in the order the command names them.
    let nthChannel = 0;
    const postFor = () => {
      if (url.includes('/retry')) return failing.body.id;
      if (lastPostId && lastPostSection === ex.section) return lastPostId;
      return scheduled.body.id;
    };
    const fill = (s: string) =>
      s
        .replace(/ch_([a-z]*)…/g, (_, p: string) => (p ? named[p]! : channels[nthChannel++ % 2]!))
        .replace(/post_…/g, () => postFor())
        .replace(/med_([a-z]*)…/g, (_, p: string) => media[p]!)
        .replace(/whd_…/g, deliveryId!)
        .replace(/wh_…/g, webhook.body.endpoint.id)
        .replace(/ser_…/g, series.body.id)
        .replace(/feed_…/g, feed.body.id)
        .replace(/WyIy…/g, () => lastCursor ?? '')
        .replace(/https:\/\/[^"' ]+/g, (u) => EXTERNAL[u] ?? u);
    url = fill(url);
    if (body !== undefined) body = fill(body);
    const auth = headers.authorization ?? '';
    delete headers.authorization;
    const callKey = auth === 'Bearer $APPROVER' ? approver : approvalSection ? author : key;
    if (auth !== 'Bearer $KEY' && auth !== 'Bearer $APPROVER') problems.push(`line ${ex.line}: Authorization ${auth}`);
    const r = await call(stack.app, method, url, { key: callKey, rawBody: body, headers });
    ran++;
    const where = `line ${ex.line} (${method} ${url})`;
    if (ex.status !== undefined && r.status !== ex.status) {
      problems.push(`${where}: doc says ${ex.status}, API answered ${r.status} ${JSON.stringify(r.body)}`);
    } else if (r.status >= 400) {
      problems.push(`${where}: answered ${r.status} ${JSON.stringify(r.body)}`);
    }
    if (ex.shape && !SHAPE_NOT_COMPARED.some((n) => ex.command.includes(n.match)) && r.status < 400) {
      try {
        for (const m of mismatches(shapeOf(ex.shape.replace(/https:\/\/[^"' ]+/g, (u) => EXTERNAL[u] ?? u)), r.body)) {
          problems.push(`${where}: ${m}`);
        }
      } catch (e) {
        problems.push(`${where}: ${(e as Error).message}`);
      }
    }
    if (method === 'POST' && url === '/v1/posts' && r.status === 201) {
      lastPostId = r.body.id;
      lastPostSection = ex.section;
    }
    if (typeof r.body?.nextCursor === 'string') lastCursor = r.body.nextCursor;
  }
  expect(problems).toEqual([]);
  expect(ran + NOT_RUN.length).toBe(examples.length);
}, 30_000);
