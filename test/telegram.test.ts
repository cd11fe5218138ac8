import { describe, expect, test } from 'bun:test';
import { createTelegramConnector } from '../platforms/telegram.ts';
import type { MediaRef } from '../platforms/types.ts';
import {
  BASIC_GROUP,
  PRIVATE_CHAT,
  PRIVATE_SUPERGROUP,
  PUBLIC_CHANNEL,
  startFakeTelegram,
  type FakeTelegram,
  telegramRequest,
  callBot,
} from './fakes/telegram.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeTelegram);

const connector = (f: { url: string }, timeoutMs = 2_000) => createTelegramConnector({ baseUrl: f.url, timeoutMs });

const request = telegramRequest;

let png: Uint8Array | undefined;
async function pngBytes(): Promise<Uint8Array> {
  png ??= new Uint8Array(
    await (await import('sharp'))
      .default({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer(),
  );
  return png;
}

function media(id: string, type: MediaRef['type'], mimeType: string, bytes?: Uint8Array): MediaRef {
  const ext = mimeType.split('/')[1];
  return {
    id,
    type,
    mimeType,
    fileName: `${id}.${ext}`,
    altText: `alt ${id}`,
    read: async () => bytes ?? (type === 'image' ? pngBytes() : new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, id.length])),
  };
}

const image = (id: string) => media(id, 'image', 'image/png');

describe('Telegram publish', () => {
  test('text post to a public channel: sendMessage, t.me/<username>/<id>, date', async () => {
    const f = await fake();
    const result = await connector(f).publish(request(f));

    expect(f.messages).toHaveLength(1);
    const m = f.messages[0]!;
    expect(m).toMatchObject({ method: 'sendMessage', chatId: PUBLIC_CHANNEL.id, text: 'Hello Telegram' });
    expect(result).toEqual({
      platformPostId: String(m.message_id),
      url: `https://t.me/postpilot_news/${m.message_id}`,
      publishedAt: new Date(m.date * 1000).toISOString(),
    });
    expect(f.requests.map((r) => r.method)).toEqual(['sendMessage']);
  });

  test('links: private supergroup t.me/c/<id>, private chat and basic group tg://openmessage, @username chat ids', async () => {
    const f = await fake();
    const c = connector(f);
    const post = (chatId: string, key: string) =>
      c.publish(request(f, { idempotencyKey: key, credentials: { botToken: f.token, chatId } }));

    expect((await post(String(PRIVATE_SUPERGROUP.id), 'a')).url).toBe('https://t.me/c/9876543210/100');
    expect((await post(String(PRIVATE_CHAT.id), 'b')).url).toBe(`tg://openmessage?user_id=${PRIVATE_CHAT.id}&message_id=100`);
    expect((await post(String(BASIC_GROUP.id), 'c')).url).toBe('tg://openmessage?chat_id=4012345678&message_id=100');
    expect((await post('@postpilot_news', 'd')).url).toBe('https://t.me/postpilot_news/100');
  });

  test('one image: sendPhoto multipart with the caption and the real PNG bytes', async () => {
    const f = await fake();
    const bytes = await pngBytes();
    const result = await connector(f).publish(request(f, { media: [image('img-a')] }));

    expect(f.messages).toHaveLength(1);
    expect(f.messages[0]).toMatchObject({
      method: 'sendPhoto',
      caption: 'Hello Telegram',
      kind: 'photo',
      file: { field: 'photo', fileName: 'img-a.png', mimeType: 'image/png', size: bytes.length },
    });
    expect(result.url).toBe(`https://t.me/postpilot_news/${f.messages[0]!.message_id}`);
  });

  test('two images and a video: one sendMediaGroup album, caption on the first item, video streamable', async () => {
    const f = await fake();
    const result = await connector(f).publish(request(f, { media: [image('img-a'), media('clip', 'video', 'video/mp4'), image('img-b')] }));

    expect(f.requests.map((r) => r.method)).toEqual(['sendMediaGroup']);
    expect(f.messages.map((m) => [m.kind, m.caption, m.file?.fileName])).toEqual([
      ['photo', 'Hello Telegram', 'img-a.png'],
      ['video', undefined, 'clip.mp4'],
      ['photo', undefined, 'img-b.png'],
    ]);
    expect(new Set(f.messages.map((m) => m.media_group_id)).size).toBe(1);
    expect(f.messages[1]!.supports_streaming).toBe(true);
    expect(result.platformPostId).toBe(String(f.messages[0]!.message_id));
  });

  test('text over the 1024-character caption limit: the photo without caption, then the text as a message', async () => {
    const f = await fake();
    const text = 'y'.repeat(1500);
    const result = await connector(f).publish(request(f, { text, media: [image('img-a')] }));

    expect(f.messages.map((m) => [m.method, m.caption, m.text?.length])).toEqual([
      ['sendPhoto', undefined, undefined],
      ['sendMessage', undefined, 1500],
    ]);
    expect(result.platformPostId).toBe(String(f.messages[0]!.message_id));
  });

  test('kinds that cannot share an album: photo, document, GIF and MP3 each by their own method, caption on the first', async () => {
    const f = await fake();
    await connector(f).publish(
      request(f, {
        media: [
          image('img-a'),
          media('report', 'document', 'application/pdf'),
          media('loop', 'gif', 'image/gif'),
          media('song', 'audio', 'audio/mpeg'),
        ],
      }),
    );

    expect(f.requests.map((r) => r.method)).toEqual(['sendPhoto', 'sendDocument', 'sendAnimation', 'sendAudio']);
    expect(f.messages.map((m) => m.caption)).toEqual(['Hello Telegram', undefined, undefined, undefined]);
  });

  test('two documents go as a document album; an SVG "image" goes as a document', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { media: [media('a', 'document', 'application/pdf'), media('logo', 'image', 'image/svg+xml')] }));
    expect(f.requests.map((r) => r.method)).toEqual(['sendMediaGroup']);
    expect(f.messages.map((m) => m.kind)).toEqual(['document', 'document']);
  });

  test('a basic group upgraded to a supergroup: the refused send goes to migrate_to_chat_id, once', async () => {
    const f = await fake();
    const upgraded = { id: -1004444444444, type: 'supergroup' as const, title: 'Old group' };
    f.chats.push(upgraded);
    f.migrated.set(BASIC_GROUP.id, upgraded.id);

    const result = await connector(f).publish(request(f, { credentials: { botToken: f.token, chatId: String(BASIC_GROUP.id) } }));
    expect(f.requests.map((r) => r.chatId)).toEqual([String(BASIC_GROUP.id), String(upgraded.id)]);
    expect(f.messages).toHaveLength(1);
    expect(f.messages[0]!.chatId).toBe(upgraded.id);
    expect(result.url).toBe('https://t.me/c/4444444444/100');
  });
});

