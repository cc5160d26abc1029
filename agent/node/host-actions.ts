// What a host config unit does to the host, in four kinds of action: a file (content, mode,
// root-owned when the agent runs as root), sysctls (a /etc/sysctl.d drop-in, applied to the
// running kernel on the real host), a systemd unit (its file; reload, enable and start where
// systemd is PID 1 of the root) and packages (apt or dnf: installed when missing). Each action
// compares before it writes, so a second pass changes nothing; a file this agent wrote before
// that differs now was changed by hand: it is reported drifted and restored.
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { HostRoot } from './host-root';

/** A unit's file is config, never a payload: larger is refused when the unit is built. */
export const MAX_HOST_FILE_BYTES = 64 * 1024;
const SYSTEMCTL_TIMEOUT_MS = 30_000;
const QUERY_TIMEOUT_MS = 15_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;

export type HostAction =
  /** rebootRequired: the file takes effect at the next boot only (kernel command line). */
  | { kind: 'file'; path: string; content: string; mode: number; rebootRequired?: boolean }
  | { kind: 'sysctl'; file: string; values: Record<string, string> }
  | { kind: 'systemd'; name: string; content: string }
  | { kind: 'packages'; names: string[] };

export interface ActionOutcome {
  changed: boolean;
  /** Files found changed by hand since this agent wrote them (restored). */
  drifted: string[];
  /** Why the action is not done and cannot be here (no package manager, say). */
  unsupported?: string;
  /** Why the action is not finished yet (a unit file written, systemd not running the root). */
  pending?: string;
  failed?: string;
  rebootRequired: boolean;
  /** Host path → sha256 of what this agent wrote there (the next pass's drift reference). */
  applied: Record<string, string>;
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const outcome = (partial: Partial<ActionOutcome> = {}): ActionOutcome => ({ changed: false, drifted: [], rebootRequired: false, applied: {}, ...partial });

function readBounded(file: string): { content: string | null; mode: number; uid: number } | undefined {
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) return { content: null, mode: stat.mode & 0o7777, uid: stat.uid };
    // A file larger than any unit writes differs from what it should hold; no need to read it.
    const content = stat.size > MAX_HOST_FILE_BYTES ? null : readFileSync(file, 'utf8');
    return { content, mode: stat.mode & 0o7777, uid: stat.uid };
  } catch {
    return undefined;
  }
}

const runningAsRoot = (): boolean => process.getuid?.() === 0;

/** Writes a file when its content, mode or (as root) owner differs; atomically, by rename. */
function applyFile(
  root: HostRoot,
  action: { path: string; content: string; mode: number; rebootRequired?: boolean },
  appliedBefore: Record<string, string>,
): ActionOutcome {
  const file = root.path(action.path);
  const digest = sha256(action.content);
  const applied = { [action.path]: digest };
  const current = readBounded(file);
  const ownerOk = !runningAsRoot() || current?.uid === 0;
  if (current && current.content === action.content && current.mode === action.mode && ownerOk) return outcome({ applied });
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  if (current && current.content === null) rmSync(file, { recursive: true, force: true });
  const temp = `${file}.ironflow-${process.pid}`;
  writeFileSync(temp, action.content, { mode: action.mode });
  chmodSync(temp, action.mode);
  if (runningAsRoot()) chownSync(temp, 0, 0);
  renameSync(temp, file);
  const drifted = current !== undefined && appliedBefore[action.path] === digest ? [action.path] : [];
  return outcome({ changed: true, drifted, applied, rebootRequired: action.rebootRequired === true });
}

/** The drop-in, then each value into the running kernel (the real host only) where it differs. */
async function applySysctl(
  root: HostRoot,
  action: { file: string; values: Record<string, string> },
  appliedBefore: Record<string, string>,
): Promise<ActionOutcome> {
  const lines = Object.entries(action.values).map(([key, value]) => `${key} = ${value}\n`);
  const dropIn = applyFile(
    root,
    { path: action.file, content: `# Written by the Ironflow node agent (host config); changes are restored.\n${lines.join('')}`, mode: 0o644 },
    appliedBefore,
  );
  if (!root.isRealHost) return dropIn;
  let changed = dropIn.changed;
  for (const [key, value] of Object.entries(action.values)) {
    const knob = path.join('/proc/sys', ...key.split('.'));
    let now: string;
    try {
      now = readFileSync(knob, 'utf8').trim().replace(/\s+/g, ' ');
    } catch (error) {
      return { ...dropIn, failed: `sysctl ${key}: ${(error as Error).message}` };
    }
    if (now === value) continue;
    try {
      writeFileSync(knob, value);
      changed = true;
    } catch (error) {
      return { ...dropIn, failed: `sysctl ${key} = ${value}: ${(error as Error).message}` };
    }
  }
  return { ...dropIn, changed };
}

