// disk.wipe's erase of each disk (agent/ramdisk/disk-erase.ts) on disk files, the machine
// emulator's devices: quick zeroes the edges and leaves the middle, secure-erase overwrites
// everything, crypto-erase is refused; a real device without an erase command is refused
// with its name and reason before any disk of the machine is touched.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eraseDisk, planErase } from '../../agent/ramdisk/disk-erase';
import type { RamdiskDisk } from '../../agent/ramdisk/hardware';

const MIB = 1024 * 1024;
const dir = mkdtempSync(path.join(os.tmpdir(), 'disk-erase-'));

function fileDisk(name: string, sizeMib: number): RamdiskDisk {
  const file = path.join(dir, name);
  writeFileSync(file, randomBytes(sizeMib * MIB));
  return { name, path: file, sizeBytes: sizeMib * MIB, kind: 'file' };
}

const zero = (bytes: Buffer) => bytes.every((b) => b === 0);

describe('disk erase', () => {
  it('quick: the first and last 64 MiB read back zero; the middle keeps its bytes', async () => {
    const disk = fileDisk('big', 160);
    const [plan] = await planErase([disk], 'quick');
    const result = await eraseDisk(plan as NonNullable<typeof plan>, () => undefined);
    const bytes = readFileSync(disk.path);
    expect(result).toMatchObject({ name: 'big', mode: 'quick', bytes: 128 * MIB, readBack: true, method: 'zeroed 2 ranges' });
    expect(zero(bytes.subarray(0, 64 * MIB))).toBe(true);
    expect(zero(bytes.subarray(96 * MIB))).toBe(true);
    expect(zero(bytes.subarray(64 * MIB, 96 * MIB))).toBe(false);
  });

  it('quick on a disk smaller than the edges zeroes all of it once', async () => {
    const disk = fileDisk('small', 16);
    const [plan] = await planErase([disk], 'quick');
    expect(await eraseDisk(plan as NonNullable<typeof plan>, () => undefined)).toMatchObject({ bytes: 16 * MIB, readBack: true, method: 'zeroed 1 ranges' });
    expect(zero(readFileSync(disk.path))).toBe(true);
  });

  it('secure-erase on an emulated device overwrites every byte; crypto-erase is UNSUPPORTED naming the disk', async () => {
    const disk = fileDisk('emulated', 8);
    const [plan] = await planErase([disk], 'secure-erase');
    expect(await eraseDisk(plan as NonNullable<typeof plan>, () => undefined)).toMatchObject({ method: 'emulated device: full overwrite', bytes: 8 * MIB, readBack: true });
    expect(zero(readFileSync(disk.path))).toBe(true);
    await expect(planErase([disk], 'crypto-erase')).rejects.toMatchObject({ code: 'UNSUPPORTED', details: { disk: 'emulated', reason: 'no-crypto-erase' } });
  });

  it('a device with no erase command of its own (virtio) is UNSUPPORTED, and no disk was touched', async () => {
    const first = fileDisk('first', 4);
    const before = readFileSync(first.path);
    const virtio: RamdiskDisk = { name: 'vda', path: path.join(dir, 'vda'), sizeBytes: 4 * MIB, kind: 'block' };
    const refusal = planErase([first, virtio], 'secure-erase');
    await expect(refusal).rejects.toMatchObject({ code: 'UNSUPPORTED', details: { disk: 'vda', reason: 'no-secure-erase' } });
    await expect(refusal).rejects.toThrow('disk vda cannot secure-erase: it is a virtio disk, which has no secure-erase command of its own');
    expect(readFileSync(first.path).equals(before)).toBe(true);
  });
});
