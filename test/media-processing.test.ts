// Media processing (media/*): declared-type checks, sniffing, probing, thumbnails — against files
// generated at test time by test/fixtures/media.ts (sharp + the bundled ffmpeg).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { ACCEPTED_MIME_TYPES, canonicalMimeType, classifyDeclared, MB, MEDIA_RULES } from '../media/catalog.ts';
import { run } from '../media/exec.ts';
import { probeFile } from '../media/probe.ts';
import { HEAD_BYTES, sameFamily, sniffMimeType } from '../media/sniff.ts';
import { makeThumbnail, THUMBNAIL_MAX_SIDE } from '../media/thumbnail.ts';
import { MediaRejected } from '../media/types.ts';
import { createMediaFixtures, FIXTURE_FACTS, type FixtureName, type MediaFixtures } from './fixtures/media.ts';

let fx: MediaFixtures;

beforeAll(async () => {
  fx = await createMediaFixtures();
}, 120_000);

afterAll(async () => {
  await fx?.cleanup();
});

async function head(name: FixtureName): Promise<Uint8Array> {
  return Bun.file(fx.files[name]).slice(0, HEAD_BYTES).bytes();
}

async function rejection(p: Promise<unknown>): Promise<MediaRejected> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MediaRejected) return e;
    throw new Error(`expected MediaRejected, got ${String(e)}`);
  }
  throw new Error('expected MediaRejected, but the call succeeded');
}

const bytes = (...b: number[]) => new Uint8Array(b);
const ascii = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));
function ftyp(major: string, ...compatible: string[]): Uint8Array {
  const size = 16 + 4 * compatible.length;
  return ascii(`\0\0\0${String.fromCharCode(size)}ftyp${major}\0\0\0\0${compatible.join('')}`);
}

// -------------------------------------------------------------------------------------------------

