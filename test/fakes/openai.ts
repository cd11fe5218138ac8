// A local OpenAI-compatible chat-completions server (POST /v1/chat/completions) speaking the real
// contract: a JSON body with `model` and `messages` ({role, content}, content a string or parts
// with `text` / `image_url`), Bearer auth when a key is set, errors as `{error: {message, type,
// param, code}}`, and answers as `chat.completion` objects with `choices[0].message.content`.
//
// What it writes, by default: for a post draft (the system message names the limit, "at most N
// characters as P counts"), a text far over the limit the first time and one that fits after a
// correction (the conversation then holds its earlier answer) — `behaviour: 'always-long'` keeps
// it over the limit; for an image (an `image_url` part), a description.

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] }[];
}

export type Behaviour = 'overshoot-once' | 'always-long' | 'fits' | 'fail-500' | 'slow' | 'bare-text';

export interface FakeOpenAI {
  /** Base URL as an operator configures it (…/v1); the endpoint is `${url}/chat/completions`. */
  url: string;
  requests: { authorization: string | null; body: ChatRequest }[];
  behaviour: Behaviour;
  /** What an image description says. */
  description: string;
  stop(): void;
}

/** Text of the given length from words, emoji and a URL (they weigh more on X and Mastodon). */
export function filler(chars: number): string {
  const words = ['Launch', 'day', 'is', 'here', '🚀', 'our', 'new', 'planner', 'ships', 'today', 'https://example.com/launch', '👨‍👩‍👧'];
  let out = '';
  for (let i = 0; out.length < chars; i++) out += `${words[i % words.length]} `;
  return out.trim();
}

function draftReply(req: ChatRequest, behaviour: Behaviour): string {
  const system = String(req.messages.find((m) => m.role === 'system')?.content ?? '');
  const limit = Number(/at most (\d+) characters as/.exec(system)?.[1] ?? 280);
  const wantsTitle = system.includes('"title"');
  const correcting = req.messages.some((m) => m.role === 'assistant');
  const long = behaviour === 'always-long' || (behaviour === 'overshoot-once' && !correcting) || behaviour === 'bare-text';
  // Over: twice the limit (at least 400 characters). Fits: well inside it, as a careful model writes.
  const text = long ? filler(Math.max(limit * 2, 400)) : filler(Math.max(1, Math.floor(limit * 0.5)));
  if (behaviour === 'bare-text') return text;
  const title = long ? filler(400) : 'Launch day: the new planner';
  return JSON.stringify(wantsTitle ? { title, text } : { text });
}

export function startFakeOpenAI(opts: { apiKey?: string; behaviour?: Behaviour } = {}): FakeOpenAI {
  const fake: FakeOpenAI = {
    url: '',
    requests: [],
    behaviour: opts.behaviour ?? 'overshoot-once',
    description: 'A blue square on a white background.',
    stop: () => server.stop(true),
  };
  const error = (status: number, message: string, type: string, code: string | null = null) =>
    Response.json({ error: { message, type, param: null, code } }, { status });
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path !== '/v1/chat/completions')
        return error(404, `Unknown request URL: ${req.method} ${path}.`, 'invalid_request_error', 'unknown_url');
      if (req.method !== 'POST') return error(405, 'Method not allowed.', 'invalid_request_error');
      const authorization = req.headers.get('authorization');
      if (opts.apiKey && authorization !== `Bearer ${opts.apiKey}`)
        return error(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      if (!(req.headers.get('content-type') ?? '').startsWith('application/json'))
        return error(400, 'Expected a JSON body.', 'invalid_request_error');
      let body: ChatRequest;
      try {
        body = (await req.json()) as ChatRequest;
      } catch {
        return error(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      }
      if (typeof body.model !== 'string' || !body.model) return error(400, 'you must provide a model parameter', 'invalid_request_error');
      const valid =
        Array.isArray(body.messages) &&
        body.messages.length > 0 &&
        body.messages.every(
          (m) => ['system', 'user', 'assistant'].includes(m.role) && (typeof m.content === 'string' || Array.isArray(m.content)),
        );
      if (!valid) return error(400, "Invalid 'messages': each needs a role and content.", 'invalid_request_error', 'invalid_value');
      fake.requests.push({ authorization, body });
      if (fake.behaviour === 'fail-500') return error(500, 'The server had an error while processing your request.', 'server_error');
      if (fake.behaviour === 'slow') await Bun.sleep(2000);
      const image = body.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));
      const content = image ? fake.description : draftReply(body, fake.behaviour);
      return Response.json({
        id: `chatcmpl-${fake.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}
