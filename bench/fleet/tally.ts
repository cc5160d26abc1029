// The fleet figure's arithmetic, kept apart from the processes it measures: HTTP answers by
// status, nodes that failed grouped by why, each node's chain of workflows by step count, the
// /proc readings, and the table.

/** HTTP answers by status: { "202": 998, "503": 2 }. */
export function tallyStatuses(statuses: number[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
  return tally;
}

/** The answers that are not an acceptance (2xx): a fleet's deploys queue, they are never refused. */
export const refusedAnswers = (tally: Record<string, number>): number =>
  Object.entries(tally).reduce((sum, [status, count]) => (status.startsWith('2') ? sum : sum + count), 0);

export const formatStatuses = (tally: Record<string, number>): string =>
  Object.entries(tally)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${count} × ${status}`)
    .join(', ') || 'none';

/** A node that did not reach the phase's state: where it stopped and why. */
export interface NodeMiss {
  nodeId: string;
  state: string | null;
  /** The node's lastError ("CODE: message"), or what it was still doing at the phase's deadline. */
  reason: string;
}

/** A reason without what differs from node to node (its id, MAC, how long it waited), so like failures group. */
export const reasonKind = (reason: string): string =>
  reason
    .replace(/node_[0-9a-z]+/g, '<node>')
    .replace(/\b(?:[0-9a-f]{2}:){5}[0-9a-f]{2}\b/gi, '<mac>')
    .replace(/waited (?:\d+[hms] ?)+/g, 'waited … ');

/** Misses grouped by state and kind of reason, the most frequent first. */
export function groupMisses(misses: NodeMiss[]): Array<{ count: number; state: string | null; reason: string }> {
  const groups = new Map<string, { count: number; state: string | null; reason: string }>();
  for (const miss of misses) {
    const reason = reasonKind(miss.reason);
    const key = `${miss.state}\u0000${reason}`;
    const group = groups.get(key) ?? { count: 0, state: miss.state, reason };
    group.count += 1;
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** A step is an activity named by its `use` (`inspect.oob`); the engine's own activities (`lifecycleNext`) have no dot. */
export const stepCount = (activityTypes: string[]): number => activityTypes.filter((name) => name.includes('.')).length;

/** The chain most nodes ran (ties: the longer, then the first seen); empty when none. */
export function commonChain(chains: number[][]): number[] {
  const counts = new Map<string, { chain: number[]; count: number }>();
  for (const chain of chains) {
    const key = chain.join(',');
    const entry = counts.get(key) ?? { chain, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  }
  let best: { chain: number[]; count: number } | undefined;
  for (const entry of counts.values())
    if (!best || entry.count > best.count || (entry.count === best.count && entry.chain.length > best.chain.length)) best = entry;
  return best?.chain ?? [];
}

/** The index of the phase a workflow started in: the last phase that began at or before it. */
export function phaseOf(startedAt: number, phaseStarts: number[]): number {
  let phase = -1;
  for (const [i, start] of phaseStarts.entries()) if (startedAt >= start) phase = i;
  return phase;
}

/** user + system CPU time of a process in clock ticks, from /proc/<pid>/stat (its name may hold spaces and parentheses). */
export function procStatCpuTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so utime (field 14) and stime (15) are at 11 and 12.
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU time in clock ticks of the children a process waited for (cutime + cstime): PostgreSQL's ended backends count in the postmaster's. */
export function procStatReapedChildrenTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // cutime (field 16) and cstime (17) are at 13 and 14 after the name.
  return Number(fields[13]) + Number(fields[14]);
}

/** The parent's process id, from /proc/<pid>/stat (field 4). */
export function procStatParentPid(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * The proportional set size in bytes, from /proc/<pid>/smaps_rollup (Pss, in kB): memory shared
 * between processes (PostgreSQL's shared buffers, a binary's pages) counts once across them.
 */
export function procPssBytes(smapsRollup: string): number {
  const match = /^Pss:\s+(\d+) kB$/m.exec(smapsRollup);
  return match ? Number(match[1]) * 1024 : NaN;
}

export interface FleetPhase {
  name: 'enroll' | 'deploy' | 'release';
  seconds: number;
  answered: Record<string, number>;
  reached: number;
  misses: NodeMiss[];
}

/** Which Temporal a fleet run stood on: the dev server, or the cluster profile's server on PostgreSQL with N worker processes. */
export type FleetTemporal = { kind: 'dev' } | { kind: 'cluster'; workers: number };

export const temporalLabel = (temporal: FleetTemporal): string =>
  temporal.kind === 'dev' ? 'dev server (SQLite)' : `cluster (PostgreSQL), ${temporal.workers} worker${temporal.workers === 1 ? '' : 's'}`;

/** One fleet run (bench/fleet/cycle.ts) and its bound (bench/engine/side.ts with the same chains). */
export interface FleetRow {
  machines: number;
  temporal: FleetTemporal;
  phases: FleetPhase[];
  /** Provision workflows the run started. */
  workflows: number;
  /** Control-plane process(es) + Temporal server (+ PostgreSQL on the cluster), over the three phases. */
  cpuMs: number;
  /** Peak of their memory together (the control-plane process's resident set, the others' proportional share), sampled through the phases. */
  peakRssBytes: number;
  /** The emulated site's process (site agent, BMCs, firmware, ramdisk and OS agents). */
  siteCpuMs: number;
  sitePeakRssBytes: number;
  /** The engine alone, the same workflows with no-op steps, per phase. */
  boundSeconds: number[];
}

const seconds = (s: number) => `${s < 100 ? s.toFixed(1) : s.toFixed(0)} s`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 * 10 ? 2 : 1)} MiB`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export function fleetTable(rows: FleetRow[]): string {
  const lines = [
    '| machines | Temporal | enroll → ready | deploy → deployed | release → ready | whole cycle | workflows/s | bound (engine, no-op steps) | ratio | CPU / machine | peak RSS / machine | deploy answers | did not finish |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const wall = sum(row.phases.map((p) => p.seconds));
    const bound = sum(row.boundSeconds);
    const phase = (name: FleetPhase['name']) => {
      const found = row.phases.find((p) => p.name === name);
      const index = row.phases.findIndex((p) => p.name === name);
      return found ? `${seconds(found.seconds)} (bound ${seconds(row.boundSeconds[index] ?? NaN)})` : 'not run';
    };
    const missed = row.phases.filter((p) => p.misses.length > 0).map((p) => `${p.name}: ${p.misses.length}`);
    lines.push(
      `| ${row.machines} | ${temporalLabel(row.temporal)} | ${phase('enroll')} | ${phase('deploy')} | ${phase('release')} | ${seconds(wall)} | ${(row.workflows / wall).toFixed(2)} | ${seconds(bound)} | ${(wall / bound).toFixed(2)}× | ${(row.cpuMs / row.machines).toFixed(0)} ms (site ${(row.siteCpuMs / row.machines).toFixed(0)} ms) | ${mib(row.peakRssBytes / row.machines)} (site ${mib(row.sitePeakRssBytes / row.machines)}) | ${formatStatuses(row.phases.find((p) => p.name === 'deploy')?.answered ?? {})} | ${missed.join(', ') || 'none'} |`,
    );
  }
  return lines.join('\n');
}

/** Why machines did not finish, one line per phase, state and reason. */
export function missLines(rows: FleetRow[]): string[] {
  return rows.flatMap((row) =>
    row.phases.flatMap((phase) =>
      groupMisses(phase.misses).map(
        (g) => `- ${row.machines} machines (${temporalLabel(row.temporal)}), ${phase.name}: ${g.count} stopped in ${g.state ?? 'no state'}: ${g.reason}`,
      ),
    ),
  );
}
