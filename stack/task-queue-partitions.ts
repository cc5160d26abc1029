// How many partitions the dev server gives each task queue (temporal.taskQueuePartitions).
//
// Temporal splits every task queue into 4 partitions by default so that several matching hosts
// can share a busy queue. The dev server is one process, and most of Ironflow's queues have one
// poller: each ramdisk boot and each installed node polls a queue of its own. Each partition is
// a row of the store, created, leased and flushed on its own, the partitions forward polls and
// tasks to their root, and each asks the root for the queue's settings. With one partition the
// server took 7–9% less CPU over a fleet's cycle (bench/README.md).
//
// Lowering the read partitions of a store that already has tasks in the others strands those
// tasks (Temporal reads no partition past the count), so the count a store was ever read with is
// recorded beside it, and reads never go below it. Writes follow the setting at once: that is
// Temporal's own order for lowering partitions (writes first, reads once the rest drained).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Temporal's own default for every task queue (dynamicconfig.GlobalDefaultNumTaskQueuePartitions). */
export const TEMPORAL_DEFAULT_PARTITIONS = 4;
const READ_PARTITIONS = 'matching.numTaskqueueReadPartitions';
const WRITE_PARTITIONS = 'matching.numTaskqueueWritePartitions';

export interface TaskQueuePartitions {
  read: number;
  write: number;
}

/** The file beside a store that records the most read partitions it ever ran with. */
export const partitionRecordFile = (dbFile: string): string => `${dbFile}.partitions.json`;

function readPartitionsIn(text: string): number | undefined {
  try {
    const read: unknown = (JSON.parse(text) as { readPartitions?: unknown }).readPartitions;
    return typeof read === 'number' && Number.isInteger(read) && read >= 1 ? read : undefined;
  } catch {
    return undefined;
  }
}

function recordedReadPartitions(dbFile: string): number {
  if (!existsSync(dbFile)) return 0; // a new store holds no task yet
  const record = partitionRecordFile(dbFile);
  // A store from before the record ran with Temporal's default.
  if (!existsSync(record)) return TEMPORAL_DEFAULT_PARTITIONS;
  const read = readPartitionsIn(readFileSync(record, 'utf8'));
  if (read === undefined) {
    throw new Error(
      `${record}: readPartitions is not a whole number from 1; delete the file only if ${dbFile} holds no task (it then counts as ${TEMPORAL_DEFAULT_PARTITIONS})`,
    );
  }
  return read;
}

/**
 * The partitions to start a server with for `configured`, and the record updated for them. A
 * store in memory starts empty every time, so it takes `configured` as it is.
 */
export function taskQueuePartitionsFor(dbFile: string | undefined, configured: number): TaskQueuePartitions {
  if (dbFile === undefined) return { read: configured, write: configured };
  const read = Math.max(configured, recordedReadPartitions(dbFile));
  writeFileSync(partitionRecordFile(dbFile), `${JSON.stringify({ readPartitions: read })}\n`, { mode: 0o600 });
  return { read, write: configured };
}

export function partitionDynamicConfig(partitions: TaskQueuePartitions): Record<string, number> {
  return { [READ_PARTITIONS]: partitions.read, [WRITE_PARTITIONS]: partitions.write };
}
