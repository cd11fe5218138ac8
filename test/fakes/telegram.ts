// A local fake Telegram Bot API server (POST /bot<token>/<method>) speaking the methods the
// connector uses, with the Bot API's envelope ({ok, result} / {ok:false, error_code, description,
// parameters}) and its error wording. Wording marked "approx." was not confirmed against Telegram.
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
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
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
      const chat = resolveChat(chatParam);
      const result = await (method === 'sendmessage'
        ? sendMessage(chat, params)
        : method === 'sendmediagroup'
          ? sendMediaGroup(chat, params)
          : sendFile(method, chat, params));
      if (next === 'accept-then-hang') return hang(req);
      return json({ ok: true, result });
    } catch (err) {
      if (err instanceof TgError) return fail(err);
      throw err;
    }
  }

  function resolveChat(param: string | File | undefined): FakeTelegramChat {
    if (typeof param !== 'string' || !param) throw new TgError(400, 'Bad Request: chat_id is empty');
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

  function sendMessage(chat: FakeTelegramChat, params: Map<string, string | File>) {
    const text = params.get('text');
    if (typeof text !== 'string' || !text.trim()) throw new TgError(400, 'Bad Request: message text is empty');
    if (text.length > TEXT_LIMIT) throw new TgError(400, 'Bad Request: message is too long');
    return messageJson(record(chat, { method: 'sendMessage', text, ...sendFlags(params) }));
  }

  async function checkFile(kind: string, part: string | File | undefined, where: string): Promise<File> {
    if (part === undefined) throw new TgError(400, `Bad Request: there is no ${where} in the request`);
    if (!(part instanceof File)) throw new TgError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
    if (kind === 'photo' && !isRasterImage(new Uint8Array(await part.arrayBuffer())))
      throw new TgError(400, 'Bad Request: IMAGE_PROCESS_FAILED');
    return part;
  }

  function caption(v: unknown): string | undefined {
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') throw new TgError(400, "Bad Request: can't parse caption"); // approx.
    if (v.length > CAPTION_LIMIT) throw new TgError(400, 'Bad Request: message caption is too long');
    return v;
  }

  async function sendFile(method: string, chat: FakeTelegramChat, params: Map<string, string | File>) {
    const kind = SINGLE[method]!;
    const file = await checkFile(kind, params.get(kind), kind);
    const msg = record(chat, {
      method: `send${kind[0]!.toUpperCase()}${kind.slice(1)}`,
      caption: caption(params.get('caption')),
      kind,
      file: fileInfo(kind, file),
      supports_streaming: params.get('supports_streaming') === 'true',
      ...sendFlags(params),
    });
    return messageJson(msg);
  }

  async function sendMediaGroup(chat: FakeTelegramChat, params: Map<string, string | File>) {
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
    const files: { kind: string; file: File; caption?: string; streaming: boolean }[] = [];
    for (const item of media as { type: string; media?: unknown; caption?: unknown; supports_streaming?: unknown }[]) {
      const attach = typeof item.media === 'string' ? /^attach:\/\/(.+)$/.exec(item.media)?.[1] : undefined;
      if (!attach) throw new TgError(400, 'Bad Request: wrong file identifier/HTTP URL specified');
      const file = await checkFile(item.type, params.get(attach), 'file'); // approx. wording when the part is missing
      files.push({ kind: item.type, file, caption: caption(item.caption), streaming: item.supports_streaming === true });
    }
    const flags = sendFlags(params);
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

  /** disable_notification and protect_content as sent (Bot API booleans: true/false, 1/0 in a form). */
  function sendFlags(params: Map<string, string | File>): Pick<FakeTelegramMessage, 'disable_notification' | 'protect_content'> {
    const out: Pick<FakeTelegramMessage, 'disable_notification' | 'protect_content'> = {};
    for (const k of ['disable_notification', 'protect_content'] as const) {
      const v = params.get(k);
      if (v === undefined) continue;
      if (v !== 'true' && v !== 'false' && v !== '1' && v !== '0') throw new TgError(400, `Bad Request: can't parse ${k}`); // approx.
      out[k] = v === 'true' || v === '1';
    }
    return out;
  }

  function record(chat: FakeTelegramChat, m: Omit<FakeTelegramMessage, 'message_id' | 'chatId' | 'date'>): FakeTelegramMessage {
    const id = nextId.get(chat.id) ?? 100;
    nextId.set(chat.id, id + 1);
    const msg: FakeTelegramMessage = { ...m, message_id: id, chatId: chat.id, date: Math.floor(Date.now() / 1000) };
    messages.push(msg);
    return msg;
  }

  function messageJson(m: FakeTelegramMessage) {
    const chat = chats.find((c) => c.id === m.chatId)!;
    const chatJson: Record<string, unknown> = { id: chat.id, type: chat.type };
    if (chat.title) chatJson.title = chat.title;
    if (chat.username) chatJson.username = chat.username;
    if (chat.type === 'private') chatJson.first_name = 'Ada';
    const out: Record<string, unknown> = { message_id: m.message_id, date: m.date, chat: chatJson };
    if (chat.type === 'channel') out.sender_chat = chatJson;
    else out.from = { id: 7012345678, is_bot: true, first_name: 'Postpilot', username: 'postpilot_bot' };
    if (m.text !== undefined) out.text = m.text;
    if (m.caption !== undefined) out.caption = m.caption;
    if (m.media_group_id) out.media_group_id = m.media_group_id;
    if (m.kind && m.file) {
      const file = { file_id: `BQAC${m.chatId}_${m.message_id}`, file_unique_id: `AgAD${m.message_id}`, file_size: m.file.size };
      out[m.kind] =
        m.kind === 'photo' ? [{ ...file, width: 8, height: 8 }] : { ...file, file_name: m.file.fileName, mime_type: m.file.mimeType };
    }
    return out;
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(json({ ok: false, error_code: 504, description: 'gave up' }, 504));
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
  const body: Record<string, unknown> = { ok: false, error_code: e.code, description: e.message };
  if (e.parameters) body.parameters = e.parameters;
  return json(body, e.code);
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}
