// What the bytes are, from their magic numbers. Only the accepted types (catalog.ts) are
// recognised; anything else is null.
import { canonicalMimeType } from './catalog.ts';

/** sniffMimeType never looks further than this many bytes. */
export const HEAD_BYTES = 64;

function ascii(b: Uint8Array, at: number, len: number): string {
  if (b.length < at + len) return '';
  let s = '';
  for (let i = at; i < at + len; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function startsWith(b: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

// ISO base media (ftyp) brands. Audio-only brands (Apple's M4A/M4B/M4P and Adobe's F4A/F4B)
// make audio/mp4; `qt  ` makes QuickTime; the rest below make video/mp4.
const AUDIO_BRANDS = new Set(['M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B ']);
const QUICKTIME_BRANDS = new Set(['qt  ']);
const VIDEO_BRANDS = new Set([
  'isom',
  'iso2',
  'iso3',
  'iso4',
  'iso5',
  'iso6',
  'iso7',
  'iso8',
  'iso9',
  'mp41',
  'mp42',
  'mp71',
  'avc1',
  'hvc1',
  'hev1',
  'av01',
  'M4V ',
  'M4VH',
  'M4VP',
  'dash',
  'msnv',
  'MSNV',
  'mmp4',
  'f4v ',
  'F4V ',
  'XAVC',
  'NDAS',
]);

function brandMime(brand: string): string | null {
  if (AUDIO_BRANDS.has(brand)) return 'audio/mp4';
  if (QUICKTIME_BRANDS.has(brand)) return 'video/quicktime';
  if (VIDEO_BRANDS.has(brand)) return 'video/mp4';
  return null;
}

/** The ftyp box at offset 0: the major brand decides; an unknown major brand falls back to the
 *  first known compatible brand (within HEAD_BYTES). */
function sniffFtyp(b: Uint8Array): string | null {
  if (ascii(b, 4, 4) !== 'ftyp') return null;
  const major = brandMime(ascii(b, 8, 4));
  if (major) return major;
  const boxSize = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  const end = Math.min(b.length, boxSize >= 16 ? boxSize : b.length);
  for (let at = 16; at + 4 <= end; at += 4) {
    const m = brandMime(ascii(b, at, 4));
    if (m) return m;
  }
  return null;
}

// MPEG audio frame header: 11 sync bits, then version (not 01 = reserved), layer (not 00 =
// reserved, which is also how AAC/ADTS is told apart), bitrate index (not 1111), sample rate (not 11).
function isMpegAudioFrame(b: Uint8Array, at: number): boolean {
  if (b.length < at + 4) return false;
  const b1 = b[at + 1]!;
  const b2 = b[at + 2]!;
  if (b[at] !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  if (((b1 >> 3) & 0x03) === 0x01) return false;
  if (((b1 >> 1) & 0x03) === 0x00) return false;
  if (b2 >> 4 === 0x0f) return false;
  if (((b2 >> 2) & 0x03) === 0x03) return false;
  return true;
}

/**
 * The mime type of a file from its first bytes (pass at least HEAD_BYTES, or the whole file if
 * shorter), or null when it is none of the accepted types.
 */
export function sniffMimeType(head: Uint8Array): string | null {
  const b = head;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  const six = ascii(b, 0, 6);
  if (six === 'GIF87a' || six === 'GIF89a') return 'image/gif';
  if (ascii(b, 0, 4) === 'RIFF') {
    const form = ascii(b, 8, 4);
    if (form === 'WEBP') return 'image/webp';
    if (form === 'WAVE') return 'audio/wav';
    return null;
  }
  if (ascii(b, 0, 5) === '%PDF-') return 'application/pdf';
  const ftyp = sniffFtyp(b);
  if (ftyp) return ftyp;
  // Classic QuickTime files written before ftyp existed start straight with one of these atoms.
  if (['moov', 'mdat', 'wide', 'pnot'].includes(ascii(b, 4, 4))) return 'video/quicktime';
  if (ascii(b, 0, 3) === 'ID3') return 'audio/mpeg';
  if (isMpegAudioFrame(b, 0)) return 'audio/mpeg';
  return null;
}

/**
 * Whether bytes sniffed as `sniffed` may be stored under the `declared` type.
 *
 * Exact match after aliases (audio/x-wav and audio/wave are audio/wav), except for the ISO base
 * media family — video/mp4, video/quicktime and audio/mp4 — which are one container format read
 * by one demuxer, and whose brand says little about the content: ffmpeg, phones and cameras write
 * audio-only files with `isom`/`mp42` brands, .mov files with `isom`, and M4A files are renamed to
 * .mp4 all the time. So any member may be declared as any other here, and probe.ts decides by the
 * streams inside instead: a file declared as video must have a video stream; a file declared as
 * audio/mp4 must have an audio stream and no video stream (cover art does not count). The
 * sniffed type is still what gets reported (ProbeResult.sniffedMimeType).
 *
 * Everything else must match exactly: a PNG declared as image/jpeg is refused.
 */
export function sameFamily(declared: string, sniffed: string): boolean {
  const d = canonicalMimeType(declared);
  const s = canonicalMimeType(sniffed);
  if (d === s) return true;
  return ISO_BMFF.has(d) && ISO_BMFF.has(s);
}

const ISO_BMFF = new Set(['video/mp4', 'video/quicktime', 'audio/mp4']);

/** "a PNG image", "an MP4 video", ... for rejection messages. */
export function describeMimeType(mimeType: string): string {
  switch (canonicalMimeType(mimeType)) {
    case 'image/png':
      return 'a PNG image';
    case 'image/jpeg':
      return 'a JPEG image';
    case 'image/webp':
      return 'a WebP image';
    case 'image/gif':
      return 'a GIF image';
    case 'video/mp4':
      return 'an MP4 video';
    case 'video/quicktime':
      return 'a QuickTime video';
    case 'audio/mp4':
      return 'an MP4 (M4A) audio file';
    case 'audio/mpeg':
      return 'an MP3 audio file';
    case 'audio/wav':
      return 'a WAV audio file';
    case 'application/pdf':
      return 'a PDF document';
    default:
      return mimeType;
  }
}
