// What a ramdisk sees of its machine. A real ramdisk reads DMI, /sys/class/net and block
// devices; the machine emulator hands in its description and a file as the disk.
import type { EmulatedDcgm } from '../common/dcgm';

export interface RamdiskNic {
  mac: string;
  ip?: string;
}

export interface RamdiskDisk {
  name: string;
  /** A block device, or the emulator's disk file. */
  path: string;
  sizeBytes: number;
  /** 'file': the emulator's disk (an emulated device: no discard, secure-erase by overwrite, no crypto-erase). */
  kind?: 'block' | 'file';
}

export interface RamdiskHardware {
  system: { productUuid: string | null; vendor: string; model: string; serial: string; arch: string; uefi: boolean; cpus: number; memoryBytes: number };
  nics: RamdiskNic[];
  disks: RamdiskDisk[];
  gpus: Array<{ model: string; uuid: string }>;
  /** The machine emulator's DCGM answer (emulated machines only; diag.dcgm reports it as `emulated`). */
  dcgm?: EmulatedDcgm;
  /**
   * Puts the deploy's user data where the installed OS's first boot reads it (a config
   * drive; the emulator keeps a file beside its disk). Absent: this ramdisk cannot.
   */
  writeUserData?: (userData: { kind: 'cloud-init' | 'ignition'; document: string }) => Promise<void>;
  /** Boots the installed OS from disk (kexec). Resolves once it is under way. */
  kexec(): Promise<void>;
}
