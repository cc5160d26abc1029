// The fleet figure: N emulated machines (firmware, BMC, a ramdisk worker when booted) enrolled
// at once and taken to ready, deployed at once, released at once (bench/fleet/cycle.ts, a
// process per size), beside the bound the engine alone sets: the same provision workflows, each
// node's chain of them per phase with the same step counts, as no-op steps
// (bench/engine/side.ts --chains). Goal (issue 16): 1,000 machines through the whole cycle on 2
// cores within 1.25× that bound and within memory, every deploy accepted (queued, never refused).
// Then one size on the cluster profile (the real Temporal server on PostgreSQL, the API on
// PostgreSQL) with one and with two control-plane worker processes, as extra rows.
import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { formatChains } from '../lib/chains';
import type { CycleResult } from '../fleet/cycle';
import { fleetTable, missLines, refusedAnswers, temporalLabel, type FleetRow, type FleetTemporal } from '../fleet/tally';
import type { Figure } from './figure';

const run = promisify(execFile);
const cycleScript = fileURLToPath(new URL('../fleet/cycle.ts', import.meta.url));
const sideScript = fileURLToPath(new URL('../engine/side.ts', import.meta.url));

/** The cycle's arguments for this Temporal. */
const temporalArgs = (temporal: FleetTemporal): string[] => (temporal.kind === 'dev' ? [] : ['--temporal', 'cluster', '--workers', String(temporal.workers)]);

/** A failed cycle's error and where its logs were kept, from the end of its output. */
function failureSummary(output: string): string {
  const lines = output.split('\n');
  const error = lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.at(-1) ?? '';
  const logs = lines.find((line) => line.includes('its logs are in'))?.replace(/^.*its logs are in /, 'logs: ');
  return [error.slice(0, 300), logs].filter(Boolean).join('; ');
}

