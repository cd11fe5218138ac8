// Payloads shared by the upload workflow, its activities and the API (plain data, no I/O).
export interface UploadWorkflowInput {
  mediaId: string;
  organizationId: string;
  /** End of the upload window (ISO 8601): 15 minutes after the upload was created. */
  expiresAt: string;
}

export type UploadPhase = 'waiting' | 'processing' | 'ready' | 'failed' | 'expired';

export interface UploadState {
  phase: UploadPhase;
  reason?: string;
}

export const uploadWorkflowId = (mediaId: string) => `media-${mediaId}`;

export const UPLOAD_FAILURE = {
  /** complete was called before the bytes were PUT. */
  notReceived: 'UploadNotReceived',
  /** complete was called after the 15-minute window. */
  windowClosed: 'UploadWindowClosed',
} as const;

/** The failure reason stored when the window closes without a completion. */
export const EXPIRED_REASON = 'the file was not uploaded and completed within the 15-minute upload window';
