// Pinterest API v5's published request shapes (Pinterest publishes no typed SDK, so
// platforms/contracts/pinterest.ts holds them, written from the reference) as the connector and
// the fake hold to them: the type-level checks below fail `tsc` when the contract's types stop
// refusing what Pinterest refuses; the runtime tests show the fake refusing a POST /v5/pins or
// POST /v5/media body with a field, type, length or media_source the reference does not allow as
// Pinterest refuses it, 400 `{"code": 1, "message": "..."}`, and what the connector sends passing.
import { describe, expect, test } from 'bun:test';
import type { CreatePinBody, RegisterMediaBody } from '../platforms/contracts/pinterest.ts';
import { createPinterestConnector } from '../platforms/pinterest.ts';
import type { PublishRequest } from '../platforms/types.ts';
import { BOARD_ID, type FakePinterest, startFakePinterest } from './fakes/pinterest.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakePinterest);

const pin: CreatePinBody = { board_id: BOARD_ID, media_source: { source_type: 'image_url', url: 'https://example.com/a.png' } };

// The types the connector builds its requests with refuse what Pinterest does not take.
export const typeChecks: CreatePinBody[] = [
  {
    ...pin,
    // @ts-expect-error a Pin has no `caption`; its text is `description`
    caption: 'Ten ways to paint a red square',
  },
  {
    ...pin,
    // @ts-expect-error "image_link" is no source_type (image_base64, image_url, video_id, multiple_image_urls)
    media_source: { source_type: 'image_link', url: 'https://example.com/a.png' },
  },
  {
    ...pin,
    // @ts-expect-error image_base64 takes image/jpeg or image/png, not GIF
    media_source: { source_type: 'image_base64', content_type: 'image/gif', data: 'R0lGOD' },
  },
  {
    ...pin,
    // @ts-expect-error a video's media_id is a string of digits, not a number
    media_source: { source_type: 'video_id', media_id: 1009213841 },
  },
];
export const mediaChecks: RegisterMediaBody[] = [
  // @ts-expect-error POST /v5/media registers videos only
  { media_type: 'image' },
];

const connector = (f: FakePinterest) =>
  createPinterestConnector({
    baseUrl: f.url,
    oauth: { clientId: 'pin-client', clientSecret: 'pin-secret' },
    timeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
  });

async function png(): Promise<Uint8Array> {
  const sharp = (await import('sharp')).default;
  return new Uint8Array(
    await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer(),
  );
}

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Ten ways to paint a red square #art',
    media: [{ id: 'img', type: 'image', mimeType: 'image/png', fileName: 'red.png', altText: 'A red square', read: png }],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'pina_good', boardId: BOARD_ID },
    ...over,
  };
}

/** A raw POST /v5/pins, as a client other than the connector would send it. */
async function createPin(f: FakePinterest, body: unknown): Promise<{ status: number; body: { code: number; message: string } }> {
  const res = await fetch(`${f.url}/v5/pins`, {
    method: 'POST',
    headers: { Authorization: 'Bearer pina_good', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { code: number; message: string } };
}

describe('Pinterest published shapes', () => {
  test('the fake refuses a body that breaks the reference with 400 and code 1', async () => {
    const f = await fake();
    const data = Buffer.from(await png()).toString('base64');
    const good = { board_id: BOARD_ID, media_source: { source_type: 'image_base64', content_type: 'image/png', data } };
    const cases: [unknown, string][] = [
      [{ ...good, title: 'x'.repeat(101) }, 'title'],
      [{ ...good, description: 'x'.repeat(801) }, 'description'],
      [{ ...good, alt_text: 'x'.repeat(501) }, 'alt_text'],
      [{ ...good, board_section_id: 'section-1' }, 'board_section_id'],
      [{ ...good, media_source: { ...good.media_source, is_standard: 'yes' } }, 'media_source'],
      [{ ...good, media_source: { source_type: 'image_link', url: 'https://example.com/a.png' } }, 'media_source'],
    ];
    for (const [body, field] of cases) {
      const got = await createPin(f, body);
      expect([got.status, got.body.code, got.body.message.startsWith(field), Object.keys(got.body)]).toEqual([
        400,
        1,
        true,
        ['code', 'message'],
      ]);
    }
    expect(f.pins).toHaveLength(0);
  });

  test('the fake refuses a media registration that breaks the reference with 400 and code 1', async () => {
    const f = await fake();
    const cases: [unknown, string][] = [
      [{ media_type: 'image' }, "media_type: must be 'video'."],
      [{ media_type: 'video', file_name: 'clip.mp4' }, 'file_name: Unexpected property'],
    ];
    for (const [body, message] of cases) {
      const res = await fetch(`${f.url}/v5/media`, {
        method: 'POST',
        headers: { Authorization: 'Bearer pina_good', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect([res.status, await res.json()]).toEqual([400, { code: 1, message }]);
    }
    expect(f.media).toHaveLength(0);
  });

  test('what the connector sends passes the fake’s schemas (an image Pin with a title and a link, a video Pin)', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: { title: 'Red squares', link: 'https://example.com/red' } }));
    const clip = new TextEncoder().encode('video bytes');
    await connector(f).publish(
      request({
        text: 'A red square, moving',
        media: [{ id: 'vid', type: 'video', mimeType: 'video/mp4', fileName: 'red.mp4', altText: null, read: async () => clip }],
      }),
    );
    expect(f.pins.map((p) => [p.boardId, p.title, p.link, p.altText, p.media.type])).toEqual([
      [BOARD_ID, 'Red squares', 'https://example.com/red', 'A red square', 'image'],
      [BOARD_ID, null, null, null, 'video'],
    ]);
  });
});
