// How each wipe mode erases one disk (spec 004 release and retire wipes; Ironic's erase_devices;
// docs/wiping.md):
// - quick: discard the whole device where it supports discard, then zero the first and last
//   64 MiB (partition tables, the GPT backup, RAID/LVM superblocks) and the first MiB of every
//   partition, each zeroed range read back;
// - secure-erase / crypto-erase: the drive's own command, chosen from what the drive says it
//   can do (agent/ramdisk/erase/capabilities.ts): NVMe Format with Secure Erase Settings 1 or 2,
//   ATA Security Erase or Sanitize CRYPTO SCRAMBLE, `blkdiscard --secure` for other devices
//   that discard. A drive that cannot is UNSUPPORTED naming the device, its model and the mode,
//   never a pretend success; with a fallback mode (the retire's pool policy) that disk gets the
//   fallback instead, and the result says so. Every disk's way is decided before any is
//   touched. After the drive's erase, sampled blocks must read zero or differ from what they
//   held before (a crypto erase leaves noise, not zeros).
// The ramdisk learns a disk's kind from sysfs and its drive's abilities from its tools, on a
// real machine and an emulated one alike (RamdiskHardware.sysfsRoot, .diskTools).
import { readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { IronflowError } from '../../core/errors';
import type { WipeFallbackMode, WipeMode } from '../../core/schemas/disk-wipe';
import {
  ataCapabilities,
  ataErase,
  ATA_ERASE_PASSWORD,
  nvmeCapabilities,
  nvmeErase,
  sanitizeState,
  type DeviceEraseMode,
  type EraseDecision,
  type EraseProcedure,
} from './erase/capabilities';
import { installedDiskTools } from './erase/installed-tools';
import { dropCachedBlocks } from './device-read-back';
import type { DiskTools, RamdiskDisk, RamdiskHardware } from './hardware';

export type { WipeMode };
export type FallbackMode = WipeFallbackMode;

const MIB = 1024 * 1024;
const QUICK_EDGE_BYTES = 64 * MIB;
const IDENTIFY_TIMEOUT_MS = 30_000;
const DISCARD_TIMEOUT_MS = 2 * 3_600_000;
/** Well inside disk.wipe's 30 s heartbeat deadline. */
const HEARTBEAT_MS = 10_000;
const SANITIZE_POLL_MS = 2_000;
const SAMPLE_BLOCK = 4096;
const SAMPLE_SPOTS = 6;
const SAMPLE_SPOT_BYTES = 64 * 1024;

// A type alias (not an interface) so it fits the JSON the result is signed as.
export type DiskWipeResult = {
  name: string;
  /** The device erase's model, when the drive names one. */
  model: string | null;
  /** The mode this disk got: the one asked for, or the fallback (then fallbackFrom says why). */
  mode: WipeMode;
  /** How it was erased: the commands and ranges, for the signed result. */
  method: string;
  bytes: number;
  readBack: boolean;
  fallbackFrom?: { mode: WipeMode; reason: string };
};

export type EraseProgress = (details: { bytesWiped?: number; elapsedSeconds?: number }) => void;
type DiskView = Pick<RamdiskHardware, 'disks' | 'sysfsRoot' | 'diskTools'>;

export interface ErasePlan {
  disk: RamdiskDisk;
  model: string | null;
  mode: WipeMode;
  procedure?: EraseProcedure;
  /** The device may still refuse (secure discard: the kernel does not publish it); tried first. */
  tentative?: boolean;
  fallbackFrom?: { mode: WipeMode; reason: string };
  /** For a tentative plan: what runs if the device refuses. */
  onRefusal?: ErasePlan;
  /** The fix the refusal names when there is no fallback. */
  refusal?: string;
}

function readSysfs(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').slice(0, 4096).trim() || null;
  } catch {
    return null;
  }
}

const blockDir = (view: DiskView, disk: RamdiskDisk) => path.join(view.sysfsRoot ?? '/', 'sys/block', disk.name);
const toolsOf = (view: DiskView): DiskTools => view.diskTools ?? installedDiskTools;

interface Device {
  transport: 'nvme' | 'ata' | 'other';
  model: string | null;
  discards: boolean;
}

/** What the kernel says the disk is: NVMe by name, ATA by its SCSI vendor string (libata says "ATA"). */
function deviceOf(view: DiskView, disk: RamdiskDisk): Device {
  const dir = blockDir(view, disk);
  const transport = disk.name.startsWith('nvme') ? 'nvme' : readSysfs(path.join(dir, 'device/vendor')) === 'ATA' ? 'ata' : 'other';
  return { transport, model: readSysfs(path.join(dir, 'device/model')), discards: Number(readSysfs(path.join(dir, 'queue/discard_max_bytes')) ?? 0) > 0 };
}

