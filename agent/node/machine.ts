// What the node agent sees of its machine. On a real host: the OS's facts and a real
// `dcgmi`. The machine emulator passes its own description and DCGM answer instead, which
// diag.dcgm reports as `emulated`.
import os from 'node:os';
import type { EmulatedDcgm } from '../common/dcgm';
import { readSysfsFacts } from '../common/sysfs-facts';

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

/** This host, as the OS and its kernel (DMI, PCI) report it. */
export function hostMachine(): NodeMachine {
  const { system, gpus } = readSysfsFacts();
  return { hostname: os.hostname(), productUuid: system.productUuid, arch: os.arch() === 'arm64' ? 'aarch64' : 'x86_64', cpus: os.cpus().length, memoryBytes: os.totalmem(), gpus };
}
