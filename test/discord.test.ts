import { describe, expect, test } from 'bun:test';
import { createDiscordConnector } from '../platforms/discord.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { startFakeDiscord, type FakeDiscord } from './fakes/discord.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeDiscord);

const connector = (f: { apiBase: string }, timeoutMs = 2_000) => createDiscordConnector({ baseUrl: f.apiBase, timeoutMs });

function request(f: FakeDiscord, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello @everyone on Discord',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { webhookUrl: f.webhookUrl() },
    ...over,
  };
}

async function pngBytes(): Promise<Uint8Array> {
  const sharp = (await import('sharp')).default;
  return new Uint8Array(
    await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer(),
  );
}

function media(id: string, type: MediaRef['type'], mimeType: string, altText: string | null, bytes: () => Promise<Uint8Array>): MediaRef {
  return { id, type, mimeType, fileName: `${id}.${mimeType.split('/')[1]}`, altText, read: bytes };
}

describe('Discord publish', () => {
  test('text post: JSON execute with wait=true and no pings; link built from the webhook guild', async () => {
    const f = await fake();
    const result = await connector(f).publish(request(f));

    expect(f.messages).toHaveLength(1);
    const m = f.messages[0]!;
    expect(m.content).toBe('Hello @everyone on Discord');
    expect(m.allowedMentions).toEqual({ parse: [] });
    expect(result).toEqual({
      platformPostId: m.id,
      url: `https://discord.com/channels/${f.webhook.guild_id}/${f.webhook.channel_id}/${m.id}`,
      publishedAt: m.timestamp,
    });
    expect(f.requests.map((r) => [r.method, r.wait])).toEqual([
      ['GET', null],
      ['POST', 'true'],
    ]);
    expect(f.requests[1]!.contentType).toContain('application/json');
    expect(f.requests[1]!.userAgent).toMatch(/^DiscordBot \(/);
  });

  test('the guild id is fetched once per webhook, not on every publish', async () => {
    const f = await fake();
    const c = connector(f);
    await c.publish(request(f));
    await c.publish(request(f, { idempotencyKey: 'post-2:channel-1' }));
    expect(f.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'POST']);
    expect(f.messages).toHaveLength(2);
  });

  test('image, GIF and video: multipart payload_json + files[n], alt text as attachment descriptions', async () => {
    const f = await fake();
    const png = await pngBytes();
    const video = new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32]);
    await connector(f).publish(
      request(f, {
        media: [
          media('kite', 'image', 'image/png', 'A red kite', async () => png),
          media('loop', 'gif', 'image/gif', null, async () => new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61])),
          media('clip', 'video', 'video/mp4', 'x'.repeat(1500), async () => video),
        ],
      }),
    );

    expect(f.requests[1]!.contentType).toContain('multipart/form-data');
    const m = f.messages[0]!;
    expect(m.content).toBe('Hello @everyone on Discord');
    expect(m.allowedMentions).toEqual({ parse: [] });
    expect(m.attachments.map((a) => [a.filename, a.content_type, a.size, a.description?.length ?? null])).toEqual([
      ['kite.png', 'image/png', png.length, 'A red kite'.length],
      ['loop.gif', 'image/gif', 6, null],
      ['clip.mp4', 'video/mp4', video.length, 1024],
    ]);
  });

  test('media without text: no content field, the files alone', async () => {
    const f = await fake();
    const png = await pngBytes();
    await connector(f).publish(request(f, { text: '', media: [media('kite', 'image', 'image/png', null, async () => png)] }));
    expect(f.messages[0]).toMatchObject({ content: '', attachments: [{ filename: 'kite.png' }] });
    // The fake keeps the payload as sent: no `content` key at all (not an empty string).
    expect(Object.keys(f.messages[0]!.payload).sort()).toEqual(['allowed_mentions', 'attachments']);
  });

  test('a webhook URL with ?thread_id posts into that thread', async () => {
    const f = await fake();
    const result = await connector(f).publish(request(f, { credentials: { webhookUrl: `${f.webhookUrl()}?thread_id=1234567890123` } }));
    expect(f.requests[1]!.threadId).toBe('1234567890123');
    expect(result.url).toBe(`https://discord.com/channels/${f.webhook.guild_id}/1234567890123/${f.messages[0]!.id}`);
  });

  test('a discord.com webhook URL is executed against the configured API base (id and token only)', async () => {
    const f = await fake();
    const webhookUrl = `https://discord.com/api/webhooks/${f.webhook.id}/${f.webhook.token}`;
    await connector(f).publish(request(f, { credentials: { webhookUrl } }));
    expect(f.messages).toHaveLength(1);
  });

  test('a URL that is not a Discord webhook (other host, wrong path) → reauth before any request', async () => {
    const f = await fake();
    const c = connector(f);
    for (const webhookUrl of [
      `http://169.254.169.254/api/webhooks/${f.webhook.id}/${f.webhook.token}`,
      `http://discord.com/api/webhooks/${f.webhook.id}/${f.webhook.token}`,
      `${f.url}/api/channels/123/messages`,
      'not a url',
    ]) {
      const err = await failure(c.publish(request(f, { credentials: { webhookUrl } })));
      expect(err.kind).toBe('reauth');
      expect(err.message).toStartWith('Discord webhookUrl is not a Discord webhook URL');
    }
    expect(f.requests).toHaveLength(0);
  });
});