/** Byte offsets where the disk's partitions start (from the kernel's view of the table). */
function partitionStarts(view: DiskView, disk: RamdiskDisk): number[] {
  const dir = blockDir(view, disk);
  try {
    return readdirSync(dir)
      .filter((entry) => entry.startsWith(disk.name))
      .slice(0, 256)
      .map((entry) => Number(readSysfs(path.join(dir, entry, 'start'))) * 512)
      .filter((start) => Number.isFinite(start) && start > 0);
  } catch {
    return [];
  }
}

/** What kind of device a kernel name is, for messages. */
function transportOf(name: string): string {
  if (name.startsWith('vd')) return 'a virtio disk';
  if (name.startsWith('xvd')) return 'a Xen virtual disk';
  if (name.startsWith('mmcblk')) return 'an MMC/SD device';
  if (name.startsWith('sd')) return 'a SCSI or SAS disk';
  return `a ${name} device`;
}

type DeviceDecision = EraseDecision & { tentative?: boolean; model: string | null };

/** Asks the drive what it can do for this mode. */
async function decide(view: DiskView, disk: RamdiskDisk, mode: DeviceEraseMode): Promise<DeviceDecision> {
  const device = deviceOf(view, disk);
  const tools = toolsOf(view);
  if (device.transport === 'nvme') {
    const caps = nvmeCapabilities(await tools('nvme', ['id-ctrl', disk.path, '--output-format=json'], { timeoutMs: IDENTIFY_TIMEOUT_MS }));
    if (!caps) return { unsupported: 'nvme id-ctrl did not answer an Identify Controller', model: device.model };
    return { ...nvmeErase(caps, disk.path, mode), model: caps.model ?? device.model };
  }
  if (device.transport === 'ata') {
    const caps = ataCapabilities(await tools('hdparm', ['-I', disk.path], { timeoutMs: IDENTIFY_TIMEOUT_MS }));
    if (!caps) return { unsupported: 'hdparm -I did not answer an ATA identify', model: device.model };
    return { ...ataErase(caps, disk.path, mode), model: caps.model ?? device.model };
  }
  if (mode === 'secure-erase' && device.discards) {
    // Secure discard (eMMC and some SCSI devices): the kernel refuses it with EOPNOTSUPP where the device cannot.
    return {
      procedure: { commands: [{ command: 'blkdiscard', args: ['--secure', disk.path] }], timeoutMs: DISCARD_TIMEOUT_MS },
      tentative: true,
      model: device.model,
    };
  }
  const has = mode === 'secure-erase' ? 'no secure-erase command of its own and no secure discard' : 'no crypto-erase command of its own';
  return { unsupported: `it is ${transportOf(disk.name)}, which has ${has} (only NVMe and ATA drives have one)`, model: device.model };
}

const NO_FALLBACK_FIX =
  "no fallback was allowed: for a retire, set the pool's policy.retireWipe.fallback (secure-erase or quick); for an undeploy, choose another --wipe mode";

function deviceName(disk: RamdiskDisk, model: string | null): string {
  return `disk ${disk.name} (${disk.path}${model ? `, ${model}` : ''})`;
}

function unsupported(disk: RamdiskDisk, model: string | null, mode: WipeMode, message: string): IronflowError {
  return new IronflowError('UNSUPPORTED', `${deviceName(disk, model)} cannot ${message}`, {
    path: 'with.mode',
    disk: disk.name,
    device: disk.path,
    ...(model ? { model } : {}),
    mode,
    reason: `no-${mode}`,
  });
}

async function planDisk(view: DiskView, disk: RamdiskDisk, mode: WipeMode, fallback: FallbackMode | undefined): Promise<ErasePlan> {
  if (mode === 'quick') return { disk, model: deviceOf(view, disk).model, mode };
  const decision = await decide(view, disk, mode);
  const { model } = decision;
  if ('procedure' in decision) {
    const plan: ErasePlan = { disk, model, mode, procedure: decision.procedure, ...(decision.tentative ? { tentative: true } : {}) };
    if (!decision.tentative) return plan;
    if (!fallback) return { ...plan, refusal: `${mode}: the device refused secure discard; ${NO_FALLBACK_FIX}` };
    return { ...plan, onRefusal: await fallbackPlan(view, disk, model, mode, fallback, 'the device refused secure discard') };
  }
  if (!fallback) throw unsupported(disk, model, mode, `${mode}: ${decision.unsupported}; ${NO_FALLBACK_FIX}`);
  return fallbackPlan(view, disk, model, mode, fallback, decision.unsupported);
}

