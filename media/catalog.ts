// The media types the API accepts (DESIGN.md §3 "Media") and the checks on what a client declares
// when it asks for an upload URL. Only the bytes decide later (see probe.ts); here we check the
// declared mimeType, fileSize and fileName.
import type { MediaType } from './types.ts';

/** Sizes are binary: 1 MB = 1024 × 1024 bytes, so "20 MB" is 20,971,520 bytes. */
export const MB = 1024 * 1024;

export interface MediaRule {
  type: MediaType;
  maxBytes: number;
}

/**
 * Accepted mimeType → its media type and size limit. Keys are lower case; classifyDeclared
 * matches case-insensitively (RFC 2045) and returns the lower-case key.
 *
 * WAV aliases: browsers and OSes disagree on the WAV type (Chrome/Safari say audio/wav, older
 * Chrome and Windows audio/x-wav, some Firefox versions audio/wave), so all three are accepted
 * with the same rule. The declared string is kept as the client sent it (lower-cased) because the
 * upload URL is signed with it as Content-Type; `canonicalMimeType` maps the aliases to audio/wav,
 * which is also what sniffing reports.
 */
export const MEDIA_RULES: Readonly<Record<string, MediaRule>> = Object.freeze({
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

const ALIASES: Readonly<Record<string, string>> = { 'audio/x-wav': 'audio/wav', 'audio/wave': 'audio/wav' };

/** The accepted types without aliases, for messages and docs. */
export const ACCEPTED_MIME_TYPES: readonly string[] = Object.keys(MEDIA_RULES).filter((m) => !(m in ALIASES));

/** Lower-cases and trims; does not strip parameters (`image/png; x=y` is not accepted). */
export function normalizeMimeType(mimeType: string): string {
  return mimeType.trim().toLowerCase();
}

/** audio/x-wav and audio/wave → audio/wav; everything else unchanged (after normalizing). */
export function canonicalMimeType(mimeType: string): string {
  const m = normalizeMimeType(mimeType);
  return ALIASES[m] ?? m;
}

/** The rule for a declared mimeType (case-insensitive), or undefined if it is not accepted. */
export function ruleFor(mimeType: string): MediaRule | undefined {
  const m = normalizeMimeType(mimeType);
  return Object.hasOwn(MEDIA_RULES, m) ? MEDIA_RULES[m] : undefined;
}

export interface FieldError {
  path: string;
  message: string;
}

export type DeclaredClassification =
  | { ok: true; type: MediaType /** lower-cased declared type */; mimeType: string; maxBytes: number }
  | { ok: false; errors: FieldError[] };

export const MAX_FILE_NAME_CHARS = 255;

/** 20971520 → "20 MB", 1073741824 → "1 GB". */
export function formatLimit(bytes: number): string {
  return bytes % (1024 * MB) === 0 ? `${bytes / (1024 * MB)} GB` : `${bytes / MB} MB`;
}

// C0 controls, DEL, C1 controls; also the Unicode line/paragraph separators and bidi overrides,
// which are used to disguise file names.
export const CONTROL_OR_DISGUISE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export function checkFileName(fileName: unknown): string | null {
  if (typeof fileName !== 'string') return 'must be a string';
  const chars = [...fileName].length; // code points, so an emoji counts once
  if (chars < 1) return 'must not be empty';
  if (chars > MAX_FILE_NAME_CHARS) return `must be at most ${MAX_FILE_NAME_CHARS} characters`;
  if (fileName.includes('/') || fileName.includes('\\')) return 'must not contain path separators (/ or \\)';
  if (CONTROL_OR_DISGUISE.test(fileName)) return 'must not contain control characters';
  if (fileName.trim() === '') return 'must not be blank';
  if (fileName === '.' || fileName === '..') return 'must be a file name, not . or ..';
  return null;
}

/**
 * Checks what a client declares for `POST /media/uploads`. Errors use the body field names as
 * paths. The file name's extension is not compared with the type: only the bytes matter later.
 */
export function classifyDeclared(mimeType: unknown, fileSize: unknown, fileName: unknown): DeclaredClassification {
  const errors: FieldError[] = [];
  let rule: MediaRule | undefined;
  let normalized = '';
  if (typeof mimeType !== 'string' || mimeType.trim() === '') {
    errors.push({ path: 'mimeType', message: 'must be a non-empty string' });
  } else {
    normalized = normalizeMimeType(mimeType);
    rule = ruleFor(normalized);
    if (!rule) {
      errors.push({
        path: 'mimeType',
        message: `unsupported media type ${JSON.stringify(mimeType.slice(0, 100))}; accepted: ${ACCEPTED_MIME_TYPES.join(', ')}`,
      });
    }
  }

  if (typeof fileSize !== 'number' || !Number.isSafeInteger(fileSize)) {
    errors.push({ path: 'fileSize', message: 'must be an integer number of bytes' });
  } else if (fileSize <= 0) {
    errors.push({ path: 'fileSize', message: 'must be greater than 0' });
  } else if (rule && fileSize > rule.maxBytes) {
    errors.push({
      path: 'fileSize',
      message: `must be at most ${rule.maxBytes} bytes (${formatLimit(rule.maxBytes)}) for ${normalized}`,
    });
  }

  const nameError = checkFileName(fileName);
  if (nameError) errors.push({ path: 'fileName', message: nameError });

  if (errors.length > 0 || !rule) return { ok: false, errors };
  return { ok: true, type: rule.type, mimeType: normalized, maxBytes: rule.maxBytes };
}
