// Object storage behind one interface (DESIGN.md §5): a local-disk store (the embedded default;
// the API itself receives the PUT at a signed, expiring URL) and an S3 store (presigned URLs;
// AWS S3, MinIO, SeaweedFS, R2). Workflow payloads carry object keys, never bytes.

export interface ObjectInfo {
  size: number;
  contentType: string | null;
  /** The store's entity tag (quoted, as S3 sends it), to tell one version of an object from another. */
  etag: string | null;
}

/** How a stored object is served: set when an object is copied to the key it is served from. */
export interface ServingMetadata {
  contentType: string;
  /** An RFC 6266 Content-Disposition value (ASCII only). */
  contentDisposition?: string;
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
  /**
   * Copies `from` to `to` inside the store, with the given serving metadata; returns the copy's
   * size and ETag (what was copied, whatever happens to `from` afterwards).
   */
  copy(from: string, to: string, meta: ServingMetadata): Promise<{ size: number; etag: string | null }>;
  /**
   * Makes the upload URLs of `key` refuse bytes from now on, where the store can: the disk store
   * answers them 409 (the seal outlives a delete of the key). An S3 presigned URL cannot be
   * revoked, so on S3 this does nothing and `key` must never be read after it was copied.
   */
  closeUpload(key: string): Promise<void>;
  /** Once the upload URLs of `key` have expired: deletes the key and whatever closeUpload kept. */
  releaseUpload(key: string): Promise<void>;
}