describe('Discord never posts twice', () => {
  test('findPublished returns a message this process created; unknown keys → null', async () => {
    const f = await fake();
    const c = connector(f);
    const first = await c.publish(request(f));
    expect(await c.findPublished!({ ...request(f), attempt: 2 })).toEqual(first);
    expect(await c.findPublished!(request(f, { idempotencyKey: 'other' }))).toBeNull();
  });

  test('the answer is lost after Discord posted (accept-then-hang): permanent outcome_unknown, token not leaked', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const err = await failure(connector(f, 300).publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('outcome_unknown');
    expect(err.message).toBe(
      'Discord POST webhook timed out after 300 ms; the message may have been posted, so it is not sent again automatically — check the channel',
    );
    expect(err.message).not.toContain(f.webhook.token);
    expect(f.messages).toHaveLength(1);
  });

  test('a hang on Get Webhook (nothing posted yet) → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang', 'get');
    const err = await failure(connector(f, 300).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Discord GET webhook timed out after 300 ms');
    expect(f.messages).toHaveLength(0);
  });

  test('caller abort while waiting on the execute → outcome_unknown', async () => {
    const f = await fake();
    const c = connector(f, 10_000);
    await c.publish(request(f, { idempotencyKey: 'warm' })); // caches the guild
    f.failNext(1, 'hang');
    const err = await failure(c.publish(request(f, { signal: AbortSignal.timeout(100) })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('aborted');
  });
});

describe('Discord error classes', () => {
  test('wrong webhook token (401, 50027) → reauth', async () => {
    const f = await fake();
    const webhookUrl = `${f.url}/api/webhooks/${f.webhook.id}/wrong-token`;
    const err = await failure(connector(f).publish(request(f, { credentials: { webhookUrl } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts).toMatchObject({ status: 401, platformCode: '50027' });
    expect(err.message).toBe('Discord 401: Invalid Webhook Token');
  });

  test('deleted webhook (404, 10015) → reauth, also when the guild id is already cached', async () => {
    const f = await fake();
    const c = connector(f);
    await c.publish(request(f, { idempotencyKey: 'warm' }));
    f.deleteWebhook(f.webhook.id);
    const err = await failure(c.publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.opts).toMatchObject({ status: 404, platformCode: '10015' });
    expect(err.message).toBe('Discord 404: Unknown Webhook');
  });

  test('403 (missing permissions) → reauth', async () => {
    const f = await fake();
    f.failNext(1, { status: 403, body: { message: 'Missing Permissions', code: 50013 } });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Discord 403: Missing Permissions');
  });

  test('content over 2000 characters (50035) → permanent with the field error', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { text: 'x'.repeat(2001) })));
    expect(err.kind).toBe('permanent');
    expect(err.opts).toMatchObject({ status: 400, platformCode: '50035' });
    expect(err.message).toBe('Discord 400: Invalid Form Body (content: Must be 2000 or fewer in length.)');
    expect(f.messages).toHaveLength(0);
  });

  test('empty message (50006) → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { text: '' })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Discord 400: Cannot send an empty message');
  });

  test('429 with retry_after in the body (float seconds) → transient, retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 1.337, global: false },
      headers: { 'Retry-After': '2', 'X-RateLimit-Reset-After': '1.337', 'X-RateLimit-Scope': 'shared' },
    });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 1337 });
    expect(err.message).toBe('Discord 429: You are being rate limited.');
  });

  test('429 without a JSON body: Retry-After, else X-RateLimit-Reset-After', async () => {
    const f = await fake();
    const c = connector(f);
    f.failNext(1, { status: 429, body: '<html>rate limited</html>', headers: { 'Retry-After': '65' } });
    expect((await failure(c.publish(request(f)))).opts.retryAfterMs).toBe(65_000);
    f.failNext(1, { status: 429, body: '<html>rate limited</html>', headers: { 'X-RateLimit-Reset-After': '2.5' } });
    expect((await failure(c.publish(request(f)))).opts.retryAfterMs).toBe(2_500);
  });

  test('5xx and 130000 (API overloaded) → transient', async () => {
    const f = await fake();
    const c = connector(f);
    f.failNext(1, { status: 502, body: { message: '502: Bad Gateway', code: 0 } });
    const bad = await failure(c.publish(request(f)));
    expect(bad.kind).toBe('transient');
    expect(bad.message).toBe('Discord 502: 502: Bad Gateway');

    f.failNext(1, { status: 400, body: { message: 'API resource is currently overloaded. Try again a little later', code: 130000 } });
    expect((await failure(c.publish(request(f)))).kind).toBe('transient');
    expect(f.messages).toHaveLength(0);
  });

  test('network failure before sending (stopped server, closed port) → transient, token not in the message', async () => {
    const f = await startFakeDiscord();
    await f.stop();
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toStartWith('Discord GET webhook failed:');
    expect(err.message).not.toContain(f.webhook.token);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const c = createDiscordConnector({ baseUrl: `${closed}/api/v10`, timeoutMs: 2_000 });
    const webhookUrl = `${closed}/api/webhooks/${f.webhook.id}/${f.webhook.token}`;
    expect((await failure(c.publish(request(f, { credentials: { webhookUrl } })))).kind).toBe('transient');
  });
});

