// The ramdisk agent on a real machine (`ironflow agent ramdisk`, and the ramdisk image's
// init): boot parameters from the kernel command line, hardware facts from sysfs, then the
// same agent the emulator runs. Runs until SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { IronflowError } from '../../core/errors';
import { normalizeMac } from '../../core/mac';
import { runUntilSignal } from '../common/run-until-signal';
import { bootParamsFrom } from './boot-params';
import type { RamdiskHardware } from './hardware';
import { writeConfigDrive } from './config-drive-writer';
import { loadKexec } from './kexec';
import { startRamdiskAgent } from './main';
import { readSysfsFacts } from '../common/sysfs-facts';

/** x86 Linux keeps this many bytes of the command line; a longer script was cut short. */
const KERNEL_CMDLINE_MAX_BYTES = 2048;

/** The machine as its kernel shows it, with each NIC's IPv4 address from the running system. */
function machineHardware(root = '/'): RamdiskHardware {
  const facts = readSysfsFacts(root);
  const addresses = new Map<string, string>();
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const mac = normalizeMac(entry.mac);
      if (mac && entry.family === 'IPv4' && !entry.internal) addresses.set(mac, entry.address);
    }
  }
  return {
    system: facts.system,
    nics: facts.nics.map((nic) => ({ mac: nic.mac, ...(addresses.has(nic.mac) ? { ip: addresses.get(nic.mac) as string } : {}) })),
    disks: facts.disks.map(({ name, path, sizeBytes }) => ({ name, path, sizeBytes })),
    gpus: facts.gpus,
    sysfsRoot: root,
    // The image goes to the first disk (deploy.image); its config drive after it.
    ...(facts.disks[0]
      ? { writeUserData: async (userData) => void (await writeConfigDrive(facts.disks[0] as { path: string; sizeBytes: number }, userData)) }
      : {}),
    // The installed OS is on the first disk, where deploy.image wrote it.
    loadKexec: () => {
      const disk = facts.disks[0];
      if (!disk) throw new IronflowError('UNSUPPORTED', 'this machine has no disk to kexec the installed OS from', { reason: 'no-disk' });
      return loadKexec(disk.path);
    },
  };
}

export async function runRamdiskOnMachine(options: { cmdlineFile?: string; root?: string } = {}): Promise<void> {
  const cmdline = readFileSync(options.cmdlineFile ?? '/proc/cmdline', 'utf8');
  if (Buffer.byteLength(cmdline.trim()) >= KERNEL_CMDLINE_MAX_BYTES - 1) {
    // The kernel cut it: the last if.* parameter is incomplete and would fail in a confusing way.
    throw new IronflowError(
      'INVALID_CONFIG',
      `the kernel command line is ${KERNEL_CMDLINE_MAX_BYTES} bytes or more and was cut short: shorten [boot] cmdline on the site agent`,
      { path: 'boot.cmdline' },
    );
  }
  const params = bootParamsFrom(cmdline);
  await runUntilSignal(await startRamdiskAgent({ params, hardware: machineHardware(options.root) }));
}
