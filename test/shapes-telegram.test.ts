// The Bot API's published contract (@grammyjs/types) as the Telegram connector and fake hold to
// it: the type-level checks below fail `tsc` when they stop holding; the runtime tests show the
// fake refusing a call the Bot API refuses, and the connector reading the Bot API's error
// envelope {ok: false, error_code, description, parameters}
// (https://core.telegram.org/bots/api#making-requests, https://core.telegram.org/bots/api#responseparameters).
import { describe, expect, test } from 'bun:test';
import type { ApiError, InputMediaAudio, InputMediaDocument, InputMediaPhoto, InputMediaVideo, Opts } from '@grammyjs/types';
import type { Static } from '@sinclair/typebox';
import { failureCodeOf } from '../platforms/failure-class.ts';
import { createTelegramConnector } from '../platforms/telegram.ts';
import {
  type InputMediaAudioSchema,
  type InputMediaDocumentSchema,
  type InputMediaPhotoSchema,
  type InputMediaVideoSchema,
  PUBLIC_CHANNEL,
  type SendFileSchema,
  type SendMediaGroupSchema,
  type SendMessageSchema,
  type SendVideoSchema,
  startFakeTelegram,
  type FakeTelegram,
  telegramRequest,
  callBot,
} from './fakes/telegram.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';
import { agrees, type Equals } from './harness/type-checks.ts';

/** Files go up as multipart parts; an album item names its part as text (attach://<part>). */
type Params = Opts<File>;
type Flags = 'chat_id' | 'disable_notification' | 'protect_content';

// The fake's schemas describe exactly the package's types (of the parameters they check).
agrees<Equals<Static<typeof SendMessageSchema>, Pick<Params['sendMessage'], Flags | 'text'>>>();
agrees<Equals<Static<typeof SendFileSchema>, Pick<Params['sendPhoto'], Flags | 'caption'>>>();
agrees<Equals<Static<typeof SendFileSchema>, Pick<Params['sendAnimation'], Flags | 'caption'>>>();
agrees<Equals<Static<typeof SendFileSchema>, Pick<Params['sendAudio'], Flags | 'caption'>>>();
agrees<Equals<Static<typeof SendFileSchema>, Pick<Params['sendDocument'], Flags | 'caption'>>>();
agrees<Equals<Static<typeof SendVideoSchema>, Pick<Params['sendVideo'], Flags | 'caption' | 'supports_streaming'>>>();
agrees<Equals<Static<typeof SendMediaGroupSchema>, Pick<Params['sendMediaGroup'], Flags>>>();
agrees<
  Equals<
    Static<typeof InputMediaPhotoSchema>,
    Pick<InputMediaPhoto<never>, 'type' | 'media' | 'caption' | 'show_caption_above_media' | 'has_spoiler'>
  >
>();
agrees<
  Equals<
    Static<typeof InputMediaVideoSchema>,
    Pick<
      InputMediaVideo<never>,
      'type' | 'media' | 'caption' | 'show_caption_above_media' | 'has_spoiler' | 'width' | 'height' | 'duration' | 'supports_streaming'
    >
  >
>();
agrees<
  Equals<
    Static<typeof InputMediaAudioSchema>,
    Pick<InputMediaAudio<never>, 'type' | 'media' | 'caption' | 'duration' | 'performer' | 'title'>
  >
>();
agrees<
  Equals<
    Static<typeof InputMediaDocumentSchema>,
    Pick<InputMediaDocument<never>, 'type' | 'media' | 'caption' | 'disable_content_type_detection'>
  >
>();

// The types the connector builds its calls with refuse what the Bot API does not take.
const photo = new File([], 'a.png', { type: 'image/png' });
export const messageChecks: Params['sendMessage'][] = [
  {
    chat_id: PUBLIC_CHANNEL.id,
    text: 'hi',
    // @ts-expect-error replaced by link_preview_options (Bot API 7.0)
    disable_web_page_preview: true,
  },
  {
    chat_id: PUBLIC_CHANNEL.id,
    text: 'hi',
    // @ts-expect-error parse_mode is Markdown, MarkdownV2 or HTML
    parse_mode: 'Markdown3',
  },
];
export const photoCheck: Params['sendPhoto'] = {
  chat_id: PUBLIC_CHANNEL.id,
  photo,
  // @ts-expect-error supports_streaming is sendVideo's, not sendPhoto's
  supports_streaming: true,
};
export const albumCheck: InputMediaPhoto<File> = {
  // @ts-expect-error an album item's type is photo, video, audio, document or live_photo; a GIF cannot be one
  type: 'animation',
  media: 'attach://file0',
};

const fake = perTest(startFakeTelegram);
/** A Bot API method called directly; its answer compared whole with the Bot API's. */
const call = (f: FakeTelegram, method: string, body: FormData | Record<string, unknown>) => callBot<unknown>(f, method, body);

const request = telegramRequest;