describe('catalog: MEDIA_RULES and classifyDeclared', () => {
  test('every accepted type with its media type and limit (binary MB)', () => {
    expect(MEDIA_RULES).toEqual({
      'image/jpeg': { type: 'image', maxBytes: 20 * MB },
      'image/png': { type: 'image', maxBytes: 20 * MB },
      'image/webp': { type: 'image', maxBytes: 20 * MB },
      'image/gif': { type: 'gif', maxBytes: 20 * MB },
      'video/mp4': { type: 'video', maxBytes: 1024 * MB },
      'video/quicktime': { type: 'video', maxBytes: 1024 * MB },
      'application/pdf': { type: 'document', maxBytes: 100 * MB },
      'audio/mpeg': { type: 'audio', maxBytes: 200 * MB },
      'audio/mp4': { type: 'audio', maxBytes: 200 * MB },
      'audio/wav': { type: 'audio', maxBytes: 200 * MB },
      'audio/x-wav': { type: 'audio', maxBytes: 200 * MB },
      'audio/wave': { type: 'audio', maxBytes: 200 * MB },
    });
    expect(MB).toBe(1_048_576);
    expect(ACCEPTED_MIME_TYPES).not.toContain('audio/x-wav');
    expect(canonicalMimeType('Audio/X-WAV')).toBe('audio/wav');
    expect(canonicalMimeType('audio/wave')).toBe('audio/wav');
  });

  test.each([
    ['image/jpeg', 'image'],
    ['image/png', 'image'],
    ['image/webp', 'image'],
    ['image/gif', 'gif'],
    ['video/mp4', 'video'],
    ['video/quicktime', 'video'],
    ['application/pdf', 'document'],
    ['audio/mpeg', 'audio'],
    ['audio/mp4', 'audio'],
    ['audio/wav', 'audio'],
    ['audio/x-wav', 'audio'],
    ['audio/wave', 'audio'],
  ] as const)('%s is accepted as %s', (mime, type) => {
    const r = classifyDeclared(mime, 1000, 'file.bin');
    expect(r).toEqual({ ok: true, type, mimeType: mime, maxBytes: MEDIA_RULES[mime]!.maxBytes });
  });

  test.each([
    ['image/png', 20 * MB],
    ['image/jpeg', 20 * MB],
    ['image/webp', 20 * MB],
    ['image/gif', 20 * MB],
    ['video/mp4', 1024 * MB],
    ['video/quicktime', 1024 * MB],
    ['application/pdf', 100 * MB],
    ['audio/mpeg', 200 * MB],
    ['audio/wav', 200 * MB],
  ] as const)('%s: exactly %d bytes is accepted, one more is refused', (mime, limit) => {
    expect(classifyDeclared(mime, limit, 'f').ok).toBe(true);
    const r = classifyDeclared(mime, limit + 1, 'f');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.path).toBe('fileSize');
    expect(r.errors[0]!.message).toContain(`at most ${limit} bytes`);
  });

  test('images: 20 MB = 20,971,520 bytes ok, 20,971,521 refused with a readable message', () => {
    expect(classifyDeclared('image/png', 20_971_520, 'a.png')).toMatchObject({ ok: true, type: 'image' });
    expect(classifyDeclared('image/png', 20_971_521, 'a.png')).toEqual({
      ok: false,
      errors: [{ path: 'fileSize', message: 'must be at most 20971520 bytes (20 MB) for image/png' }],
    });
    expect(classifyDeclared('video/mp4', 1024 * MB + 1, 'a.mp4')).toEqual({
      ok: false,
      errors: [{ path: 'fileSize', message: 'must be at most 1073741824 bytes (1 GB) for video/mp4' }],
    });
  });

  test.each([
    'text/plain',
    'image/svg+xml',
    'image/heic',
    'video/webm',
    'application/octet-stream',
    'image/png; charset=binary',
    'png',
    '',
    '   ',
    'constructor',
    '__proto__',
  ])('unknown mimeType %p is refused', (mime) => {
    const r = classifyDeclared(mime, 10, 'a.png');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['mimeType']);
  });

  test('unknown mimeType message lists the accepted types', () => {
    const r = classifyDeclared('text/plain', 10, 'a.txt');
    expect(r).toEqual({
      ok: false,
      errors: [{ path: 'mimeType', message: `unsupported media type "text/plain"; accepted: ${ACCEPTED_MIME_TYPES.join(', ')}` }],
    });
  });

  test('mimeType is matched case-insensitively and returned lower-cased', () => {
    expect(classifyDeclared(' IMAGE/PNG ', 10, 'a.png')).toMatchObject({ ok: true, type: 'image', mimeType: 'image/png' });
  });

  test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, '10', null, undefined])('fileSize %p is refused', (size) => {
    const r = classifyDeclared('image/png', size, 'a.png');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['fileSize']);
  });

  test('fileSize 1 is accepted', () => {
    expect(classifyDeclared('application/pdf', 1, 'a.pdf').ok).toBe(true);
  });

  test.each([
    ['', 'must not be empty'],
    ['a'.repeat(256), 'must be at most 255 characters'],
    ['dir/a.png', 'must not contain path separators (/ or \\)'],
    ['dir\\a.png', 'must not contain path separators (/ or \\)'],
    ['../a.png', 'must not contain path separators (/ or \\)'],
    ['a\nb.png', 'must not contain control characters'],
    ['a\u0000.png', 'must not contain control characters'],
    ['a\u007f.png', 'must not contain control characters'],
    ['a\u0085.png', 'must not contain control characters'],
    ['evil\u202egnp.exe', 'must not contain control characters'],
    ['   ', 'must not be blank'],
    ['.', 'must be a file name, not . or ..'],
    ['..', 'must be a file name, not . or ..'],
  ])('fileName %p is refused: %s', (name, message) => {
    expect(classifyDeclared('image/png', 10, name)).toEqual({ ok: false, errors: [{ path: 'fileName', message }] });
  });

  test.each([[42], [null], [undefined], [['a.png']]])('non-string fileName %p is refused', (name) => {
    expect(classifyDeclared('image/png', 10, name)).toEqual({ ok: false, errors: [{ path: 'fileName', message: 'must be a string' }] });
  });

  test('fileName: 1 and 255 characters are fine, counted in code points; unicode and spaces allowed', () => {
    expect(classifyDeclared('image/png', 10, 'a').ok).toBe(true);
    expect(classifyDeclared('image/png', 10, 'a'.repeat(255)).ok).toBe(true);
    expect(classifyDeclared('image/png', 10, '😀'.repeat(255)).ok).toBe(true); // 510 UTF-16 units
    expect(classifyDeclared('image/png', 10, '😀'.repeat(256)).ok).toBe(false);
    expect(classifyDeclared('image/png', 10, 'Été à Paris – photo (1).png').ok).toBe(true);
    expect(classifyDeclared('image/png', 10, '.hidden').ok).toBe(true);
  });

  test('an extension that contradicts the type is fine (only the bytes matter later)', () => {
    expect(classifyDeclared('image/png', 10, 'movie.mp4')).toMatchObject({ ok: true, type: 'image' });
    expect(classifyDeclared('audio/mpeg', 10, 'no-extension')).toMatchObject({ ok: true, type: 'audio' });
  });

  test('all problems are reported at once, in field order', () => {
    const r = classifyDeclared('text/html', -5, 'a/b');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path)).toEqual(['mimeType', 'fileSize', 'fileName']);
  });

  test('a non-string mimeType is refused', () => {
    expect(classifyDeclared(42, 10, 'a')).toEqual({ ok: false, errors: [{ path: 'mimeType', message: 'must be a non-empty string' }] });
  });
});