describe('fake Discord contract', () => {
  test('rejects a file part not named files[n] and a payload field sent as `text` (empty message)', async () => {
    const f = await fake();
    const url = `${f.apiBase}/webhooks/${f.webhook.id}/${f.webhook.token}?wait=true`;
    const form = new FormData();
    form.append('payload_json', JSON.stringify({ content: 'hi' }));
    form.append('file', new Blob([new Uint8Array([1])], { type: 'image/png' }), 'a.png');
    const res = await fetch(url, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: number }).code).toBe(50035);

    const wrong = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'hi' }),
    });
    expect(await wrong.json()).toEqual({ message: 'Cannot send an empty message', code: 50006 });
    expect(f.messages).toHaveLength(0);
  });

  test('needs one of content, embeds, files or poll: absent, null or blank content alone → 50006', async () => {
    const f = await fake();
    const url = `${f.apiBase}/webhooks/${f.webhook.id}/${f.webhook.token}?wait=true`;
    const execute = (body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    for (const body of [{}, { content: null }, { content: '' }, { content: ' \n ' }, { allowed_mentions: { parse: [] } }, { embeds: [] }]) {
      const res = await execute(body);
      expect({ body, status: res.status, answer: await res.json() }).toEqual({
        body,
        status: 400,
        answer: { message: 'Cannot send an empty message', code: 50006 },
      });
    }
    expect(f.messages).toHaveLength(0);
    const embed = await execute({ embeds: [{ description: 'an embed alone' }] });
    expect(embed.status).toBe(200);
    expect(f.messages.map((m) => [m.content, 'content' in m.payload])).toEqual([['', false]]);
    const typed = await execute({ content: 5 });
    expect(typed.status).toBe(400);
    expect(((await typed.json()) as { code: number }).code).toBe(50035);
  });

  test('without wait=true the execute answers 204 and no message body', async () => {
    const f = await fake();
    const res = await fetch(`${f.apiBase}/webhooks/${f.webhook.id}/${f.webhook.token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'hi' }),
    });
    expect(res.status).toBe(204);
    expect(f.messages).toHaveLength(1);
  });
});

describe('Discord options', () => {
  test('username reaches the webhook payload, as JSON and in payload_json with files', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { options: { username: 'Postpilot News' } }));
    const png = await pngBytes();
    const img = media('img-a', 'image', 'image/png', null, async () => png);
    await connector(f).publish(request(f, { idempotencyKey: 'post-2:channel-1', media: [img], options: { username: 'Photo desk' } }));
    expect(f.messages.map((m) => [m.username, m.payload.username])).toEqual([
      ['Postpilot News', 'Postpilot News'],
      ['Photo desk', 'Photo desk'],
    ]);
  });

  test('without options the payload has no username (the webhook’s own name shows)', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { options: {} }));
    expect(f.messages[0]!.payload).not.toHaveProperty('username');
    expect(f.messages[0]!.username).toBeUndefined();
  });

  test('a name with "discord" or "clyde", or over 80 characters (50035) → permanent', async () => {
    const f = await fake();
    for (const [username, detail] of [
      ['The Discord Bot', 'Username cannot contain "discord"'],
      ['clydesdale', 'Username cannot contain "clyde"'],
      ['n'.repeat(81), 'Must be between 1 and 80 in length.'],
    ]) {
      const err = await failure(connector(f).publish(request(f, { options: { username } })));
      expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '50035' } });
      expect(err.message).toContain(detail!);
    }
    expect(f.messages).toHaveLength(0);
  });
});
