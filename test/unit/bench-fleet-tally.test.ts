// The fleet figure's arithmetic (bench/fleet/tally.ts, bench/lib/chains.ts): answers by status,
// misses grouped by why, chains by step count, /proc readings, and the table it writes.
import { describe, expect, it } from 'vitest';
import { formatChains, parseChains } from '../../bench/lib/chains';
import {
  commonChain,
  fleetTable,
  formatStatuses,
  groupMisses,
  missLines,
  phaseOf,
  procPssBytes,
  procStatCpuTicks,
  procStatParentPid,
  procStatReapedChildrenTicks,
  refusedAnswers,
  stepCount,
  tallyStatuses,
  type FleetRow,
} from '../../bench/fleet/tally';

describe('the fleet figure’s arithmetic', () => {
  it('tallies answers by status and counts every answer that is not a 2xx as refused', () => {
    const tally = tallyStatuses([200, 202, 200, 503, 429, 200]);
    expect(tally).toEqual({ '200': 3, '202': 1, '503': 1, '429': 1 });
    expect(refusedAnswers(tally)).toBe(2);
    expect(formatStatuses(tally)).toBe('3 × 200, 1 × 202, 1 × 429, 1 × 503');
    expect(formatStatuses({})).toBe('none');
  });

  it('groups like failures whatever node, MAC or wait they name', () => {
    const groups = groupMisses([
      { nodeId: 'a', state: 'failed', reason: 'DRIVER_ERROR: waited 5m 1s for the next agent of node node_06h2y602 to join' },
      { nodeId: 'b', state: 'failed', reason: 'DRIVER_ERROR: waited 5m for the next agent of node node_06h2y617 to join' },
      { nodeId: 'c', state: 'failed', reason: 'DRIVER_ERROR: the ramdisk never joined (PXE MACs 02:b4:5e:37:e0:e7)' },
    ]);
    expect(groups).toEqual([
      { count: 2, state: 'failed', reason: 'DRIVER_ERROR: waited … for the next agent of node <node> to join' },
      { count: 1, state: 'failed', reason: 'DRIVER_ERROR: the ramdisk never joined (PXE MACs <mac>)' },
    ]);
  });

  it('groups the nodes that did not finish by state and reason, the most frequent first', () => {
    const groups = groupMisses([
      { nodeId: 'a', state: 'failed', reason: 'DRIVER_ERROR: waited 3m for the ramdisk' },
      { nodeId: 'b', state: 'inspecting', reason: 'still running' },
      { nodeId: 'c', state: 'failed', reason: 'DRIVER_ERROR: waited 3m for the ramdisk' },
    ]);
    expect(groups).toEqual([
      { count: 2, state: 'failed', reason: 'DRIVER_ERROR: waited … for the ramdisk' },
      { count: 1, state: 'inspecting', reason: 'still running' },
    ]);
  });

  it('counts steps by their dotted names, not the engine’s own activities', () => {
    expect(stepCount(['siteAgentFor', 'inspect.oob', 'lifecycleNext', 'boot.cleanUp'])).toBe(2);
  });

  it('takes the chain most nodes ran, the longer on a tie', () => {
    expect(
      commonChain([
        [1, 3, 6],
        [1, 3, 6],
        [1, 3],
      ]),
    ).toEqual([1, 3, 6]);
    expect(
      commonChain([
        [1, 3],
        [1, 3, 6],
      ]),
    ).toEqual([1, 3, 6]);
    expect(commonChain([])).toEqual([]);
  });

  it('places a workflow in the last phase begun at its start', () => {
    expect(phaseOf(5, [10, 20, 30])).toBe(-1);
    expect(phaseOf(10, [10, 20, 30])).toBe(0);
    expect(phaseOf(25, [10, 20, 30])).toBe(1);
    expect(phaseOf(99, [10, 20, 30])).toBe(2);
  });

  it('reads CPU ticks and resident memory from /proc, a name with spaces and parentheses included', () => {
    const stat = '4242 (temporal (dev) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 1500 250 0 0 20 0 12 0 100 2000000 5000';
    expect(procStatCpuTicks(stat)).toBe(1750);
    expect(procStatReapedChildrenTicks(stat)).toBe(0);
    expect(procStatParentPid(stat)).toBe(1);
    // A postmaster (parent 900) that reaped backends worth 300 + 40 ticks.
    const postmaster = '901 (postgres) S 900 901 901 0 -1 4194560 100 0 0 0 20 5 300 40 20 0 1 0 100 2000000 5000';
    expect(procStatReapedChildrenTicks(postmaster)).toBe(340);
    expect(procStatParentPid(postmaster)).toBe(900);
    expect(procPssBytes('5620b2226000-7ffe32252000 ---p 00000000 00:00 0    [rollup]\nRss:     204800 kB\nPss:     102400 kB\nPss_Anon:  512 kB\n')).toBe(
      102400 * 1024,
    );
    // A zombie's smaps_rollup is empty.
    expect(procPssBytes('')).toBeNaN();
  });

  it('parses and writes chains of step counts per phase, refusing what is not one', () => {
    expect(parseChains('1,3,6;6;5')).toEqual([[1, 3, 6], [6], [5]]);
    expect(formatChains([[1, 3, 6], [6], [5]])).toBe('1,3,6;6;5');
    expect(() => parseChains('1,x;2')).toThrow(/whole numbers/);
    expect(() => parseChains('')).toThrow(/whole numbers/);
  });

  it('writes a row per fleet size: phases beside their bound, the ratio, per-machine cost, answers and misses', () => {
    const row: FleetRow = {
      machines: 10,
      temporal: { kind: 'dev' },
      phases: [
        { name: 'enroll', seconds: 40, answered: { '201': 10 }, reached: 9, misses: [{ nodeId: 'n', state: 'failed', reason: 'BMC_UNREACHABLE: no answer' }] },
        { name: 'deploy', seconds: 30, answered: { '200': 9 }, reached: 9, misses: [] },
        { name: 'release', seconds: 30, answered: { '200': 9 }, reached: 9, misses: [] },
      ],
      workflows: 50,
      cpuMs: 20_000,
      peakRssBytes: 500 * 2 ** 20,
      siteCpuMs: 5_000,
      sitePeakRssBytes: 200 * 2 ** 20,
      boundSeconds: [20, 20, 10],
    };
    const [header, , line] = fleetTable([row]).split('\n');
    expect(header).toContain('bound (engine, no-op steps)');
    expect(line).toBe(
      '| 10 | dev server (SQLite) | 40.0 s (bound 20.0 s) | 30.0 s (bound 20.0 s) | 30.0 s (bound 10.0 s) | 100 s | 0.50 | 50.0 s | 2.00× | 2000 ms (site 500 ms) | 50.0 MiB (site 20.0 MiB) | 9 × 200 | enroll: 1 |',
    );
    expect(missLines([row])).toEqual(['- 10 machines (dev server (SQLite)), enroll: 1 stopped in failed: BMC_UNREACHABLE: no answer']);
  });

  it('names the Temporal a row ran on: the dev server, or the cluster with its worker processes', () => {
    const devRow: FleetRow = {
      machines: 10,
      temporal: { kind: 'dev' },
      phases: [{ name: 'enroll', seconds: 10, answered: { '201': 10 }, reached: 10, misses: [] }],
      workflows: 10,
      cpuMs: 1_000,
      peakRssBytes: 100 * 2 ** 20,
      siteCpuMs: 1_000,
      sitePeakRssBytes: 100 * 2 ** 20,
      boundSeconds: [5],
    };
    const rows = [
      devRow,
      { ...devRow, temporal: { kind: 'cluster', workers: 1 } },
      { ...devRow, temporal: { kind: 'cluster', workers: 2 } },
    ] satisfies FleetRow[];
    const cells = fleetTable(rows)
      .split('\n')
      .slice(2)
      .map((line) => line.split(' | ')[1]);
    expect(cells).toEqual(['dev server (SQLite)', 'cluster (PostgreSQL), 1 worker', 'cluster (PostgreSQL), 2 workers']);
  });
});
