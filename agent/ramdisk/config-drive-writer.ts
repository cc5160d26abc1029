// Writes the deploy's user data as a config drive (agent/common/config-drive.ts) on a real
// disk, after the image: a new partition right after the image's last one (4 MiB, FAT,
// labelled cidata or config-2) holding the files the installed OS's first boot reads —
// Ironic's approach. The image's partition table takes it: an MBR (mbr-partition.ts) or a
// GPT, whose backup moves to the disk's end first (gpt-partition.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { configDriveLayout, type UserDataKind } from '../common/config-drive';
import { addGptPartition } from './gpt-partition';
import { addMbrPartition } from './mbr-partition';
import { GPT_PROTECTIVE, mbrEntryTypes, SECTOR, type NewPartition } from './partition-table';
import { runTool } from './run-tool';

const run = (command: string, args: string[]) => runTool(command, args, 'config-drive-command');

const ALIGN_SECTORS = 2048; // 1 MiB
const DRIVE_SECTORS = 8192; // 4 MiB

/**
 * Formats and fills the new partition through the whole disk at its offset (dosfstools'
 * mkfs.vfat --offset, mtools' image@@offset), so it needs neither the kernel's partition
 * nodes nor a mount: the same on a block device and on an image file.
 */
export async function writeConfigDrive(
  disk: { path: string; sizeBytes: number },
  userData: { kind: UserDataKind; document: string },
): Promise<{ partition: number; label: string }> {
  const layout = configDriveLayout(userData);
  // FAT labels are upper case by convention; cloud-init finds CIDATA as well as cidata.
  const label = layout.label === 'cidata' ? 'CIDATA' : layout.label;
  const handle = await open(disk.path, 'r+');
  let placement: NewPartition;
  try {
    const mbr = Buffer.alloc(SECTOR);
    await handle.read(mbr, 0, SECTOR, 0);
    const table = { sectors: Math.floor(disk.sizeBytes / SECTOR), mbr };
    const request = { sectors: DRIVE_SECTORS, alignSectors: ALIGN_SECTORS, name: layout.label };
    placement = mbrEntryTypes(mbr).includes(GPT_PROTECTIVE) ? await addGptPartition(handle, table, request) : await addMbrPartition(handle, table, request);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await run('mkfs.vfat', ['--offset', String(placement.startSector), '-n', label, disk.path, String((placement.sectors * SECTOR) / 1024)]);
  const image = `${disk.path}@@${placement.startSector * SECTOR}`;
  const staging = mkdtempSync(path.join(os.tmpdir(), 'config-drive-'));
  try {
    const dirs = new Set(
      layout.files
        .flatMap((f) =>
          path
            .dirname(f.path)
            .split('/')
            .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
        )
        .filter((d) => d !== '.'),
    );
    for (const dir of [...dirs].sort()) await run('mmd', ['-i', image, `::/${dir}`]);
    for (const [i, file] of layout.files.entries()) {
      const local = path.join(staging, String(i));
      writeFileSync(local, file.content, { mode: 0o600 });
      await run('mcopy', ['-i', image, local, `::/${file.path}`]);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const synced = await open(disk.path, 'r');
  await synced.sync().finally(() => synced.close());
  return { partition: placement.partition, label };
}
