// What cloud-init or Ignition does with our document on first boot, as far as the agent
// needs it: the provisioned token written to its 0600 file. The machine emulator's
// installed OS uses this where a real OS runs cloud-init or Ignition.
import { writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { IronflowError } from '../../core/errors';
import { JOIN_TOKEN_FILE } from '../../core/userdata/agent-argv';

/** `value` when it is a list (its items possibly null), else none: any document may come here, and an empty one parses to null. */
const listOf = <T>(value: unknown): Array<T | null | undefined> => (Array.isArray(value) ? (value as Array<T | null | undefined>) : []);

export function joinTokenFromUserData(kind: string, document: string): string {
  if (kind === 'cloud-init') {
    const file = listOf<{ path?: unknown; content?: unknown }>((parse(document) as { write_files?: unknown } | null)?.write_files).find(
      (f) => f?.path === JOIN_TOKEN_FILE,
    );
    if (typeof file?.content === 'string') return file.content.trim();
  } else if (kind === 'ignition') {
    const files = (JSON.parse(document) as { storage?: { files?: unknown } } | null)?.storage?.files;
    const source = listOf<{ path?: unknown; contents?: { source?: unknown } }>(files).find((f) => f?.path === JOIN_TOKEN_FILE)?.contents?.source;
    if (typeof source === 'string' && source.startsWith('data:,')) return decodeURIComponent(source.slice('data:,'.length)).trim();
  }
  throw new IronflowError('INVALID_INPUT', `the ${kind} user data writes no ${JOIN_TOKEN_FILE}`, {});
}

/** Writes the document's join token where `--token-file` will read it (0600). */
export function writeJoinTokenFile(kind: string, document: string, file: string): void {
  writeFileSync(file, joinTokenFromUserData(kind, document), { mode: 0o600 });
}

/** The `agent join` the document runs (cloud-init's runcmd, Ignition's join unit): its --server, --node-id and --serving-ca-pin. */
export function joinArgsFromUserData(kind: string, document: string): { server: string; nodeId: string; servingCaPin?: string } {
  let argv: string[] | undefined;
  if (kind === 'cloud-init') {
    const runcmd = listOf<unknown>((parse(document) as { runcmd?: unknown } | null)?.runcmd);
    argv = runcmd.find((c): c is string[] => Array.isArray(c) && c.includes('join') && c.includes('--server'));
  } else if (kind === 'ignition') {
    const line = listOf<{ contents?: unknown }>((JSON.parse(document) as { systemd?: { units?: unknown } } | null)?.systemd?.units)
      .flatMap((u) => (typeof u?.contents === 'string' ? u.contents.split('\n') : []))
      .find((l) => l.startsWith('ExecStart=') && l.includes(' join '));
    argv = line?.slice('ExecStart='.length).split(' ');
  }
  const value = (flag: string) => (argv && argv.indexOf(flag) >= 0 ? argv[argv.indexOf(flag) + 1] : undefined);
  const server = value('--server');
  const nodeId = value('--node-id');
  if (!server || !nodeId) throw new IronflowError('INVALID_INPUT', `the ${kind} user data runs no agent join --server URL --node-id ID`, {});
  const servingCaPin = value('--serving-ca-pin');
  return { server, nodeId, ...(servingCaPin ? { servingCaPin } : {}) };
}
