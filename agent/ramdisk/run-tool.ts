// A tool the ramdisk carries (mtools, mkfs.vfat, kexec), run with a timeout; its failure is a
// DRIVER_ERROR naming the command and what it said on stderr (cut to STDERR_SHOWN). The
// command is named as `shown` when its arguments are not for a step's error, which ends in
// the workflow's history: a kernel command line the installed OS's boot entry holds.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { IronflowError } from '../../core/errors';

export const TOOL_TIMEOUT_MS = 60_000;
export const STDERR_SHOWN = 2_000;

/** Runs `command`; answers its stdout, or throws DRIVER_ERROR with `reason` in its details. */
export async function runTool(command: string, args: string[], reason: string, shown = `${command} ${args.join(' ')}`): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, { timeout: TOOL_TIMEOUT_MS, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
    return stdout;
  } catch (error) {
    // Not the error's own message: Node's names the whole command line.
    const { stderr, code, killed } = error as { stderr?: string; code?: number | string; killed?: boolean };
    const said = stderr?.trim().slice(0, STDERR_SHOWN) || (killed ? `no answer in ${TOOL_TIMEOUT_MS / 1000} s` : `exit ${String(code)}`);
    throw new IronflowError('DRIVER_ERROR', `${shown} failed: ${said}`, { reason });
  }
}
