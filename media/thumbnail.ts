// Thumbnails: WebP, at most THUMBNAIL_MAX_SIDE px on the long side (never enlarged), for images
// (EXIF orientation applied), GIFs (first frame) and videos (a frame at ~1 s, or the first frame
// of a shorter video). PDFs and audio get none.
import sharp from 'sharp';
import { canonicalMimeType } from './catalog.ts';
import { ffmpegPath, run } from './exec.ts';
import { MediaRejected, type Thumbnail } from './types.ts';

export const THUMBNAIL_MAX_SIDE = 320;
export const THUMBNAIL_CONTENT_TYPE = 'image/webp';
const TIMEOUT_SECONDS = 60;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);
const VIDEO_TYPES = new Set(['video/mp4', 'video/quicktime']);

async function toThumbnail(input: string | Uint8Array): Promise<Thumbnail> {
  const { data, info } = await sharp(input, { failOn: 'truncated' }) // first frame/page only
    .autoOrient()
    .resize({ width: THUMBNAIL_MAX_SIDE, height: THUMBNAIL_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .timeout({ seconds: TIMEOUT_SECONDS })
    .toBuffer({ resolveWithObject: true });
  return {
    bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    contentType: THUMBNAIL_CONTENT_TYPE,
    width: info.width,
    height: info.height,
  };
}

/**
 * A frame of the video as PNG bytes, or null when there is no frame at `seconds` (the video is
 * shorter). ffmpeg applies the rotation metadata, squares anamorphic pixels and shrinks the frame
 * to at most 640 px a side, so the PNG on the pipe stays small.
 */
async function videoFrame(path: string, seconds: number): Promise<Uint8Array | null> {
  const r = await run(
    [
      await ffmpegPath(),
      '-nostdin',
      '-hide_banner',
      '-v',
      'error',
      '-ss',
      String(seconds),
      '-i',
      `file:${path}`,
      '-map',
      '0:v:0',
      '-frames:v',
      '1',
      '-vf',
      "scale=w='min(640,iw*sar)':h='min(640,ih)':force_original_aspect_ratio=decrease,setsar=1",
      '-f',
      'image2pipe',
      '-c:v',
      'png',
      '-',
    ],
    { timeoutMs: TIMEOUT_SECONDS * 1000, maxStdoutBytes: 16 * 1024 * 1024 },
  );
  if (r.timedOut) throw new MediaRejected('the video took too long to read for a thumbnail');
  if (r.exitCode !== 0) throw new MediaRejected('could not extract a frame from the video');
  return r.stdout.length > 0 ? r.stdout : null;
}

/**
 * A thumbnail for the file, given the type probeFile reported (ProbeResult.sniffedMimeType), or
 * null for types that get none (pdf, audio). Throws MediaRejected when an image cannot be decoded
 * or no frame can be read from a video.
 */
export async function makeThumbnail(path: string, sniffedMimeType: string): Promise<Thumbnail | null> {
  const mime = canonicalMimeType(sniffedMimeType);
  if (IMAGE_TYPES.has(mime)) {
    try {
      return await toThumbnail(path);
    } catch (e) {
      const err = new MediaRejected('the image could not be decoded for a thumbnail');
      (err as { cause?: unknown }).cause = e;
      throw err;
    }
  }
  if (VIDEO_TYPES.has(mime)) {
    const frame = (await videoFrame(path, 1)) ?? (await videoFrame(path, 0));
    if (!frame) throw new MediaRejected('could not extract a frame from the video');
    return toThumbnail(frame);
  }
  return null;
}