// -------------------------------------------------------------------------------------------------

describe('sniff: sniffMimeType and sameFamily', () => {
  test('HEAD_BYTES is 64', () => {
    expect(HEAD_BYTES).toBe(64);
  });

  test.each([
    ['png', 'image/png'],
    ['jpeg', 'image/jpeg'],
    ['jpegRotated', 'image/jpeg'],
    ['webp', 'image/webp'],
    ['gif', 'image/gif'],
    ['gifAnimated', 'image/gif'],
    ['mp4', 'video/mp4'],
    ['mp4Faststart', 'video/mp4'],
    ['mp4Short', 'video/mp4'],
    ['mp4Rotated', 'video/mp4'],
    ['mov', 'video/quicktime'],
    ['mp4AudioOnly', 'video/mp4'], // isom brand: the brand alone cannot tell; probe refines it
    ['m4a', 'audio/mp4'],
    ['wav', 'audio/wav'],
    ['mp3', 'audio/mpeg'],
    ['pdf', 'application/pdf'],
    ['pngTruncated', 'image/png'],
    ['mp4Truncated', 'video/mp4'],
    ['random', null],
    ['empty', null],
    ['text', null],
  ] as const)('fixture %s sniffs as %p', async (name, mime) => {
    expect(sniffMimeType(await head(name))).toBe(mime);
  });

  test('synthetic heads', () => {
    expect(sniffMimeType(bytes())).toBeNull();
    expect(sniffMimeType(bytes(0x89, 0x50, 0x4e))).toBeNull(); // too short for PNG
    expect(sniffMimeType(bytes(0xff, 0xd8, 0xff, 0xe0))).toBe('image/jpeg');
    expect(sniffMimeType(ascii('GIF87a\x01\x00\x01\x00'))).toBe('image/gif');
    expect(sniffMimeType(ascii('GIF88a\x01\x00\x01\x00'))).toBeNull();
    expect(sniffMimeType(ascii('RIFF\x24\x00\x00\x00WEBPVP8L'))).toBe('image/webp');
    expect(sniffMimeType(ascii('RIFF\x24\x00\x00\x00WAVEfmt '))).toBe('audio/wav');
    expect(sniffMimeType(ascii('RIFF\x24\x00\x00\x00AVI LIST'))).toBeNull();
    expect(sniffMimeType(ascii('%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniffMimeType(ascii('%PDF'))).toBeNull();
    // MP3 without ID3: MPEG-1 layer III frame header (128 kbit/s, 44.1 kHz)
    expect(sniffMimeType(bytes(0xff, 0xfb, 0x90, 0x64))).toBe('audio/mpeg');
    expect(sniffMimeType(bytes(0xff, 0xf3, 0x90, 0x64))).toBe('audio/mpeg'); // MPEG-2 layer III
    expect(sniffMimeType(bytes(0xff, 0xf1, 0x50, 0x80))).toBeNull(); // AAC ADTS (layer 00)
    expect(sniffMimeType(bytes(0xff, 0xfb, 0xf0, 0x64))).toBeNull(); // bad bitrate index
    expect(sniffMimeType(bytes(0xff, 0xfb, 0x9c, 0x64))).toBeNull(); // reserved sample rate
    expect(sniffMimeType(ascii('ID3\x04\x00\x00\x00\x00\x00\x00'))).toBe('audio/mpeg');
    // ISO base media brands
    expect(sniffMimeType(ftyp('isom', 'isom', 'mp41'))).toBe('video/mp4');
    expect(sniffMimeType(ftyp('mp42', 'mp42', 'isom'))).toBe('video/mp4');
    expect(sniffMimeType(ftyp('avc1'))).toBe('video/mp4');
    expect(sniffMimeType(ftyp('M4V ', 'M4V ', 'mp42'))).toBe('video/mp4');
    expect(sniffMimeType(ftyp('qt  ', 'qt  '))).toBe('video/quicktime');
    expect(sniffMimeType(ftyp('M4A ', 'M4A ', 'mp42', 'isom'))).toBe('audio/mp4');
    expect(sniffMimeType(ftyp('M4B ', 'M4B ', 'mp42'))).toBe('audio/mp4');
    expect(sniffMimeType(ftyp('zzzz', 'zzzz', 'isom'))).toBe('video/mp4'); // unknown major, known compatible
    expect(sniffMimeType(ftyp('heic', 'mif1', 'heic'))).toBeNull(); // HEIF image: not accepted
    expect(sniffMimeType(ftyp('3gp4', '3gp4'))).toBeNull(); // 3GPP: not accepted
    // classic QuickTime without ftyp
    expect(sniffMimeType(ascii('\0\0\0\x08wide\0\0\0\x10mdat'))).toBe('video/quicktime');
    expect(sniffMimeType(ascii('\0\0\x01\x00moov'))).toBe('video/quicktime');
  });

  test('looks at no more than HEAD_BYTES: the result for a longer buffer is the same', async () => {
    for (const name of ['png', 'mp4', 'm4a', 'mp3', 'wav', 'pdf'] as const) {
      const whole = await Bun.file(fx.files[name]).bytes();
      expect(sniffMimeType(whole)).toBe(sniffMimeType(whole.subarray(0, HEAD_BYTES)));
    }
  });

  test('sameFamily', () => {
    expect(sameFamily('image/png', 'image/png')).toBe(true);
    expect(sameFamily('IMAGE/PNG', 'image/png')).toBe(true);
    expect(sameFamily('image/jpeg', 'image/png')).toBe(false);
    expect(sameFamily('image/png', 'image/gif')).toBe(false);
    expect(sameFamily('image/webp', 'image/png')).toBe(false);
    expect(sameFamily('audio/x-wav', 'audio/wav')).toBe(true);
    expect(sameFamily('audio/wave', 'audio/wav')).toBe(true);
    expect(sameFamily('audio/mpeg', 'audio/wav')).toBe(false);
    // the ISO base media family: decided by the streams inside (probeFile)
    expect(sameFamily('video/mp4', 'video/quicktime')).toBe(true);
    expect(sameFamily('video/quicktime', 'video/mp4')).toBe(true);
    expect(sameFamily('audio/mp4', 'video/mp4')).toBe(true);
    expect(sameFamily('video/mp4', 'audio/mp4')).toBe(true);
    expect(sameFamily('video/mp4', 'image/png')).toBe(false);
    expect(sameFamily('audio/mp4', 'audio/mpeg')).toBe(false);
  });
});

// -------------------------------------------------------------------------------------------------

describe('probeFile: accepted files', () => {
  test.each([
    ['png', 'image/png', { sniffedMimeType: 'image/png', ...FIXTURE_FACTS.png }],
    ['jpeg', 'image/jpeg', { sniffedMimeType: 'image/jpeg', ...FIXTURE_FACTS.jpeg }],
    ['jpegRotated', 'image/jpeg', { sniffedMimeType: 'image/jpeg', ...FIXTURE_FACTS.jpegRotated }],
    ['webp', 'image/webp', { sniffedMimeType: 'image/webp', ...FIXTURE_FACTS.webp }],
    ['gif', 'image/gif', { sniffedMimeType: 'image/gif', ...FIXTURE_FACTS.gif }],
    ['gifAnimated', 'image/gif', { sniffedMimeType: 'image/gif', width: 64, height: 48 }],
    ['mp4', 'video/mp4', { sniffedMimeType: 'video/mp4', width: 160, height: 120, durationSeconds: 2 }],
    ['mp4Faststart', 'video/mp4', { sniffedMimeType: 'video/mp4', width: 160, height: 120, durationSeconds: 2 }],
    ['mp4Short', 'video/mp4', { sniffedMimeType: 'video/mp4', width: 160, height: 120, durationSeconds: 1 }],
    ['mp4Rotated', 'video/mp4', { sniffedMimeType: 'video/mp4', width: 120, height: 160, durationSeconds: 2 }],
    ['mov', 'video/quicktime', { sniffedMimeType: 'video/quicktime', width: 160, height: 120, durationSeconds: 2 }],
    // same container family: a .mov declared as mp4 and vice versa are read by the streams
    ['mov', 'video/mp4', { sniffedMimeType: 'video/quicktime', width: 160, height: 120, durationSeconds: 2 }],
    ['mp4', 'video/quicktime', { sniffedMimeType: 'video/mp4', width: 160, height: 120, durationSeconds: 2 }],
    ['m4a', 'audio/mp4', { sniffedMimeType: 'audio/mp4', durationSeconds: 3 }],
    // isom brand but audio only: accepted as audio/mp4 and reported as audio/mp4
    ['mp4AudioOnly', 'audio/mp4', { sniffedMimeType: 'audio/mp4', durationSeconds: 3 }],
    ['mp3', 'audio/mpeg', { sniffedMimeType: 'audio/mpeg', durationSeconds: 3 }],
    ['wav', 'audio/wav', { sniffedMimeType: 'audio/wav', durationSeconds: 3 }],
    ['wav', 'audio/x-wav', { sniffedMimeType: 'audio/wav', durationSeconds: 3 }],
    ['wav', 'audio/wave', { sniffedMimeType: 'audio/wav', durationSeconds: 3 }],
    ['pdf', 'application/pdf', { sniffedMimeType: 'application/pdf' }],
  ] as const)('%s declared as %s', async (name, declared, expected) => {
    expect(await probeFile(fx.files[name], declared)).toEqual(expected);
  });
});

describe('probeFile: refused files', () => {
  test.each([
    ['png', 'video/mp4', 'the file is a PNG image, not video/mp4'],
    ['mp3', 'image/png', 'the file is an MP3 audio file, not image/png'],
    ['jpeg', 'image/png', 'the file is a JPEG image, not image/png'],
    ['png', 'image/jpeg', 'the file is a PNG image, not image/jpeg'],
    ['gif', 'image/png', 'the file is a GIF image, not image/png'],
    ['png', 'image/gif', 'the file is a PNG image, not image/gif'],
    ['webp', 'image/jpeg', 'the file is a WebP image, not image/jpeg'],
    ['pdf', 'image/jpeg', 'the file is a PDF document, not image/jpeg'],
    ['mp4', 'application/pdf', 'the file is an MP4 video, not application/pdf'],
    ['wav', 'audio/mpeg', 'the file is a WAV audio file, not audio/mpeg'],
    ['mp3', 'audio/wav', 'the file is an MP3 audio file, not audio/wav'],
    ['m4a', 'audio/mpeg', 'the file is an MP4 (M4A) audio file, not audio/mpeg'],
    ['mov', 'image/gif', 'the file is a QuickTime video, not image/gif'],
  ] as const)('%s declared as %s', async (name, declared, reason) => {
    const e = await rejection(probeFile(fx.files[name], declared));
    expect(e.reason).toBe(reason);
    expect(e.message).toBe(reason);
    expect(e.name).toBe('MediaRejected');
  });

  test('an MP4 with a video stream declared as audio/mp4', async () => {
    const e = await rejection(probeFile(fx.files.mp4, 'audio/mp4'));
    expect(e.reason).toBe('the file contains a video stream; upload it as video/mp4, not audio/mp4');
  });

  test('audio-only MP4/M4A declared as video', async () => {
    expect((await rejection(probeFile(fx.files.mp4AudioOnly, 'video/mp4'))).reason).toBe(
      'the file has no video stream, so it is not video/mp4',
    );
    expect((await rejection(probeFile(fx.files.m4a, 'video/quicktime'))).reason).toBe(
      'the file has no video stream, so it is not video/quicktime',
    );
  });

  test.each([
    ['pngTruncated', 'image/png', 'the image data is truncated or corrupt'],
    ['jpegTruncated', 'image/jpeg', 'the image data is truncated or corrupt'],
    ['webpTruncated', 'image/webp', 'the image data is truncated or corrupt'],
    ['gifTruncated', 'image/gif', 'the GIF image data is truncated'],
    ['mp4Truncated', 'video/mp4', 'the video file is truncated or corrupt'], // moov index cut off
    ['mp4FaststartTruncated', 'video/mp4', 'the video data is truncated or corrupt'], // index intact, data cut
    ['wavTruncated', 'audio/wav', 'the audio data is truncated or corrupt'],
    ['pdfTruncated', 'application/pdf', 'the PDF file is truncated (no %%EOF marker at its end)'],
  ] as const)('truncated %s is refused', async (name, declared, reason) => {
    const e = await rejection(probeFile(fx.files[name], declared));
    expect(e.reason).toBe(reason);
  });

  test.each(['image/png', 'image/gif', 'video/mp4', 'audio/mpeg', 'application/pdf'])('random bytes declared as %s', async (declared) => {
    const e = await rejection(probeFile(fx.files.random, declared));
    expect(e.reason).toBe(`the file is not ${declared}: its contents are not a recognised image, video, audio or PDF format`);
  });

  test('plain text and an empty file', async () => {
    expect((await rejection(probeFile(fx.files.text, 'application/pdf'))).reason).toContain('not a recognised');
    expect((await rejection(probeFile(fx.files.empty, 'image/png'))).reason).toBe('the file is empty');
  });

  test('a file over the limit of its declared type', async () => {
    const path = `${fx.dir}/big.png`;
    const png = await Bun.file(fx.files.png).bytes();
    const big = new Uint8Array(20 * MB + 1);
    big.set(png);
    await Bun.write(path, big);
    expect((await rejection(probeFile(path, 'image/png'))).reason).toBe('the file is larger than the 20 MB limit for image/png');
  });

  test('an undeclarable type', async () => {
    expect((await rejection(probeFile(fx.files.png, 'image/svg+xml'))).reason).toBe('image/svg+xml is not an accepted media type');
  });

  test('PNG magic followed by garbage', async () => {
    const path = `${fx.dir}/fake.png`;
    await Bun.write(path, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(200).fill(7)]));
    expect((await rejection(probeFile(path, 'image/png'))).reason).toBe('the image data is truncated or corrupt');
  });

  test('ID3 tag followed by garbage is not an MP3', async () => {
    const path = `${fx.dir}/fake.mp3`;
    await Bun.write(path, new Uint8Array([...Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), ...new Array(4000).fill(0)]));
    const e = await rejection(probeFile(path, 'audio/mpeg'));
    expect(e.reason).toBe('the audio file is truncated or corrupt');
  });

  test('a missing file is an ordinary error, not MediaRejected', async () => {
    const err = await probeFile(`${fx.dir}/does-not-exist.png`, 'image/png').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(MediaRejected);
  });
});

