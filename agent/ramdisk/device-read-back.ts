// Before a read-back: a block device's cached blocks are dropped (blockdev --flushbufs), so the
// bytes read next come from the device and not from what the kernel still caches of the write.
// A disk that is a file (an emulated machine's) has no such cache to drop.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { IronflowError } from '../../core/errors';

export async function dropCachedBlocks(diskPath: string): Promise<void> {
  if (!(await stat(diskPath)).isBlockDevice()) return;
  await promisify(execFile)('blockdev', ['--flushbufs', diskPath], { timeout: 60_000 }).catch((error: Error) => {
    throw new IronflowError('DRIVER_ERROR', `blockdev --flushbufs ${diskPath} failed: ${error.message}`, { reason: 'read-back-flush' });
  });
}
