// How each wipe mode erases one disk (spec 004 release wipes; Ironic's erase_devices):
// - quick: discard the whole device where it supports discard, then zero the first and last
//   64 MiB (partition tables, the GPT backup, RAID/LVM superblocks) and the first MiB of every
//   partition, each zeroed range read back;
// - secure-erase / crypto-erase: the device's own command — NVMe Format with Secure Erase
//   Settings 1 (user data) or 2 (cryptographic) when the controller says it supports it, ATA
//   Security Erase (enhanced for crypto) when the drive supports it and is not frozen — and
//   UNSUPPORTED naming the device and the reason otherwise, never a pretend success. The
//   machine emulator's disks are files: its emulated device does secure-erase as a full
//   overwrite and has no crypto-erase.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { IronflowError } from '../../core/errors';
import type { RamdiskDisk } from './hardware';

export type WipeMode = 'quick' | 'secure-erase' | 'crypto-erase';

const MIB = 1024 * 1024;
const QUICK_EDGE_BYTES = 64 * MIB;
const COMMAND_TIMEOUT_MS = 6 * 3_600_000;

// A type alias (not an interface) so it fits the JSON the result is signed as.
export type DiskWipeResult = {
  name: string;
  mode: WipeMode;
  /** How it was erased: the commands and ranges, for the signed result. */
  method: string;
  bytes: number;
  readBack: boolean;
};

type Progress = (done: number) => void;

/** Zeroes [start, end) and reads it back; answers whether every byte read back zero. */
export async function zeroRange(file: string, start: number, end: number, progress: Progress): Promise<boolean> {
  const handle = await open(file, 'r+');
  try {
    const zeros = Buffer.alloc(Math.min(MIB, Math.max(0, end - start)));
    for (let at = start; at < end; at += zeros.length) await handle.write(zeros, 0, Math.min(zeros.length, end - at), at);
    await handle.sync();
    const back = Buffer.alloc(zeros.length);
    for (let at = start; at < end; at += back.length) {
      const { bytesRead } = await handle.read(back, 0, Math.min(back.length, end - at), at);
      if (bytesRead !== Math.min(back.length, end - at) || back.subarray(0, bytesRead).some((b) => b !== 0)) return false;
      progress(at + bytesRead - start);
    }
    return true;
  } finally {
    await handle.close();
  }
}

const sysfsBlock = (disk: RamdiskDisk) => path.join('/sys/block', disk.name);

function readSysfs(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Byte offsets where the disk's partitions start (from the kernel's view of the table). */
function partitionStarts(disk: RamdiskDisk): number[] {
  try {
    return readdirSync(sysfsBlock(disk))
      .filter((entry) => entry.startsWith(disk.name))
      .map((entry) => Number(readSysfs(path.join(sysfsBlock(disk), entry, 'start'))) * 512)
      .filter((start) => Number.isFinite(start) && start > 0);
  } catch {
    return [];
  }
}

async function run(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 4 * MIB });
    return stdout;
  } catch (error) {
    throw new IronflowError('DRIVER_ERROR', `${command} ${args.join(' ')} failed: ${(error as Error).message}`, { reason: 'erase-command' });
  }
}

async function quickWipe(disk: RamdiskDisk, progress: Progress): Promise<DiskWipeResult> {
  const steps: string[] = [];
  if (disk.kind !== 'file' && Number(readSysfs(path.join(sysfsBlock(disk), 'queue/discard_max_bytes')) ?? 0) > 0) {
    await run('blkdiscard', [disk.path]);
    steps.push('discard');
  }
  const head = Math.min(QUICK_EDGE_BYTES, disk.sizeBytes);
  const tailStart = Math.max(head, disk.sizeBytes - QUICK_EDGE_BYTES);
  const ranges: Array<[number, number]> = [[0, head]];
  if (tailStart < disk.sizeBytes) ranges.push([tailStart, disk.sizeBytes]);
  for (const start of partitionStarts(disk)) if (start >= head && start + MIB <= tailStart) ranges.push([start, start + MIB]);
  let readBack = true;
  let bytes = 0;
  for (const [start, end] of ranges) {
    readBack = (await zeroRange(disk.path, start, end, (done) => progress(bytes + done))) && readBack;
    bytes += end - start;
  }
  steps.push(`zeroed ${ranges.length} ranges`);
  return { name: disk.name, mode: 'quick', method: steps.join(', '), bytes, readBack };
}

