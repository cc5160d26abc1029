// What an emulated machine costs when idle (its Redfish BMC in the shared host, its firmware
// state, its sparse disk file): heap and RSS per machine for N machines in one process,
// and the time a BMC power-state read takes while all are present.
// Run: npx tsx bench/emulator-memory.ts [N=500]   (use --expose-gc for steadier numbers)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Fleet } from '../agent/emulator/fleet';

const count = Number(process.argv[2] ?? 500);
const gc = (globalThis as { gc?: () => void }).gc;
const settle = async () => {
  gc?.();
  await new Promise((r) => setTimeout(r, 200));
  gc?.();
};

const dir = mkdtempSync(path.join(os.tmpdir(), 'emulator-bench-'));
const fleet = await Fleet.start({ dataDir: dir, bootServerUrl: () => undefined });
await settle();
const before = process.memoryUsage();
const bmcs = [];
for (let i = 0; i < count; i++) bmcs.push((await fleet.add({ diskBytes: 1024 ** 3 })).bmc);
await settle();
const after = process.memoryUsage();
const started = performance.now();
const sample = bmcs.slice(0, 50);
for (const bmc of sample) {
  const response = await fetch(bmc.address, { headers: { authorization: `Basic ${Buffer.from(`${bmc.username}:${bmc.password}`).toString('base64')}` } });
  await response.text();
}
const readMs = (performance.now() - started) / sample.length;
await fleet.close();
rmSync(dir, { recursive: true, force: true });
const kib = (bytes: number) => Math.round(bytes / 1024);
console.log(
  JSON.stringify({
    machines: count,
    heapPerMachineKiB: kib((after.heapUsed - before.heapUsed) / count),
    rssPerMachineKiB: kib((after.rss - before.rss) / count),
    rssTotalMiB: Math.round(after.rss / 1024 / 1024),
    bmcSystemReadMs: Number(readMs.toFixed(2)),
    gc: Boolean(gc),
  }),
);
