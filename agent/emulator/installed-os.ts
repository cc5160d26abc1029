// The emulated machine's installed OS: on boot from a disk holding an image it does what
// cloud-init or Ignition and our systemd units do with the user data the ramdisk wrote
// beside the disk (agent/node/first-boot.ts). The agent's data dir is the OS's own
// (Machine.osDir), so a reboot keeps its identity and does not join again; a new image (new
// user data) starts from an empty one. The OS's root filesystem is a directory in it
// (osRoot): at each boot the emulated kernel lays out what a real one shows of the hardware
// (DMI, /proc, a new boot id, PCI devices of its GPUs), and a machine with GPUs carries an
// emulated `nvidia-smi` on its PATH that lists them and records each reset in a file
// (gpuResetLog): the GPU's tool, emulated. The node agent reads all of it as on a real host.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startInstalledOsAgent } from '../node/first-boot';
import { HostRoot } from '../node/host-root';
import { readHostMachine, type NodeMachine } from '../node/machine';
import type { AgentLog } from '../common/log';
import type { InstalledOsHook, Machine } from './machine';

/** The installed OS's root filesystem. */
export const osRoot = (machine: Machine): string => path.join(machine.osDir, 'root');
/** Where the emulated nvidia-smi records each GPU reset (one line: `reset <index> <uuid>`). */
export const gpuResetLog = (machine: Machine): string => path.join(osRoot(machine), 'var/log/emulated-gpu-resets.log');

const write = (file: string, content: string, mode = 0o644) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content, { mode });
};

/** A POSIX sh nvidia-smi answering --query-gpu, -L and --gpu-reset -i N for the machine's GPUs. */
function emulatedNvidiaSmi(gpus: Array<{ uuid: string; pciAddress: string }>, resetLog: string): string {
  const query = gpus.map((g, i) => `${i}, 0000${g.pciAddress.toUpperCase()}, ${g.uuid}, Emulated GPU`).join('\\n');
  const list = gpus.map((g, i) => `GPU ${i}: Emulated GPU (UUID: ${g.uuid})`).join('\\n');
  return `#!/bin/sh
# The emulated machine's nvidia-smi (agent/emulator/installed-os.ts): its GPUs, and a record of each reset.
case "$1" in
  --query-gpu=*) printf '${query}\\n' ;;
  -L) printf '${list}\\n' ;;
  --gpu-reset)
    [ "$2" = "-i" ] || { echo "emulated nvidia-smi: --gpu-reset needs -i" >&2; exit 2; }
    case "$3" in
${gpus.map((g, i) => `      ${i}) echo "reset ${i} ${g.uuid}" >> '${resetLog}'; echo "GPU 0000${g.pciAddress.toUpperCase()} was successfully reset." ;;`).join('\n')}
      *) echo "No GPU with index $3" >&2; exit 6 ;;
    esac ;;
  *) echo "emulated nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;;
esac
`;
}

/** What the emulated kernel shows at boot under the OS root; a new boot id every time. */
export function layOutEmulatedOsRoot(machine: Machine, hostname: string): HostRoot {
  const root = osRoot(machine);
  const hardware = machine.hardware();
  const d = machine.description;
  write(path.join(root, 'etc/hostname'), `${hostname}\n`);
  const dmi = path.join(root, 'sys/class/dmi/id');
  write(path.join(dmi, 'product_uuid'), `${d.uuid}\n`, 0o400);
  write(path.join(dmi, 'sys_vendor'), `${hardware.system.vendor}\n`);
  write(path.join(dmi, 'product_name'), `${hardware.system.model}\n`);
  write(path.join(dmi, 'product_serial'), `${hardware.system.serial}\n`, 0o400);
  write(path.join(root, 'proc/cpuinfo'), Array.from({ length: hardware.system.cpus }, (_, i) => `processor\t: ${i}\nmodel name\t: Emulated CPU\n\n`).join(''));
  write(path.join(root, 'proc/meminfo'), `MemTotal:       ${hardware.system.memoryBytes / 1024} kB\n`);
  write(path.join(root, 'proc/sys/kernel/random/boot_id'), `${randomUUID()}\n`);
  const gpus = hardware.gpus.map((g, i) => ({ uuid: g.uuid, pciAddress: `0000:${(0x41 + i).toString(16)}:00.0` }));
  for (const gpu of gpus) {
    const dir = path.join(root, 'sys/bus/pci/devices', gpu.pciAddress);
    write(path.join(dir, 'class'), '0x030200\n');
    write(path.join(dir, 'vendor'), '0x10de\n');
    write(path.join(dir, 'device'), '0x2330\n');
  }
  if (gpus.length > 0) {
    const tool = path.join(root, 'usr/bin/nvidia-smi');
    write(tool, emulatedNvidiaSmi(gpus, gpuResetLog(machine)), 0o755);
    chmodSync(tool, 0o755);
    mkdirSync(path.dirname(gpuResetLog(machine)), { recursive: true });
  }
  return new HostRoot(root);
}

/** What the node agent sees of the emulated machine it runs on: read from the OS root, plus the emulator's DCGM answer. */
export async function emulatedNodeMachine(machine: Machine, hostname: string): Promise<NodeMachine> {
  const facts = await readHostMachine(layOutEmulatedOsRoot(machine, hostname));
  const dcgm = machine.hardware().dcgm;
  return { ...facts, ...(dcgm ? { dcgm } : {}) };
}

export function nodeAgentOs(options: { log?: AgentLog; hostRecheckMs?: number } = {}): InstalledOsHook {
  return async (machine: Machine) => {
    if (!existsSync(machine.userDataPath)) return undefined; // an OS without our agent
    const userData = JSON.parse(readFileSync(machine.userDataPath, 'utf8')) as { kind: string; document: string };
    return startInstalledOsAgent({
      userData,
      dataDir: machine.osDir,
      root: osRoot(machine),
      machine: (nodeId) => emulatedNodeMachine(machine, nodeId.replace(/_/g, '-')),
      dcgmiBinary: path.join(machine.osDir, 'no-dcgmi'),
      ...(options.hostRecheckMs ? { hostRecheckMs: options.hostRecheckMs } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  };
}