describe('fake Telegram refuses what breaks the published shape', () => {
  const refusal = (description: string): { status: number; body: ApiError } => ({
    status: 400,
    body: { ok: false, error_code: 400, description },
  });

  test('a required parameter missing: 400 Bad Request, the content read before the chat', async () => {
    const f = await fake();
    expect(await call(f, 'sendMessage', {})).toEqual(refusal('Bad Request: message text is empty'));
    expect(await call(f, 'sendMessage', { chat_id: PUBLIC_CHANNEL.id })).toEqual(refusal('Bad Request: message text is empty'));
    expect(await call(f, 'sendMessage', { text: 'hi' })).toEqual(refusal('Bad Request: chat_id is empty'));
    expect(await call(f, 'sendMessage', { chat_id: PUBLIC_CHANNEL.id, text: ' \n ' })).toEqual(
      refusal('Bad Request: text must be non-empty'),
    );
    expect(await call(f, 'sendPhoto', { caption: 'hi' })).toEqual(refusal('Bad Request: there is no photo in the request'));
    expect(await call(f, 'sendMediaGroup', { chat_id: PUBLIC_CHANNEL.id })).toEqual(refusal('Bad Request: parameter "media" is required'));
    expect(f.messages).toHaveLength(0);
  });

  test('a flag outside its published type: the fake refuses it (the Bot API reads it as false)', async () => {
    const f = await fake();
    expect(await call(f, 'sendMessage', { chat_id: PUBLIC_CHANNEL.id, text: 'hi', disable_notification: 'maybe' })).toEqual(
      refusal("Bad Request: can't parse disable_notification"),
    );
    expect(f.messages).toHaveLength(0);
  });

  test('a body the server cannot read: a bare 400 with an empty body', async () => {
    const f = await fake();
    for (const body of ['{"chat_id": ', '[1, 2]']) {
      const res = await fetch(`${f.url}/bot${f.token}/sendMessage`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect([res.status, await res.text()]).toEqual([400, '']);
    }
    expect(f.messages).toHaveLength(0);
  });

  test('an album the Bot API or TDLib refuses: 400 Bad Request', async () => {
    const f = await fake();
    const png = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' });
    const album = (media: string, parts = ['a', 'b']) => {
      const form = new FormData();
      form.append('chat_id', String(PUBLIC_CHANNEL.id));
      form.append('media', media);
      for (const part of parts) form.append(part, png, `${part}.png`);
      return form;
    };
    const photo = (part: string, more: Record<string, unknown> = {}) => ({ type: 'photo', media: `attach://${part}`, ...more });
    const cases: [string, string][] = [
      ['[{"type": "photo"', "Bad Request: can't parse media JSON object"],
      ['{"type": "photo"}', 'Bad Request: expected an Array of InputMedia'],
      ['[]', 'Bad Request: there are no messages to send'],
      [JSON.stringify(Array.from({ length: 11 }, () => photo('a'))), 'Bad Request: too many messages to send as an album'],
      [
        JSON.stringify([photo('a', { has_spoiler: 'yes' }), photo('b')]),
        'Bad Request: can\'t parse InputMedia: Field "has_spoiler" must be of type Boolean',
      ],
      [
        JSON.stringify([photo('a', { caption: true }), photo('b')]),
        'Bad Request: can\'t parse InputMedia: Field "caption" must be of type String',
      ],
      [
        JSON.stringify([{ type: 'video', media: 'attach://a', width: 'wide' }, photo('b')]),
        'Bad Request: can\'t parse InputMedia: Field "width" must be a valid Number',
      ],
      [JSON.stringify([{ media: 'attach://a' }, photo('b')]), 'Bad Request: can\'t parse InputMedia: Can\'t find field "type"'],
      [JSON.stringify([photo('a'), photo('missing')]), "Bad Request: can't parse InputMedia: media not found"],
      [JSON.stringify([photo('a'), { type: 'photo' }]), "Bad Request: can't parse InputMedia: media not found"],
      [JSON.stringify([photo('a'), 'b']), "Bad Request: can't parse InputMedia: expected an Object"],
      [
        JSON.stringify([{ type: 'animation', media: 'attach://a' }, photo('b')]),
        'Bad Request: can\'t parse InputMedia: type "animation" can\'t be used in sendMediaGroup',
      ],
      [
        JSON.stringify([{ type: 'sticker', media: 'attach://a' }, photo('b')]),
        'Bad Request: can\'t parse InputMedia: type "sticker" is unsupported',
      ],
      [JSON.stringify([photo('a'), { type: 'audio', media: 'attach://b' }]), "Bad Request: audio can't be mixed with other media types"],
      [
        JSON.stringify([photo('a', { show_caption_above_media: true }), photo('b')]),
        'Bad Request: parameter show_caption_above_media must be the same for all messages',
      ],
    ];
    for (const [media, description] of cases)
      expect([media, await call(f, 'sendMediaGroup', album(media))]).toEqual([media, refusal(description)]);

    // A file that fails while sending fails the whole album, named by its place.
    const failed = (place: number, error: string) => `Bad Request: failed to send message #${place} with the error message "${error}"`;
    const url = album(JSON.stringify([photo('a'), { type: 'photo', media: 'https://example.com/b.png' }]), ['a']);
    expect(await call(f, 'sendMediaGroup', url)).toEqual(refusal(failed(2, 'Wrong file identifier/HTTP URL specified')));
    const unreadable = album(JSON.stringify([photo('a'), photo('b')]), ['a']);
    unreadable.append('b', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'b.png');
    expect(await call(f, 'sendMediaGroup', unreadable)).toEqual(refusal(failed(2, 'IMAGE_PROCESS_FAILED')));
    expect(f.messages).toHaveLength(0);
  });

  test('an album of one item goes out as a lone message', async () => {
    const f = await fake();
    const form = new FormData();
    form.append('chat_id', String(PUBLIC_CHANNEL.id));
    form.append('media', JSON.stringify([{ type: 'photo', media: 'attach://a' }]));
    form.append('a', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'a.png');
    const res = await call(f, 'sendMediaGroup', form);
    expect(res.status).toBe(200);
    expect(f.messages.map((m) => [m.kind, m.media_group_id])).toEqual([['photo', undefined]]);
  });

  test('parameters the Bot API does not know are ignored, as the Bot API ignores them; form text is read as typed', async () => {
    const f = await fake();
    const res = await call(f, 'sendMessage', {
      chat_id: String(PUBLIC_CHANNEL.id),
      text: 'hi',
      flavour: 'vanilla',
      protect_content: 'true',
    });
    expect(res.status).toBe(200);
    expect(f.messages.map((m) => [m.text, m.protect_content])).toEqual([['hi', true]]);
  });
});

describe('Telegram connector reads the documented error envelope', () => {
  const connector = (f: FakeTelegram) => createTelegramConnector({ baseUrl: f.url, timeoutMs: 2_000 });

  test('flood control: 429 with parameters.retry_after → transient, rate_limited', async () => {
    const f = await fake();
    const body: ApiError = { ok: false, error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } };
    f.failNext(1, { status: 429, body });
    const err = await failure(connector(f).publish(request(f)));
    expect(err).toMatchObject({
      kind: 'transient',
      message: 'Telegram 429: Too Many Requests: retry after 7',
      opts: { status: 429, platformCode: '429', retryAfterMs: 7_000 },
    });
    expect(failureCodeOf('TELEGRAM', err)).toBe('rate_limited');
  });

  test('parameters.migrate_to_chat_id: followed once; a second move is reported with the new chat id', async () => {
    const f = await fake();
    const moved = (to: number): ApiError => ({
      ok: false,
      error_code: 400,
      description: 'Bad Request: group chat was upgraded to a supergroup chat',
      parameters: { migrate_to_chat_id: to },
    });
    f.failNext(1, { status: 400, body: moved(-1004444444444) });
    f.failNext(1, { status: 400, body: moved(-1005555555555) });
    const err = await failure(connector(f).publish(request(f)));
    expect(f.requests.map((r) => r.chatId)).toEqual([String(PUBLIC_CHANNEL.id), '-1004444444444']);
    expect(err).toMatchObject({
      kind: 'permanent',
      message:
        "Telegram 400: Bad Request: group chat was upgraded to a supergroup chat (the chat is now -1005555555555; update the channel's chat id)",
      opts: { status: 400, platformCode: '400' },
    });
    expect(failureCodeOf('TELEGRAM', err)).toBe('rejected_content');
  });

  test('403 Forbidden → reauth_required; 400 Bad Request → rejected_content, with the description', async () => {
    const f = await fake();
    f.kicked.add(PUBLIC_CHANNEL.id);
    const kicked = await failure(connector(f).publish(request(f)));
    expect(kicked).toMatchObject({ kind: 'reauth', message: 'Telegram 403: Forbidden: bot was kicked from the channel chat' });
    expect(failureCodeOf('TELEGRAM', kicked)).toBe('reauth_required');

    const lost = await failure(
      connector(f).publish({
        ...request(f),
        idempotencyKey: 'post-2:channel-1',
        credentials: { botToken: f.token, chatId: '-1000000000001' },
      }),
    );
    expect(lost).toMatchObject({ kind: 'permanent', message: 'Telegram 400: Bad Request: chat not found', opts: { platformCode: '400' } });
    expect(failureCodeOf('TELEGRAM', lost)).toBe('rejected_content');
  });

  test('a bare 400 with an empty body (a request the server could not read) → rejected_content', async () => {
    const f = await fake();
    f.failNext(1, { status: 400, body: '' });
    const err = await failure(connector(f).publish(request(f)));
    expect(err).toMatchObject({ kind: 'permanent', message: 'Telegram 400: HTTP 400', opts: { status: 400, platformCode: '400' } });
    expect(failureCodeOf('TELEGRAM', err)).toBe('rejected_content');
  });
});
