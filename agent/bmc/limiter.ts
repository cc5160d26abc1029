// A per-BMC concurrency limit: BMCs fall over under parallel requests, so operations on
// one BMC queue in order (FIFO) behind a small number of in-flight ones.

interface Lane {
  active: number;
  waiting: Array<() => void>;
}

export class KeyedLimiter {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly perKey = 1) {
    if (perKey < 1) throw new RangeError('perKey must be at least 1');
  }

  /** Runs fn when fewer than perKey others run for key, in arrival order. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const lane = this.lanes.get(key) ?? { active: 0, waiting: [] };
    this.lanes.set(key, lane);
    if (lane.active >= this.perKey) await new Promise<void>((resolve) => lane.waiting.push(resolve));
    else lane.active++;
    try {
      return await fn();
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.active === 0) this.lanes.delete(key);
    }
  }

  /** How many run or wait for key (for tests and metrics). */
  load(key: string): number {
    const lane = this.lanes.get(key);
    return lane ? lane.active + lane.waiting.length : 0;
  }
}

/** The agent-wide limit: one in-flight operation per BMC. */
export const bmcLimiter = new KeyedLimiter(1);
