// Every wait has a deadline and says what it waits for: these build the words, the same in a
// workflow's status ("the ramdisk of node X to join (until 12:30:00Z)") and in the failure
// that ends the wait ("waited 20m for the ramdisk of node X to join"). Pure (workflow code
// uses them).

/** 20m, 1m 30s, 45s, 800ms: how an operator reads a duration. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return [hours ? `${hours}h` : '', minutes ? `${minutes}m` : '', seconds ? `${seconds}s` : ''].filter(Boolean).join(' ') || '0s';
}

/** What a status shows while waiting: what, and until when. */
export function waitingUntil(what: string, deadline: number): string {
  return `${what} (until ${new Date(deadline).toISOString()})`;
}

/** The failure's message when a wait ran out: "waited 20m for <what>". */
export function waitedFor(ms: number, what: string): string {
  return `waited ${formatDuration(ms)} for ${what}`;
}
