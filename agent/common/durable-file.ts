// The files an agent cannot be without after a power loss (its key, its identity, its
// settings): written through a temporary file that is synced before the rename, then synced
// again under its new name, and the directory after it, so a machine power-cycled right
// after its agent joined keeps them. Its join token is spent by then: without them the node
// could not come back. The sync under the new name is for FAT, where a rename writes the new
// directory entry with no size until the file's own entry is written again; on FAT the rename
// itself reaches the disk only on a `dirsync` mount, which the test OS image uses
// (scripts/build-os-image.mjs). Seen in a QEMU machine power-cycled seconds after its join
// (test/e2e/qemu-lifecycle.test.ts): without either, the agent's identity was lost.
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

function writeSynced(fd: number, content: string, mode: number): void {
  try {
    writeSync(fd, content);
    fchmodSync(fd, mode);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Syncs a file's content and its own entry. */
function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Syncs the directory's entries; a file system that cannot sync a directory has nothing more to write. */
function syncDirectory(dir: string): void {
  try {
    syncFile(dir);
  } catch {
    // EINVAL/EISDIR where directories are not synced: their entries are written with the file system's own ordering.
  }
}

/** Replaces `file` with `content`: after a crash or a power loss it holds the old content or the new one. */
export function writeFileDurably(file: string, content: string, mode: number): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeSynced(openSync(temp, 'w', mode), content, mode);
  renameSync(temp, file);
  syncFile(file);
  syncDirectory(path.dirname(file));
}

/** Creates `file` with `content`, failing if it exists (EEXIST), and syncs it to disk. */
export function createFileDurably(file: string, content: string, mode: number): void {
  writeSynced(openSync(file, 'wx', mode), content, mode);
  syncDirectory(path.dirname(file));
}
