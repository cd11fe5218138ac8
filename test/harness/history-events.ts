// Reading a workflow history's events in tests and benchmarks: an event's type by name, and the
// patch a core_patch marker records.
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const E = temporal.api.enums.v1.EventType;

/** The event's type without its EVENT_TYPE_ prefix, e.g. MARKER_RECORDED. */
export const eventTypeName = (e: HistoryEvent): string => (E[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');

/** The patch id of a `patched()` marker (Core's `core_patch`); undefined for any other event. */
export function patchId(e: HistoryEvent): string | undefined {
  const m = e.markerRecordedEventAttributes;
  const data = m?.markerName === 'core_patch' ? m.details?.['patch-data']?.payloads?.[0] : undefined;
  return data ? defaultPayloadConverter.fromPayload<{ id: string }>(data).id : undefined;
}
