import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { partitionRecordFile, taskQueuePartitionsFor, TEMPORAL_DEFAULT_PARTITIONS } from '../../stack/task-queue-partitions';

const freshDir = () => mkdtempSync(path.join(tmpdir(), 'ironflow-partitions-'));
const recorded = (dbFile: string): unknown => JSON.parse(readFileSync(partitionRecordFile(dbFile), 'utf8'));

describe("the dev server's task queue partitions", () => {
  it('takes the setting for a new store and records it beside the store', () => {
    const dbFile = path.join(freshDir(), 'temporal.db');
    expect(taskQueuePartitionsFor(dbFile, 1)).toEqual({ read: 1, write: 1 });
    expect(recorded(dbFile)).toEqual({ readPartitions: 1 });
  });

  it("never reads a store with fewer partitions than it ran with, but writes to the setting's count at once", () => {
    const dbFile = path.join(freshDir(), 'temporal.db');
    taskQueuePartitionsFor(dbFile, 8);
    writeFileSync(dbFile, ''); // the server created its store
    expect(taskQueuePartitionsFor(dbFile, 1)).toEqual({ read: 8, write: 1 });
    expect(recorded(dbFile)).toEqual({ readPartitions: 8 });
    expect(taskQueuePartitionsFor(dbFile, 12)).toEqual({ read: 12, write: 12 });
    expect(recorded(dbFile)).toEqual({ readPartitions: 12 });
  });

  it("counts a store from before the record as Temporal's default", () => {
    const dbFile = path.join(freshDir(), 'temporal.db');
    writeFileSync(dbFile, '');
    expect(taskQueuePartitionsFor(dbFile, 1)).toEqual({ read: TEMPORAL_DEFAULT_PARTITIONS, write: 1 });
  });

  it('starts over when the store is gone, whatever the record says', () => {
    const dbFile = path.join(freshDir(), 'temporal.db');
    writeFileSync(partitionRecordFile(dbFile), JSON.stringify({ readPartitions: 4 }));
    expect(taskQueuePartitionsFor(dbFile, 1)).toEqual({ read: 1, write: 1 });
  });

  it('refuses a damaged record, naming the file and when it may be deleted', () => {
    const dbFile = path.join(freshDir(), 'temporal.db');
    writeFileSync(dbFile, '');
    for (const damaged of [JSON.stringify({ readPartitions: 'four' }), JSON.stringify({ readPartitions: 0 }), '{"readPartitions":']) {
      writeFileSync(partitionRecordFile(dbFile), damaged);
      expect(() => taskQueuePartitionsFor(dbFile, 1)).toThrow(
        /temporal\.db\.partitions\.json: readPartitions is not a whole number from 1; delete the file only if .* holds no task/,
      );
    }
  });

  it('records nothing for a store in memory', () => {
    expect(taskQueuePartitionsFor(undefined, 2)).toEqual({ read: 2, write: 2 });
  });
});