describe('Telegram never posts twice', () => {
  test('a 502 on the text after the photo went out: the retry sends only the text', async () => {
    const f = await fake();
    let calls = 0;
    // The proxy in front of the Bot API answers the second call (the text message) with a 502.
    const c = createTelegramConnector({
      baseUrl: f.url,
      timeoutMs: 2_000,
      fetch: (async (input: string | URL | Request, init?: RequestInit) => {
        if (++calls === 2) return new Response('<html>502 Bad Gateway</html>', { status: 502 });
        return fetch(input, init);
      }) as typeof fetch,
    });
    const req = request(f, { text: 'z'.repeat(1200), media: [image('img-a')] });

    const err = await failure(c.publish(req));
    expect(err.kind).toBe('transient');
    expect(f.messages.map((m) => m.method)).toEqual(['sendPhoto']);

    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull(); // not complete yet
    const result = await c.publish({ ...req, attempt: 2 });
    expect(f.messages.map((m) => m.method)).toEqual(['sendPhoto', 'sendMessage']);
    expect(result.platformPostId).toBe(String(f.messages[0]!.message_id));
    expect(await c.findPublished!({ ...req, attempt: 3 })).toEqual(result);
  });

  test('findPublished returns a post this process completed; publishing the same key again sends nothing', async () => {
    const f = await fake();
    const c = connector(f);
    const first = await c.publish(request(f));
    expect(await c.findPublished!({ ...request(f), attempt: 2 })).toEqual(first);
    expect(await c.findPublished!(request(f, { idempotencyKey: 'other' }))).toBeNull();
    expect(await c.publish(request(f))).toEqual(first);
    expect(f.messages).toHaveLength(1);
  });

  test('the answer is lost after Telegram posted (accept-then-hang): permanent outcome_unknown, not retried', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const err = await failure(connector(f, 300).publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('outcome_unknown');
    expect(err.message).toBe(
      'Telegram sendMessage timed out after 300 ms; the message may have been posted, so it is not sent again automatically — check the chat',
    );
    expect(err.message).not.toContain(f.token);
    expect(f.messages).toHaveLength(1);
  });

  test('caller abort while waiting → outcome_unknown; aborted before sending → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(f, 10_000).publish(request(f, { signal: AbortSignal.timeout(100) })));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('outcome_unknown');
    expect(err.message).toContain('aborted');

    const gone = AbortSignal.abort();
    expect((await failure(connector(f).publish(request(f, { idempotencyKey: 'k2', signal: gone })))).kind).toBe('transient');
  });
});

