// An emulated machine's drive: a disk file plus what a real drive shows the ramdisk — its
// sysfs entry (/sys/block/<name>: size, model, ATA vendor string, discard) in a tree beside
// the disk, and answers to the drive tools the ramdisk runs (nvme id-ctrl/format, hdparm -I,
// Security Erase, Sanitize, blkdiscard --secure), as the drive's firmware would answer them.
// What it can do is declared: `transport` and `erase` (the modes its firmware offers).
// What an erase does to the disk file (docs/wiping.md):
// - secure-erase (NVMe Format SES=1, ATA SECURITY ERASE UNIT): every byte reads zero;
// - crypto-erase (NVMe Format SES=2, ATA Sanitize CRYPTO SCRAMBLE): the drive is a
//   self-encrypting one that does not deallocate, so every byte reads as the old ciphertext
//   through a new media key: random, never the old bytes and not zeros;
// - either one also erases what lives on the disk beside the image: the user data (a config
//   drive's stand-in) and the installed OS's files.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { open, truncate } from 'node:fs/promises';
import path from 'node:path';
import { IronflowError } from '../../core/errors';
import type { DiskTools } from '../ramdisk/hardware';

type EmulatedEraseMode = 'secure-erase' | 'crypto-erase';

export interface EmulatedDiskSpec {
  /** nvme: an NVMe namespace (nvme0n1); sata: an ATA drive behind libata (sda); virtio: a paravirtual disk with no erase command (vda). */
  transport: 'nvme' | 'sata' | 'virtio';
  /** The modes its firmware offers (ignored for virtio). */
  erase: EmulatedEraseMode[];
  /** sata: the BIOS froze the Security feature set at boot, as many do. */
  frozen?: boolean;
}

/** A machine's drive when its description names none: NVMe with Format (user data erase) and no cryptographic erase. */
export const DEFAULT_EMULATED_DISK: EmulatedDiskSpec = { transport: 'nvme', erase: ['secure-erase'] };

const MIB = 1024 * 1024;
const NAMES = { nvme: 'nvme0n1', sata: 'sda', virtio: 'vda' } as const;

function toolError(command: string, args: string[], said: string): IronflowError {
  return new IronflowError('DRIVER_ERROR', `${command} ${args.join(' ')} failed: ${said}`, { reason: 'erase-command', command });
}

export class EmulatedDisk {
  readonly name: string;
  readonly model: string;
  /** ATA Security: a user password set (the erase needs one), and the password. */
  private securityPassword: string | undefined;
  /** Erases so far, by the mode the drive ran (tests read it). */
  readonly erases: EmulatedEraseMode[] = [];

  constructor(
    readonly spec: EmulatedDiskSpec,
    private readonly file: string,
    private readonly sizeBytes: number,
    readonly sysfsRoot: string,
    /** What else lives on the disk (user data, the OS's files): gone with an erase. */
    private readonly onErased: () => Promise<void>,
  ) {
    this.name = NAMES[spec.transport];
    const crypto = this.offers('crypto-erase') ? ' SED' : '';
    this.model =
      spec.transport === 'nvme'
        ? `Ironflow Emulated NVMe${crypto}`
        : spec.transport === 'sata'
          ? `Ironflow Emulated SATA SSD${crypto}`
          : 'Ironflow Emulated Virtio Disk';
  }

  private offers(mode: EmulatedEraseMode): boolean {
    return this.spec.transport !== 'virtio' && this.spec.erase.includes(mode);
  }