// -------------------------------------------------------------------------------------------------

describe('makeThumbnail', () => {
  async function decoded(bytes: Uint8Array) {
    const meta = await sharp(bytes, { failOn: 'truncated' }).metadata();
    await sharp(bytes, { failOn: 'truncated' }).stats(); // fully decodable
    return meta;
  }

  test.each([
    ['png', 'image/png', 320, 240],
    ['jpeg', 'image/jpeg', 320, 240],
    ['jpegRotated', 'image/jpeg', 160, 320], // EXIF orientation applied
    ['webp', 'image/webp', 300, 200], // never enlarged
    ['gif', 'image/gif', 100, 50],
    ['gifAnimated', 'image/gif', 64, 48], // first frame only
    ['mp4', 'video/mp4', 160, 120],
    ['mp4Faststart', 'video/mp4', 160, 120],
    ['mp4Short', 'video/mp4', 160, 120], // shorter than 1 s: first frame
    ['mp4Rotated', 'video/mp4', 120, 160],
    ['mov', 'video/quicktime', 160, 120],
  ] as const)('%s (%s) → %dx%d WebP', async (name, mime, width, height) => {
    const t = await makeThumbnail(fx.files[name], mime);
    expect(t).not.toBeNull();
    if (!t) return;
    expect(t.contentType).toBe('image/webp');
    expect({ width: t.width, height: t.height }).toEqual({ width, height });
    expect(Math.max(t.width, t.height)).toBeLessThanOrEqual(THUMBNAIL_MAX_SIDE);
    expect(t.bytes).toBeInstanceOf(Uint8Array);
    expect(sniffMimeType(t.bytes.subarray(0, HEAD_BYTES))).toBe('image/webp');
    const meta = await decoded(t.bytes);
    expect(meta.format).toBe('webp');
    expect({ width: meta.width, height: meta.height }).toEqual({ width, height });
    expect(meta.pages ?? 1).toBe(1);
  });

  test('the video thumbnail is a real frame (not blank)', async () => {
    const t = await makeThumbnail(fx.files.mp4, 'video/mp4');
    const stats = await sharp(t!.bytes).stats();
    expect(stats.channels.some((c) => c.max - c.min > 100)).toBe(true); // testsrc has colour bars
  });

  test('a large image is shrunk to 320 px on the long side, keeping the aspect ratio', async () => {
    const path = `${fx.dir}/tall.png`;
    await sharp({ create: { width: 500, height: 2000, channels: 3, background: '#3366cc' } })
      .png()
      .toFile(path);
    const t = await makeThumbnail(path, 'image/png');
    expect({ width: t!.width, height: t!.height }).toEqual({ width: 80, height: 320 });
  });

  test.each([
    ['pdf', 'application/pdf'],
    ['mp3', 'audio/mpeg'],
    ['wav', 'audio/wav'],
    ['m4a', 'audio/mp4'],
  ] as const)('%s (%s) → null', async (name, mime) => {
    expect(await makeThumbnail(fx.files[name], mime)).toBeNull();
  });

  test('an undecodable image is MediaRejected', async () => {
    const e = await rejection(makeThumbnail(fx.files.webpTruncated, 'image/webp'));
    expect(e.reason).toBe('the image could not be decoded for a thumbnail');
  });

  test('a video without a readable frame is MediaRejected', async () => {
    const e = await rejection(makeThumbnail(fx.files.mp4Truncated, 'video/mp4'));
    expect(e.reason).toBe('could not extract a frame from the video');
  });
});

// -------------------------------------------------------------------------------------------------

describe('exec.run', () => {
  test('kills a process that runs past its timeout', async () => {
    const started = Date.now();
    const r = await run(['sleep', '10'], { timeoutMs: 200 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('kills a process whose output goes over the bound, keeping only the bound', async () => {
    const r = await run(['yes'], { maxStdoutBytes: 10_000 });
    expect(r.overflow).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.stdout.length).toBe(10_000);
  });

  test('reports exit code, stdout and stderr', async () => {
    const r = await run(['sh', '-c', 'printf out; printf err >&2; exit 3']);
    expect(r).toMatchObject({ exitCode: 3, stderr: 'err', timedOut: false, overflow: false });
    expect(new TextDecoder().decode(r.stdout)).toBe('out');
  });
});
