// disk.wipe's erase of each disk (agent/ramdisk/disk-erase.ts) against emulated drives
// (agent/emulator/emulated-disk.ts: a disk file, its sysfs entry and the answers its firmware
// gives to nvme-cli and hdparm): quick zeroes the edges and leaves the middle; secure-erase
// and crypto-erase run the drive's own command where the drive offers it (zeros, or noise
// for crypto), and a drive that cannot is UNSUPPORTED naming the device, model and mode
// before any disk is touched, unless a fallback was allowed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { allZero, erasedSamples, eraseDisk, planErase, type FallbackMode, type WipeMode } from '../../agent/ramdisk/disk-erase';
import { EmulatedDisk, type EmulatedDiskSpec } from '../../agent/emulator/emulated-disk';
import type { DiskTools, RamdiskDisk } from '../../agent/ramdisk/hardware';

const MIB = 1024 * 1024;
const zero = (bytes: Buffer) => bytes.equals(Buffer.alloc(bytes.length));

/** A machine with these drives (each a file of random bytes), as its ramdisk sees it. */
function machine(drives: Array<{ spec: EmulatedDiskSpec; sizeMib: number }>) {
  const dir = mkdtempSync(path.join(inject('runDir'), 'disk-erase-'));
  const sysfsRoot = path.join(dir, 'sysfs');
  const emulated = drives.map(({ spec, sizeMib }, i) => {
    const file = path.join(dir, `disk${i}`);
    writeFileSync(file, randomBytes(sizeMib * MIB));
    const disk = new EmulatedDisk(spec, file, sizeMib * MIB, sysfsRoot, async () => undefined);
    disk.writeSysfs();
    return { disk, file, sizeBytes: sizeMib * MIB, original: readFileSync(file) };
  });
  const disks: RamdiskDisk[] = emulated.map(({ disk, file, sizeBytes }) => ({ name: disk.name, path: file, sizeBytes }));
  const diskTools: DiskTools = (command, args, options) =>
    (emulated.find(({ file }) => args.includes(file))?.disk.tools ?? emulated[0]!.disk.tools)(command, args, options);
  return { view: { disks, sysfsRoot, diskTools }, emulated };
}

async function wipe(view: ReturnType<typeof machine>['view'], mode: WipeMode, fallback?: FallbackMode) {
  const results = [];
  for (const plan of await planErase(view, mode, fallback)) results.push(await eraseDisk(view, plan, () => undefined));
  return results;
}