async function fallbackPlan(
  view: DiskView,
  disk: RamdiskDisk,
  model: string | null,
  mode: WipeMode,
  fallback: FallbackMode,
  reason: string,
): Promise<ErasePlan> {
  const fallbackFrom = { mode, reason };
  if (fallback === 'quick') return { disk, model, mode: 'quick', fallbackFrom };
  const second = await decide(view, disk, fallback);
  if ('procedure' in second && !second.tentative) return { disk, model, mode: fallback, procedure: second.procedure, fallbackFrom };
  const why = 'procedure' in second ? 'the device would have to be tried (secure discard)' : second.unsupported;
  throw unsupported(
    disk,
    model,
    mode,
    `${mode} (${reason}) nor its fallback ${fallback} (${why}): set the pool's policy.retireWipe.fallback to quick, or replace the drive`,
  );
}

/**
 * Decides how every disk is erased before any is touched: one disk that cannot be erased as
 * asked (and has no allowed fallback) fails the wipe, not half of it. Disks whose device may
 * still refuse come first, so a refusal also happens before any other disk is touched.
 */
export async function planErase(view: DiskView, mode: WipeMode, fallback?: FallbackMode): Promise<ErasePlan[]> {
  const plans: ErasePlan[] = [];
  for (const disk of view.disks) plans.push(await planDisk(view, disk, mode, fallback));
  return [...plans.filter((p) => p.tentative), ...plans.filter((p) => !p.tentative)];
}

const ZEROS = Buffer.alloc(MIB);

/**
 * Whether every byte of `bytes` is zero: compared a MiB at a time with native memcmp. A callback
 * per byte took 4 s for a quick wipe's 128 MiB on the host, and most of a minute in a QEMU
 * machine under TCG.
 */
export function allZero(bytes: Buffer): boolean {
  for (let at = 0; at < bytes.length; at += ZEROS.length) {
    const chunk = bytes.subarray(at, at + ZEROS.length);
    if (!chunk.equals(ZEROS.subarray(0, chunk.length))) return false;
  }
  return true;
}

/** Zeroes [start, end) and reads it back from the device; answers whether every byte read back zero. */
export async function zeroRange(file: string, start: number, end: number, progress: (done: number) => void): Promise<boolean> {
  const handle = await open(file, 'r+');
  try {
    const zeros = ZEROS.subarray(0, Math.min(MIB, Math.max(0, end - start)));
    for (let at = start; at < end; at += zeros.length) await handle.write(zeros, 0, Math.min(zeros.length, end - at), at);
    await handle.sync();
    await dropCachedBlocks(file);
    const back = Buffer.alloc(zeros.length);
    for (let at = start; at < end; at += back.length) {
      const { bytesRead } = await handle.read(back, 0, Math.min(back.length, end - at), at);
      if (bytesRead !== Math.min(back.length, end - at) || !allZero(back.subarray(0, bytesRead))) return false;
      progress(at + bytesRead - start);
    }
    return true;
  } finally {
    await handle.close();
  }
}

async function quickWipe(view: DiskView, plan: ErasePlan, progress: EraseProgress): Promise<DiskWipeResult> {
  const { disk } = plan;
  const steps: string[] = [];
  if (deviceOf(view, disk).discards) {
    await toolsOf(view)('blkdiscard', [disk.path], { timeoutMs: DISCARD_TIMEOUT_MS });
    steps.push('discard');
  }
  const head = Math.min(QUICK_EDGE_BYTES, disk.sizeBytes);
  const tailStart = Math.max(head, disk.sizeBytes - QUICK_EDGE_BYTES);
  const ranges: Array<[number, number]> = [[0, head]];
  if (tailStart < disk.sizeBytes) ranges.push([tailStart, disk.sizeBytes]);
  for (const start of partitionStarts(view, disk)) if (start >= head && start + MIB <= tailStart) ranges.push([start, start + MIB]);
  let readBack = true;
  let bytes = 0;
  for (const [start, end] of ranges) {
    readBack = (await zeroRange(disk.path, start, end, (done) => progress({ bytesWiped: bytes + done }))) && readBack;
    bytes += end - start;
  }
  steps.push(`zeroed ${ranges.length} ranges`);
  return resultOf(plan, steps.join(', '), bytes, readBack);
}

function resultOf(plan: ErasePlan, method: string, bytes: number, readBack: boolean): DiskWipeResult {
  return {
    name: plan.disk.name,
    model: plan.model,
    mode: plan.mode,
    method,
    bytes,
    readBack,
    ...(plan.fallbackFrom ? { fallbackFrom: plan.fallbackFrom } : {}),
  };
}

