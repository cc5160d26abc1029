// Writes the deploy's user data as a config drive (agent/common/config-drive.ts) on a real
// disk, after the image: a new MBR partition right after the image's last one (4 MiB, FAT,
// labelled cidata or config-2) holding the files the installed OS's first boot reads —
// Ironic's approach. Only MBR-partitioned images: a GPT
// image needs its backup header moved to the disk's end first, which this does not do yet,
// so it is UNSUPPORTED with that reason rather than a drive the OS might not find.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { configDriveLayout, type UserDataKind } from '../common/config-drive';
import { IronflowError } from '../../core/errors';

const SECTOR = 512;
const ALIGN_SECTORS = 2048; // 1 MiB
const DRIVE_SECTORS = 8192; // 4 MiB
const PARTITION_TABLE_AT = 446;
const ENTRY_BYTES = 16;
const FAT32_LBA = 0x0c;
const GPT_PROTECTIVE = 0xee;

interface MbrPartition {
  slot: number;
  type: number;
  startSector: number;
  sectors: number;
}

/** The four primary entries of an MBR (empty slots have type 0). */
function readMbrPartitions(sector0: Buffer): MbrPartition[] {
  if (sector0.length < SECTOR || sector0[510] !== 0x55 || sector0[511] !== 0xaa) {
    throw new IronflowError('UNSUPPORTED', 'the image written to the disk has no partition table (MBR signature missing): no place for a config drive', {
      reason: 'no-partition-table',
    });
  }
  return [0, 1, 2, 3].map((slot) => {
    const at = PARTITION_TABLE_AT + slot * ENTRY_BYTES;
    return { slot, type: sector0[at + 4] as number, startSector: sector0.readUInt32LE(at + 8), sectors: sector0.readUInt32LE(at + 12) };
  });
}

/** Where the config drive goes: the first free slot, aligned after the last partition. */
function configDrivePlacement(partitions: MbrPartition[], diskSectors: number): MbrPartition {
  if (partitions.some((p) => p.type === GPT_PROTECTIVE)) {
    throw new IronflowError(
      'UNSUPPORTED',
      'the image is GPT-partitioned: writing a config drive into a GPT image is not built yet (use an MBR image, or a profile without userData)',
      { reason: 'gpt-config-drive' },
    );
  }
  const used = partitions.filter((p) => p.type !== 0 && p.sectors > 0);
  const free = partitions.find((p) => p.type === 0 || p.sectors === 0);
  if (!free)
    throw new IronflowError('UNSUPPORTED', 'the image uses all four MBR partition slots: no slot for a config drive', { reason: 'no-free-partition-slot' });
  const end = used.reduce((max, p) => Math.max(max, p.startSector + p.sectors), ALIGN_SECTORS);
  const startSector = Math.ceil(end / ALIGN_SECTORS) * ALIGN_SECTORS;
  if (startSector + DRIVE_SECTORS > diskSectors)
    throw new IronflowError('DRIVER_ERROR', 'the disk has no room after the image for a 4 MiB config drive', { reason: 'no-room-for-config-drive' });
  return { slot: free.slot, type: FAT32_LBA, startSector, sectors: DRIVE_SECTORS };
}

const run = async (command: string, args: string[]) => {
  try {
    await promisify(execFile)(command, args, { timeout: 60_000, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
  } catch (error) {
    throw new IronflowError('DRIVER_ERROR', `${command} ${args.join(' ')} failed: ${(error as Error).message}`, { reason: 'config-drive-command' });
  }
};

/**
 * Formats and fills the new partition through the whole disk at its offset (dosfstools'
 * mkfs.vfat --offset, mtools' image@@offset), so it needs neither the kernel's partition
 * nodes nor a mount: the same on a block device and on an image file.
 */
export async function writeConfigDrive(
  disk: { path: string; sizeBytes: number },
  userData: { kind: UserDataKind; document: string },
): Promise<{ partition: number; label: string }> {
  const handle = await open(disk.path, 'r+');
  let placement: MbrPartition;
  try {
    const sector0 = Buffer.alloc(SECTOR);
    await handle.read(sector0, 0, SECTOR, 0);
    placement = configDrivePlacement(readMbrPartitions(sector0), Math.floor(disk.sizeBytes / SECTOR));
    const entry = Buffer.alloc(ENTRY_BYTES);
    // CHS fields 0xFEFFFF ("use LBA"), as every current partitioner writes them.
    entry.fill(0xfe, 1, 2).fill(0xff, 2, 4).fill(0xfe, 5, 6).fill(0xff, 6, 8);
    entry[4] = placement.type;
    entry.writeUInt32LE(placement.startSector, 8);
    entry.writeUInt32LE(placement.sectors, 12);
    await handle.write(entry, 0, ENTRY_BYTES, PARTITION_TABLE_AT + placement.slot * ENTRY_BYTES);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const layout = configDriveLayout(userData);
  // FAT labels are upper case by convention; cloud-init finds CIDATA as well as cidata.
  const label = layout.label === 'cidata' ? 'CIDATA' : layout.label;
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
  return { partition: placement.slot + 1, label };
}
