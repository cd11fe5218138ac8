// The Pinterest fake held to the API v5 reference (POST /v5/pins): a body with a field, type,
// length or media_source the reference does not allow is refused as Pinterest refuses it, 400
// `{"code": 1, "message": "..."}`; what the connector sends passes.
import { afterEach, describe, expect, test } from 'bun:test';
import { createPinterestConnector } from '../platforms/pinterest.ts';
import type { PublishRequest } from '../platforms/types.ts';
import { BOARD_ID, type FakePinterest, startFakePinterest } from './fakes/pinterest.ts';

const fakes: FakePinterest[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakePinterest> {
  const f = await startFakePinterest();
  fakes.push(f);
  return f;
}

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

  test('what the connector sends passes the fake’s schema (an image Pin with a title and a link)', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: { title: 'Red squares', link: 'https://example.com/red' } }));
    expect(f.pins.map((p) => [p.boardId, p.title, p.link, p.altText])).toEqual([
      [BOARD_ID, 'Red squares', 'https://example.com/red', 'A red square'],
    ]);
  });
});
