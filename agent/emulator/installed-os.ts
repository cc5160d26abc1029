// The emulated machine's installed OS: on boot from a disk holding an image it does what
// cloud-init or Ignition and our systemd units do with the user data the ramdisk wrote
// beside the disk (agent/node/first-boot.ts). The agent's data dir is the OS's own
// (Machine.osDir), so a reboot keeps its identity and does not join again; a new image (new
// user data) starts from an empty one.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startInstalledOsAgent } from '../node/first-boot';
import type { NodeMachine } from '../node/machine';
import type { AgentLog } from '../site/log';
import type { InstalledOsHook, Machine } from './machine';

/** What the node agent sees of the emulated machine it runs on. */
export function emulatedNodeMachine(machine: Machine, hostname: string): NodeMachine {
  const hardware = machine.hardware();
  const d = machine.description;
  return { hostname, productUuid: d.uuid, arch: d.arch, cpus: hardware.system.cpus, memoryBytes: hardware.system.memoryBytes, gpus: hardware.gpus, ...(hardware.dcgm ? { dcgm: hardware.dcgm } : {}) };
}

export function nodeAgentOs(options: { log?: AgentLog } = {}): InstalledOsHook {
  return async (machine: Machine) => {
    if (!existsSync(machine.userDataPath)) return undefined; // an OS without our agent
    const userData = JSON.parse(readFileSync(machine.userDataPath, 'utf8')) as { kind: string; document: string };
    return startInstalledOsAgent({
      userData,
      dataDir: machine.osDir,
      machine: (nodeId) => emulatedNodeMachine(machine, nodeId.replace(/_/g, '-')),
      dcgmiBinary: path.join(machine.osDir, 'no-dcgmi'),
      ...(options.log ? { log: options.log } : {}),
    });
  };
}
