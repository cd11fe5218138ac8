// A local fake Telegram Bot API server (POST /bot<token>/<method>) speaking the methods the
// connector uses, with the Bot API's envelope ({ok, result} / {ok:false, error_code, description,
// parameters}) and its error wording. Wording marked "approx." was not confirmed against Telegram.
//
// Held to @grammyjs/types (the Bot API's published types): the parameters the connector sends are
// checked against TypeBox schemas whose Static types equal the package's
// (test/shapes-telegram.test.ts asserts it), and a call that breaks them is refused as the Bot
// API refuses one: 400 {ok: false, error_code: 400, description: "Bad Request: …"}. Parameters
// outside the schemas are ignored, as the Bot API ignores them. Answers are typed by the
// package's ApiResponse and Message.
import type { ApiError, ApiSuccess, Chat, Message, User } from '@grammyjs/types';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

const ChatId = Type.Union([Type.Number(), Type.String()]);
const sendOptions = {
  chat_id: ChatId,
  disable_notification: Type.Optional(Type.Boolean()),
  protect_content: Type.Optional(Type.Boolean()),
};

/** sendMessage's checked parameters. */
export const SendMessageSchema = Type.Object({ ...sendOptions, text: Type.String() });
/** sendPhoto, sendAnimation, sendAudio and sendDocument's checked parameters (the file part aside). */
export const SendFileSchema = Type.Object({ ...sendOptions, caption: Type.Optional(Type.String()) });
/** sendVideo's checked parameters (the file part aside). */
export const SendVideoSchema = Type.Object({
  ...sendOptions,
  caption: Type.Optional(Type.String()),
  supports_streaming: Type.Optional(Type.Boolean()),
});
/** sendMediaGroup's checked parameters; `media` goes through InputMediaSchema item by item. */
export const SendMediaGroupSchema = Type.Object(sendOptions);

const itemFields = { media: Type.String(), caption: Type.Optional(Type.String()) };
export const InputMediaPhotoSchema = Type.Object({
  type: Type.Literal('photo'),
  ...itemFields,
  show_caption_above_media: Type.Optional(Type.Boolean()),
  has_spoiler: Type.Optional(Type.Boolean()),
});
export const InputMediaVideoSchema = Type.Object({
  type: Type.Literal('video'),
  ...itemFields,
  show_caption_above_media: Type.Optional(Type.Boolean()),
  has_spoiler: Type.Optional(Type.Boolean()),
  width: Type.Optional(Type.Number()),
  height: Type.Optional(Type.Number()),
  duration: Type.Optional(Type.Number()),
  supports_streaming: Type.Optional(Type.Boolean()),
});
export const InputMediaAudioSchema = Type.Object({
  type: Type.Literal('audio'),
  ...itemFields,
  duration: Type.Optional(Type.Number()),
  performer: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
});
export const InputMediaDocumentSchema = Type.Object({
  type: Type.Literal('document'),
  ...itemFields,
  disable_content_type_detection: Type.Optional(Type.Boolean()),
});
const INPUT_MEDIA = {
  photo: InputMediaPhotoSchema,
  video: InputMediaVideoSchema,
  audio: InputMediaAudioSchema,
  document: InputMediaDocumentSchema,
};
type InputMediaItem = Static<(typeof INPUT_MEDIA)[keyof typeof INPUT_MEDIA]>;

export interface FakeTelegramChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  username?: string;
  title?: string;
}

export interface FakeTelegramFile {
  field: string;
  fileName: string;
  mimeType: string;
  size: number;
}

export interface FakeTelegramMessage {
  message_id: number;
  chatId: number;
  method: string;
  text?: string;
  caption?: string;
  /** 'photo' | 'video' | 'animation' | 'audio' | 'document' for media messages. */
  kind?: string;
  file?: FakeTelegramFile;
  media_group_id?: string;
  supports_streaming?: boolean;
  /** Sent silently, and protected from forwarding and saving; present only when the request sent them. */
  disable_notification?: boolean;
  protect_content?: boolean;
  date: number;
}