describe('Telegram error classes', () => {
  test('revoked bot token (401 Unauthorized) → reauth', async () => {
    const f = await fake();
    f.revokeToken(f.token);
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.opts.status).toBe(401);
    expect(err.message).toBe('Telegram 401: Unauthorized');
  });

  test('malformed bot token (404 Not Found) → reauth; missing chatId → reauth before any request', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { credentials: { botToken: 'not-a-token', chatId: '1' } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Telegram 404: Not Found');

    const missing = await failure(connector(f).publish(request(f, { idempotencyKey: 'k2', credentials: { botToken: f.token } })));
    expect(missing.kind).toBe('reauth');
    expect(f.requests).toHaveLength(1);
  });

  test('bot kicked from the channel (403) → reauth with Telegram description', async () => {
    const f = await fake();
    f.kicked.add(PUBLIC_CHANNEL.id);
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.opts).toMatchObject({ status: 403, platformCode: '403' });
    expect(err.message).toBe('Telegram 403: Forbidden: bot was kicked from the channel chat');
  });

  test('user blocked the bot (403) → reauth', async () => {
    const f = await fake();
    f.kicked.add(PRIVATE_CHAT.id);
    const err = await failure(connector(f).publish(request(f, { credentials: { botToken: f.token, chatId: String(PRIVATE_CHAT.id) } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Telegram 403: Forbidden: bot was blocked by the user');
  });

  test('chat not found, message too long, caption rules → permanent with the Telegram description', async () => {
    const f = await fake();
    const c = connector(f);
    const notFound = await failure(c.publish(request(f, { credentials: { botToken: f.token, chatId: '-1001111' } })));
    expect(notFound.kind).toBe('permanent');
    expect(notFound.message).toBe('Telegram 400: Bad Request: chat not found');

    const tooLong = await failure(c.publish(request(f, { idempotencyKey: 'k2', text: 'x'.repeat(4097) })));
    expect(tooLong.kind).toBe('permanent');
    expect(tooLong.opts.status).toBe(400);
    expect(tooLong.message).toBe('Telegram 400: Bad Request: message is too long');

    const empty = await failure(c.publish(request(f, { idempotencyKey: 'k3', text: '' })));
    expect(empty.message).toBe('Telegram 400: Bad Request: message text is empty');
    expect(f.messages).toHaveLength(0);
  });

  test('bytes Telegram cannot read as a photo → permanent IMAGE_PROCESS_FAILED', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { media: [media('bad', 'image', 'image/png', new Uint8Array([1, 2, 3]))] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Telegram 400: Bad Request: IMAGE_PROCESS_FAILED');
  });

  test('429 with parameters.retry_after → transient, retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } },
    });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(err.message).toBe('Telegram 429: Too Many Requests: retry after 7');
  });

  test('429 with only a Retry-After header → retryAfterMs from it', async () => {
    const f = await fake();
    f.failNext(1, { status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests' }, headers: { 'Retry-After': '3' } });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.opts.retryAfterMs).toBe(3000);
  });

  test('5xx → transient (JSON 500 and an HTML 502 from the proxy)', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: { ok: false, error_code: 500, description: 'Internal Server Error' } });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Telegram 500: Internal Server Error');

    f.failNext(1, { status: 502, body: '<html>502 Bad Gateway</html>' });
    const html = await failure(connector(f).publish(request(f)));
    expect(html.kind).toBe('transient');
    expect(html.opts.status).toBe(502);
    expect(f.messages).toHaveLength(0);
  });

  test('network failure before sending (stopped server, closed port) → transient, token not in the message', async () => {
    const f = await startFakeTelegram();
    await f.stop();
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toStartWith('Telegram sendMessage failed:');
    expect(err.message).not.toContain(f.token);

    const closed = { url: `http://127.0.0.1:${await freePort()}` };
    expect((await failure(connector(closed).publish(request(f)))).kind).toBe('transient');
  });
});

