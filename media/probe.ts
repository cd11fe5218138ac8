// Checks that an uploaded file really is what was declared, and extracts its dimensions/duration.
//
//   images (jpeg/png/webp): sharp reads the header, then decodes every pixel (failOn 'truncated')
//     so truncated or corrupt data is refused; width/height are the displayed size (EXIF
//     orientation applied).
//   gif: the block structure is walked to its end (libvips happily decodes a GIF cut between
//     frames), then sharp decodes the first frame; width/height are one frame's.
//   video/audio: ffprobe (-show_streams -show_format) for streams, size and duration, then a
//     demux-only pass through ffmpeg (-c copy -f null, -xerror) that reads every packet, so a file
//     whose index is intact but whose data is cut short (e.g. a "faststart" MP4 or a WAV) is
//     refused. Frames are not decoded: that would cost minutes on a 1 GB video.
//   pdf: starts with %PDF- and has %%EOF in its last 1 KiB.
import { stat } from 'node:fs/promises';
import sharp from 'sharp';
import { canonicalMimeType, formatLimit, ruleFor } from './catalog.ts';
import { ffmpegPath, ffprobePath, run } from './exec.ts';
import { describeMimeType, HEAD_BYTES, sameFamily, sniffMimeType } from './sniff.ts';
import { MediaRejected, type ProbeResult } from './types.ts';

/** Per external step (sharp pipeline, ffprobe, ffmpeg pass). */
export const PROBE_TIMEOUT_SECONDS = 60;

function rejected(reason: string, cause?: unknown): MediaRejected {
  const e = new MediaRejected(reason);
  if (cause !== undefined) (e as { cause?: unknown }).cause = cause;
  return e;
}

/**
 * Sniffs the file, refuses it (MediaRejected) when the bytes are not the declared type or are
 * truncated/corrupt, and returns what it is.
 *
 * `sniffedMimeType` comes from the magic numbers, refined for the MP4/QuickTime family by the
 * streams found inside: a file with no video stream is reported as audio/mp4 (whatever its
 * brand), a file with video but an audio brand as video/mp4. So makeThumbnail can be given it
 * directly.
 *
 * A missing file or an unreadable path is an ordinary Error (not the uploader's fault).
 */
export async function probeFile(path: string, declaredMimeType: string): Promise<ProbeResult> {
  const rule = ruleFor(declaredMimeType);
  if (!rule) throw rejected(`${declaredMimeType} is not an accepted media type`);
  const declared = canonicalMimeType(declaredMimeType);

  const { size } = await stat(path);
  if (size === 0) throw rejected('the file is empty');
  if (size > rule.maxBytes) throw rejected(`the file is larger than the ${formatLimit(rule.maxBytes)} limit for ${declared}`);
  const head = await Bun.file(path).slice(0, HEAD_BYTES).bytes();
  const sniffed = sniffMimeType(head);
  if (!sniffed) {
    throw rejected(`the file is not ${declared}: its contents are not a recognised image, video, audio or PDF format`);
  }
  if (!sameFamily(declared, sniffed)) throw rejected(`the file is ${describeMimeType(sniffed)}, not ${declared}`);

  switch (rule.type) {
    case 'image':
      return { sniffedMimeType: sniffed, ...(await probeImage(path)) };
    case 'gif':
      await checkGifStructure(path);
      return { sniffedMimeType: sniffed, ...(await probeImage(path)) };
    case 'video':
    case 'audio':
      return probeAudioVideo(path, declared, sniffed, rule.type);
    case 'document':
      await checkPdf(path, size);
      return { sniffedMimeType: sniffed };
  }
}

// ---------------------------------------------------------------------------------------------
// Images

async function probeImage(path: string): Promise<{ width: number; height: number }> {
  let width: number | undefined;
  let height: number | undefined;
  try {
    const meta = await sharp(path, { failOn: 'truncated' }).metadata();
    // autoOrient: the size once EXIF orientation is applied (e.g. a portrait phone photo).
    // For animated images, metadata reports one frame (page) height.
    width = meta.autoOrient?.width ?? meta.width;
    height = meta.autoOrient?.height ?? meta.height;
    // Decode every pixel (all frames of an animated WebP; GIF frames beyond the first are
    // covered by checkGifStructure). stats() streams through the image without keeping it.
    const animated = meta.format !== 'gif' && (meta.pages ?? 1) > 1;
    await sharp(path, { failOn: 'truncated', ...(animated ? { pages: -1 } : {}) })
      .timeout({ seconds: PROBE_TIMEOUT_SECONDS })
      .stats();
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/pixel limit/i.test(msg)) throw rejected('the image has too many pixels to process (limit 268 megapixels)', e);
    if (/timeout/i.test(msg)) throw rejected('the image took too long to decode', e);
    throw rejected('the image data is truncated or corrupt', e);
  }
  if (!width || !height) throw rejected('the image has no width or height');
  return { width, height };
}

/** Walks the GIF block structure: header, optional colour table, then extension and image
 *  blocks up to the trailer (0x3B). Ending cleanly between blocks without a trailer is accepted
 *  (some encoders omit it); ending inside a block is truncation. */
