// Telegram connector: the Bot API (POST {baseUrl}/bot<botToken>/<method>), posting as the bot into
// credentials.chatId — a channel or group the bot may post in (numeric id or @username), or a
// private chat with a user who started the bot.
//
// Never posting twice: the Bot API has no idempotency key, and a bot cannot read a chat's history
// (no method lists sent messages), so a post whose answer was lost cannot be looked up. Hence:
// - a request that may have reached Telegram but got no answer (timeout, reset, abort) fails
//   permanently with platformCode 'outcome_unknown' instead of being re-sent blindly; a request
//   that never left (connection refused, DNS) stays transient;
// - a post made of several messages (media + long text, mixed media kinds) remembers, per
//   idempotency key and in this process, which messages went out, so a retry after a 429/5xx on a
//   later message continues instead of re-sending the earlier ones; findPublished returns a post
//   that completed in this process (e.g. when recording it failed afterwards). A worker restart
//   forgets both. A completed post is also kept durably in the publish activity's heartbeat
//   details (activities/posts.ts): a retry on any worker after a failed recording does not call
//   the connector at all; only a post cut off between its messages is known in process alone.
import { blobOf, connectTracking, createHttp, credential, isOk, reasonOf, trimSlash, type Reply, type SendOptions } from './http.ts';
import type { TelegramOptions } from './options.ts';
import { PlatformError, parseRetryAfter, type Connector, type MediaRef, type PublishRequest, type PublishResult } from './types.ts';

export interface TelegramConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each HTTP request; a media group uploads all its files in one request. */
  timeoutMs?: number;
  /** Bot API server: https://api.telegram.org, or a self-hosted telegram-bot-api server. */
  baseUrl?: string;
}

const CAPTION_LIMIT = 1024;
const GROUP_LIMIT = 10;
const JOURNAL_SIZE = 1000;

/** How Telegram shows a file; decides the send method and which files may share an album. */
type Kind = 'photo' | 'video' | 'animation' | 'audio' | 'document';

interface Chat {
  id: number | string;
  type?: string;
  username?: string;
}

interface Message {
  message_id: number;
  date?: number;
  chat: Chat;
}