/** Where the read-back looks: the first and last MiB and a few spots between. */
function sampleRanges(size: number): Array<[number, number]> {
  const edge = Math.min(MIB, size);
  const ranges: Array<[number, number]> = [
    [0, edge],
    [Math.max(0, size - edge), size],
  ];
  for (let i = 1; i <= SAMPLE_SPOTS; i++) {
    const at = Math.floor((size * i) / (SAMPLE_SPOTS + 1) / SAMPLE_BLOCK) * SAMPLE_BLOCK;
    ranges.push([at, Math.min(size, at + SAMPLE_SPOT_BYTES)]);
  }
  return ranges;
}

async function readRanges(file: string, ranges: Array<[number, number]>): Promise<Buffer[]> {
  const handle = await open(file, 'r');
  try {
    const out: Buffer[] = [];
    for (const [start, end] of ranges) {
      const buffer = Buffer.alloc(end - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      out.push(buffer.subarray(0, bytesRead));
    }
    return out;
  } finally {
    await handle.close();
  }
}

/** Every sampled 4 KiB block reads zero or no longer holds what it held before the erase. */
export function erasedSamples(before: Buffer[], after: Buffer[]): boolean {
  return before.every((old, i) => {
    const now = after[i];
    if (!now || now.length !== old.length) return false;
    for (let at = 0; at < now.length; at += SAMPLE_BLOCK) {
      const block = now.subarray(at, at + SAMPLE_BLOCK);
      if (!allZero(block) && block.equals(old.subarray(at, at + SAMPLE_BLOCK))) return false;
    }
    return true;
  });
}

const shown = (args: string[]) => args.map((a) => (a === ATA_ERASE_PASSWORD ? '<password>' : a)).join(' ');

async function deviceWipe(view: DiskView, plan: ErasePlan, procedure: EraseProcedure, progress: EraseProgress, heartbeatMs: number): Promise<DiskWipeResult> {
  const { disk } = plan;
  const tools = toolsOf(view);
  const ranges = sampleRanges(disk.sizeBytes);
  const before = await readRanges(disk.path, ranges);
  const started = Date.now();
  const remaining = () => Math.max(1_000, procedure.timeoutMs - (Date.now() - started));
  // The drive reports nothing while it erases: the step heartbeats so the control plane knows the ramdisk is alive.
  const timer = setInterval(() => progress({ elapsedSeconds: Math.round((Date.now() - started) / 1000) }), heartbeatMs);
  try {
    for (const { command, args } of procedure.commands) await tools(command, args, { timeoutMs: remaining() });
    if (procedure.pollSanitize) await awaitSanitize(tools, disk, started, procedure.timeoutMs);
  } finally {
    clearInterval(timer);
  }
  // The blocks read before the erase may still be cached: the samples must come from the device.
  await dropCachedBlocks(disk.path);
  const readBack = erasedSamples(before, await readRanges(disk.path, ranges));
  progress({ bytesWiped: disk.sizeBytes });
  const last = procedure.commands[procedure.commands.length - 1] as { command: string; args: string[] };
  return resultOf(plan, `${last.command} ${shown(last.args)}`, disk.sizeBytes, readBack);
}

async function awaitSanitize(tools: DiskTools, disk: RamdiskDisk, started: number, timeoutMs: number): Promise<void> {
  for (;;) {
    const state = sanitizeState(await tools('hdparm', ['--sanitize-status', disk.path], { timeoutMs: IDENTIFY_TIMEOUT_MS }));
    if (state === 'done') return;
    if (state === 'failed')
      throw new IronflowError('DRIVER_ERROR', `disk ${disk.name} (${disk.path}): the drive reports its sanitize operation failed`, {
        disk: disk.name,
        reason: 'sanitize-failed',
      });
    if (Date.now() - started > timeoutMs)
      throw new IronflowError('DRIVER_ERROR', `disk ${disk.name} (${disk.path}): sanitize did not finish within ${Math.round(timeoutMs / 1000)} s`, {
        disk: disk.name,
        reason: 'erase-command-timeout',
      });
    await new Promise((r) => setTimeout(r, SANITIZE_POLL_MS));
  }
}

/** A device that refuses a tentative erase (secure discard) says so through the kernel's EOPNOTSUPP. */
const refusedByDevice = (error: unknown) => error instanceof IronflowError && /not supported/i.test(error.message);

export async function eraseDisk(view: DiskView, plan: ErasePlan, progress: EraseProgress, options: { heartbeatMs?: number } = {}): Promise<DiskWipeResult> {
  if (!plan.procedure) return quickWipe(view, plan, progress);
  try {
    return await deviceWipe(view, plan, plan.procedure, progress, options.heartbeatMs ?? HEARTBEAT_MS);
  } catch (error) {
    if (!plan.tentative || !refusedByDevice(error)) throw error;
    if (plan.onRefusal) return eraseDisk(view, plan.onRefusal, progress, options);
    throw unsupported(plan.disk, plan.model, plan.mode, plan.refusal ?? plan.mode);
  }
}
