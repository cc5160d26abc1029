// `npm run bench [-- --quick] [-- --only engine|api|fleet] [-- --fleet-sizes 10,100,1000] [-- --fleet-cluster-size 100]`:
// runs each figure against its peer in the same run (sides alternating, medians, the ratio),
// writes its table into bench/README.md between its markers with the date, the machine's load
// and its speed (bench/speed-probe.ts), and draws its PNG charts in bench/plots/. Progress on
// stderr: a bar on a terminal, plain lines otherwise. --fleet-cluster-size N: the fleet size run
// on the cluster profile with 1 and 2 worker processes (0: none).
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mkdirSync } from 'node:fs';
import { createProgress } from '../cli/progress';
import { speedProbeSeconds } from './speed-probe';
import { cpuTimes, stolenShare } from './lib/cpu-steal';
import { apiFigure } from './figures/api';
import { engineFigure } from './figures/engine';
import { fleetFigure } from './figures/fleet';
import type { Figure } from './figures/figure';
import { writeChartPng } from './lib/plot';
import { writeSection } from './lib/readme-section';

const figures: Figure[] = [engineFigure, apiFigure, fleetFigure];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
    'fleet-sizes': { type: 'string' },
    'fleet-cluster-size': { type: 'string' },
  },
});
const fleetSizes = values['fleet-sizes']?.split(',').map((size) => {
  const machines = Number(size);
  if (!Number.isInteger(machines) || machines < 1)
    throw new Error(`--fleet-sizes ${values['fleet-sizes']}: give machine counts separated by commas, e.g. 10,100,1000`);
  return machines;
});
const fleetClusterSize = values['fleet-cluster-size'] === undefined ? undefined : Number(values['fleet-cluster-size']);
if (fleetClusterSize !== undefined && (!Number.isInteger(fleetClusterSize) || fleetClusterSize < 0))
  throw new Error(
    `--fleet-cluster-size ${values['fleet-cluster-size']}: give the machine count of the fleet's cluster runs (1 and 2 worker processes), or 0 to skip them`,
  );
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const plotsDir = path.join(benchDir, 'plots');

async function main(): Promise<void> {
  const chosen = values.only?.length ? figures.filter((f) => values.only?.includes(f.id)) : figures;
  if (chosen.length === 0) throw new Error(`no figure named ${values.only?.join(', ')}; figures: ${figures.map((f) => f.id).join(', ')}`);
  mkdirSync(plotsDir, { recursive: true });
  for (const [index, figure] of chosen.entries()) {
    const progress = createProgress();
    const load = loadavg()[0]?.toFixed(1);
    const probe = speedProbeSeconds().toFixed(2);
    const startTimes = cpuTimes();
    // The bar counts the figure's samples; the text says which figure of the run it is.
    const figureOf = `figure ${index + 1}/${chosen.length}`;
    const result = await figure.measure({
      quick: values.quick,
      ...(fleetSizes ? { fleetSizes } : {}),
      ...(fleetClusterSize !== undefined ? { fleetClusterSize } : {}),
      progress: (done, total, text) => progress.update(done, total, `${figureOf} · ${text}`),
    });
    progress.end();
    const stolen = stolenShare(startTimes, cpuTimes());
    // A probe at the start alone can come from a fast minute of a slow hour (2026-12-08: 0.77 s, then 2.3 s).
    const probeAtEnd = speedProbeSeconds().toFixed(2);
    for (const { file, chart } of result.charts) await writeChartPng(chart, path.join(plotsDir, file));
    const stolenText = stolen === undefined ? '' : `; ${(stolen * 100).toFixed(1)}% of the CPU time stolen by the hypervisor during it`;
    const heading = `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench${values.quick ? ' -- --quick' : ''}\` on ${cpus().length} cores (load ${load} and speed probe ${probe} s at the start, ${probeAtEnd} s at the end${stolenText}).`;
    const plots = result.charts.map(({ file, chart }) => `![${chart.title}](plots/${file})`).join('\n');
    writeSection(path.join(benchDir, 'README.md'), figure.id, [heading, '', result.table, '', plots].join('\n'));
    process.stderr.write(`bench: ${figure.title}: written to bench/README.md\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