describe('disk erase on emulated drives', () => {
  it('quick: the first and last 64 MiB read back zero; the middle keeps its bytes', async () => {
    const { view, emulated } = machine([{ spec: { transport: 'nvme', erase: [] }, sizeMib: 136 }]);
    expect(await wipe(view, 'quick')).toMatchObject([{ name: 'nvme0n1', mode: 'quick', bytes: 128 * MIB, readBack: true, method: 'zeroed 2 ranges' }]);
    const bytes = readFileSync(emulated[0]!.file);
    expect(zero(bytes.subarray(0, 64 * MIB)) && zero(bytes.subarray(72 * MIB))).toBe(true);
    expect(bytes.subarray(64 * MIB, 72 * MIB).equals(emulated[0]!.original.subarray(64 * MIB, 72 * MIB))).toBe(true);
  });

  it('secure-erase on an NVMe drive with Format: nvme format --ses=1, every byte zero', async () => {
    const { view, emulated } = machine([{ spec: { transport: 'nvme', erase: ['secure-erase'] }, sizeMib: 8 }]);
    expect(await wipe(view, 'secure-erase')).toEqual([
      {
        name: 'nvme0n1',
        model: 'Ironflow Emulated NVMe',
        mode: 'secure-erase',
        method: `nvme format ${emulated[0]!.file} --ses=1 --force`,
        bytes: 8 * MIB,
        readBack: true,
      },
    ]);
    expect(zero(readFileSync(emulated[0]!.file))).toBe(true);
    expect(emulated[0]!.disk.erases).toEqual(['secure-erase']);
  });

  it('crypto-erase on an NVMe SED: nvme format --ses=2; the bytes are noise, neither the old ones nor zeros', async () => {
    const { view, emulated } = machine([{ spec: { transport: 'nvme', erase: ['crypto-erase', 'secure-erase'] }, sizeMib: 8 }]);
    expect(await wipe(view, 'crypto-erase')).toMatchObject([
      { mode: 'crypto-erase', model: 'Ironflow Emulated NVMe SED', method: `nvme format ${emulated[0]!.file} --ses=2 --force`, readBack: true },
    ]);
    const after = readFileSync(emulated[0]!.file);
    expect(zero(after)).toBe(false);
    expect(erasedSamples([emulated[0]!.original], [after])).toBe(true);
  });

  it('crypto-erase where the drive cannot is UNSUPPORTED naming the device, model, mode and the fix; nothing is touched', async () => {
    const { view, emulated } = machine([
      { spec: { transport: 'nvme', erase: ['crypto-erase'] }, sizeMib: 4 },
      { spec: { transport: 'sata', erase: ['secure-erase'] }, sizeMib: 4 },
    ]);
    const refusal = planErase(view, 'crypto-erase');
    await expect(refusal).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { disk: 'sda', device: emulated[1]!.file, model: 'Ironflow Emulated SATA SSD', mode: 'crypto-erase', reason: 'no-crypto-erase' },
    });
    await expect(refusal).rejects.toThrow(
      /^disk sda \(.*disk1, Ironflow Emulated SATA SSD\) cannot crypto-erase: the ATA drive does not support Sanitize CRYPTO SCRAMBLE .*set the pool's policy.retireWipe.fallback/,
    );
    for (const { file, original } of emulated) expect(readFileSync(file).equals(original)).toBe(true);
  });

  it('with a fallback, a drive without crypto-erase gets it and the result says why; the capable drive gets crypto-erase', async () => {
    const { view, emulated } = machine([
      { spec: { transport: 'nvme', erase: ['crypto-erase'] }, sizeMib: 4 },
      { spec: { transport: 'sata', erase: ['secure-erase'] }, sizeMib: 4 },
    ]);
    const results = await wipe(view, 'crypto-erase', 'secure-erase');
    expect(results).toMatchObject([
      { name: 'nvme0n1', mode: 'crypto-erase', readBack: true },
      {
        name: 'sda',
        mode: 'secure-erase',
        method: `hdparm --user-master u --security-erase <password> ${emulated[1]!.file}`,
        readBack: true,
        fallbackFrom: { mode: 'crypto-erase', reason: expect.stringContaining('CRYPTO SCRAMBLE') },
      },
    ]);
    expect(results[0]).not.toHaveProperty('fallbackFrom');
    expect(zero(readFileSync(emulated[1]!.file))).toBe(true);
  });

  it('a SATA SED crypto-erases by Sanitize CRYPTO SCRAMBLE; a frozen drive cannot secure-erase and says why', async () => {
    const sed = machine([{ spec: { transport: 'sata', erase: ['crypto-erase', 'secure-erase'] }, sizeMib: 4 }]);
    expect(await wipe(sed.view, 'crypto-erase')).toMatchObject([
      { name: 'sda', mode: 'crypto-erase', method: `hdparm --yes-i-know-what-i-am-doing --sanitize-crypto-scramble ${sed.emulated[0]!.file}`, readBack: true },
    ]);
    const frozen = machine([{ spec: { transport: 'sata', erase: ['secure-erase'], frozen: true }, sizeMib: 4 }]);
    await expect(planErase(frozen.view, 'secure-erase')).rejects.toThrow(/cannot secure-erase: the ATA drive is security-frozen/);
  });

  it('a virtio disk has no erase command: UNSUPPORTED without a fallback, quick with one', async () => {
    const { view, emulated } = machine([{ spec: { transport: 'virtio', erase: [] }, sizeMib: 4 }]);
    await expect(planErase(view, 'secure-erase')).rejects.toThrow(
      /disk vda .* cannot secure-erase: it is a virtio disk, which has no secure-erase command of its own and no secure discard/,
    );
    await expect(planErase(view, 'crypto-erase', 'secure-erase')).rejects.toThrow(
      /cannot crypto-erase \(.*\) nor its fallback secure-erase \(.*\): set the pool's policy.retireWipe.fallback to quick/,
    );
    expect(await wipe(view, 'crypto-erase', 'quick')).toMatchObject([{ name: 'vda', mode: 'quick', readBack: true, fallbackFrom: { mode: 'crypto-erase' } }]);
    expect(zero(readFileSync(emulated[0]!.file))).toBe(true);
  });

  it('heartbeats while the drive erases (a drive that takes its time)', async () => {
    const { view } = machine([{ spec: { transport: 'nvme', erase: ['crypto-erase'] }, sizeMib: 4 }]);
    const slow: DiskTools = async (command, args, options) => {
      if (args[0] === 'format') await new Promise((r) => setTimeout(r, 400));
      return view.diskTools(command, args, options);
    };
    const slowView = { ...view, diskTools: slow };
    const beats: Array<{ bytesWiped?: number; elapsedSeconds?: number }> = [];
    const [plan] = await planErase(slowView, 'crypto-erase');
    await eraseDisk(slowView, plan!, (details) => beats.push(details), { heartbeatMs: 50 });
    expect(beats.filter((b) => b.elapsedSeconds !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(beats.at(-1)).toEqual({ bytesWiped: 4 * MIB });
  });

  it('the read-back finds one byte that is not zero, wherever it is, past the MiB it compares at a time', () => {
    const size = 2 * MIB + 3;
    expect(allZero(Buffer.alloc(size))).toBe(true);
    expect(allZero(Buffer.alloc(0))).toBe(true);
    for (const at of [0, MIB - 1, MIB, 2 * MIB, size - 1]) {
      const bytes = Buffer.alloc(size);
      bytes[at] = 1;
      expect(allZero(bytes), `a byte at ${at}`).toBe(false);
    }
  });

  it('the read-back refuses a block that still holds its old bytes', () => {
    const old = randomBytes(8192);
    const changed = Buffer.concat([randomBytes(4096), old.subarray(4096)]);
    expect(erasedSamples([old], [changed])).toBe(false);
    expect(erasedSamples([old], [Buffer.concat([randomBytes(4096), Buffer.alloc(4096)])])).toBe(true);
  });
});
