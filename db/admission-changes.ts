// A change to a key, an organization or a monthly count, made by this process, told to this
// process's admission caches (services/admission-cache.ts) right after its commit; the triggers'
// NOTIFY tells every process, this one a moment later. Call it after the change has committed.
export type AdmissionChange = { keyId?: string; organizationId?: string };

const listeners = new Set<(change: AdmissionChange) => void>();

export function admissionChanged(change: AdmissionChange): void {
  for (const listen of listeners) listen(change);
}

/** Returns the function that stops listening. */
export function onAdmissionChange(listen: (change: AdmissionChange) => void): () => void {
  listeners.add(listen);
  return () => listeners.delete(listen);
}
