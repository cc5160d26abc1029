// A new partition in a GPT-partitioned image written to a larger disk (UEFI spec 2.10, §5.3):
// the image's backup header and entries sit at the image's end, not the disk's, so they are
// moved to the disk's end first (as `sgdisk -e` does), the usable range grows to meet them,
// and the partition goes in the first free entry, aligned after the last partition. Both
// copies of the table and the protective MBR are rewritten with their CRCs. A table whose
// CRCs do not match is refused: writing over a table this does not understand could leave
// the installed OS unbootable.
import type { FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { IronflowError } from '../../core/errors';
import {
  GPT_PROTECTIVE,
  MBR_ENTRY_BYTES,
  MBR_TABLE_AT,
  noRoom,
  SECTOR,
  type ListedPartition,
  type NewPartition,
  type PartitionedDisk,
  type PartitionRequest,
} from './partition-table';

const SIGNATURE = 'EFI PART';
const MIN_HEADER_BYTES = 92;
const MIN_ENTRY_BYTES = 128;
/** At most this many entry bytes are read (128 entries of 128 bytes is the usual 16 KiB). */
const MAX_ENTRIES_BYTES = 1024 * 1024;
const NAME_AT = 56;
const NAME_CHARS = 36;
/** Microsoft basic data (EBD0A0A2-B9E5-4433-87C0-68B6B72699C7), the type a FAT partition takes, in its on-disk byte order. */
const BASIC_DATA_TYPE = Buffer.from('a2a0d0ebe5b9334487c068b6b72699c7', 'hex');

interface GptHeader {
  bytes: Buffer;
  alternateLba: bigint;
  firstUsableLba: bigint;
  entriesLba: bigint;
  entryCount: number;
  entryBytes: number;
}

const invalid = (why: string) =>
  new IronflowError('UNSUPPORTED', `the image's GPT cannot be read (${why}): no config drive is written into a table this cannot verify`, {
    reason: 'gpt-invalid',
  });

async function readAt(handle: FileHandle, lba: bigint, bytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(bytes);
  const { bytesRead } = await handle.read(buffer, 0, bytes, Number(lba) * SECTOR);
  if (bytesRead !== bytes) throw invalid(`the disk ends before LBA ${lba} + ${bytes} bytes`);
  return buffer;
}

async function writeAt(handle: FileHandle, lba: bigint, bytes: Buffer): Promise<void> {
  await handle.write(bytes, 0, bytes.length, Number(lba) * SECTOR);
}

/** The primary header at LBA 1, checked: signature, sizes and its CRC. */
function parseHeader(sector: Buffer): GptHeader {
  if (sector.toString('latin1', 0, 8) !== SIGNATURE) throw invalid('no "EFI PART" signature at LBA 1');
  const size = sector.readUInt32LE(12);
  if (size < MIN_HEADER_BYTES || size > SECTOR) throw invalid(`header size ${size}`);
  const bytes = Buffer.from(sector.subarray(0, size));
  const stored = bytes.readUInt32LE(16);
  bytes.writeUInt32LE(0, 16);
  if (crc32(bytes) !== stored) throw invalid('the header CRC does not match');
  const entryCount = bytes.readUInt32LE(80);
  const entryBytes = bytes.readUInt32LE(84);
  if (entryBytes < MIN_ENTRY_BYTES || entryBytes % 8 !== 0 || entryCount * entryBytes > MAX_ENTRIES_BYTES || entryCount === 0)
    throw invalid(`${entryCount} entries of ${entryBytes} bytes`);
  const header = {
    bytes,
    alternateLba: bytes.readBigUInt64LE(32),
    firstUsableLba: bytes.readBigUInt64LE(40),
    entriesLba: bytes.readBigUInt64LE(72),
    entryCount,
    entryBytes,
  };
  // The primary entries lie between the header and the first usable sector, never in a partition's way.
  const entriesEnd = header.entriesLba + BigInt(Math.ceil((entryCount * entryBytes) / SECTOR));
  if (header.entriesLba < 2n || entriesEnd > header.firstUsableLba)
    throw invalid(`entries at LBA ${header.entriesLba}, first usable LBA ${header.firstUsableLba}`);
  return header;
}

const isUnused = (entries: Buffer, at: number) => entries.subarray(at, at + 16).every((byte) => byte === 0);

/** The entry of the new partition: basic data, a fresh unique GUID, its LBAs (the last inclusive) and its name. */
function newEntry(entryBytes: number, startLba: bigint, sectors: number, name: string): Buffer {
  const entry = Buffer.alloc(entryBytes);
  BASIC_DATA_TYPE.copy(entry, 0);
  const unique = randomBytes(16);
  unique[7] = ((unique[7] as number) & 0x0f) | 0x40; // version 4, in the GUID's mixed-endian layout
  unique[8] = ((unique[8] as number) & 0x3f) | 0x80;
  unique.copy(entry, 16);
  entry.writeBigUInt64LE(startLba, 32);
  entry.writeBigUInt64LE(startLba + BigInt(sectors) - 1n, 40);
  entry.write(name.slice(0, NAME_CHARS), NAME_AT, 'utf16le');
  return entry;
}

/** The header as it is written at `myLba`, pointing at `alternateLba` and its entries at `entriesLba`, with both CRCs. */
function headerCopy(
  primary: GptHeader,
  fields: { myLba: bigint; alternateLba: bigint; lastUsableLba: bigint; entriesLba: bigint; entriesCrc: number },
): Buffer {
  const header = Buffer.from(primary.bytes);
  header.writeBigUInt64LE(fields.myLba, 24);
  header.writeBigUInt64LE(fields.alternateLba, 32);
  header.writeBigUInt64LE(fields.lastUsableLba, 48);
  header.writeBigUInt64LE(fields.entriesLba, 72);
  header.writeUInt32LE(fields.entriesCrc, 88);
  header.writeUInt32LE(0, 16);
  header.writeUInt32LE(crc32(header), 16);
  const sector = Buffer.alloc(SECTOR);
  header.copy(sector);
  return sector;
}

/** The primary header and its entries, both checked against their CRCs. */
async function readGpt(handle: FileHandle): Promise<{ primary: GptHeader; entries: Buffer }> {
  const primary = parseHeader(await readAt(handle, 1n, SECTOR));
  const entries = await readAt(handle, primary.entriesLba, primary.entryCount * primary.entryBytes);
  if (crc32(entries) !== primary.bytes.readUInt32LE(88)) throw invalid('the partition entries CRC does not match');
  return { primary, entries };
}

/** The GPT's partitions in entry order, with their type GUID as it is written (e.g. C12A7328-F81F-11D2-BA4B-00A0C93EC93B). */
export async function gptPartitions(handle: FileHandle): Promise<ListedPartition[]> {
  const { primary, entries } = await readGpt(handle);
  const listed: ListedPartition[] = [];
  for (let i = 0; i < primary.entryCount; i++) {
    const at = i * primary.entryBytes;
    if (isUnused(entries, at)) continue;
    const first = entries.readBigUInt64LE(at + 32);
    const last = entries.readBigUInt64LE(at + 40);
    if (last < first) continue;
    listed.push({ partition: i + 1, startSector: Number(first), sectors: Number(last - first + 1n), type: guidText(entries.subarray(at, at + 16)) });
  }
  return listed;
}

/** A GUID in its usual text form from its on-disk bytes (the first three fields little-endian). */
function guidText(bytes: Buffer): string {
  const hex = (from: number, to: number, reversed: boolean) => {
    const part = Buffer.from(bytes.subarray(from, to));
    return (reversed ? part.reverse() : part).toString('hex');
  };
  return [hex(0, 4, true), hex(4, 6, true), hex(6, 8, true), hex(8, 10, false), hex(10, 16, false)].join('-').toUpperCase();
}

/** Adds the partition after the image's last one, with the GPT's backup moved to the end of the disk. */
export async function addGptPartition(handle: FileHandle, disk: PartitionedDisk, partition: PartitionRequest): Promise<NewPartition> {
  const { primary, entries } = await readGpt(handle);
  const entriesLength = entries.length;

  const lastLba = BigInt(disk.sectors) - 1n;
  const entriesSectors = BigInt(Math.ceil(entriesLength / SECTOR));
  const backupEntriesLba = lastLba - entriesSectors;
  const lastUsableLba = backupEntriesLba - 1n;

  let free = -1;
  let end = primary.firstUsableLba;
  for (let i = 0; i < primary.entryCount; i++) {
    const at = i * primary.entryBytes;
    if (isUnused(entries, at)) {
      if (free < 0) free = i;
      continue;
    }
    const partitionEnd = entries.readBigUInt64LE(at + 40) + 1n;
    if (partitionEnd > end) end = partitionEnd;
  }
  if (free < 0)
    throw new IronflowError('UNSUPPORTED', `the image's GPT uses all ${primary.entryCount} of its entries: no entry for a config drive`, {
      reason: 'no-free-partition-slot',
    });
  const align = BigInt(partition.alignSectors);
  const startLba = ((end + align - 1n) / align) * align;
  if (startLba + BigInt(partition.sectors) - 1n > lastUsableLba) throw noRoom();

  newEntry(primary.entryBytes, startLba, partition.sectors, partition.name).copy(entries, free * primary.entryBytes);
  const entriesCrc = crc32(entries);
  const common = { lastUsableLba, entriesCrc };
  // The image's own backup header, left in what is now free space, would be a stale table to a
  // tool that looks there: cleared before the new backup is written, which may overlap it.
  if (primary.alternateLba !== lastLba && primary.alternateLba < lastLba) await writeAt(handle, primary.alternateLba, Buffer.alloc(SECTOR));
  // The backup before the primary: until the primary is rewritten, the table it describes still stands.
  await writeAt(handle, backupEntriesLba, entries);
  await writeAt(handle, lastLba, headerCopy(primary, { ...common, myLba: lastLba, alternateLba: 1n, entriesLba: backupEntriesLba }));
  await writeAt(handle, primary.entriesLba, entries);
  await writeAt(handle, 1n, headerCopy(primary, { ...common, myLba: 1n, alternateLba: lastLba, entriesLba: primary.entriesLba }));
  await coverDiskWithProtectiveMbr(handle, disk);
  return { partition: free + 1, startSector: Number(startLba), sectors: partition.sectors };
}

/** The protective MBR's 0xEE entry spans the whole disk now (capped at 2^32 - 1 sectors, as the spec says). */
async function coverDiskWithProtectiveMbr(handle: FileHandle, disk: PartitionedDisk): Promise<void> {
  const mbr = Buffer.from(disk.mbr.subarray(0, SECTOR));
  for (let slot = 0; slot < 4; slot++) {
    const at = MBR_TABLE_AT + slot * MBR_ENTRY_BYTES;
    if (mbr[at + 4] !== GPT_PROTECTIVE) continue;
    mbr.writeUInt32LE(Math.min(disk.sectors - 1, 0xffffffff), at + 12);
    await handle.write(mbr, 0, SECTOR, 0);
    return;
  }
}
