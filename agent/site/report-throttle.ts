// How often something may ask the session for an early heartbeat: a new PXE machine asks for
// a report at most once every 30 s (spec 001), however many MACs a boot burst (or a flood of
// forged ones) brings; the regular heartbeat carries the rest.
import { performance } from 'node:perf_hooks';

export class ReportThrottle {
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly everyMs: number,
    /** Monotonic milliseconds. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True when an early report may go now (and it is counted as sent). */
  take(): boolean {
    const at = this.now();
    if (at - this.lastAt < this.everyMs) return false;
    this.lastAt = at;
    return true;
  }
}
