// The config drive the ramdisk leaves after an image (agent/ramdisk/config-drive-writer.ts),
// written to a disk image file exactly as to a block device (dosfstools' mkfs.vfat --offset,
// mtools at the partition's offset), then read back the way the installed OS does
// (agent/common/config-drive.ts readConfigDrive) from the files mtools extracts.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { requireTools } from '../helpers/require-tools';
import { readConfigDrive } from '../../agent/common/config-drive';
import { writeConfigDrive } from '../../agent/ramdisk/config-drive-writer';

const dir = mkdtempSync(path.join(inject('runDir'), 'config-drive-test-'));

requireTools('the config drive test', [
  ['sfdisk', 'fdisk'],
  ['mkfs.vfat', 'dosfstools'],
  ['mcopy', 'mtools'],
]);

/**
 * A disk of `sizeMib` holding an image partitioned with `table`; the image is `imageMib` when
 * given (a smaller image written to the disk: a GPT's backup then sits at the image's end).
 */
function disk(
  name: string,
  sizeMib: number,
  table?: { label: 'dos' | 'gpt'; partitions: string; imageMib?: number; header?: string },
): { path: string; sizeBytes: number } {
  const file = path.join(dir, name);
  execFileSync('truncate', ['-s', `${table?.imageMib ?? sizeMib}M`, file]);
  if (table) execFileSync('sfdisk', ['--quiet', '--label', table.label, file], { input: (table.header ?? '') + table.partitions });
  execFileSync('truncate', ['-s', `${sizeMib}M`, file]);
  return { path: file, sizeBytes: statSync(file).size };
}

/** What sfdisk finds wrong with the disk's partition table (a GPT's CRCs, its backup's place, the protective MBR's size), as it prints it. */
function tableProblems(file: string): string[] {
  const checked = spawnSync('sfdisk', ['--verify', file], { encoding: 'utf8' });
  return `${checked.stdout}\n${checked.stderr}`
    .split('\n')
    .filter((line) => /error|mismatch|corrupt|not on the end|invalid/i.test(line) && line !== 'No errors detected.');
}

/** What the OS sees: the partition table, and the drive's files as the reader reads them. */
function readBack(file: string, partition: number) {
  const dump = JSON.parse(execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' })) as {
    partitiontable: { lastlba: number; partitions: Array<{ start: number; size: number; type: string; name?: string }> };
  };
  const entry = dump.partitiontable.partitions[partition - 1];
  if (!entry) throw new Error(`no partition ${partition}`);
  const image = `${file}@@${entry.start * 512}`;
  const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
  const label = execFileSync('mlabel', ['-s', '-i', image, '::'], { encoding: 'utf8', env }).trim();
  const out = mkdtempSync(path.join(dir, 'mounted-'));
  execFileSync('mcopy', ['-s', '-i', image, '::/*', out], { env });
  return { entry, lastLba: dump.partitiontable.lastlba, label, userData: readConfigDrive(out), dir: out };
}

