// One call to an OpenAI-compatible chat-completions endpoint (OpenAI, llama.cpp, Ollama, vLLM…):
// the request body every one of them takes (model and messages only, no vendor options) and the
// answer's first choice. The host is the operator's (GENERATE_API_URL), not a tenant's, so no
// private-address guard; but every call is time-limited, and any failure is a 503 that says so.
import { ApiError } from '../lib/errors.ts';

export interface ChatConfig {
  /** The full endpoint, e.g. https://api.openai.com/v1/chat/completions (lib/config.ts chatCompletionsUrl). */
  url: string;
  model: string;
  apiKey?: string;
  /** Per call; 30 s when not given. */
  timeoutMs?: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export const DEFAULT_CHAT_TIMEOUT_MS = 30_000;
/** Seconds a client is asked to wait after the generator failed. */
const RETRY_AFTER_SECONDS = 5;

/** The generator did not give a usable answer: 503 with Retry-After (logged, as every 5xx is). */
export function generatorUnavailable(reason: string): ApiError {
  return new ApiError('internal_error', `The text generator is unavailable (${reason}); nothing was generated. Retry shortly.`, {
    status: 503,
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
}

/** The assistant's text of the first choice. */
export async function chatCompletion(cfg: ChatConfig, messages: ChatMessage[], fetchImpl: typeof fetch = fetch): Promise<string> {
  const timeoutMs = cfg.timeoutMs ?? DEFAULT_CHAT_TIMEOUT_MS;
  let res: Response;
  try {
    res = await fetchImpl(cfg.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
      body: JSON.stringify({ model: cfg.model, messages }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    const name = (err as { name?: string } | null)?.name;
    throw generatorUnavailable(name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'it could not be reached');
  }
  let body: { choices?: { message?: { content?: unknown } }[] } | undefined;
  try {
    body = res.ok ? ((await res.json()) as typeof body) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw generatorUnavailable(`it answered HTTP ${res.status}`);
  }
  const content = body?.choices?.[0]?.message?.content;
  // Some servers answer content parts ([{type: 'text', text}]) instead of a string.
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((c) => (typeof (c as { text?: unknown })?.text === 'string' ? (c as { text: string }).text : '')).join('')
        : '';
  if (!text.trim()) throw generatorUnavailable('its answer held no text');
  return text;
}
