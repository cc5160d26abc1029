// What the ramdisk asks of a disk's partition table, MBR (mbr-partition.ts) or GPT
// (gpt-partition.ts): one more partition after the image's last (config-drive-writer.ts), and
// the partitions there are (kexec.ts reads the installed OS's boot entries from them).
import { IronflowError } from '../../core/errors';

export const SECTOR = 512;
/** Where sector 0 holds the MBR's four 16-byte entries. */
export const MBR_TABLE_AT = 446;
export const MBR_ENTRY_BYTES = 16;
/** The MBR entry type of a GPT disk's protective MBR. */
export const GPT_PROTECTIVE = 0xee;

export interface PartitionRequest {
  sectors: number;
  /** Its start is a multiple of this. */
  alignSectors: number;
  /** The GPT partition name (an MBR entry has none). */
  name: string;
}

export interface NewPartition {
  /** Its number as the OS names it (1-based). */
  partition: number;
  startSector: number;
  sectors: number;
}

/** A partition the table lists; `type` is its MBR type in hex (`0c`) or its GPT type GUID. */
export interface ListedPartition {
  partition: number;
  startSector: number;
  sectors: number;
  type: string;
}

/** The disk the partition goes on: its size and its sector 0 as read. */
export interface PartitionedDisk {
  sectors: number;
  mbr: Buffer;
}

/** The MBR's entry types, checked for its signature first: a disk without one has no partition table to add to. */
export function mbrEntryTypes(sector0: Buffer): number[] {
  if (sector0.length < SECTOR || sector0[510] !== 0x55 || sector0[511] !== 0xaa) {
    throw new IronflowError('UNSUPPORTED', 'the image written to the disk has no partition table (MBR signature missing): no place for a config drive', {
      reason: 'no-partition-table',
    });
  }
  return [0, 1, 2, 3].map((slot) => sector0[MBR_TABLE_AT + slot * MBR_ENTRY_BYTES + 4] as number);
}

export const noRoom = () =>
  new IronflowError('DRIVER_ERROR', 'the disk has no room after the image for a 4 MiB config drive', { reason: 'no-room-for-config-drive' });
