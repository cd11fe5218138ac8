// The generate scope (services/generate.ts, api/routes/generate.ts) against a local fake
// OpenAI-compatible server (test/fakes/openai.ts) that writes a draft far too long the first
// time: every draft fits its channel's rules as create counts them — the drafts pass
// POST /v1/posts/validate unchanged.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaItem } from '../db/entities/index.ts';
import { chatCompletionsUrl } from '../lib/config.ts';
import { measureChannelText } from '../platforms/text-length.ts';
import { cutToFit, parseDraftReply } from '../services/generate.ts';
import { createDiskStorage } from '../storage/disk.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { filler, startFakeOpenAI, type FakeOpenAI } from './fakes/openai.ts';
import { call, makeChannel, makeKey, makeOrg, readyMedia as readyMediaIn, testApp } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';

let fake: FakeOpenAI;
let storage: ObjectStorage;
let dir: string;
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  fake = startFakeOpenAI({ apiKey: 'gen-key' });
  dir = mkdtempSync(join(tmpdir(), 'postpilot-generate-'));
  storage = createDiskStorage({ root: dir, publicBaseUrl: 'http://localhost', signingKey: randomBytes(32) });
  app = await testApp({
    storage,
    generate: { url: chatCompletionsUrl(fake.url), model: 'test-model', apiKey: 'gen-key', timeoutMs: 500 },
    vision: { url: chatCompletionsUrl(fake.url), model: 'test-vision', apiKey: 'gen-key' },
  });
});
afterAll(() => {
  fake?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const readyMedia = (organizationId: string, opts: Parameters<typeof readyMediaIn>[2] = {}) => readyMediaIn(storage, organizationId, opts);

describe('POST /v1/generate/post', () => {
  test('a draft per channel, too long at first, fits every channel as create counts — validate accepts them all', async () => {
    fake.behaviour = 'overshoot-once';
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const x = await makeChannel(org.id, 'X');
    const x2 = await makeChannel(org.id, 'X', { name: 'second X' });
    const bluesky = await makeChannel(org.id, 'BLUESKY');
    const mastodon = await makeChannel(org.id, 'MASTODON', { maxChars: 120 });
    const reddit = await makeChannel(org.id, 'REDDIT');
    const instagram = await makeChannel(org.id, 'INSTAGRAM');
    const channels = [x, x2, bluesky, mastodon, reddit, instagram];
    const media = await readyMedia(org.id, { description: 'A blue square.' });
    const before = fake.requests.length;

    const r = await call(app, 'POST', '/v1/generate/post', {
      key,
      body: { prompt: 'Announce our new planner', tone: 'friendly', channelIds: channels.map((c) => c.id), mediaIds: [media] },
    });
    expect(r.status).toBe(200);
    const drafts = r.body.data as any[];
    expect(drafts.map((d) => d.channelId)).toEqual(channels.map((c) => c.id));
    for (const [i, d] of drafts.entries()) {
      const c = channels[i]!;
      expect(d.platform).toBe(c.platform);
      expect(d.maxChars).toBe(c.rules.maxChars);
      // Counted as create counts (platforms/text-length.ts), and within the limit.
      expect(d.characters).toBe(measureChannelText({ platform: c.platform }, d.content).length);
      expect(d.characters).toBeLessThanOrEqual(c.rules.maxChars);
      expect(d.content.length).toBeGreaterThan(0);
      // The first answer was too long, the corrected one fits: nothing had to be cut.
      expect(d.truncated).toBe(false);
    }
    const redditDraft = drafts[4];
    expect(redditDraft.reddit.title.length).toBeGreaterThan(0);
    expect(redditDraft.reddit.characters).toBeLessThanOrEqual(300);
    expect(redditDraft.missingFields).toEqual(['reddit.subreddit']);
    expect(drafts[0].reddit).toBeNull();
    expect(drafts[5].missingFields).toEqual([]); // INSTAGRAM requires media, and has it
    // The two X channels count alike: one draft for both. Five targets, each answered twice.
    expect(drafts[1].content).toBe(drafts[0].content);
    const calls = fake.requests.slice(before);
    expect(calls.length).toBe(10);
    for (const c of calls) {
      expect(c.authorization).toBe('Bearer gen-key');
      expect(c.body.model).toBe('test-model');
    }
    // The correction round tells the model its count and the limit; the brief carries tone and media.
    const corrections = calls.filter((c) => c.body.messages.some((m) => m.role === 'assistant'));
    expect(corrections.length).toBe(5);
    const xCorrection = corrections.find((c) => String(c.body.messages[0]!.content).includes('X account'))!;
    expect(String(xCorrection.body.messages.at(-1)!.content)).toMatch(/over the limit of 280/);
    expect(String(calls[0]!.body.messages[1]!.content)).toContain('Tone: friendly');
    expect(String(calls[0]!.body.messages[1]!.content)).toContain('A blue square.');

    // Straight into create's own checks: every draft is accepted as it is.
    const byPlatform = Object.fromEntries(drafts.map((d) => [d.platform, d.content]));
    const valid = await call(app, 'POST', '/v1/posts/validate', {
      key,
      body: {
        content: byPlatform.X,
        contentByPlatform: byPlatform,
        channelIds: channels.map((c) => c.id),
        mediaIds: [media],
        reddit: { subreddit: 'planners', title: redditDraft.reddit.title },
      },
    });
    expect(valid.status).toBe(200);
    expect(valid.body.valid).toBe(true);
  });

  test('still too long after the correction: cut at a grapheme boundary and flagged', async () => {
    fake.behaviour = 'always-long';
    try {
      const org = await makeOrg();
      const { key } = await makeKey(org.id, { scopes: ['generate'] });
      const x = await makeChannel(org.id, 'X');
      const mastodon = await makeChannel(org.id, 'MASTODON', { maxChars: 50 });
      const reddit = await makeChannel(org.id, 'REDDIT');
      const instagram = await makeChannel(org.id, 'INSTAGRAM');
      const r = await call(app, 'POST', '/v1/generate/post', {
        key,
        body: { prompt: 'Announce it', channelIds: [x.id, mastodon.id, reddit.id, instagram.id] },
      });
      expect(r.status).toBe(200);
      // Where the model's text may be cut: between whole graphemes (no emoji family split).
      const long = filler(100_000);
      const boundaries = new Set<number>();
      for (const s of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(long)) boundaries.add(s.index);
      for (const [i, c] of [x, mastodon, reddit, instagram].entries()) {
        const d = r.body.data[i];
        expect({ platform: c.platform, truncated: d.truncated }).toEqual({ platform: c.platform, truncated: true });
        expect(measureChannelText({ platform: c.platform }, d.content).length).toBeLessThanOrEqual(c.rules.maxChars);
        expect(d.characters).toBeLessThanOrEqual(c.rules.maxChars);
        // A prefix of what the model wrote, ended at a grapheme boundary.
        const whole = long.startsWith(d.content) && boundaries.has(d.content.length);
        expect({ platform: c.platform, whole }).toEqual({ platform: c.platform, whole: true });
      }
      // REDDIT's too-long title is cut to 300 too.
      expect(r.body.data[2].reddit.characters).toBeLessThanOrEqual(300);
      expect(r.body.data[2].reddit.characters).toBeGreaterThan(250);
      expect(r.body.data[3].missingFields).toEqual(['mediaIds']);
    } finally {
      fake.behaviour = 'overshoot-once';
    }
  });

  test('scopes, channel-limited keys and other organizations are refused as create refuses them', async () => {
    const org = await makeOrg();
    const other = await makeOrg();
    const mine = await makeChannel(org.id, 'X');
    const theirs = await makeChannel(other.id, 'X');
    const noGenerate = (await makeKey(org.id, { scopes: ['read', 'publish'] })).key;
    const r1 = await call(app, 'POST', '/v1/generate/post', { key: noGenerate, body: { prompt: 'x', channelIds: [mine.id] } });
    expect(r1.status).toBe(403);
    expect(r1.body.error).toMatchObject({ code: 'forbidden_scope', details: { requiredScope: 'generate' } });
    const { key } = await makeKey(org.id);
    const r2 = await call(app, 'POST', '/v1/generate/post', { key, body: { prompt: 'x', channelIds: [theirs.id] } });
    expect(r2.status).toBe(422);
    expect(r2.body.error.details.fields[0]).toMatchObject({ path: 'channelIds', message: `unknown channel ${theirs.id}` });
    const elsewhere = await makeChannel(org.id, 'BLUESKY');
    const limited = (await makeKey(org.id, { channels: [elsewhere.id] })).key;
    const r3 = await call(app, 'POST', '/v1/generate/post', { key: limited, body: { prompt: 'x', channelIds: [mine.id] } });
    expect(r3.status).toBe(403);
    expect(r3.body.error).toMatchObject({ code: 'forbidden_scope', details: { channelIds: [mine.id] } });
    const r4 = await call(app, 'POST', '/v1/generate/post', { key, body: { prompt: '', channelIds: [mine.id], extra: 1 } });
    expect(r4.status).toBe(422);
  });

  test('a generator that fails or is slow: 503 with Retry-After; none configured: 501 naming the settings', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const x = await makeChannel(org.id, 'X');
    for (const behaviour of ['fail-500', 'slow'] as const) {
      fake.behaviour = behaviour;
      try {
        const r = await call(app, 'POST', '/v1/generate/post', { key, body: { prompt: 'x', channelIds: [x.id] } });
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('5');
        expect(r.body.error.code).toBe('internal_error');
        expect(r.body.error.message).toContain(behaviour === 'slow' ? 'no answer within 500 ms' : 'HTTP 500');
      } finally {
        fake.behaviour = 'overshoot-once';
      }
    }
    const bare = await testApp();
    const r = await call(bare, 'POST', '/v1/generate/post', { key, body: { prompt: 'x', channelIds: [x.id] } });
    expect(r.status).toBe(501);
    expect(r.body.error.code).toBe('internal_error');
    expect(r.body.error.message).toContain('GENERATE_API_URL');
    expect(r.body.error.details.settings).toContain('GENERATE_MODEL');
    const alt = await call(bare, 'POST', '/v1/generate/alt-text', { key, body: { mediaId: 'med_x' } });
    expect(alt.status).toBe(501);
    expect(alt.body.error.message).toContain('VISION_API_URL');
  });
});

describe('POST /v1/generate/alt-text', () => {
  test('the vision pass describes a ready image; pending, documents and other organizations are refused', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const image = await readyMedia(org.id);
    const before = fake.requests.length;
    const r = await call(app, 'POST', '/v1/generate/alt-text', { key, body: { mediaId: image } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ mediaId: image, altText: fake.description, characters: fake.description.length, truncated: false });
    const sent = fake.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]!.body.model).toBe('test-vision');
    const parts = sent[0]!.body.messages[0]!.content as { type: string; image_url?: { url: string } }[];
    expect(parts.find((p) => p.type === 'image_url')?.image_url?.url).toStartWith('data:image/png;base64,');
    // Nothing changed on the item.
    const row = await (await harness()).orm.em.fork().findOneOrFail(MediaItem, { id: image });
    expect([row.altText, row.description]).toEqual(['a square', null]);

    const pending = await readyMedia(org.id, { status: 'pending' });
    expect((await call(app, 'POST', '/v1/generate/alt-text', { key, body: { mediaId: pending } })).status).toBe(409);
    const pdf = await readyMedia(org.id, { type: 'document' });
    const doc = await call(app, 'POST', '/v1/generate/alt-text', { key, body: { mediaId: pdf } });
    expect(doc.status).toBe(422);
    expect(doc.body.error.details.fields[0].path).toBe('mediaId');
    const stranger = (await makeKey((await makeOrg()).id)).key;
    expect((await call(app, 'POST', '/v1/generate/alt-text', { key: stranger, body: { mediaId: image } })).status).toBe(404);
  });
});

describe('drafting helpers', () => {
  test('cutToFit ends at a grapheme boundary at or under the limit; parseDraftReply takes JSON, fenced JSON or bare text', () => {
    const family = '👨‍👩‍👧';
    const text = `${family}${family}${family}`;
    const graphemes = (s: string) => Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)).length;
    expect(cutToFit(text, 2, graphemes)).toBe(`${family}${family}`);
    expect(cutToFit('abc def', 5, (s) => s.length)).toBe('abc d');
    expect(cutToFit('abc def', 4, (s) => s.length)).toBe('abc');
    expect(parseDraftReply('{"text": "hi"}')).toEqual({ text: 'hi' });
    expect(parseDraftReply('```json\n{"title": "T", "text": "body"}\n```')).toEqual({ title: 'T', text: 'body' });
    expect(parseDraftReply('just words')).toEqual({ text: 'just words' });
  });
});