describe('fake Telegram contract', () => {
  test('refuses albums mixing documents with photos, and captions over 1024', async () => {
    const f = await fake();
    const form = new FormData();
    form.append('chat_id', String(PUBLIC_CHANNEL.id));
    form.append(
      'media',
      JSON.stringify([
        { type: 'photo', media: 'attach://a' },
        { type: 'document', media: 'attach://b' },
      ]),
    );
    form.append('a', new Blob([await pngBytes()], { type: 'image/png' }), 'a.png');
    form.append('b', new Blob([new Uint8Array([1])], { type: 'application/pdf' }), 'b.pdf');
    expect(await callBot(f, 'sendMediaGroup', form)).toEqual({
      status: 400,
      body: { ok: false, error_code: 400, description: "Bad Request: document can't be mixed with other media types" },
    });

    const photo = new FormData();
    photo.append('chat_id', String(PUBLIC_CHANNEL.id));
    photo.append('caption', 'c'.repeat(1025));
    photo.append('photo', new Blob([await pngBytes()], { type: 'image/png' }), 'a.png');
    expect((await callBot(f, 'sendPhoto', photo)).body.description).toBe('Bad Request: message caption is too long');
    expect(f.messages).toHaveLength(0);
  });

  test('a wrong field name fails: `message` instead of `text`, `file` instead of `photo`', async () => {
    const f = await fake();
    expect((await callBot(f, 'sendMessage', { chat_id: PUBLIC_CHANNEL.id, message: 'hi' })).body.description).toBe(
      'Bad Request: message text is empty',
    );
    const form = new FormData();
    form.append('chat_id', String(PUBLIC_CHANNEL.id));
    form.append('file', new Blob([await pngBytes()], { type: 'image/png' }), 'a.png');
    expect((await callBot(f, 'sendPhoto', form)).body.description).toBe('Bad Request: there is no photo in the request');
  });

  test('the group upgrade answer carries migrate_to_chat_id', async () => {
    const f = await fake();
    f.migrated.set(BASIC_GROUP.id, -1004444444444);
    expect(await callBot(f, 'sendMessage', { chat_id: BASIC_GROUP.id, text: 'hi' })).toEqual({
      status: 400,
      body: {
        ok: false,
        error_code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        parameters: { migrate_to_chat_id: -1004444444444 },
      },
    });
  });
});

describe('Telegram options', () => {
  const options = { disableNotification: true, protectContent: true };
  const flags = (f: FakeTelegram) => f.messages.map((m) => [m.method, m.disable_notification, m.protect_content]);

  test('disableNotification and protectContent reach sendMessage', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { options }));
    expect(flags(f)).toEqual([['sendMessage', true, true]]);
  });

  test('… a single file, and the long text after it', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { text: 'y'.repeat(1500), media: [image('img-a')], options }));
    expect(flags(f)).toEqual([
      ['sendPhoto', true, true],
      ['sendMessage', true, true],
    ]);
  });

  test('… an album, and kinds sent by their own method', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { media: [image('img-a'), image('img-b')], options }));
    await connector(f).publish(
      request(f, {
        idempotencyKey: 'post-2:channel-1',
        media: [media('report', 'document', 'application/pdf'), media('loop', 'gif', 'image/gif')],
        options: { protectContent: true },
      }),
    );
    expect(flags(f)).toEqual([
      ['sendMediaGroup', true, true],
      ['sendMediaGroup', true, true],
      ['sendDocument', undefined, true],
      ['sendAnimation', undefined, true],
    ]);
  });

  test('without options neither is sent', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { media: [image('img-a')], options: {} }));
    expect(flags(f)).toEqual([['sendPhoto', undefined, undefined]]);
  });
});
