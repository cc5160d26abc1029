// A new primary partition in an MBR-partitioned image: the first free of the four entries,
// aligned after the last partition, typed FAT32 (LBA).
import type { FileHandle } from 'node:fs/promises';
import { IronflowError } from '../../core/errors';
import { MBR_ENTRY_BYTES, MBR_TABLE_AT, noRoom, type ListedPartition, type NewPartition, type PartitionedDisk, type PartitionRequest } from './partition-table';

const FAT32_LBA = 0x0c;

/** The four primary entries (an empty slot has type 0). */
function mbrEntries(mbr: Buffer) {
  return [0, 1, 2, 3].map((slot) => {
    const at = MBR_TABLE_AT + slot * MBR_ENTRY_BYTES;
    return { slot, type: mbr[at + 4] as number, startSector: mbr.readUInt32LE(at + 8), sectors: mbr.readUInt32LE(at + 12) };
  });
}

/** The MBR's primary partitions, numbered by slot. */
export function mbrPartitions(mbr: Buffer): ListedPartition[] {
  return mbrEntries(mbr)
    .filter((p) => p.type !== 0 && p.sectors > 0)
    .map((p) => ({ partition: p.slot + 1, startSector: p.startSector, sectors: p.sectors, type: p.type.toString(16).padStart(2, '0') }));
}

export async function addMbrPartition(handle: FileHandle, disk: PartitionedDisk, request: PartitionRequest): Promise<NewPartition> {
  const entries = mbrEntries(disk.mbr);
  const used = entries.filter((p) => p.type !== 0 && p.sectors > 0);
  const free = entries.find((p) => p.type === 0 || p.sectors === 0);
  if (!free)
    throw new IronflowError('UNSUPPORTED', 'the image uses all four MBR partition slots: no slot for a config drive', { reason: 'no-free-partition-slot' });
  const end = used.reduce((max, p) => Math.max(max, p.startSector + p.sectors), request.alignSectors);
  const startSector = Math.ceil(end / request.alignSectors) * request.alignSectors;
  if (startSector + request.sectors > disk.sectors) throw noRoom();

  const entry = Buffer.alloc(MBR_ENTRY_BYTES);
  // CHS fields 0xFEFFFF ("use LBA"), as every current partitioner writes them.
  entry.fill(0xfe, 1, 2).fill(0xff, 2, 4).fill(0xfe, 5, 6).fill(0xff, 6, 8);
  entry[4] = FAT32_LBA;
  entry.writeUInt32LE(startSector, 8);
  entry.writeUInt32LE(request.sectors, 12);
  await handle.write(entry, 0, MBR_ENTRY_BYTES, MBR_TABLE_AT + free.slot * MBR_ENTRY_BYTES);
  return { partition: free.slot + 1, startSector, sectors: request.sectors };
}