/** Runs the fleet cycle of `machines` in its own process, its progress lines passed on. */
async function cycle(machines: number, temporal: FleetTemporal, onLine: (line: string) => void): Promise<CycleResult> {
  // A machine's agents take about 10 MiB of the emulating process (100 machines: 1 GiB): V8's default heap limit is too small for 1,000.
  const heapMiB = Math.max(4096, machines * 16);
  const args = ['--machines', String(machines), ...temporalArgs(temporal)];
  const child = spawn(process.execPath, [`--max-old-space-size=${heapMiB}`, '--import', 'tsx', cycleScript, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderrTail: string[] = [];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail = [...stderrTail, line].slice(-30);
    onLine(line);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const last = stdout.trim().split('\n').at(-1);
  if (code !== 0 || !last) throw new Error(`bench/fleet/cycle.ts ${args.join(' ')} exited with ${code}:\n${stderrTail.join('\n')}`);
  return JSON.parse(last) as CycleResult;
}

/** The engine's time per phase for `machines` nodes running these chains of no-op-step workflows, all at once. */
async function bound(machines: number, chains: number[][]): Promise<number[]> {
  // A phase no node finished ran no chain to compare with.
  const ran = chains.filter((chain) => chain.length > 0);
  if (ran.length === 0) return chains.map(() => 0);
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', sideScript, '--side', 'ironflow', '--runs', String(machines), '--concurrency', String(machines), '--chains', formatChains(ran)],
    { maxBuffer: 1 << 20, timeout: 60 * 60_000 },
  );
  const walls = (JSON.parse(stdout.trim().split('\n').at(-1) as string) as { phases: Array<{ wallMs: number }> }).phases.map((p) => p.wallMs / 1000);
  return chains.map((chain) => (chain.length > 0 ? (walls.shift() ?? NaN) : 0));
}

export const fleetFigure: Figure = {
  id: 'fleet',
  title: 'A fleet through enroll, deploy and release against the engine alone',
  async measure({ quick, fleetSizes, fleetClusterSize, progress }) {
    const sizes = fleetSizes ?? (quick ? [10, 50] : [10, 100, 1000]);
    const clusterSize = fleetClusterSize ?? (quick ? 10 : 100);
    const runs: Array<{ machines: number; temporal: FleetTemporal }> = [
      ...sizes.map((machines) => ({ machines, temporal: { kind: 'dev' } as const })),
      ...(clusterSize > 0 ? [1, 2].map((workers) => ({ machines: clusterSize, temporal: { kind: 'cluster', workers } as const })) : []),
    ];
    const total = runs.length * 2;
    let done = 0;
    const rows: FleetRow[] = [];
    const notes: string[] = [];
    const failures: string[] = [];
    for (const { machines, temporal } of runs) {
      progress(done++, total, `fleet: ${machines} machines, ${temporalLabel(temporal)}`);
      const result = await cycle(machines, temporal, (line) => progress(done - 1, total, line.slice(0, 100))).catch((err: Error) => err);
      if (result instanceof Error) {
        // One size that failed (its logs kept, named in the message) leaves the others' rows standing.
        failures.push(`- ${machines} machines (${temporalLabel(temporal)}): the run failed: ${failureSummary(result.message)}`);
        done++;
        continue;
      }
      progress(done++, total, `fleet: the engine alone, ${machines} nodes, chains ${formatChains(result.chains)}`);
      const boundSeconds = await bound(machines, result.chains);
      rows.push({
        machines,
        temporal: result.temporal,
        phases: result.phases,
        workflows: result.workflowsByType.provision ?? 0,
        cpuMs: result.cpuMs.controlPlane + result.cpuMs.temporal,
        peakRssBytes: result.peakRssBytes.controlPlaneAndTemporal,
        siteCpuMs: result.cpuMs.site,
        sitePeakRssBytes: result.peakRssBytes.site,
        boundSeconds,
      });
      const refused = result.phases.map((p) => `${p.name} ${refusedAnswers(p.answered)}`).join(', ');
      const workflows = Object.entries(result.workflowsByType).map(([type, count]) => `${type} ${count}`);
      const requests = Object.entries(result.callsPerMachine).map(([call, perMachine]) => `${call} ${perMachine}`);
      const errors = Object.entries(result.callErrors).map(([call, count]) => `${call.replace(/^gateway error /, '')} ${count}`);
      notes.push(
        `- ${machines} machines (${temporalLabel(temporal)}): workflows ${workflows.join(', ')}; provision steps per node and phase ${formatChains(result.chains)}; ` +
          `answers other than 2xx: ${refused}; requests per machine: ${requests.join(', ')}; ` +
          `the gateway's error answers in all: ${errors.length ? errors.join(', ') : 'none'}.`,
      );
    }
    progress(total, total, 'fleet: done');
    const misses = missLines(rows);
    const devRows = rows.filter((r) => r.temporal.kind === 'dev');
    const clusterRows = rows.filter((r) => r.temporal.kind === 'cluster');
    const wallSeconds = (row: FleetRow) => row.phases.reduce((s, p) => s + p.seconds, 0);
    return {
      table: [
        'Wall time from the requests sent at once until every node rests in the state (or has failed); the bound is',
        'the engine alone running, per node and phase, the same chain of provision workflows with no-op steps',
        "(`event.append`), all nodes at once; the BMC commands the steps send the site agent, the machines' own work",
        "and the lifecycle's runs are not in it (a stricter bound). CPU is the control-plane process and the Temporal server over the three",
        'phases, RSS their peak sum (the emulated site, in a process of its own, in brackets); processes read from',
        '/proc (the Temporal server, worker processes, PostgreSQL) count their proportional set size (Pss), so memory',
        'they share counts once.',
        ...(clusterSize > 0
          ? [
              '',
              `The cluster rows run the same cycle of ${clusterSize} machines on the cluster profile (\`npm run start:cluster\`): the real`,
              'Temporal server on PostgreSQL (frontend over mTLS), the API’s database on PostgreSQL, the API and gateway in',
              'the control-plane process and the workflows in one or two worker processes of their own; their CPU and RSS add',
              'the worker processes and PostgreSQL’s (the postmaster and its backends, with the CPU of backends that ended).',
              'Their bound is the same engine run as the dev-server rows’ (the engine on the dev server), so their ratio says',
              'what the cluster costs against that engine on SQLite.',
            ]
          : []),
        '',
        fleetTable(rows),
        '',
        ...notes,
        ...(misses.length > 0 ? ['', 'Machines that did not finish, and why (the node’s lastError):', ...misses] : []),
        ...(failures.length > 0 ? ['', 'Runs that failed before they finished (no row):', ...failures] : []),
      ].join('\n'),
      charts: [
        {
          file: 'fleet-wall.png',
          chart: {
            title: 'Fleet wall time (enroll, deploy, release) against machine count',
            xLabel: 'machines',
            yLabel: 's',
            series: [
              { name: 'Ironflow', points: devRows.map((r) => [r.machines, wallSeconds(r)]) },
              { name: 'engine bound', points: devRows.map((r) => [r.machines, r.boundSeconds.reduce((s, b) => s + b, 0)]) },
              ...clusterRows.map((r) => ({
                name: temporalLabel(r.temporal).replace(' (PostgreSQL)', ''),
                points: [[r.machines, wallSeconds(r)]] as Array<[number, number]>,
              })),
            ],
          },
        },
      ],
    };
  },
};
