// What a ramdisk sees of its machine. A real ramdisk reads DMI, /sys/class/net and block
// devices; the machine emulator hands in its description and a file as the disk, with a
// sysfs tree and disk tools of its emulated drive (agent/emulator/emulated-disk.ts), so the
// ramdisk learns what a disk can do the same way on both.
import type { EmulatedDcgm } from '../common/dcgm';
import type { DiskToolName } from './erase/capabilities';

interface RamdiskNic {
  mac: string;
  ip?: string;
}

export interface RamdiskDisk {
  name: string;
  /** A block device, or the emulator's disk file. */
  path: string;
  sizeBytes: number;
}

/** Runs a drive tool (nvme-cli, hdparm, blkdiscard) and answers its stdout; throws with its stderr when it fails or outlives timeoutMs. */
export type DiskTools = (command: DiskToolName, args: string[], options: { timeoutMs: number }) => Promise<string>;

export interface RamdiskHardware {
  system: { productUuid: string | null; vendor: string; model: string; serial: string; arch: string; uefi: boolean; cpus: number; memoryBytes: number };
  nics: RamdiskNic[];
  disks: RamdiskDisk[];
  gpus: Array<{ model: string; uuid: string }>;
  /** Where /sys is ('/' on a machine, the default); disks are /sys/block/<name> under it. */
  sysfsRoot?: string;
  /** The drive tools; the installed binaries when absent. */
  diskTools?: DiskTools;
  /** The machine emulator's DCGM answer (emulated machines only; diag.dcgm reports it as `emulated`). */
  dcgm?: EmulatedDcgm;
  /**
   * Puts the deploy's user data where the installed OS's first boot reads it (a config
   * drive; the emulator keeps a file beside its disk). Absent: this ramdisk cannot.
   */
  writeUserData?: (userData: { kind: 'cloud-init' | 'ignition'; document: string }) => Promise<void>;
  /**
   * Loads the installed OS from disk to kexec into; throws when it cannot (no boot entry, no
   * kexec), before boot.kexec answers. `start` boots it and resolves once that is under way.
   */
  loadKexec(): Promise<LoadedKexec>;
}

export interface LoadedKexec {
  /** Where the kernel was read, for the log: `partition 1, loader/entries/os.conf`. */
  source: string;
  start(): Promise<void>;
}