interface ApiBody {
  ok?: boolean;
  result?: unknown;
  description?: string;
  error_code?: number;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** One Bot API call of a post: a text message, or one file, or an album of 2–10 files. */
interface Step {
  text?: string;
  files?: MediaRef[];
  caption?: string;
}

interface Progress {
  chatId: string;
  steps: number;
  sent: Message[][];
  result?: PublishResult;
}

export function createTelegramConnector(opts: TelegramConnectorOptions = {}): Connector {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const base = trimSlash(opts.baseUrl ?? 'https://api.telegram.org');
  const journal = new Map<string, Progress>();

  /**
   * One exchange. Errors never carry the URL (it holds the bot token). A failure after the
   * request may have left is permanent 'outcome_unknown' (see the top of the file).
   */
  async function exchange(token: string, method: string, o: SendOptions): Promise<Reply> {
    if (o.signal?.aborted) throw new PlatformError('transient', `Telegram ${method} aborted before sending`);
    const tracked = connectTracking(doFetch);
    const http = createHttp('Telegram', { fetch: tracked.fetch, timeoutMs });
    try {
      return await http.send(`${base}/bot${token}/${method}`, { method: 'POST', ...o });
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      const reason = err.message.replaceAll(token, '<token>').replace(/^Telegram POST \S+ /, '');
      if (tracked.unreached()) throw new PlatformError('transient', `Telegram ${method} ${reason}`, err.opts);
      throw outcomeUnknown(method, reason);
    }
  }

  /** Calls a method; follows a group's upgrade to a supergroup once (the refused call posted nothing). */
  async function call(
    token: string,
    method: string,
    chat: { id: string },
    build: (chatId: string) => SendOptions,
    signal?: AbortSignal,
  ): Promise<unknown> {
    for (let hop = 0; ; hop++) {
      const r = await exchange(token, method, { ...build(chat.id), signal });
      const body = r.body as ApiBody | null;
      if (isOk(r) && body?.ok === true) return body.result;
      const to = body?.parameters?.migrate_to_chat_id;
      if (to != null && hop === 0) {
        chat.id = String(to);
        continue;
      }
      throw telegramError(r);
    }
  }

  /** `flags`: the post's send options (disable_notification, protect_content), on every message of it. */
  async function runStep(
    token: string,
    chat: { id: string },
    step: Step,
    flags: Record<string, boolean>,
    signal?: AbortSignal,
  ): Promise<Message[]> {
    if (!step.files) {
      const result = await call(
        token,
        'sendMessage',
        chat,
        (chatId) => ({ json: { chat_id: chatId, text: step.text ?? '', ...flags } }),
        signal,
      );
      return [message(result, 'sendMessage')];
    }
    const files = await Promise.all(step.files.map(async (ref) => ({ ref, kind: kindOf(ref), bytes: await ref.read() })));
    if (files.length === 1) {
      const f = files[0]!;
      const { method, field } = SINGLE[f.kind];
      const result = await call(
        token,
        method,
        chat,
        (chatId) => {
          const form = new FormData();
          form.append('chat_id', chatId);
          appendFlags(form, flags);
          if (step.caption) form.append('caption', step.caption);
          if (f.kind === 'video') form.append('supports_streaming', 'true');
          form.append(field, blobOf(f.bytes, f.ref.mimeType), f.ref.fileName);
          return { multipart: form };
        },
        signal,
      );
      return [message(result, method)];
    }
    const result = await call(
      token,
      'sendMediaGroup',
      chat,
      (chatId) => {
        const form = new FormData();
        form.append('chat_id', chatId);
        appendFlags(form, flags);
        const media = files.map((f, i) => ({
          type: f.kind,
          media: `attach://file${i}`,
          ...(i === 0 && step.caption ? { caption: step.caption } : {}),
          ...(f.kind === 'video' ? { supports_streaming: true } : {}),
        }));
        form.append('media', JSON.stringify(media));
        for (const [i, f] of files.entries()) form.append(`file${i}`, blobOf(f.bytes, f.ref.mimeType), f.ref.fileName);
        return { multipart: form };
      },
      signal,
    );
    if (!Array.isArray(result) || !result.length) throw unexpected('sendMediaGroup', result);
    return result.map((m) => message(m, 'sendMediaGroup'));
  }

  function progressFor(key: string, chatId: string, steps: number): Progress {
    const known = journal.get(key);
    if (known && known.steps === steps) return known;
    const fresh: Progress = { chatId, steps, sent: [] };
    journal.set(key, fresh);
    if (journal.size > JOURNAL_SIZE) journal.delete(journal.keys().next().value!);
    return fresh;
  }

  return {
    platform: 'TELEGRAM',

    async publish(req: PublishRequest): Promise<PublishResult> {
      const token = credential('Telegram', req.credentials, 'botToken');
      const steps = plan(req.text, req.media);
      const progress = progressFor(req.idempotencyKey, credential('Telegram', req.credentials, 'chatId'), steps.length);
      if (progress.result) return progress.result;
      const chat = { id: progress.chatId };
      const flags = sendFlags(req);
      try {
        for (let i = progress.sent.length; i < steps.length; i++)
          progress.sent.push(await runStep(token, chat, steps[i]!, flags, req.signal));
      } finally {
        progress.chatId = chat.id;
      }
      const first = progress.sent[0]![0]!;
      progress.result = {
        platformPostId: String(first.message_id),
        url: messageUrl(first),
        publishedAt: first.date ? new Date(first.date * 1000).toISOString() : undefined,
      };
      return progress.result;
    },

    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      return journal.get(req.idempotencyKey)?.result ?? null;
    },
  };
}

/** The post's options as Bot API parameters; an option not given is not sent (Telegram's default). */
function sendFlags(req: PublishRequest): Record<string, boolean> {
  const o = (req.options ?? {}) as TelegramOptions;
  const flags: Record<string, boolean> = {};
  if (typeof o.disableNotification === 'boolean') flags.disable_notification = o.disableNotification;
  if (typeof o.protectContent === 'boolean') flags.protect_content = o.protectContent;
  return flags;
}

function appendFlags(form: FormData, flags: Record<string, boolean>): void {
  for (const [k, v] of Object.entries(flags)) form.append(k, String(v));
}

const SINGLE: Record<Kind, { method: string; field: string }> = {
  photo: { method: 'sendPhoto', field: 'photo' },
  video: { method: 'sendVideo', field: 'video' },
  animation: { method: 'sendAnimation', field: 'animation' },
  audio: { method: 'sendAudio', field: 'audio' },
  document: { method: 'sendDocument', field: 'document' },
};

