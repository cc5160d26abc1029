// The config drive the ramdisk leaves after an image (agent/ramdisk/config-drive-writer.ts),
// written to a disk image file exactly as to a block device (dosfstools' mkfs.vfat --offset,
// mtools at the partition's offset), then read back the way the installed OS does
// (agent/common/config-drive.ts readConfigDrive) from the files mtools extracts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { readConfigDrive } from '../../agent/common/config-drive';
import { writeConfigDrive } from '../../agent/ramdisk/config-drive-writer';

const dir = mkdtempSync(path.join(inject('runDir'), 'config-drive-test-'));

for (const [tool, pkg] of [
  ['sfdisk', 'fdisk'],
  ['mkfs.vfat', 'dosfstools'],
  ['mcopy', 'mtools'],
]) {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`]);
  } catch {
    throw new Error(`${tool} is missing: apt-get install -y ${pkg} (or bash scripts/test-deps.sh)`);
  }
}

function disk(name: string, sizeMib: number, table?: { label: 'dos' | 'gpt'; partitions: string }): { path: string; sizeBytes: number } {
  const file = path.join(dir, name);
  execFileSync('truncate', ['-s', `${sizeMib}M`, file]);
  if (table) execFileSync('sfdisk', ['--quiet', '--label', table.label, file], { input: table.partitions });
  return { path: file, sizeBytes: statSync(file).size };
}

/** What the OS sees: the partition table, and the drive's files as the reader reads them. */
function readBack(file: string, partition: number) {
  const dump = JSON.parse(execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' })) as {
    partitiontable: { partitions: Array<{ start: number; size: number; type: string }> };
  };
  const entry = dump.partitiontable.partitions[partition - 1];
  if (!entry) throw new Error(`no partition ${partition}`);
  const image = `${file}@@${entry.start * 512}`;
  const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
  const label = execFileSync('mlabel', ['-s', '-i', image, '::'], { encoding: 'utf8', env }).trim();
  const out = mkdtempSync(path.join(dir, 'mounted-'));
  execFileSync('mcopy', ['-s', '-i', image, '::/*', out], { env });
  return { entry, label, userData: readConfigDrive(out), dir: out };
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

  it('refuses what it cannot do, with the reason: GPT images, no partition table, no room, no free slot', async () => {
    const gpt = disk('gpt.img', 16, { label: 'gpt', partitions: 'start=2048, size=8192\n' });
    await expect(writeConfigDrive(gpt, { kind: 'cloud-init', document: '#cloud-config\n' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      details: { reason: 'gpt-config-drive' },
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
