// What the node agent sees of its machine, read from the host under its root: DMI product
// UUID, CPUs and memory (sysfs and /proc), GPUs (PCI display class with a GPU vendor in sysfs,
// named by nvidia-smi where the host has it), the hostname. A real host's root is `/`; the
// machine emulator's installed OS is a directory laid out the same way, and passes its DCGM
// answer, which diag.dcgm reports as `emulated`.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { EmulatedDcgm } from '../common/dcgm';
import { readSysfsFacts } from '../common/sysfs-facts';
import type { HostRoot } from './host-root';
import { queryNvidiaGpus } from './nvidia-smi';

export interface NodeMachine {
  hostname: string;
  productUuid: string | null;
  arch: string;
  cpus: number;
  memoryBytes: number;
  gpus: Array<{ model: string; uuid: string }>;
  /** The machine emulator's DCGM answer (emulated machines only). */
  dcgm?: EmulatedDcgm;
}

function hostnameOf(root: HostRoot): string {
  if (root.isRealHost) return os.hostname();
  try {
    return readFileSync(root.path('/etc/hostname'), 'utf8').slice(0, 253).trim() || 'localhost';
  } catch {
    return 'localhost';
  }
}

/** The host under `root`, as its kernel (DMI, PCI, /proc) and nvidia-smi report it. */
export async function readHostMachine(root: HostRoot): Promise<NodeMachine> {
  const { system, gpus: pciGpus } = readSysfsFacts(root.dir);
  const nvidia = (await queryNvidiaGpus(root)) ?? [];
  // sysfs finds every GPU; nvidia-smi names NVIDIA's and gives their UUIDs (matched by PCI address).
  const gpus = pciGpus.map((gpu) => {
    const named = nvidia.find((n) => `pci-${n.pciAddress}` === gpu.uuid);
    return named ? { model: named.name, uuid: named.uuid } : gpu;
  });
  for (const n of nvidia) if (!pciGpus.some((gpu) => gpu.uuid === `pci-${n.pciAddress}`)) gpus.push({ model: n.name, uuid: n.uuid });
  return {
    hostname: hostnameOf(root),
    productUuid: system.productUuid,
    arch: system.arch,
    cpus: system.cpus || (root.isRealHost ? os.cpus().length : 0),
    memoryBytes: system.memoryBytes || (root.isRealHost ? os.totalmem() : 0),
    gpus,
  };
}