export interface FakeTelegramRequest {
  method: string;
  token: string;
  chatId: string | null;
}

/** 'accept-then-hang': send the message, then never answer (the answer is lost). */
export type FakeTelegramResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';

export interface FakeTelegram {
  url: string;
  /** A token the fake accepts. */
  token: string;
  messages: FakeTelegramMessage[];
  requests: FakeTelegramRequest[];
  chats: FakeTelegramChat[];
  validTokens: Set<string>;
  /** Chats the bot was removed from (403). */
  kicked: Set<number>;
  /** Basic groups upgraded to supergroups: old id → new id (400 with migrate_to_chat_id). */
  migrated: Map<number, number>;
  /** The next n send* calls answer this instead (or never answer). */
  failNext(n: number, response: FakeTelegramResponse): void;
  /** Revokes a token, as BotFather's /revoke does: later calls answer 401. */
  revokeToken(token: string): void;
  stop(): Promise<void>;
}

export const PUBLIC_CHANNEL: FakeTelegramChat = {
  id: -1001234567890,
  type: 'channel',
  username: 'postpilot_news',
  title: 'Postpilot News',
};
export const PRIVATE_SUPERGROUP: FakeTelegramChat = { id: -1009876543210, type: 'supergroup', title: 'Team' };
export const BASIC_GROUP: FakeTelegramChat = { id: -4012345678, type: 'group', title: 'Old group' };
export const PRIVATE_CHAT: FakeTelegramChat = { id: 555000111, type: 'private' };

const TOKEN = '7012345678:AAHfakeTokenForTestsOnly_abcdefghij';
const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
const SINGLE: Record<string, string> = {
  sendphoto: 'photo',
  sendvideo: 'video',
  sendanimation: 'animation',
  sendaudio: 'audio',
  senddocument: 'document',
};

class TgError extends Error {
  constructor(
    readonly code: number,
    description: string,
    readonly parameters?: ApiError['parameters'],
  ) {
    super(description);
  }
}

/** Required parameters the Bot API names when they are missing. */
const MISSING: Record<string, string> = { chat_id: 'Bad Request: chat_id is empty', text: 'Bad Request: message text is empty' };

/**
 * The text parameters (a form's fields, a JSON body's values) as the schema's types, read as the
 * Bot API reads them ("true"/"1" a boolean, "-100…" a number); else the 400 it answers.
 */
function checked<S extends TSchema>(schema: S, params: Map<string, string | File>): Static<S> {
  const raw = Object.fromEntries([...params].filter(([, v]) => typeof v === 'string'));
  const value = Value.Convert(schema, raw);
  if (Value.Check(schema, value)) return value;
  const e = Value.Errors(schema, value).First()!;
  const field = e.path.split('/')[1] ?? '';
  if (e.type === ValueErrorType.ObjectRequiredProperty) throw new TgError(400, MISSING[field] ?? `Bad Request: ${field} is empty`); // approx. beyond MISSING
  throw new TgError(400, `Bad Request: can't parse ${field}`); // approx.
}