/** The unit enabled without systemd running: the wants link `systemctl enable` makes. */
function linkWanted(root: HostRoot, name: string): boolean {
  const link = root.path(`/etc/systemd/system/multi-user.target.wants/${name}`);
  const target = `/etc/systemd/system/${name}`;
  try {
    if (readlinkSync(link) === target) return false;
    rmSync(link, { force: true });
  } catch {
    // no link yet
  }
  mkdirSync(path.dirname(link), { recursive: true, mode: 0o755 });
  symlinkSync(target, link);
  return true;
}

async function applySystemd(root: HostRoot, action: { name: string; content: string }, appliedBefore: Record<string, string>): Promise<ActionOutcome> {
  const file = applyFile(root, { path: `/etc/systemd/system/${action.name}`, content: action.content, mode: 0o644 }, appliedBefore);
  const systemctl = root.findTool('systemctl');
  if (!root.systemdRunning() || !systemctl) {
    const linked = linkWanted(root, action.name);
    return {
      ...file,
      changed: file.changed || linked,
      pending: `systemd is not PID 1 in ${root.dir}: ${action.name} is written and enabled for the host's next boot, not started`,
    };
  }
  let changed = file.changed;
  if (file.changed) {
    const reload = await root.run(systemctl, ['daemon-reload'], SYSTEMCTL_TIMEOUT_MS);
    if (!reload.ok) return { ...file, failed: reload.error };
  }
  const enabled = await root.run(systemctl, ['is-enabled', action.name], QUERY_TIMEOUT_MS);
  const active = await root.run(systemctl, ['is-active', action.name], QUERY_TIMEOUT_MS);
  // A oneshot that ran and exited is enabled and not active: started again only when its file changed.
  const oneshotDone = /Type=oneshot/.test(action.content) && !file.changed;
  if (enabled.stdout.trim() !== 'enabled' || (active.stdout.trim() !== 'active' && !oneshotDone)) {
    const start = await root.run(systemctl, ['enable', '--now', action.name], SYSTEMCTL_TIMEOUT_MS);
    if (!start.ok) return { ...file, failed: start.error };
    changed = true;
  }
  return { ...file, changed };
}

async function missingPackages(root: HostRoot, manager: 'apt' | 'dnf', names: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const name of names) {
    const query =
      manager === 'apt'
        ? await root.run(root.findTool('dpkg-query') as string, ['-W', '-f=${Status}', name], QUERY_TIMEOUT_MS)
        : await root.run(root.findTool('rpm') as string, ['-q', name], QUERY_TIMEOUT_MS);
    if (!query.ok || (manager === 'apt' && !query.stdout.includes('install ok installed'))) missing.push(name);
  }
  return missing;
}

async function applyPackages(root: HostRoot, names: string[]): Promise<ActionOutcome> {
  const manager = root.packageManager();
  if (!manager) return outcome({ unsupported: `no package manager (apt or dnf) in ${root.dir}: cannot install ${names.join(', ')}` });
  // apt and dnf install into the running system; a root that is another OS's directory would get this host's state.
  if (!root.isRealHost)
    return outcome({ unsupported: `installing packages into ${root.dir}, which is not the running host, is not built: ${names.join(', ')}` });
  const missing = await missingPackages(root, manager, names);
  if (missing.length === 0) return outcome();
  const install =
    manager === 'apt'
      ? await root.run(root.findTool('apt-get') as string, ['install', '-y', '--no-install-recommends', ...missing], INSTALL_TIMEOUT_MS, {
          DEBIAN_FRONTEND: 'noninteractive',
        })
      : await root.run(root.findTool('dnf') as string, ['install', '-y', ...missing], INSTALL_TIMEOUT_MS);
  return install.ok ? outcome({ changed: true }) : outcome({ failed: install.error });
}

export async function applyAction(root: HostRoot, action: HostAction, appliedBefore: Record<string, string>): Promise<ActionOutcome> {
  try {
    switch (action.kind) {
      case 'file':
        return applyFile(root, action, appliedBefore);
      case 'sysctl':
        return await applySysctl(root, action, appliedBefore);
      case 'systemd':
        return await applySystemd(root, action, appliedBefore);
      case 'packages':
        return await applyPackages(root, action.names);
    }
  } catch (error) {
    return outcome({ failed: (error as Error).message.slice(0, 512) });
  }
}