  /** Writes the drive's /sys/block/<name> as the kernel shows it. */
  writeSysfs(): void {
    const dir = path.join(this.sysfsRoot, 'sys/block', this.name);
    const files: Record<string, string> = {
      size: String(Math.floor(this.sizeBytes / 512)),
      removable: '0',
      'queue/rotational': '0',
      'queue/discard_max_bytes': '0',
      'device/model': this.model,
      ...(this.spec.transport === 'sata' ? { 'device/vendor': 'ATA' } : {}),
      ...(this.spec.transport === 'virtio' ? { 'device/vendor': '0x1af4' } : {}),
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), `${text}\n`);
    }
  }

  /** The drive tools, answered by this drive's firmware (only for its own disk file). */
  readonly tools: DiskTools = async (command, args) => {
    if (!args.includes(this.file)) throw toolError(command, args, `${args[args.length - 1] ?? ''}: No such file or directory`);
    if (command === 'nvme' && this.spec.transport === 'nvme') return this.nvme(args);
    if (command === 'hdparm' && this.spec.transport === 'sata') return this.hdparm(args);
    if (command === 'blkdiscard') throw toolError(command, args, `BLKSECDISCARD: ${this.file} ioctl failed: Operation not supported`);
    throw toolError(command, args, 'Inappropriate ioctl for device');
  };

  private async nvme(args: string[]): Promise<string> {
    const [sub] = args;
    if (sub === 'id-ctrl') {
      // Identify Controller as nvme-cli prints it: OACS bit 1 Format NVM, FNA bit 2 crypto erase, SANICAP bit 0 crypto.
      const format = this.offers('secure-erase') || this.offers('crypto-erase');
      return JSON.stringify({
        vid: 6966,
        ssvid: 6966,
        sn: 'EMU0000001',
        mn: this.model,
        fr: '1.0',
        oacs: format ? 0x6 : 0x4,
        fna: this.offers('crypto-erase') ? 0x4 : 0,
        sanicap: this.offers('crypto-erase') ? 0x1 : 0,
        nn: 1,
      });
    }
    if (sub === 'format') {
      const ses = args.find((a) => a.startsWith('--ses='))?.slice('--ses='.length);
      const mode = ses === '2' ? 'crypto-erase' : ses === '1' ? 'secure-erase' : undefined;
      if (!mode || !this.offers(mode))
        throw toolError('nvme', args, 'NVMe status: INVALID_FIELD: A reserved coded value or an unsupported value in a defined field(0x2)');
      await this.erase(mode);
      return 'Success formatting namespace:1\n';
    }
    throw toolError('nvme', args, `unknown command ${sub ?? ''}`);
  }

  private async hdparm(args: string[]): Promise<string> {
    if (args[0] === '-I') return this.identify();
    if (args.includes('--security-set-pass')) {
      if (!this.offers('secure-erase') || this.spec.frozen) throw toolError('hdparm', args, 'SECURITY_SET_PASS: Input/output error');
      this.securityPassword = args[args.indexOf('--security-set-pass') + 1];
      return '';
    }
    if (args.includes('--security-erase')) {
      const password = args[args.indexOf('--security-erase') + 1];
      if (!this.securityPassword || password !== this.securityPassword) throw toolError('hdparm', args, 'SECURITY_ERASE: Input/output error');
      await this.erase('secure-erase');
      this.securityPassword = undefined; // the erase clears it, as ATA says
      return '';
    }
    if (args.includes('--sanitize-crypto-scramble')) {
      if (!this.offers('crypto-erase')) throw toolError('hdparm', args, 'SANITIZE feature set is not supported');
      await this.erase('crypto-erase');
      return '';
    }
    if (args.includes('--sanitize-status')) return 'Sanitize status:\n    State:    SD0 Sanitize Idle\n    Last Sanitize Operation Completed Without Error\n';
    throw toolError('hdparm', args, 'unknown option');
  }

  /** `hdparm -I`, laid out as hdparm 9.65 prints it (only the lines the ramdisk reads and their neighbours). */
  private identify(): string {
    const security = this.offers('secure-erase');
    const flag = (on: boolean, name: string) => `\t${on ? '\t' : 'not\t'}${name}`;
    return [
      `${this.file}:`,
      '',
      'ATA device, with non-removable media',
      `\tModel Number:       ${this.model}`,
      '\tSerial Number:      EMU0000001',
      '\tFirmware Revision:  1.0',
      'Commands/features:',
      '\tEnabled\tSupported:',
      '\t   *\tSMART feature set',
      `\t    \tSecurity Mode feature set`,
      ...(this.offers('crypto-erase') ? ['\t   *\tSANITIZE feature set', '\t   *\tCRYPTO_SCRAMBLE_EXT command'] : []),
      'Security: ',
      '\tMaster password revision code = 65534',
      flag(security, 'supported'),
      flag(this.securityPassword !== undefined, 'enabled'),
      flag(false, 'locked'),
      flag(this.spec.frozen === true, 'frozen'),
      '\tnot\texpired: security count',
      '\t\tsupported: enhanced erase',
      '\t2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT.',
      'Checksum: correct',
      '',
    ].join('\n');
  }

  private async erase(mode: EmulatedEraseMode): Promise<void> {
    if (mode === 'secure-erase') {
      await truncate(this.file, 0);
      await truncate(this.file, this.sizeBytes);
    } else {
      const handle = await open(this.file, 'r+');
      try {
        for (let at = 0; at < this.sizeBytes; at += MIB)
          await handle.write(randomBytes(Math.min(MIB, this.sizeBytes - at)), 0, Math.min(MIB, this.sizeBytes - at), at);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    this.erases.push(mode);
    await this.onErased();
  }
}
