// A local fake Telegram Bot API server (POST /bot<token>/<method>) speaking the methods the
// connector uses, with the Bot API's envelope ({ok, result} / {ok:false, error_code, description,
// parameters}) and its error wording. The wording and the order of the checks follow the official
// Bot API server's source (tdlib/telegram-bot-api, Bot API 10.0): Client.cpp makes the parameter
// errors and passes TDLib's own through fail_query_with_error, which prefixes "Bad Request: " and
// lower-cases the first letter unless the second is upper-case or '_' ("Message text is empty"
// reaches the client as "Bad Request: message text is empty"). Each wording notes its source:
// Client.cpp, the server's HTTP layer, or TDLib (td/, at the commit the server pins).
//
// Held to @grammyjs/types (the Bot API's published types): the parameters the connector sends are
// checked against TypeBox schemas whose Static types equal the package's
// (test/shapes-telegram.test.ts asserts it). Where the Bot API refuses a call that breaks them, the
// fake answers as it does: 400 {ok: false, error_code: 400, description: "Bad Request: …"}. Where
// the Bot API reads a value leniently instead (flags through to_bool, a number for a string
// field), the fake still refuses, in words marked as its own. Parameters outside the schemas are
// ignored, as the Bot API ignores them. Answers are typed by the package's ApiResponse and Message.
import type { PublishRequest } from '../../platforms/types.ts';
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

/** Required parameters as the Bot API names them when missing: Client.cpp check_chat and get_input_message_text. */
const MISSING: Record<string, string> = { chat_id: 'Bad Request: chat_id is empty', text: 'Bad Request: message text is empty' };

/**
 * The text parameters (a form's fields, a JSON body's values) as the schema's types ("true"/"1" a
 * boolean, "-100…" a number); else the Bot API's 400 for a missing one, or the fake's own refusal.
 */
function checked<S extends TSchema>(schema: S, params: Map<string, string | File>): Static<S> {
  const raw = Object.fromEntries([...params].filter(([, v]) => typeof v === 'string'));
  const value = Value.Convert(schema, raw);
  if (Value.Check(schema, value)) return value;
  const e = Value.Errors(schema, value).First()!;
  const field = e.path.split('/')[1] ?? '';
  if (e.type === ValueErrorType.ObjectRequiredProperty) {
    const missing = MISSING[field];
    if (!missing) throw new Error(`fake Telegram: no Bot API wording for a missing ${field}`);
    throw new TgError(400, missing);
  }
  // The fake's own refusal: Client.cpp reads flags with to_bool ("true", "yes" or "1", anything
  // else false) and chat_id as text, so the Bot API takes any value here.
  throw new TgError(400, `Bad Request: can't parse ${field}`);
}

/** Client.cpp get_formatted_text: a text or caption over 32 KiB of UTF-8. */
const FORMATTED_TEXT_BYTES = 1 << 15;
const tooLongText = (v: unknown) => typeof v === 'string' && new TextEncoder().encode(v).length > FORMATTED_TEXT_BYTES;

/** TDLib check_message_group_message_contents (MessageContent.cpp): at most 10 album items. */
const ALBUM_LIMIT = 10;

/** How tdutils' JsonObject reads an InputMedia field (get_optional_string/bool/int_field). */
type JsonField = 'String' | 'Boolean' | 'Int';
/** The fields Client.cpp get_input_media reads before `type`, in its order. */
const ITEM_FIELDS: [string, JsonField][] = [
  ['caption', 'String'],
  ['parse_mode', 'String'],
  ['show_caption_above_media', 'Boolean'],
  ['has_spoiler', 'Boolean'],
];
/** The fields it reads for each type, in its order; a type missing here is refused. */
const TYPE_FIELDS: Record<string, [string, JsonField][]> = {
  photo: [],
  video: [
    ['width', 'Int'],
    ['height', 'Int'],
    ['duration', 'Int'],
    ['cover', 'String'],
    ['start_timestamp', 'Int'],
    ['supports_streaming', 'Boolean'],
  ],
  audio: [
    ['duration', 'Int'],
    ['title', 'String'],
    ['performer', 'String'],
  ],
  document: [['disable_content_type_detection', 'Boolean']],
};

