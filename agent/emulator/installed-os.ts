// The emulated machine's installed OS: on boot from a disk holding an image it does what
// cloud-init or Ignition and our systemd units do with the user data the ramdisk wrote
// beside the disk — on first boot, the join token to its 0600 file and `agent join` with
// the document's --server and --node-id; then `agent node` (startNodeAgent) on every boot.
// The agent's data dir is the OS's own (Machine.osDir), so a reboot keeps its identity and
// does not join again; a new image (new user data) starts from an empty one.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startNodeAgent } from '../node/main';
import { joinArgsFromUserData, writeJoinTokenFile } from '../node/user-data';
import type { AgentLog } from '../site/log';
import type { InstalledOsHook, Machine } from './machine';

export function nodeAgentOs(options: { log?: AgentLog } = {}): InstalledOsHook {
  return async (machine: Machine) => {
    if (!existsSync(machine.userDataPath)) return undefined; // an OS without our agent
    const { kind, document } = JSON.parse(readFileSync(machine.userDataPath, 'utf8')) as { kind: string; document: string };
    const { server, nodeId } = joinArgsFromUserData(kind, document);
    mkdirSync(machine.osDir, { recursive: true, mode: 0o700 });
    const tokenFile = path.join(machine.osDir, 'join-token');
    const firstBoot = !existsSync(path.join(machine.osDir, 'identity.json'));
    if (firstBoot) writeJoinTokenFile(kind, document, tokenFile);
    const hardware = machine.hardware();
    const d = machine.description;
    return startNodeAgent({
      server,
      nodeId,
      dataDir: machine.osDir,
      ...(firstBoot ? { tokenFile } : {}),
      machine: { hostname: nodeId.replace(/_/g, '-'), productUuid: d.uuid, arch: d.arch, cpus: hardware.system.cpus, memoryBytes: hardware.system.memoryBytes, gpus: hardware.gpus, ...(hardware.dcgm ? { dcgm: hardware.dcgm } : {}) },
      dcgmiBinary: path.join(machine.osDir, 'no-dcgmi'),
      ...(options.log ? { log: options.log } : {}),
    });
  };
}
