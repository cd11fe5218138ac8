// What media processing reports about an uploaded file (docs/decisions.md "Media").
export type MediaType = 'image' | 'gif' | 'video' | 'document' | 'audio';

export interface ProbeResult {
  /** The type the bytes really are (sniffed from their magic numbers), e.g. image/png. */
  sniffedMimeType: string;
  width?: number;
  height?: number;
  /** Whole seconds, rounded. */
  durationSeconds?: number;
}

export interface Thumbnail {
  bytes: Uint8Array;
  contentType: string;
  width: number;
  height: number;
}

/** The file cannot be accepted; `reason` is safe to show to the user. */
export class MediaRejected extends Error {
  override name = 'MediaRejected';
  constructor(readonly reason: string) {
    super(reason);
  }
}
