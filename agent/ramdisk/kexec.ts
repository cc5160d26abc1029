// boot.kexec on a real machine: the installed OS's kernel, initrds and command line, read
// from its boot loader's configuration on the disk the image went to (boot-entries.ts), are
// loaded with kexec-tools (`kexec -l`) before the step answers, and started (`kexec -e`) after
// it, so a machine that cannot kexec fails the step instead of leaving the run to wait for a
// join. The disk's FAT partitions are read first (an EFI system partition, a syslinux boot
// partition), then its Linux ones holding ext2/3/4 (a /boot or root file system with GRUB),
// each with no mount (partition-files.ts). A disk with no boot entry on them (GRUB on xfs or
// btrfs, say) is UNSUPPORTED with that reason: boot it through the BMC instead
// (management.setBootDevice, then power.setPower cycle), as Ironic does.
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { IronflowError } from '../../core/errors';
import { bootEntryOn, type BootEntry } from './boot-entries';
import { gptPartitions } from './gpt-partition';
import { mbrPartitions } from './mbr-partition';
import { extFiles, fatFiles, shownPath, type PartitionFiles } from './partition-files';
import { GPT_PROTECTIVE, mbrEntryTypes, SECTOR, type ListedPartition } from './partition-table';
import type { LoadedKexec } from './hardware';
import { runTool } from './run-tool';

const XBOOTLDR = 'BC13C2FF-59E6-4262-A352-B275FD6F7172';
/** Partition types a boot loader's FAT file system sits in: FAT MBR types; the EFI system, basic data and XBOOTLDR GPT types. */
const FAT_TYPES = new Set(['01', '04', '06', '0b', '0c', '0e', 'ef', 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B', 'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7', XBOOTLDR]);
/** Partition types a Linux /boot or root file system sits in: MBR Linux; GPT Linux file system, XBOOTLDR, x86-64 and arm64 root. */
const LINUX_TYPES = new Set([
  '83',
  '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
  XBOOTLDR,
  '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
  'B921B045-1DF0-41C3-AF44-4C6F280D3FAE',
]);
/** What boot.kexec copies into the ramdisk's memory at most: the kernel and its initrds together. */
export const KEXEC_FILES_BYTES_MAX = 1024 * 1024 * 1024;
/** Initrds a boot entry may name (microcode, the initramfs, a few extras): each is a tool run, so a configuration cannot ask for thousands. */
export const KEXEC_INITRDS_MAX = 16;

/** What kexec loads: the kernel and initrd as local files, and the command line. */
export interface KexecTarget {
  kernel: string;
  /** The entry's initrds, joined in order into one file (the kernel reads concatenated cpio archives); undefined for none. */
  initrd?: string;
  cmdline: string;
  /** Where it was read: `partition 1, loader/entries/ironflow.conf`. */
  source: string;
}

async function partitionsOf(disk: string): Promise<ListedPartition[]> {
  const handle = await open(disk, 'r');
  try {
    const mbr = Buffer.alloc(SECTOR);
    await handle.read(mbr, 0, SECTOR, 0);
    return mbrEntryTypes(mbr).includes(GPT_PROTECTIVE) ? await gptPartitions(handle) : mbrPartitions(mbr);
  } finally {
    await handle.close();
  }
}

/** The disk's FAT partitions, then those of its Linux ones that hold an ext file system (an XBOOTLDR partition may be either). */
async function bootPartitions(disk: string): Promise<PartitionFiles[]> {
  const partitions = await partitionsOf(disk);
  const fat = partitions.filter((p) => FAT_TYPES.has(p.type)).map((p) => fatFiles(disk, p));
  const ext = await Promise.all(partitions.filter((p) => LINUX_TYPES.has(p.type)).map((p) => extFiles(disk, p)));
  return [...fat, ...ext.filter((files): files is PartitionFiles => files !== undefined)];
}

/** Copies an entry's file out within `budget` bytes, answering its size; a BLS entry under `boot/` may name it from /boot's own root. */
async function copyEntryFile(files: PartitionFiles, entry: BootEntry, file: string, to: string, budget: number): Promise<number> {
  try {
    return await files.copy(file, to, budget);
  } catch (error) {
    const absent = error instanceof IronflowError && error.details.reason === 'boot-file-missing';
    if (!absent || entry.fallbackPrefix === undefined) throw error;
    return files.copy(path.posix.join(entry.fallbackPrefix, file), to, budget);
  }
}

/** The installed OS's boot entry on `disk`, its kernel and initrds copied under `workDir` (at most `maxBytes` in all). */
export async function findKexecTarget(disk: string, workDir: string, maxBytes = KEXEC_FILES_BYTES_MAX): Promise<KexecTarget> {
  const candidates = await bootPartitions(disk);
  for (const files of candidates) {
    const entry = await bootEntryOn(files);
    if (!entry) continue;
    if (entry.initrds.length > KEXEC_INITRDS_MAX) {
      throw new IronflowError(
        'UNSUPPORTED',
        `the boot entry in ${shownPath(entry.file)} on partition ${files.partition} names ${entry.initrds.length} initrds, more than the ${KEXEC_INITRDS_MAX} boot.kexec loads; boot the disk through the BMC instead`,
        { reason: 'too-many-initrds' },
      );
    }
    let left = maxBytes;
    const kernel = path.join(workDir, 'kernel');
    left -= await copyEntryFile(files, entry, entry.kernel, kernel, left);
    const initrds: string[] = [];
    for (const [i, file] of entry.initrds.entries()) {
      initrds.push(path.join(workDir, `initrd.${i}`));
      left -= await copyEntryFile(files, entry, file, initrds[i] as string, left);
    }
    let initrd = initrds[0];
    if (initrds.length > 1) {
      initrd = path.join(workDir, 'initrd');
      writeFileSync(initrd, Buffer.concat(initrds.map((file) => readFileSync(file))));
    }
    return { kernel, ...(initrd ? { initrd } : {}), cmdline: entry.cmdline, source: `partition ${files.partition}, ${shownPath(entry.file)}` };
  }
  throw new IronflowError(
    'UNSUPPORTED',
    `no boot entry to kexec on ${disk}: no Boot Loader Specification entry, syslinux.cfg or grub.cfg menu entry on its ${candidates.length} FAT or ext partition(s); boot the disk through the BMC instead (management.setBootDevice, then power.setPower cycle)`,
    { reason: 'no-boot-entry' },
  );
}

/** Loads the installed OS from `disk` (kexec -l); answers where it was read and what starts it (kexec -e). */
export async function loadKexec(disk: string): Promise<LoadedKexec> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'kexec-'));
  try {
    const target = await findKexecTarget(disk, workDir);
    await runTool(
      'kexec',
      ['-l', target.kernel, ...(target.initrd ? [`--initrd=${target.initrd}`] : []), `--command-line=${target.cmdline}`],
      'kexec-load',
      `kexec -l of the kernel of ${target.source} (its command line not shown)`,
    );
    return { source: target.source, start: async () => void (await runTool('kexec', ['-e'], 'kexec-start')) };
  } finally {
    // The ramdisk's /tmp is its memory: the kernel holds what kexec -l loaded, the copies are not needed.
    await rm(workDir, { recursive: true, force: true });
  }
}
