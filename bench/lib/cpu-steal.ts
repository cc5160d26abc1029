// The share of the machine's CPU time its hypervisor gave to other guests during a figure (the
// `steal` column of /proc/stat). This machine is a VM: a round measured while the host took the
// cores away runs slower for no fault of the code (a page of nodes at 500 a second, by hand: a
// p99 of 31–36 ms in the rounds around it, 1.7 s in the one with 15–27% of the CPU time stolen),
// so each figure's heading says how much was taken.
import { readFileSync } from 'node:fs';

export interface CpuTimes {
  /** Ticks the hypervisor ran something else while this guest wanted the CPU. */
  steal: number;
  /** Ticks of every kind (user, nice, system, idle, iowait, irq, softirq, steal). */
  total: number;
}

/** The all-CPU line of /proc/stat read as ticks, or undefined when it has no steal column. */
export function parseCpuTimes(procStat: string): CpuTimes | undefined {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  const ticks = line?.trim().split(/\s+/).slice(1, 9).map(Number);
  if (!ticks || ticks.length < 8 || ticks.some((t) => !Number.isFinite(t))) return undefined;
  return { steal: ticks[7] as number, total: ticks.reduce((sum, t) => sum + t, 0) };
}

/** This machine's CPU times now, or undefined where there is no /proc/stat. */
export function cpuTimes(): CpuTimes | undefined {
  try {
    return parseCpuTimes(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** The stolen share of the CPU time between two readings, 0–1; undefined when either is missing or no time passed. */
export function stolenShare(from: CpuTimes | undefined, to: CpuTimes | undefined): number | undefined {
  if (!from || !to || to.total <= from.total) return undefined;
  return (to.steal - from.steal) / (to.total - from.total);
}
