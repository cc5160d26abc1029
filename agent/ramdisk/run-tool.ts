// A tool the ramdisk carries (mtools, mkfs.vfat, kexec), run with a timeout; its failure is a
// DRIVER_ERROR naming the command and what it said.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { IronflowError } from '../../core/errors';

const TOOL_TIMEOUT_MS = 60_000;

/** Runs `command`; answers its stdout, or throws DRIVER_ERROR with `reason` in its details. */
export async function runTool(command: string, args: string[], reason: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, { timeout: TOOL_TIMEOUT_MS, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
    return stdout;
  } catch (error) {
    throw new IronflowError('DRIVER_ERROR', `${command} ${args.join(' ')} failed: ${(error as Error).message}`, { reason });
  }
}
