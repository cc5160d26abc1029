// Profile durations: a positive whole number of seconds, minutes or hours ('30s', '15m', '2h').
// Pure (workflow code reads plans built from these).
export const durationPattern = /^[1-9][0-9]{0,5}(s|m|h)$/;

const unitMs = { s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds of a duration, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  if (!durationPattern.test(text)) return undefined;
  const unit = text.slice(-1) as keyof typeof unitMs;
  return Number(text.slice(0, -1)) * unitMs[unit];
}

/** The longest a single step may run: one day. */
export const MAX_STEP_MS = 24 * 3_600_000;
