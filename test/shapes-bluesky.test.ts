// The Bluesky connector held to the lexicons @atproto/api publishes (app.bsky.feed.post and its
// embeds): the types it builds its records with refuse what the lexicons do not take (the
// type-level checks below fail `tsc` when they stop refusing), and the PDS, Bluesky's own server
// rather than a fake, refuses a record that breaks a lexicon with 400 InvalidRequest, while the
// records the connector writes (text with a mention, images, a video, a reply) pass.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type AppBskyEmbedImages, type AppBskyEmbedVideo, type AppBskyFeedPost, AtpAgent, type BlobRef, XRPCError } from '@atproto/api';
import sharp from 'sharp';
import { createBlueskyConnector } from '../platforms/bluesky.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { LOCAL_PDS_CONNECTOR, pds, publishRequest, stopPds, type TestAccount, type TestPds } from './harness/pds.ts';

let p: TestPds;
beforeAll(async () => {
  p = await pds();
}, 120_000);
afterAll(stopPds);

/** Stands for an uploaded blob in the type-level checks. */
const blob = {} as BlobRef;
const createdAt = '2026-11-29T12:00:00.000Z';
const ref = { uri: 'at://did:plc:abc/app.bsky.feed.post/3k', cid: 'bafyrei' };

// The types the connector builds its records with refuse what the lexicons do not take. (A post
// record itself is open, `[k: string]: unknown`, as the lexicon lets a record carry more fields;
// its own fields and every embed are checked.)
export const postChecks: AppBskyFeedPost.Record[] = [
  {
    $type: 'app.bsky.feed.post',
    // @ts-expect-error the text is a string
    text: 42,
    createdAt,
  },
  // @ts-expect-error createdAt is required
  { $type: 'app.bsky.feed.post', text: 'hi' },
  {
    $type: 'app.bsky.feed.post',
    text: 'hi',
    createdAt,
    // @ts-expect-error a reply names its parent as well as its root
    reply: { root: ref },
  },
  {
    $type: 'app.bsky.feed.post',
    text: 'hi',
    createdAt,
    // @ts-expect-error langs is a list of languages
    langs: 'en',
  },
];
export const imageChecks: AppBskyEmbedImages.Image[] = [
  // @ts-expect-error an image's alt text is required (empty when it has none)
  { image: blob },
  {
    image: blob,
    alt: '',
    // @ts-expect-error the lexicon's name is `alt`, not `altText`
    altText: 'a cat',
  },
  {
    image: blob,
    alt: '',
    // @ts-expect-error an aspect ratio's sides are integers, not text
    aspectRatio: { width: '4', height: 3 },
  },
];
export const videoChecks: AppBskyEmbedVideo.Main[] = [
  {
    video: blob,
    // @ts-expect-error captions are a list of {lang, file}, not a text
    captions: 'Hello',
  },
];

const connector = () => createBlueskyConnector(LOCAL_PDS_CONNECTOR);
const request = (acct: TestAccount, over: Partial<PublishRequest> = {}) => publishRequest(p, acct, over);

/** The account signed in through @atproto/api's own client, as a client other than the connector would be. */
async function agentOf(acct: TestAccount): Promise<AtpAgent> {
  const agent = new AtpAgent({ service: p.url });
  await agent.login({ identifier: acct.handle, password: acct.password });
  return agent;
}

/** A createRecord of an app.bsky.feed.post with these fields: the PDS's answer, or its refusal as status, error and message. */
async function createPost(agent: AtpAgent, record: Record<string, unknown>) {
  try {
    await agent.com.atproto.repo.createRecord({
      repo: agent.session!.did,
      collection: 'app.bsky.feed.post',
      record: { $type: 'app.bsky.feed.post', createdAt, ...record },
    });
    return { status: 200 };
  } catch (err) {
    if (!(err instanceof XRPCError)) throw err;
    return { status: err.status, error: err.error, message: err.message };
  }
}

describe('Bluesky published shapes', () => {
  test('the PDS refuses a record that breaks the post lexicon with 400 InvalidRequest naming the path at fault', async () => {
    const acct = await p.newAccount('shape');
    const agent = await agentOf(acct);
    const png = new Uint8Array(
      await sharp({ create: { width: 4, height: 4, channels: 3, background: '#00f' } })
        .png()
        .toBuffer(),
    );
    const image = (await agent.uploadBlob(png, { encoding: 'image/png' })).data.blob;
    const root = (
      await agent.com.atproto.repo.createRecord({ repo: acct.did, collection: 'app.bsky.feed.post', record: { text: 'root', createdAt } })
    ).data;
    const at = (path: string) => `at $.record.${path}`;
    const cases: [Record<string, unknown>, string][] = [
      [{ text: 42 }, `Expected string value type (got 42) ${at('text')}`],
      [{ text: 'x'.repeat(3001) }, `string too big (maximum 3000, got 3001) ${at('text')}`],
      [{ text: '🙂'.repeat(301) }, `grapheme too big (maximum 300, got 301) ${at('text')}`],
      [{ text: 'hi', reply: { root: { uri: root.uri, cid: root.cid } } }, `Missing required key "parent" ${at('reply')}`],
      [{ text: 'hi', langs: 'en' }, `Expected array value type (got "en") ${at('langs')}`],
      [{ text: '', embed: { $type: 'app.bsky.embed.images', images: [{ image }] } }, `Missing required key "alt" ${at('embed.images[0]')}`],
    ];
    for (const [record, message] of cases) {
      expect(await createPost(agent, record)).toEqual({
        status: 400,
        error: 'InvalidRequest',
        message: `Invalid app.bsky.feed.post record: ${message}`,
      });
    }
    const listed = await p.xrpc('GET', 'com.atproto.repo.listRecords', { params: { repo: acct.did, collection: 'app.bsky.feed.post' } });
    expect(listed.body.records.map((r: { value: { text: string } }) => r.value.text)).toEqual(['root']);
  });

  test('what the connector writes passes the lexicon: text with a mention, images with and without alt text, a reply', async () => {
    const acct = await p.newAccount('shape');
    const other = await p.newAccount('mention');
    const c = connector();
    const png = new Uint8Array(
      await sharp({ create: { width: 6, height: 4, channels: 3, background: '#0f0' } })
        .png()
        .toBuffer(),
    );
    const image = (id: string, altText: string | null): MediaRef => ({
      id,
      type: 'image',
      mimeType: 'image/png',
      fileName: `${id}.png`,
      altText,
      read: async () => png,
    });
    const first = await c.publish(request(acct, { text: `Hello @${other.handle}` }));
    await c.publish(request(acct, { text: 'Two images', media: [image('a', 'A green square'), image('b', null)] }));
    await c.publish(request(acct, { text: 'A reply', replyTo: { root: first, parent: first } }));
    const listed = await p.xrpc('GET', 'com.atproto.repo.listRecords', { params: { repo: acct.did, collection: 'app.bsky.feed.post' } });
    const records = new Map((listed.body.records as { value: Record<string, unknown> }[]).map((r) => [r.value.text, r.value]));
    // Each record carries only the lexicon's fields it uses: nothing left undefined is written.
    expect([...records].map(([text, r]) => [text, Object.keys(r).sort()]).sort()).toEqual([
      ['A reply', ['$type', 'createdAt', 'reply', 'text']],
      [`Hello @${other.handle}`, ['$type', 'createdAt', 'facets', 'text']],
      ['Two images', ['$type', 'createdAt', 'embed', 'text']],
    ]);
    expect((records.get('Two images')!.embed as { images: { alt: string }[] }).images.map((i) => i.alt)).toEqual(['A green square', '']);
  });
});