async function checkGifStructure(path: string): Promise<void> {
  const b = await Bun.file(path).bytes();
  const truncated = () => rejected('the GIF image data is truncated');
  let at = 13;
  if (b.length < at) throw truncated();
  const colorTable = (packed: number) => ((packed & 0x80) !== 0 ? 3 * (1 << ((packed & 0x07) + 1)) : 0);
  at += colorTable(b[10]!);
  const skipSubBlocks = () => {
    for (;;) {
      if (at >= b.length) throw truncated();
      const n = b[at]!;
      at += 1;
      if (n === 0) return;
      at += n;
    }
  };
  let images = 0;
  for (;;) {
    if (at >= b.length) {
      if (images > 0 && at === b.length) return;
      throw truncated();
    }
    const block = b[at]!;
    if (block === 0x3b) {
      if (images === 0) throw rejected('the GIF has no image data');
      return;
    } else if (block === 0x21) {
      at += 2; // introducer + label
      skipSubBlocks();
    } else if (block === 0x2c) {
      if (at + 10 > b.length) throw truncated();
      at += 10 + colorTable(b[at + 9]!);
      at += 1; // LZW minimum code size
      skipSubBlocks();
      images += 1;
    } else {
      throw rejected('the GIF image data is corrupt');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Video and audio

interface FfprobeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: { rotation?: number | string }[];
}

interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string };
}

const ISO_BMFF = new Set(['video/mp4', 'video/quicktime', 'audio/mp4']);

function expectedDemuxer(sniffed: string): string {
  if (ISO_BMFF.has(sniffed)) return 'mov';
  if (sniffed === 'audio/mpeg') return 'mp3';
  return 'wav';
}

function rotationOf(s: FfprobeStream): number {
  for (const sd of s.side_data_list ?? []) {
    const r = Number(sd.rotation);
    if (Number.isFinite(r) && r !== 0) return r;
  }
  const r = Number(s.tags?.rotate);
  return Number.isFinite(r) ? r : 0;
}

async function probeAudioVideo(path: string, declared: string, sniffed: string, kind: 'video' | 'audio'): Promise<ProbeResult> {
  const input = `file:${path}`;
  const r = await run([await ffprobePath(), '-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', input], {
    timeoutMs: PROBE_TIMEOUT_SECONDS * 1000,
    maxStdoutBytes: 4 * 1024 * 1024,
  });
  if (r.timedOut) throw rejected(`the ${kind} file took too long to analyse`);
  if (r.exitCode !== 0) throw rejected(`the ${kind} file is truncated or corrupt`, new Error(r.stderr.slice(0, 2000)));
  let info: FfprobeOutput;
  try {
    info = JSON.parse(new TextDecoder().decode(r.stdout)) as FfprobeOutput;
  } catch (e) {
    throw new Error('ffprobe printed something that is not JSON', { cause: e });
  }

  const formatNames = (info.format?.format_name ?? '').split(',');
  if (!formatNames.includes(expectedDemuxer(sniffed))) {
    throw rejected(`the file is not a valid ${describeMimeType(sniffed).replace(/^an? /, '')}`);
  }

  const streams = info.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');

  let reported = sniffed;
  if (ISO_BMFF.has(sniffed)) {
    if (!video) reported = 'audio/mp4';
    else if (sniffed === 'audio/mp4') reported = 'video/mp4';
  }

  const result: ProbeResult = { sniffedMimeType: reported };
  if (kind === 'video') {
    if (!video) throw rejected(`the file has no video stream, so it is not ${declared}`);
    let width = video.width ?? 0;
    let height = video.height ?? 0;
    if (!(width > 0 && height > 0)) throw rejected('the video stream has no width or height');
    const sar = /^(\d+):(\d+)$/.exec(video.sample_aspect_ratio ?? '');
    if (sar && Number(sar[1]) > 0 && Number(sar[2]) > 0 && sar[1] !== sar[2]) {
      width = Math.round((width * Number(sar[1])) / Number(sar[2])); // anamorphic: displayed width
    }
    if (Math.abs(rotationOf(video)) % 180 === 90) [width, height] = [height, width];
    result.width = width;
    result.height = height;
  } else {
    if (video) throw rejected(`the file contains a video stream; upload it as video/mp4, not ${declared}`);
    if (!audio) throw rejected(`the file has no audio stream, so it is not ${declared}`);
  }

  const duration = Number(info.format?.duration ?? (video ?? audio)?.duration);
  if (Number.isFinite(duration) && duration >= 0) result.durationSeconds = Math.round(duration);

  await checkPackets(path, kind);
  return result;
}

/** Reads every audio/video packet without decoding; any read error (a packet past the end of the
 *  file, a short WAV data chunk, ...) fails the file. */
async function checkPackets(path: string, kind: 'video' | 'audio'): Promise<void> {
  const r = await run(
    [
      await ffmpegPath(),
      '-nostdin',
      '-hide_banner',
      '-v',
      'error',
      '-xerror',
      '-i',
      `file:${path}`,
      '-map',
      '0:v?',
      '-map',
      '0:a?',
      '-c',
      'copy',
      '-f',
      'null',
      '-',
    ],
    { timeoutMs: PROBE_TIMEOUT_SECONDS * 1000, maxStdoutBytes: 64 * 1024 },
  );
  if (r.timedOut) throw rejected(`the ${kind} file took too long to read`);
  if (r.exitCode !== 0) throw rejected(`the ${kind} data is truncated or corrupt`, new Error(r.stderr.slice(0, 2000)));
}

// ---------------------------------------------------------------------------------------------
// PDF

async function checkPdf(path: string, size: number): Promise<void> {
  const tailStart = Math.max(0, size - 1024);
  const tail = new TextDecoder('latin1').decode(await Bun.file(path).slice(tailStart, size).bytes());
  if (!tail.includes('%%EOF')) throw rejected('the PDF file is truncated (no %%EOF marker at its end)');
}