/**
 * tdutils JsonBuilder.cpp's complaint about a present field: a String field takes a string or a
 * number, a Boolean field only a boolean, an Int field a number or a string holding an int32.
 */
function fieldError(o: Record<string, unknown>, name: string, kind: JsonField): string | undefined {
  if (!Object.hasOwn(o, name)) return undefined;
  const v = o[name];
  if (kind === 'String') return typeof v === 'string' || typeof v === 'number' ? undefined : `Field "${name}" must be of type String`;
  if (kind === 'Boolean') return typeof v === 'boolean' ? undefined : `Field "${name}" must be of type Boolean`;
  if (typeof v !== 'string' && typeof v !== 'number') return `Field "${name}" must be a Number`;
  const n = Number(v);
  const int32 = (typeof v === 'number' || /^-?\d+$/.test(v)) && Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31;
  return int32 ? undefined : `Field "${name}" must be a valid Number`;
}

/**
 * Client.cpp get_input_file: a file part, `attach://<part>` naming one, or other text (a file_id
 * or URL, left to TDLib); undefined when there is no file.
 */
function inputFile(params: Map<string, string | File>, value: string | File | undefined): File | string | undefined {
  if (value instanceof File) return value;
  if (!value) return undefined;
  const part = /^attach:\/\/(.*)$/s.exec(value)?.[1];
  if (part === undefined) return value;
  const file = params.get(part);
  return file instanceof File ? file : undefined;
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
    if (!m) return fail(new TgError(404, 'Not Found')); // HttpConnection.cpp
    const token = m[1]!;
    const method = m[2]!.toLowerCase(); // Bot API method names are case-insensitive
    let params: Map<string, string | File>;
    try {
      params = await readParams(req);
    } catch {
      // tdnet HttpReader: a body it cannot read gets the bare status line, an empty body, and the
      // connection closed; its reason ("Bad Request: JSON object expected", …) stays in the log.
      return new Response(null, { status: 400, headers: { Connection: 'close' } });
    }
    const chatParam = params.get('chat_id');
    requests.push({ method: m[2]!, token, chatId: typeof chatParam === 'string' ? chatParam : null });
    // A token that cannot be valid: 404 "Not Found", as api.telegram.org answers it (not Client.cpp's
    // wording: the server's ClientManager.cpp answers 401 "Unauthorized: invalid token specified").
    if (!/^\d+:[\w-]{20,}$/.test(token)) return fail(new TgError(404, 'Not Found'));
    if (method !== 'sendmessage' && method !== 'sendmediagroup' && !SINGLE[method]) {
      return fail(new TgError(404, 'Not Found: method not found')); // Client.cpp on_cmd
    }

    const next = scripted.shift();
    if (next === 'hang') return hang(req);
    if (next && next !== 'accept-then-hang') return canned(next);

    try {
      if (!validTokens.has(token)) throw new TgError(401, 'Unauthorized'); // Client.cpp get_closing_error
      const result = await (method === 'sendmessage'
        ? sendMessage(params)
        : method === 'sendmediagroup'
          ? sendMediaGroup(params)
          : sendFile(method, params));
      if (next === 'accept-then-hang') return hang(req);
      return json({ ok: true, result } satisfies ApiSuccess<Message | Message[]>);
    } catch (err) {
      if (err instanceof TgError) return fail(err);
      throw err;
    }
  }

  /**
   * Client.cpp check_chat, its TdOnCheckChatCallback and check_chat_access; a blocked bot is
   * fail_query_with_error's USER_IS_BLOCKED.
   */
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

  // Client.cpp reads a method's content (text, file, album) before the flags and the chat, and
  // TDLib checks what it sends after the chat is found.
  function sendMessage(params: Map<string, string | File>): Message {
    const text = params.get('text');
    // Client.cpp get_input_message_text.
    if (typeof text !== 'string' || text === '') throw new TgError(400, 'Bad Request: message text is empty');
    if (tooLongText(text)) throw new TgError(400, 'Bad Request: text is too long'); // Client.cpp get_formatted_text
    const args = checked(SendMessageSchema, params);
    const chat = resolveChat(args.chat_id);
    // TDLib fix_formatted_text (MessageEntity.cpp): nothing left after trimming.
    if (!text.trim()) throw new TgError(400, 'Bad Request: text must be non-empty');
    if (text.length > TEXT_LIMIT) throw new TgError(400, 'Bad Request: message is too long'); // TDLib MessageContent.cpp
    return messageJson(record(chat, { method: 'sendMessage', text, ...sendFlags(args) }));
  }

  function caption(v: string | undefined): string | undefined {
    if (v === undefined || v === '') return undefined;
    if (v.length > CAPTION_LIMIT) throw new TgError(400, 'Bad Request: message caption is too long'); // TDLib MessageContent.cpp
    return v;
  }

  async function isPhoto(file: File): Promise<boolean> {
    return isRasterImage(new Uint8Array(await file.arrayBuffer()));
  }

  async function sendFile(method: string, params: Map<string, string | File>): Promise<Message> {
    const kind = SINGLE[method]!;
    const file = inputFile(params, params.get(kind));
    // Client.cpp process_send_photo_query and its siblings.
    if (file === undefined) throw new TgError(400, `Bad Request: there is no ${kind} in the request`);
    if (tooLongText(params.get('caption'))) throw new TgError(400, 'Bad Request: text is too long'); // Client.cpp get_formatted_text
    const args: Static<typeof SendFileSchema> & Partial<Static<typeof SendVideoSchema>> =
      kind === 'video' ? checked(SendVideoSchema, params) : checked(SendFileSchema, params);
    const chat = resolveChat(args.chat_id);
    // Failures while sending, passed through: a file_id or URL Telegram cannot use (TDLib
    // MessagesManager process_send_message_fail_error), bytes it cannot read as a photo (Telegram's
    // own error code, kept upper-case by fail_query_with_error).
    if (typeof file === 'string') throw new TgError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
    const text = caption(args.caption);
    if (kind === 'photo' && !(await isPhoto(file))) throw new TgError(400, 'Bad Request: IMAGE_PROCESS_FAILED');
    const msg = record(chat, {
      method: `send${kind[0]!.toUpperCase()}${kind.slice(1)}`,
      caption: text,
      kind,
      file: fileInfo(kind, file),
      supports_streaming: args.supports_streaming === true,
      ...sendFlags(args),
    });
    return messageJson(msg);
  }

  /**
   * One album item as Client.cpp get_input_media reads it (for an album): its complaints come out
   * as "Bad Request: can't parse InputMedia: <complaint>".
   */
  function albumItem(item: unknown, params: Map<string, string | File>): InputMediaItem & { file: File | string } {
    const refuse = (why: string) => new TgError(400, `Bad Request: can't parse InputMedia: ${why}`);
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw refuse('expected an Object');
    const o = item as Record<string, unknown>;
    for (const [name, kind] of ITEM_FIELDS) {
      // The caption goes through get_formatted_text once parse_mode is read.
      const why = fieldError(o, name, kind) ?? (name === 'parse_mode' && tooLongText(o.caption) ? 'Text is too long' : undefined);
      if (why) throw refuse(why);
    }
    if (!Object.hasOwn(o, 'type')) throw refuse('Can\'t find field "type"');
    const typeError = fieldError(o, 'type', 'String') ?? fieldError(o, 'media', 'String');
    if (typeError) throw refuse(typeError);
    const type = String(o.type);
    const file = inputFile(params, o.media === undefined ? undefined : String(o.media));
    if (file === undefined) throw refuse('media not found');
    if (type === 'animation') throw refuse(`type "${type}" can't be used in sendMediaGroup`);
    const fields = TYPE_FIELDS[type];
    if (!fields) throw refuse(`type "${type}" is unsupported`);
    for (const [name, kind] of fields) {
      const why = fieldError(o, name, kind);
      if (why) throw refuse(why);
    }
    const schema = INPUT_MEDIA[type as keyof typeof INPUT_MEDIA];
    if (!Value.Check(schema, o)) {
      // The fake's own refusal, in JsonObject's words: the Bot API also takes a number for a
      // String field and an integer string for a Number one, which the published types do not.
      const e = Value.Errors(schema, o).First()!;
      const name = e.path.slice(1);
      throw refuse(
        e.schema.type === 'number'
          ? `Field "${name}" must be a Number`
          : `Field "${name}" must be of type ${e.schema.type === 'boolean' ? 'Boolean' : 'String'}`,
      );
    }
    return { ...(o as InputMediaItem), file };
  }

  async function sendMediaGroup(params: Map<string, string | File>): Promise<Message[]> {
    const raw = params.get('media');
    // Client.cpp get_required_string_arg and get_input_message_contents.
    if (typeof raw !== 'string' || raw === '') throw new TgError(400, 'Bad Request: parameter "media" is required');
    let media: unknown;
    try {
      media = JSON.parse(raw);
    } catch {
      throw new TgError(400, "Bad Request: can't parse media JSON object");
    }
    if (!Array.isArray(media)) throw new TgError(400, 'Bad Request: expected an Array of InputMedia');
    const items = media.map((item) => albumItem(item, params));
    const args = checked(SendMediaGroupSchema, params);
    const chat = resolveChat(args.chat_id);
    // TDLib MessagesManager send_message_group, then check_message_group_message_contents
    // (MessageContent.cpp); an album of one item goes out as a lone message.
    if (!items.length) throw new TgError(400, 'Bad Request: there are no messages to send');
    const captions = items.map((item) => caption(item.caption));
    if (items.length > ALBUM_LIMIT) throw new TgError(400, 'Bad Request: too many messages to send as an album');
    const above = (item: InputMediaItem) => (item.type === 'photo' || item.type === 'video') && item.show_caption_above_media === true;
    if (items.some((item) => above(item) !== above(items[0]!))) {
      throw new TgError(400, 'Bad Request: parameter show_caption_above_media must be the same for all messages');
    }
    const kinds = [...new Set(items.map((item) => item.type))];
    // TDLib names the first audio or document type of an unordered set; the fake takes item order.
    const alone = kinds.length > 1 ? kinds.find((k) => k === 'audio' || k === 'document') : undefined;
    if (alone) throw new TgError(400, `Bad Request: ${alone} can't be mixed with other media types`);
    // A file that fails while sending fails the album: Client.cpp on_message_send_failed wraps the
    // error with the message's place (the messages settled before it; the fake uses item order).
    const failed = (i: number, error: string) =>
      new TgError(400, `Bad Request: failed to send message #${i + 1} with the error message "${error}"`);
    const files: File[] = [];
    for (const [i, item] of items.entries()) {
      if (typeof item.file === 'string') throw failed(i, 'Wrong file identifier/HTTP URL specified');
      if (item.type === 'photo' && !(await isPhoto(item.file))) throw failed(i, 'IMAGE_PROCESS_FAILED');
      files.push(item.file);
    }
    const flags = sendFlags(args);
    const groupId = items.length > 1 ? String(13_000_000_000_000_000 + ++groups) : undefined;
    return items.map((item, i) =>
      messageJson(
        record(chat, {
          method: 'sendMediaGroup',
          kind: item.type,
          caption: captions[i],
          file: fileInfo(item.type, files[i]!),
          ...(groupId ? { media_group_id: groupId } : {}),
          supports_streaming: item.type === 'video' && item.supports_streaming === true,
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
    // tdnet HttpReader parse_json_parameters: an empty body is no parameters, a JSON string is
    // the parameter `content`, anything else must be an object.
    const text = await req.text();
    if (text === '') return out;
    const body: unknown = JSON.parse(text);
    if (typeof body === 'string') out.set('content', body);
    else if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('JSON object expected');
    else for (const [k, v] of Object.entries(body)) out.set(k, typeof v === 'string' ? v : JSON.stringify(v));
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

/** A publish to the fake's public channel, as the activity hands it to the connector; `over` changes any part. */
export function telegramRequest(f: FakeTelegram, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello Telegram',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { botToken: f.token, chatId: String(PUBLIC_CHANNEL.id) },
    ...over,
  };
}

/** A Bot API method called directly (a form or a JSON body), as a client other than the connector would: its status and body. */
export async function callBot<Body = Record<string, unknown>>(
  f: FakeTelegram,
  method: string,
  body: FormData | Record<string, unknown>,
): Promise<{ status: number; body: Body }> {
  const init: RequestInit =
    body instanceof FormData
      ? { method: 'POST', body }
      : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(`${f.url}/bot${f.token}/${method}`, init);
  return { status: res.status, body: (await res.json()) as Body };
}
