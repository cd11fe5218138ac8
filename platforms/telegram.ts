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
//
// Method parameters, the answer envelope and the fields read from sent messages are typed by
// @grammyjs/types (the Bot API's published types), imported as types only: a parameter the Bot
// API does not have is a compile error here.
import type {
  ApiError,
  ApiResponse,
  InputMediaAudio,
  InputMediaDocument,
  InputMediaPhoto,
  InputMediaVideo,
  Message,
  Opts,
} from '@grammyjs/types';
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

/** Method parameters; files go up as multipart parts, so the Bot API's InputFile is a File here. */
type Params = Opts<File>;

/** What the connector reads of a sent message. */
type Sent = Pick<Message, 'message_id' | 'date' | 'chat'>;

/** The post's send options, on every message of it. */
type Flags = Pick<Params['sendMessage'], 'disable_notification' | 'protect_content'>;

type SingleMethod = 'sendPhoto' | 'sendVideo' | 'sendAnimation' | 'sendAudio' | 'sendDocument';

/** An album item; GIFs (animations) never share an album. */
type AlbumItem = InputMediaPhoto<File> | InputMediaVideo<File> | InputMediaAudio<File> | InputMediaDocument<File>;

/** One Bot API call of a post: a text message, or one file, or an album of 2–10 files. */
interface Step {
  text?: string;
  files?: MediaRef[];
  caption?: string;
}

interface Progress {
  chatId: string;
  steps: number;
  sent: Sent[][];
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
      const body = r.body as ApiResponse<unknown> | null;
      if (isOk(r) && body?.ok === true) return body.result;
      const to = body?.ok === false ? body.parameters?.migrate_to_chat_id : undefined;
      if (to != null && hop === 0) {
        chat.id = String(to);
        continue;
      }
      throw telegramError(r);
    }
  }

  async function runStep(token: string, chat: { id: string }, step: Step, flags: Flags, signal?: AbortSignal): Promise<Sent[]> {
    if (!step.files) {
      const build = (chatId: string) => ({ json: { chat_id: chatId, text: step.text ?? '', ...flags } satisfies Params['sendMessage'] });
      return [message(await call(token, 'sendMessage', chat, build, signal), 'sendMessage')];
    }
    const files = await Promise.all(
      step.files.map(async (ref) => ({
        kind: kindOf(ref),
        file: new File([blobOf(await ref.read(), ref.mimeType)], ref.fileName, { type: ref.mimeType }),
      })),
    );
    const caption = step.caption || undefined;
    if (files.length === 1) {
      const { kind, file } = files[0]!;
      const method = SINGLE[kind];
      const build = (chatId: string) => ({ multipart: formOf(singleParams(kind, chatId, file, caption, flags)) });
      return [message(await call(token, method, chat, build, signal), method)];
    }
    const build = (chatId: string) => {
      // batches() keeps an album to photos with videos, audio alone or documents alone, as the
      // Bot API's media parameter asks; each item is checked against its InputMedia type.
      const media = files.map((f, i) =>
        albumItem(f.kind, `attach://file${i}`, i === 0 ? caption : undefined),
      ) as Params['sendMediaGroup']['media'];
      const form = formOf({ chat_id: chatId, media, ...flags } satisfies Params['sendMediaGroup']);
      for (const [i, f] of files.entries()) form.append(`file${i}`, f.file, f.file.name);
      return { multipart: form };
    };
    const result = await call(token, 'sendMediaGroup', chat, build, signal);
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
function sendFlags(req: PublishRequest): Flags {
  const o = (req.options ?? {}) as TelegramOptions;
  const flags: Flags = {};
  if (typeof o.disableNotification === 'boolean') flags.disable_notification = o.disableNotification;
  if (typeof o.protectContent === 'boolean') flags.protect_content = o.protectContent;
  return flags;
}

const SINGLE: Record<Kind, SingleMethod> = {
  photo: 'sendPhoto',
  video: 'sendVideo',
  animation: 'sendAnimation',
  audio: 'sendAudio',
  document: 'sendDocument',
};

/** One file by its own method; each literal is checked against that method's parameters. */
function singleParams(kind: Kind, chatId: string, file: File, caption: string | undefined, flags: Flags): Params[SingleMethod] {
  switch (kind) {
    case 'photo':
      return { chat_id: chatId, photo: file, caption, ...flags } satisfies Params['sendPhoto'];
    case 'video':
      return { chat_id: chatId, video: file, caption, supports_streaming: true, ...flags } satisfies Params['sendVideo'];
    case 'animation':
      return { chat_id: chatId, animation: file, caption, ...flags } satisfies Params['sendAnimation'];
    case 'audio':
      return { chat_id: chatId, audio: file, caption, ...flags } satisfies Params['sendAudio'];
    case 'document':
      return { chat_id: chatId, document: file, caption, ...flags } satisfies Params['sendDocument'];
  }
}

/** An album item uploading the part `ref` names (attach://<part>). */
function albumItem(kind: Kind, ref: string, caption: string | undefined): AlbumItem {
  switch (kind) {
    case 'photo':
      return { type: 'photo', media: ref, caption };
    case 'video':
      return { type: 'video', media: ref, caption, supports_streaming: true };
    case 'audio':
      return { type: 'audio', media: ref, caption };
    case 'document':
    case 'animation': // batches() sends every GIF alone; a document is the closest album kind
      return { type: 'document', media: ref, caption };
  }
}

/**
 * Parameters as a multipart form, as the Bot API reads one: a file as a file part, an object or
 * array as JSON, anything else as text; an undefined parameter is left out.
 */
function formOf(params: object): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (v instanceof File) form.append(k, v, v.name);
    else form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return form;
}

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
function messageUrl(m: Sent): string {
  const id = String(m.chat.id);
  if (m.chat.username) return `https://t.me/${m.chat.username}/${m.message_id}`;
  if (id.startsWith('-100')) return `https://t.me/c/${id.slice(4)}/${m.message_id}`;
  if (m.chat.type === 'private') return `tg://openmessage?user_id=${id}&message_id=${m.message_id}`;
  return `tg://openmessage?chat_id=${id.replace(/^-/, '')}&message_id=${m.message_id}`;
}

function message(v: unknown, method: string): Sent {
  const m = v as Partial<Sent> | null;
  if (typeof m?.message_id !== 'number' || !m.chat || m.chat.id == null) throw unexpected(method, v);
  return m as Sent;
}

/**
 * Telegram's answer to a refused call. 401 (token revoked) and 404 (malformed token: the method
 * names are fixed) and 403 (bot kicked, blocked or not a member) need the channel reconnected.
 */
function telegramError(r: Reply): PlatformError {
  const b = r.body as Partial<ApiError> | null;
  const code = typeof b?.error_code === 'number' ? b.error_code : r.status;
  const reason = typeof b?.description === 'string' && b.description ? b.description : reasonOf(r);
  const to = b?.parameters?.migrate_to_chat_id;
  // A group that moved again after the one hop call() follows: the channel's chat id needs changing.
  const moved = typeof to === 'number' ? ` (the chat is now ${to}; update the channel's chat id)` : '';
  const message = `Telegram ${code}: ${reason}${moved}`;
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
