// The upload workflow's contract: its type name and signature, its Update and Query, the payloads
// and failure types. Imported by the workflow, its activities, the API and the tests; deterministic
// and plain (only @temporalio/workflow's definitions). The names are durable: sleeping executions
// and recorded histories (test/fixtures/histories) carry them — never rename.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

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

/** The workflow type (workflows/media-upload.ts, registered by its export in workflows/index.ts). */
export const MEDIA_UPLOAD_WORKFLOW_TYPE = 'mediaUploadWorkflow';
export type MediaUploadWorkflow = (input: UploadWorkflowInput) => Promise<UploadState>;

/** Refused (UPLOAD_FAILURE) when the bytes are not there or the window has closed. */
export const completeUploadUpdate = defineUpdate<UploadState, []>('completeUpload');
export const uploadStateQuery = defineQuery<UploadState>('state');

export const uploadWorkflowId = (mediaId: string) => `media-${mediaId}`;

/** Failure types (ApplicationFailure.type) of the completeUpload Update. */
export const UPLOAD_FAILURE = {
  /** complete was called before the bytes were PUT. */
  notReceived: 'UploadNotReceived',
  /** complete was called after the 15-minute window. */
  windowClosed: 'UploadWindowClosed',
} as const;

/** The failure reason stored when the window closes without a completion. */
export const EXPIRED_REASON = 'the file was not uploaded and completed within the 15-minute upload window';
