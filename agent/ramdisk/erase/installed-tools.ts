// The drive tools of a real ramdisk: the installed nvme-cli, hdparm and blkdiscard, each run
// bounded in time and output, a failure naming the command and what it said on stderr.
import { execFile } from 'node:child_process';
import { IronflowError } from '../../../core/errors';
import type { DiskTools } from '../hardware';

const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_CHARS = 512;

export const installedDiskTools: DiskTools = (command, args, { timeoutMs }) =>
  new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(
          new IronflowError('DRIVER_ERROR', `${command} is not installed on this ramdisk (the ramdisk image carries nvme-cli, hdparm and util-linux)`, {
            reason: 'erase-tool-missing',
            command,
          }),
        );
      }
      const said = String(stderr).trim().slice(0, MAX_STDERR_CHARS) || error.message.slice(0, MAX_STDERR_CHARS);
      const timedOut = error.killed === true;
      reject(
        new IronflowError(
          'DRIVER_ERROR',
          `${command} ${args.join(' ')} ${timedOut ? `did not finish within ${timeoutMs < 10_000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`} (killed)` : `failed: ${said}`}`,
          {
            reason: timedOut ? 'erase-command-timeout' : 'erase-command',
            command,
          },
        ),
      );
    });
  });