describe('the config drive after an image', () => {
  it('cloud-init: a FAT partition labelled CIDATA after the image, holding user-data and meta-data', async () => {
    const target = disk('mbr.img', 16, { label: 'dos', partitions: 'start=2048, size=16384, type=83, bootable\n' });
    const document = '#cloud-config\nruncmd:\n  - [echo, hello]\n';
    expect(await writeConfigDrive(target, { kind: 'cloud-init', document })).toEqual({ partition: 2, label: 'CIDATA' });
    const back = readBack(target.path, 2);
    expect(back.entry).toMatchObject({ start: 18432, size: 8192, type: 'c' });
    expect(back.label).toContain('CIDATA');
    expect(back.userData).toEqual({ kind: 'cloud-init', document });
    expect(readFileSync(path.join(back.dir, 'meta-data'), 'utf8')).toMatch(/^instance-id: ironflow-[0-9a-f]{16}\n$/);
  });

  it('Ignition: an OpenStack config drive (config-2, openstack/latest/user_data)', async () => {
    const target = disk('ignition.img', 16, { label: 'dos', partitions: 'start=2048, size=4096, type=83\n' });
    const document = JSON.stringify({ ignition: { version: '3.4.0' } });
    expect(await writeConfigDrive(target, { kind: 'ignition', document })).toEqual({ partition: 2, label: 'config-2' });
    const back = readBack(target.path, 2);
    expect(back.entry).toMatchObject({ start: 6144, size: 8192 });
    expect(back.userData).toEqual({ kind: 'ignition', document });
  });

  it("GPT: the backup table moves from the image's end to the disk's, and the drive takes the next entry", async () => {
    // A 16 MiB image written to a 32 MiB disk, as a cloud image is: sfdisk finds its backup table misplaced.
    const target = disk('gpt.img', 32, { label: 'gpt', imageMib: 16, partitions: 'start=2048, size=8192, type=L, name=root\n' });
    expect(tableProblems(target.path)).toContain('The backup GPT table is not on the end of the device.');
    const document = '#cloud-config\nruncmd:\n  - [echo, hello]\n';
    expect(await writeConfigDrive(target, { kind: 'cloud-init', document })).toEqual({ partition: 2, label: 'CIDATA' });
    expect(tableProblems(target.path)).toEqual([]);
    const back = readBack(target.path, 2);
    // After the image's partition (2048 + 8192), aligned; the usable range reaches the disk's end (65536 sectors, less 33 for the backup).
    expect(back.entry).toMatchObject({ start: 10240, size: 8192, type: 'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7', name: 'cidata' });
    expect(back.lastLba).toBe(65536 - 34);
    expect(back.userData).toEqual({ kind: 'cloud-init', document });

    // A GPT image as large as its disk keeps its backup where it is.
    const whole = disk('gpt-whole.img', 16, { label: 'gpt', partitions: 'start=2048, size=4096\n' });
    expect(await writeConfigDrive(whole, { kind: 'ignition', document: '{}' })).toEqual({ partition: 2, label: 'config-2' });
    expect(tableProblems(whole.path)).toEqual([]);
    expect(readBack(whole.path, 2).entry).toMatchObject({ start: 6144, size: 8192, name: 'config-2' });
  });

  it('refuses what it cannot do, with the reason: a GPT it cannot verify or with no free entry, no partition table, no room, no free slot', async () => {
    const corrupt = disk('gpt-corrupt.img', 16, { label: 'gpt', partitions: 'start=2048, size=4096\n' });
    // One byte of the primary entries changed: their CRC no longer matches.
    execFileSync('dd', ['of=' + corrupt.path, 'bs=1', 'seek=' + String(2 * 512 + 100), 'count=1', 'conv=notrunc', 'status=none'], {
      input: Buffer.from([0x5a]),
    });
    await expect(writeConfigDrive(corrupt, { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'gpt-invalid' },
    });
    const fullGpt = disk('gpt-full.img', 16, {
      label: 'gpt',
      header: 'table-length: 2\n',
      partitions: 'start=2048, size=2048\nstart=4096, size=2048\n',
    });
    await expect(writeConfigDrive(fullGpt, { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'no-free-partition-slot' },
    });
    await expect(writeConfigDrive(disk('blank.img', 8), { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'no-partition-table' },
    });
    const full = disk('full.img', 16, { label: 'dos', partitions: 'start=2048, size=28672\n' });
    await expect(writeConfigDrive(full, { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      details: { reason: 'no-room-for-config-drive' },
    });
    const four = disk('four.img', 32, {
      label: 'dos',
      partitions: ['start=2048, size=2048', 'start=4096, size=2048', 'start=6144, size=2048', 'start=8192, size=2048'].join('\n') + '\n',
    });
    await expect(writeConfigDrive(four, { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'no-free-partition-slot' },
    });
  });
});
