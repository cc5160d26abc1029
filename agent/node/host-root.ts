// The host the node agent manages, as a root directory: `/` on a real machine, a directory on
// the machine emulator's installed OS and in tests. Everything the agent reads or writes on
// the host goes through here, so it never leaves the root: files by their absolute path in
// the host, tools found on the host's PATH inside the root, commands bounded in time and output.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';

/** The host's PATH (what a login shell on the host would search), inside the root. */
const HOST_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const MAX_COMMAND_OUTPUT = 1024 * 1024;

interface CommandResult {
  ok: boolean;
  stdout: string;
  /** The tail of stderr or the failure, for a unit's status (bounded). */
  error?: string;
}

type PackageManager = 'apt' | 'dnf';

export class HostRoot {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** The real host: its /proc/sys and systemd are this process's own kernel's and init's. */
  get isRealHost(): boolean {
    return this.dir === '/';
  }

  /** A host path (absolute, no `..`) as a path on this machine. */
  path(hostPath: string): string {
    if (!hostPath.startsWith('/') || hostPath.split('/').includes('..')) throw new Error(`not an absolute host path: ${hostPath}`);
    return path.join(this.dir, path.posix.normalize(hostPath));
  }

  /** A tool on the host's PATH inside the root (an executable file), as a path on this machine. */
  findTool(name: string): string | undefined {
    for (const dir of HOST_PATH) {
      const candidate = this.path(path.posix.join(dir, name));
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here: the next PATH entry
      }
    }
    return undefined;
  }

  /** systemd runs as PID 1 of this root: only the real host booted with systemd. */
  systemdRunning(): boolean {
    return this.isRealHost && existsSync('/run/systemd/system');
  }

  /** The host's package manager: apt (dpkg) or dnf (rpm), found in the root; undefined when it has none. */
  packageManager(): PackageManager | undefined {
    if (this.findTool('apt-get') && this.findTool('dpkg-query')) return 'apt';
    if (this.findTool('dnf') && this.findTool('rpm')) return 'dnf';
    return undefined;
  }

  /**
   * Runs a tool of the host, bounded in time and output. A root that is not the real host
   * has no running system to act on, so only its own tools run (found in the root), and
   * apt/dnf act on the root (`-o RootDir`/`--installroot`: the caller's part).
   */
  run(binary: string, args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<CommandResult> {
    return new Promise((resolve) => {
      execFile(binary, args, { timeout: timeoutMs, maxBuffer: MAX_COMMAND_OUTPUT, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
        if (!error) return resolve({ ok: true, stdout });
        const why = (error as NodeJS.ErrnoException & { killed?: boolean }).killed
          ? `timed out after ${timeoutMs} ms`
          : (stderr.trim() || error.message).slice(-512);
        resolve({ ok: false, stdout, error: `${path.basename(binary)} ${args.join(' ')}: ${why}` });
      });
    });
  }
}
