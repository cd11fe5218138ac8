// Where a media item's objects live. Only `upload` is ever named by an upload URL. Processing
// copies it to `final` and checks that copy, which is what gets served and published; each
// processing attempt has its own copy (and thumbnail), so an attempt Temporal retries while an
// earlier one still runs can never overwrite the bytes the other one checked.
export function mediaKeys(organizationId: string, mediaId: string, attempt = 1) {
  const base = `${organizationId}/${mediaId}`;
  return { upload: `${base}/original`, final: `${base}/final-${attempt}`, thumbnail: `${base}/thumbnail-${attempt}` };
}

/** Processing attempts whose leftovers releaseUpload looks for (the workflow allows 5). */
export const MAX_PROCESSING_ATTEMPTS = 5;