export async function startFakeTelegram(): Promise<FakeTelegram> {
  const messages: FakeTelegramMessage[] = [];
  const requests: FakeTelegramRequest[] = [];
  const chats = [PUBLIC_CHANNEL, PRIVATE_SUPERGROUP, BASIC_GROUP, PRIVATE_CHAT].map((c) => ({ ...c }));
  const validTokens = new Set([TOKEN]);
  const kicked = new Set<number>();
  const migrated = new Map<number, number>();
  const scripted: FakeTelegramResponse[] = [];
  const hanging = new Set<() => void>();
  const nextId = new Map<number, number>();
  let groups = 0;

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url).pathname);
    if (!m) return fail(new TgError(404, 'Not Found'));
    const token = m[1]!;
    const method = m[2]!.toLowerCase(); // Bot API method names are case-insensitive
    let params: Map<string, string | File>;
    try {
      params = await readParams(req);
    } catch {
      return fail(new TgError(400, "Bad Request: can't parse request body")); // approx.
    }
    const chatParam = params.get('chat_id');
    requests.push({ method: m[2]!, token, chatId: typeof chatParam === 'string' ? chatParam : null });
    // Telegram answers 404 both for unknown methods and for tokens that cannot be valid.
    if (!/^\d+:[\w-]{20,}$/.test(token)) return fail(new TgError(404, 'Not Found'));
    if (method !== 'sendmessage' && method !== 'sendmediagroup' && !SINGLE[method]) return fail(new TgError(404, 'Not Found'));

    const next = scripted.shift();
    if (next === 'hang') return hang(req);
    if (next && next !== 'accept-then-hang') return canned(next);

    try {
      if (!validTokens.has(token)) throw new TgError(401, 'Unauthorized');
      const result = await (method === 'sendmessage'
        ? sendMessage(checked(SendMessageSchema, params))
        : method === 'sendmediagroup'
          ? sendMediaGroup(checked(SendMediaGroupSchema, params), params)
          : sendFile(method, method === 'sendvideo' ? checked(SendVideoSchema, params) : checked(SendFileSchema, params), params));
      if (next === 'accept-then-hang') return hang(req);
      return json({ ok: true, result } satisfies ApiSuccess<Message | Message[]>);
    } catch (err) {
      if (err instanceof TgError) return fail(err);
      throw err;
    }
  }

  function resolveChat(chatId: number | string): FakeTelegramChat {
    const param = String(chatId);
    if (!param) throw new TgError(400, 'Bad Request: chat_id is empty');
    const chat = param.startsWith('@')
      ? chats.find((c) => c.username && `@${c.username}` === param)
      : chats.find((c) => String(c.id) === param);
    const upgradedTo = chat ? migrated.get(chat.id) : undefined;
    if (upgradedTo !== undefined) {
      throw new TgError(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: upgradedTo });
    }
    if (!chat) throw new TgError(400, 'Bad Request: chat not found');
    if (kicked.has(chat.id)) {
      throw new TgError(
        403,
        chat.type === 'private' ? 'Forbidden: bot was blocked by the user' : `Forbidden: bot was kicked from the ${chat.type} chat`,
      );
    }
    return chat;
  }

  function sendMessage(args: Static<typeof SendMessageSchema>): Message {
    const chat = resolveChat(args.chat_id);
    const text = args.text;
    if (!text.trim()) throw new TgError(400, 'Bad Request: message text is empty');
    if (text.length > TEXT_LIMIT) throw new TgError(400, 'Bad Request: message is too long');
    return messageJson(record(chat, { method: 'sendMessage', text, ...sendFlags(args) }));
  }

  async function checkFile(kind: string, part: string | File | undefined, where: string): Promise<File> {
    if (part === undefined) throw new TgError(400, `Bad Request: there is no ${where} in the request`);
    if (!(part instanceof File)) throw new TgError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
    if (kind === 'photo' && !isRasterImage(new Uint8Array(await part.arrayBuffer())))
      throw new TgError(400, 'Bad Request: IMAGE_PROCESS_FAILED');
    return part;
  }

  function caption(v: string | undefined): string | undefined {
    if (v === undefined || v === '') return undefined;
    if (v.length > CAPTION_LIMIT) throw new TgError(400, 'Bad Request: message caption is too long');
    return v;
  }

  async function sendFile(
    method: string,
    args: Static<typeof SendFileSchema> & Partial<Static<typeof SendVideoSchema>>,
    params: Map<string, string | File>,
  ): Promise<Message> {
    const chat = resolveChat(args.chat_id);
    const kind = SINGLE[method]!;
    const file = await checkFile(kind, params.get(kind), kind);
    const msg = record(chat, {
      method: `send${kind[0]!.toUpperCase()}${kind.slice(1)}`,
      caption: caption(args.caption),
      kind,
      file: fileInfo(kind, file),
      supports_streaming: args.supports_streaming === true,
      ...sendFlags(args),
    });
    return messageJson(msg);
  }

  async function sendMediaGroup(args: Static<typeof SendMediaGroupSchema>, params: Map<string, string | File>): Promise<Message[]> {
    const chat = resolveChat(args.chat_id);
    const raw = params.get('media');
    let media: unknown;
    try {
      media = typeof raw === 'string' ? JSON.parse(raw) : undefined;
    } catch {
      throw new TgError(400, "Bad Request: can't parse media JSON object"); // approx.
    }
    if (!Array.isArray(media) || media.length < 2 || media.length > 10)
      throw new TgError(400, 'Bad Request: media must include 2-10 items'); // approx.
    const kinds = media.map((item) => (item as { type?: unknown })?.type);
    const allowed = ['photo', 'video', 'audio', 'document'];
    const mixesFiles = kinds.some((k) => k === 'audio' || k === 'document') && new Set(kinds).size > 1;
    if (kinds.some((k) => typeof k !== 'string' || !allowed.includes(k)) || mixesFiles) {
      throw new TgError(400, "Bad Request: can't use the media of the specified type in the album");
    }
    const items = media.map((item: { type: keyof typeof INPUT_MEDIA }): InputMediaItem => {
      const schema = INPUT_MEDIA[item.type];
      if (Value.Check(schema, item)) return item;
      const e = Value.Errors(schema, item).First()!;
      const type = { string: 'String', boolean: 'Boolean', number: 'Number' }[String(e.schema.type)] ?? 'String';
      throw new TgError(400, `Bad Request: can't parse InputMedia: Field "${e.path.slice(1)}" must be of type ${type}`); // approx.
    });
    const files: { kind: string; file: File; caption?: string; streaming: boolean }[] = [];
    for (const item of items) {
      const attach = /^attach:\/\/(.+)$/.exec(item.media)?.[1];
      if (!attach) throw new TgError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
      const file = await checkFile(item.type, params.get(attach), 'file'); // approx. wording when the part is missing
      files.push({
        kind: item.type,
        file,
        caption: caption(item.caption),
        streaming: item.type === 'video' && item.supports_streaming === true,
      });
    }
    const flags = sendFlags(args);
    const groupId = String(13_000_000_000_000_000 + ++groups);
    return files.map((f) =>
      messageJson(
        record(chat, {
          method: 'sendMediaGroup',
          kind: f.kind,
          caption: f.caption,
          file: fileInfo(f.kind, f.file),
          media_group_id: groupId,
          supports_streaming: f.streaming,
          ...flags,
        }),
      ),
    );
  }

  /** disable_notification and protect_content, present only when the call sent them. */
  function sendFlags(
    args: Static<typeof SendMessageSchema | typeof SendMediaGroupSchema>,
  ): Pick<FakeTelegramMessage, 'disable_notification' | 'protect_content'> {
    const out: Pick<FakeTelegramMessage, 'disable_notification' | 'protect_content'> = {};
    if (args.disable_notification !== undefined) out.disable_notification = args.disable_notification;
    if (args.protect_content !== undefined) out.protect_content = args.protect_content;
    return out;
  }

  function record(chat: FakeTelegramChat, m: Omit<FakeTelegramMessage, 'message_id' | 'chatId' | 'date'>): FakeTelegramMessage {
    const id = nextId.get(chat.id) ?? 100;
    nextId.set(chat.id, id + 1);
    const msg: FakeTelegramMessage = { ...m, message_id: id, chatId: chat.id, date: Math.floor(Date.now() / 1000) };
    messages.push(msg);
    return msg;
  }

  function messageJson(m: FakeTelegramMessage): Message {
    const chat = chatJson(chats.find((c) => c.id === m.chatId)!);
    const out: Message = { message_id: m.message_id, date: m.date, chat };
    if (chat.type === 'channel') out.sender_chat = chat;
    else out.from = BOT;
    if (m.text !== undefined) out.text = m.text;
    if (m.caption !== undefined) out.caption = m.caption;
    if (m.media_group_id) out.media_group_id = m.media_group_id;
    if (m.kind && m.file) {
      const file = { file_id: `BQAC${m.chatId}_${m.message_id}`, file_unique_id: `AgAD${m.message_id}`, file_size: m.file.size };
      const named = { ...file, file_name: m.file.fileName, mime_type: m.file.mimeType };
      // The fake does not read media, so sizes and durations are placeholders.
      if (m.kind === 'photo') out.photo = [{ ...file, width: 8, height: 8 }];
      else if (m.kind === 'video') out.video = { ...named, width: 8, height: 8, duration: 1 };
      else if (m.kind === 'animation') out.animation = { ...named, width: 8, height: 8, duration: 1 };
      else if (m.kind === 'audio') out.audio = { ...named, duration: 1 };
      else out.document = named;
    }
    return out;
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(json({ ok: false, error_code: 504, description: 'gave up' } satisfies ApiError, 504));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    token: TOKEN,
    messages,
    requests,
    chats,
    validTokens,
    kicked,
    migrated,
    failNext(n, response) {
      for (let i = 0; i < n; i++) scripted.push(response);
    },
    revokeToken(token) {
      validTokens.delete(token);
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/** The Bot API takes parameters from the query string and from JSON, urlencoded or multipart bodies. */
async function readParams(req: Request): Promise<Map<string, string | File>> {
  const out = new Map<string, string | File>();
  for (const [k, v] of new URL(req.url).searchParams) out.set(k, v);
  const type = req.headers.get('content-type') ?? '';
  if (type.includes('application/json')) {
    const body: unknown = await req.json();
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    for (const [k, v] of Object.entries(body)) out.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  } else if (type.includes('form')) {
    for (const [k, v] of await req.formData()) out.set(k, v as string | File);
  }
  return out;
}

function fileInfo(field: string, f: File): FakeTelegramFile {
  return { field, fileName: f.name, mimeType: f.type, size: f.size };
}

/** JPEG, PNG or WebP by magic bytes: what Telegram can turn into a photo. */
function isRasterImage(b: Uint8Array): boolean {
  const png = b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47;
  const jpeg = b[0] === 0xff && b[1] === 0xd8;
  const webp = b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45;
  return png || jpeg || webp;
}

/** A scripted answer; a string body goes out as-is (e.g. a proxy's HTML error page). */
function canned(r: { status: number; body?: unknown; headers?: Record<string, string> }): Response {
  if (typeof r.body === 'string') return new Response(r.body, { status: r.status, headers: { 'Content-Type': 'text/html', ...r.headers } });
  return json(r.body ?? { ok: false, error_code: r.status, description: `HTTP ${r.status}` }, r.status, r.headers);
}

function fail(e: TgError): Response {
  const body: ApiError = { ok: false, error_code: e.code, description: e.message };
  if (e.parameters) body.parameters = e.parameters;
  return json(body, e.code);
}

const BOT: User = { id: 7012345678, is_bot: true, first_name: 'Postpilot', username: 'postpilot_bot' };

function chatJson(c: FakeTelegramChat): Chat {
  switch (c.type) {
    case 'private':
      return { id: c.id, type: 'private', first_name: 'Ada', ...(c.username ? { username: c.username } : {}) };
    case 'group':
      return { id: c.id, type: 'group', title: c.title ?? '' };
    case 'supergroup':
    case 'channel':
      return { id: c.id, type: c.type, title: c.title ?? '', ...(c.username ? { username: c.username } : {}) };
  }
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}
