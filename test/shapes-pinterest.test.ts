// Pinterest API v5's published request and answer shapes (Pinterest publishes no typed SDK, so
// platforms/contracts/pinterest.ts holds them, written from the reference) as the connector and
// the fake hold to them: the type-level checks below fail `tsc` when the contract's types stop
// refusing what Pinterest refuses, or stop naming an answer's fields as Pinterest does; the
// runtime tests show the fake refusing a POST /v5/pins or POST /v5/media body with a field, type,
// length or media_source the reference does not allow as Pinterest refuses it, 400
// `{"code": 1, "message": "..."}`, what the connector sends passing, and the fake's answers to the
// connector's flows holding to the answer schemas.
import { describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  BoardPinsList,
  BoardsList,
  type CreatePinBody,
  ErrorAnswer,
  Media,
  MediaUpload,
  Pin,
  PinAnalytics,
  RefreshTokenAnswer,
  type RegisterMediaBody,
} from '../platforms/contracts/pinterest.ts';
import type { Answer } from '../platforms/json.ts';
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

// The answer types name Pinterest's fields with their types: reading or writing one it does not send fails.
export function answerReads(pin: Answer<Pin>, upload: Answer<MediaUpload>, media: Answer<Media>, page: Answer<BoardPinsList>) {
  return [
    // @ts-expect-error a Pin's text is `description`; the answer has no `caption`
    pin.caption,
    // @ts-expect-error the registration's id is `media_id`, not `id`
    upload.id,
    // @ts-expect-error the upload's state is `status`, not `state`
    media.state,
    // @ts-expect-error the next page's cursor is `bookmark`, not `cursor`
    page.cursor,
  ];
}
export const mediaAnswers: Media[] = [
  // @ts-expect-error "done" is no media status (registered, processing, succeeded, failed)
  { media_id: '1', media_type: 'video', status: 'done' },
];
export const errorAnswers: ErrorAnswer[] = [
  // @ts-expect-error the error code is a number
  { code: '1', message: 'Invalid parameters.' },
];
export const pinAnswers: Pin[] = [
  // @ts-expect-error a Pin's id is a string of digits, not a number
  { id: 1009213841 },
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

  test('the fake’s answers to the connector’s flows hold to the answer schemas (Pin, media, boards, analytics, token, errors)', async () => {
    const f = await fake();
    const bad: string[] = [];
    const holds = (what: string, schema: TSchema, body: unknown) => {
      if (!Value.Check(schema, body)) bad.push(`${what}: ${JSON.stringify([...Value.Errors(schema, body)].map((e) => e.path))}`);
    };
    const data = Buffer.from(await png()).toString('base64');

    // The Pin create answer (201), and the same Pin in its board's list.
    const made = await createPin(f, {
      board_id: BOARD_ID,
      description: 'A red square',
      media_source: { source_type: 'image_base64', content_type: 'image/png', data },
    });
    expect([made.status, typeof (made.body as unknown as Pin).id]).toEqual([201, 'string']);
    holds('pin create', Pin, made.body);
    const id = (made.body as unknown as Pin).id;

    // The video upload: registration, the S3 form, the state polled until it succeeds.
    const reg = await call(f, 'POST', '/v5/media', { media_type: 'video' });
    expect(reg.status).toBe(201);
    holds('media registration', MediaUpload, reg.body);
    const upload = reg.body as MediaUpload;
    const form = new FormData();
    for (const [k, v] of Object.entries(upload.upload_parameters ?? {})) form.append(k, String(v));
    form.append('file', new Blob([new TextEncoder().encode('video bytes')], { type: 'video/mp4' }), 'clip.mp4');
    expect((await fetch(upload.upload_url ?? '', { method: 'POST', body: form })).status).toBe(204);
    const states: unknown[] = [];
    for (let i = 0; i < 3; i++) states.push((await call(f, 'GET', `/v5/media/${upload.media_id}`)).body);
    expect(states.map((m) => (m as Media).status)).toEqual(['processing', 'succeeded', 'succeeded']);
    for (const m of states) holds('media state', Media, m);

    // What findPublished, readCapabilities and readMetrics read.
    holds('board pins', BoardPinsList, (await call(f, 'GET', `/v5/boards/${BOARD_ID}/pins?page_size=100`)).body);
    holds('boards', BoardsList, (await call(f, 'GET', '/v5/boards?page_size=250')).body);
    const q = new URLSearchParams({
      start_date: new Date().toISOString().slice(0, 10),
      end_date: new Date().toISOString().slice(0, 10),
      metric_types: 'IMPRESSION,SAVE,OUTBOUND_CLICK',
    });
    holds('analytics', PinAnalytics, (await call(f, 'GET', `/v5/pins/${id}/analytics?${q}`)).body);

    // The refresh-token answer, and errors: an invalid body, a board that is not there, a bad token, a spent grant.
    const refresh = await fetch(`${f.url}/v5/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${btoa('pin-client:pin-secret')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'pinr_1' }),
    });
    holds('token', RefreshTokenAnswer, await refresh.json());
    const spent = await fetch(`${f.url}/v5/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${btoa('pin-client:pin-secret')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'pinr_1' }),
    });
    expect(spent.status).toBe(401);
    holds('401 grant', ErrorAnswer, await spent.json());
    holds('400', ErrorAnswer, (await createPin(f, { board_id: BOARD_ID })).body);
    holds('404', ErrorAnswer, (await call(f, 'GET', '/v5/boards/1/pins')).body);
    holds('401', ErrorAnswer, (await call(f, 'GET', '/v5/boards', undefined, 'pina_unknown')).body);
    expect(bad).toEqual([]);
  });
});

/** A raw call to the API, as the connector makes it. */
async function call(
  f: FakePinterest,
  method: string,
  path: string,
  body?: unknown,
  token = 'pina_good',
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}
