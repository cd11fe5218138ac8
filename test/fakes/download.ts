// What a platform that pulls media by URL (Instagram, Threads, TikTok photos) got from it: its
// content type and size, or null when the URL did not answer (2 s, as the fakes' platforms give up).
export async function download(url: string): Promise<{ contentType: string; size: number } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) return null;
    const bytes = await res.arrayBuffer();
    return { contentType: res.headers.get('content-type') ?? '', size: bytes.byteLength };
  } catch {
    return null;
  }
}
