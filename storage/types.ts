// Object storage behind one interface (DESIGN.md §5): a local-disk store (the embedded default;
// the API itself receives the PUT at a signed, expiring URL) and an S3 store (presigned URLs;
// AWS S3, MinIO, SeaweedFS, R2). Workflow payloads carry object keys, never bytes.

export interface ObjectInfo {
  size: number;
  contentType: string | null;
}

export interface PresignedUpload {
  method: 'PUT';
  url: string;
  /** Exactly the headers the PUT must carry (at least Content-Type). */
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface ObjectStorage {
  readonly kind: 'disk' | 's3';
  /** A URL the client PUTs the bytes to, valid until expiresAt. */
  presignPut(key: string, opts: { contentType: string; contentLength: number; expiresAt: Date }): Promise<PresignedUpload>;
  /** null when no object is stored under the key. */
  head(key: string): Promise<ObjectInfo | null>;
  /** Bytes [start, endInclusive] (fewer if the object is shorter). */
  readRange(key: string, start: number, endInclusive: number): Promise<Uint8Array>;
  /** The whole object. */
  read(key: string): Promise<Uint8Array>;
  /** Streams the object into a local file (for processing large files without holding them in memory). */
  downloadTo(key: string, path: string): Promise<void>;
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Removes the object; no error when it is absent. */
  delete(key: string): Promise<void>;
  /** A URL that GETs the object, valid for expiresInSeconds (signed where the store is private). */
  signedGetUrl(key: string, expiresInSeconds: number): Promise<string>;
}
