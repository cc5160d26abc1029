// The activities a workflow ran, by type and in order, read from its history: each scheduled
// activity task, and each local activity (a marker whose `data` the SDK writes in the clear:
// its type, attempt and times; its result is sealed).
import type { temporal } from '@temporalio/proto';

const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

function localActivityType(marker: temporal.api.history.v1.IMarkerRecordedEventAttributes): string | undefined {
  if (marker.markerName !== LOCAL_ACTIVITY_MARKER) return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type : undefined;
}

export function activitiesRun(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((event) => {
    const type =
      event.activityTaskScheduledEventAttributes?.activityType?.name ??
      (event.markerRecordedEventAttributes && localActivityType(event.markerRecordedEventAttributes));
    return type ? [type] : [];
  });
}

/** The site agent's boot and BMC commands a workflow ran (boot.*, power.*, management.*), in order. */
export function siteCommandsRun(history: temporal.api.history.v1.IHistory): string[] {
  return activitiesRun(history).filter((type) => /^(boot|power|management)\./.test(type));
}
