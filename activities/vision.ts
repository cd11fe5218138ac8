// The vision pass: asks an OpenAI-compatible chat-completions endpoint to describe an image.
export interface VisionConfig {
  /** Full URL of the chat-completions endpoint, e.g. https://api.openai.com/v1/chat/completions. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

const PROMPT =
  'Describe what this image shows in one or two plain sentences, for someone who cannot see it. ' +
  'Mention any readable text. Do not speculate about who people are.';

export async function describeImage(
  cfg: VisionConfig,
  bytes: Uint8Array,
  contentType: string,
  altText: string | null,
  fetchImpl: typeof fetch,
): Promise<string> {
  const dataUrl = `data:${contentType};base64,${Buffer.from(bytes).toString('base64')}`;
  const res = await fetchImpl(cfg.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
    body: JSON.stringify({
      model: cfg.model,
      max_tokens: 200,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: altText ? `${PROMPT} The uploader's alt text: "${altText}".` : PROMPT },
            { type: 'image_url', image_url: { url: dataUrl } },
          ],
        },
      ],
    }),
    signal: AbortSignal.timeout(cfg.timeoutMs ?? 60_000),
  });
  if (!res.ok) throw new Error(`vision endpoint answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
  const content = body.choices?.[0]?.message?.content;
  const text =
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => (c as { text?: string }).text ?? '').join('') : '';
  if (!text.trim()) throw new Error('vision endpoint returned no description');
  return text.trim().slice(0, 2000);
}
