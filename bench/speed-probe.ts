// The speed probe: a fixed loop of 3·10⁸ additions, timed. This machine (a VM) runs at speeds
// that differ by up to four times from hour to hour, so a figure's absolute numbers compare
// across runs only beside the probe's time; ratios between sides of one run compare at any speed.

const iterations = 3e8;

/** Seconds the loop took on this thread (about 0.8 s on this project's machine in a fast hour). */
export function speedProbeSeconds(): number {
  const started = process.hrtime.bigint();
  let sum = 0;
  for (let i = 0; i < iterations; i += 1) sum += i;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // The sum is used, so no compiler may drop the loop.
  if (sum <= 0) throw new Error('speed probe: the loop did not run');
  return seconds;
}