/** What kind of device a kernel name is, for messages. */
function transportOf(name: string): string {
  if (name.startsWith('vd')) return 'a virtio disk';
  if (name.startsWith('xvd')) return 'a Xen virtual disk';
  if (name.startsWith('mmcblk')) return 'an MMC/SD device';
  if (name.startsWith('sd')) return 'a SCSI or SAS disk';
  return `a ${name} device`;
}

/** What the device itself offers; the reason when it offers nothing for this mode. */
async function deviceErase(disk: RamdiskDisk, mode: 'secure-erase' | 'crypto-erase'): Promise<{ command: string; args: string[] } | { unsupported: string }> {
  if (disk.name.startsWith('nvme')) {
    const controller = JSON.parse(await run('nvme', ['id-ctrl', disk.path, '--output-format=json'])) as { fna?: number };
    // FNA bit 2: cryptographic erase is supported as part of Format NVM.
    if (mode === 'crypto-erase' && ((controller.fna ?? 0) & 0x4) === 0) return { unsupported: 'the NVMe controller does not support cryptographic erase (FNA bit 2)' };
    return { command: 'nvme', args: ['format', disk.path, `--ses=${mode === 'crypto-erase' ? 2 : 1}`, '--force'] };
  }
  if (readSysfs(path.join(sysfsBlock(disk), 'device/vendor')) === 'ATA') {
    const identify = await run('hdparm', ['-I', disk.path]);
    const security = identify.slice(identify.indexOf('Security:'));
    if (!/\n\s+supported\n/.test(security)) return { unsupported: 'the ATA drive does not support the security feature set' };
    if (!/not\s+frozen/.test(security)) return { unsupported: 'the ATA drive is security-frozen (power-cycle it hot, or suspend and resume, to unfreeze)' };
    if (mode === 'crypto-erase' && !/supported: enhanced erase/.test(security)) return { unsupported: 'the ATA drive does not support enhanced (cryptographic) erase' };
    return { command: 'hdparm', args: [mode === 'crypto-erase' ? '--security-erase-enhanced' : '--security-erase', 'ironflow', disk.path] };
  }
  return { unsupported: `it is ${transportOf(disk.name)}, which has no ${mode} command of its own (only NVMe and ATA drives have one)` };
}

export interface ErasePlan {
  disk: RamdiskDisk;
  mode: WipeMode;
  command?: { command: string; args: string[] };
}

/** Decides how every disk is erased before any is touched: one unsupported disk fails the wipe, not half of it. */
export async function planErase(disks: RamdiskDisk[], mode: WipeMode): Promise<ErasePlan[]> {
  const plans: ErasePlan[] = [];
  for (const disk of disks) {
    if (mode === 'quick') {
      plans.push({ disk, mode });
    } else if (disk.kind === 'file') {
      if (mode === 'crypto-erase') throw new IronflowError('UNSUPPORTED', `disk ${disk.name} (an emulated device) has no crypto-erase: use quick or secure-erase`, { path: 'with.mode', disk: disk.name, reason: 'no-crypto-erase' });
      plans.push({ disk, mode });
    } else {
      const erase = await deviceErase(disk, mode);
      if ('unsupported' in erase) throw new IronflowError('UNSUPPORTED', `disk ${disk.name} cannot ${mode}: ${erase.unsupported}`, { path: 'with.mode', disk: disk.name, reason: `no-${mode}` });
      plans.push({ disk, mode, command: erase });
    }
  }
  return plans;
}

async function commandWipe(plan: ErasePlan, progress: Progress): Promise<DiskWipeResult> {
  const { disk, mode, command } = plan;
  if (!command) return { name: disk.name, mode, method: 'emulated device: full overwrite', bytes: disk.sizeBytes, readBack: await zeroRange(disk.path, 0, disk.sizeBytes, progress) };
  if (command.command === 'hdparm') await run('hdparm', ['--user-master', 'u', '--security-set-pass', 'ironflow', disk.path]);
  await run(command.command, command.args);
  // The device erased itself; its first MiB must now read back as zeros (NVMe and ATA erase both zero it).
  const readBack = await verifyZero(disk.path, Math.min(MIB, disk.sizeBytes));
  progress(disk.sizeBytes);
  return { name: disk.name, mode, method: `${command.command} ${command.args.join(' ')}`, bytes: disk.sizeBytes, readBack };
}

async function verifyZero(file: string, length: number): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return bytesRead === length && buffer.every((b) => b === 0);
  } finally {
    await handle.close();
  }
}

export async function eraseDisk(plan: ErasePlan, progress: Progress): Promise<DiskWipeResult> {
  return plan.mode === 'quick' ? quickWipe(plan.disk, progress) : commandWipe(plan, progress);
}
