// A tool's stdout read with a bound (mtools' mtype, debugfs' cat). boot.kexec copies the
// installed OS's kernel and initrds out of the disk the tenant's image wrote into the
// ramdisk's memory: how much it copies is capped here, not set by the image.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { IronflowError } from '../../core/errors';
import { TOOL_TIMEOUT_MS, STDERR_SHOWN } from './run-tool';

export interface BoundedOutput {
  /** stdout, when it was not written to a file. */
  stdout: Buffer;
  /** How many bytes stdout carried, counted up to one past the bound. */
  bytes: number;
  /** The tool went past `maxBytes` and was stopped. */
  overLimit: boolean;
  stderr: string;
  exitCode: number | null;
}

/**
 * Runs `command` and reads its stdout into memory, or into the file `to`, stopping it past
 * `maxBytes`. Rejects (DRIVER_ERROR) only when it cannot be run or gives no answer within the tool timeout.
 */
export function boundedToolOutput(command: string, args: string[], options: { maxBytes: number; to?: string }): Promise<BoundedOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const file = options.to === undefined ? undefined : createWriteStream(options.to);
    const chunks: Buffer[] = [];
    let bytes = 0;
    let overLimit = false;
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new IronflowError('DRIVER_ERROR', `${command} gave no answer in ${TOOL_TIMEOUT_MS / 1000} s`, { reason: 'tool-timeout' }));
    }, TOOL_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      if (overLimit) return;
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        overLimit = true;
        child.kill('SIGKILL');
        return;
      }
      if (file) file.write(chunk);
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_SHOWN) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new IronflowError('DRIVER_ERROR', `${command} could not be run (${error.code ?? error.message}): the ramdisk image lacks it`, {
          reason: 'tool-missing',
        }),
      );
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      const answer = { stdout: Buffer.concat(chunks), bytes, overLimit, stderr: stderr.slice(0, STDERR_SHOWN).trim(), exitCode };
      if (!file) return resolve(answer);
      file.end(() => resolve(answer));
    });
  });
}
