// bench/lib/cpu-steal.ts: the stolen share of CPU time between two readings of /proc/stat.
import { describe, expect, it } from 'vitest';
import { cpuTimes, parseCpuTimes, stolenShare } from '../../bench/lib/cpu-steal';

const procStat = (user: number, idle: number, steal: number) => `cpu  ${user} 0 100 ${idle} 10 0 5 ${steal} 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 12345\n`;

describe('the stolen share of CPU time', () => {
  it('reads the all-CPU line: steal is its eighth count, the total the sum of the first eight', () => {
    expect(parseCpuTimes(procStat(1000, 5000, 40))).toEqual({ steal: 40, total: 1000 + 100 + 5000 + 10 + 5 + 40 });
  });

  it('is the stolen ticks over all ticks between the readings', () => {
    const from = parseCpuTimes(procStat(1000, 5000, 40));
    const to = parseCpuTimes(procStat(1300, 5600, 140));
    expect(stolenShare(from, to)).toBeCloseTo(100 / (300 + 600 + 100), 10);
  });

  it('says nothing without a steal column, without a reading, or when no time passed', () => {
    expect(parseCpuTimes('cpu  1 2 3 4\n')).toBeUndefined();
    expect(parseCpuTimes('intr 1\n')).toBeUndefined();
    const reading = parseCpuTimes(procStat(1, 2, 3));
    expect(stolenShare(undefined, reading)).toBeUndefined();
    expect(stolenShare(reading, reading)).toBeUndefined();
  });

  it("reads this machine's /proc/stat", () => {
    const reading = cpuTimes();
    expect(reading?.total).toBeGreaterThan(0);
    expect(reading?.steal).toBeGreaterThanOrEqual(0);
  });
});