/**
 * The messages of a post, in order. Albums hold photos with videos, documents only with
 * documents, audio only with audio; GIFs (animations) cannot be in an album. The text is the
 * caption of the first message when it fits in 1024 characters; otherwise it follows the media as
 * its own message, so a file Telegram refuses fails the post before any text is out.
 */
function plan(text: string, media: MediaRef[]): Step[] {
  const steps: Step[] = batches(media).map((files) => ({ files }));
  if (!steps.length) return [{ text }];
  if (text && text.length <= CAPTION_LIMIT) steps[0]!.caption = text;
  else if (text) steps.push({ text });
  return steps;
}

function batches(media: MediaRef[]): MediaRef[][] {
  const open = new Map<string, MediaRef[]>();
  const out: MediaRef[][] = [];
  for (const m of media) {
    const kind = kindOf(m);
    if (kind === 'animation') {
      out.push([m]);
      continue;
    }
    const album = kind === 'photo' || kind === 'video' ? 'visual' : kind;
    let batch = open.get(album);
    if (!batch || batch.length === GROUP_LIMIT) {
      batch = [];
      open.set(album, batch);
      out.push(batch);
    }
    batch.push(m);
  }
  return out;
}

function kindOf(m: MediaRef): Kind {
  const mime = m.mimeType.toLowerCase();
  if (m.type === 'gif') return 'animation';
  if (m.type === 'video') return 'video';
  // sendPhoto takes the common raster formats; anything else (SVG, TIFF, HEIC…) goes as a file.
  if (m.type === 'image') return /^image\/(jpeg|jpg|png|webp)$/.test(mime) ? 'photo' : 'document';
  // sendAudio plays MP3 and M4A only; other audio is sent as a file.
  if (m.type === 'audio') return /^audio\/(mpeg|mp3|mp4|x-m4a|m4a|aac)$/.test(mime) ? 'audio' : 'document';
  return 'document';
}

/**
 * The message link: t.me/<username>/<id> for public chats, t.me/c/<id without -100>/<id> for
 * private channels and supergroups (members only). Basic groups and private chats have no link;
 * tg://openmessage (handled by the Telegram apps, not in the official deep-link list) is the
 * closest honest value.
 */
function messageUrl(m: Message): string {
  const id = String(m.chat.id);
  if (m.chat.username) return `https://t.me/${m.chat.username}/${m.message_id}`;
  if (id.startsWith('-100')) return `https://t.me/c/${id.slice(4)}/${m.message_id}`;
  if (m.chat.type === 'private') return `tg://openmessage?user_id=${id}&message_id=${m.message_id}`;
  return `tg://openmessage?chat_id=${id.replace(/^-/, '')}&message_id=${m.message_id}`;
}

function message(v: unknown, method: string): Message {
  const m = v as Partial<Message> | null;
  if (typeof m?.message_id !== 'number' || !m.chat || m.chat.id == null) throw unexpected(method, v);
  return m as Message;
}

/**
 * Telegram's answer to a refused call. 401 (token revoked) and 404 (malformed token: the method
 * names are fixed) and 403 (bot kicked, blocked or not a member) need the channel reconnected.
 */
function telegramError(r: Reply): PlatformError {
  const b = r.body as ApiBody | null;
  const code = typeof b?.error_code === 'number' ? b.error_code : r.status;
  const reason = typeof b?.description === 'string' && b.description ? b.description : reasonOf(r);
  const message = `Telegram ${code}: ${reason}`;
  const opts = { status: r.status, platformCode: String(code) };
  if (code === 401 || code === 403 || code === 404) return new PlatformError('reauth', message, opts);
  if (code === 429 || code >= 500 || r.status >= 500) {
    const seconds = b?.parameters?.retry_after;
    const retryAfterMs = typeof seconds === 'number' ? seconds * 1000 : parseRetryAfter(r.headers.get('retry-after'));
    return new PlatformError('transient', message, { ...opts, retryAfterMs });
  }
  return new PlatformError('permanent', message, opts);
}

function outcomeUnknown(method: string, reason: string): PlatformError {
  return new PlatformError(
    'permanent',
    `Telegram ${method} ${reason}; the message may have been posted, so it is not sent again automatically — check the chat`,
    { platformCode: 'outcome_unknown' },
  );
}

function unexpected(method: string, v: unknown): PlatformError {
  return new PlatformError('permanent', `Telegram ${method} answered ok with an unexpected result: ${JSON.stringify(v)?.slice(0, 200)}`, {
    platformCode: 'outcome_unknown',
  });
}
