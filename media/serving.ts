// How stored media are served (docs/decisions.md "Media"): only a type from the
// accepted list, never sniffed by the browser, a Content-Disposition that shows images, video
// and audio inline and downloads the rest, and a sandboxing CSP — so a file that is really HTML
// or SVG can never run script on the origin that serves it.
import { canonicalMimeType, ruleFor } from './catalog.ts';

/** Headers every served media response carries, whatever the file. */
export const MEDIA_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  // A sandboxed document has an opaque origin and runs no script; it loads nothing but itself
  // (img-src/media-src 'self' let a browser's own image or video viewer show the file).
  'content-security-policy': "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'",
});

/** The stored type when it is one of the accepted media types, else application/octet-stream. */
export function servedContentType(stored: string | null): string {
  if (stored && ruleFor(stored)) return canonicalMimeType(stored);
  return 'application/octet-stream';
}

/** Images, video and audio are shown where they are opened; everything else is downloaded. */
export function isInlineType(mimeType: string): boolean {
  return /^(image|video|audio)\//.test(servedContentType(mimeType));
}

// RFC 5987 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~". encodeURIComponent leaves ' ( ) * as
// they are, which attr-char does not allow.
function encodeExtValue(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * An RFC 6266 Content-Disposition (ASCII only, so it is a valid header and S3 metadata value):
 * `inline` or `attachment`, with the file name as a plain-ASCII fallback (anything else, quotes,
 * backslashes and percent signs become `_`) and as UTF-8 in `filename*`.
 */
export function contentDisposition(mimeType: string, fileName?: string | null): string {
  const kind = isInlineType(mimeType) ? 'inline' : 'attachment';
  if (!fileName) return kind;
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(fileName)}`;
}
