// The installed OS's boot entry, as its boot loader's configuration on one partition names it
// (partition-files.ts reads the partition). Looked for in this order:
// - a Boot Loader Specification entry (`loader/entries/*.conf`, or under `boot/`: linux,
//   initrd, options), the one `loader/loader.conf` names as `default`, else the first by file
//   name: systemd-boot's, and GRUB's on Fedora and RHEL (blscfg);
// - syslinux.cfg (at the root, `syslinux/` or `boot/syslinux/`): its DEFAULT label's KERNEL or
//   LINUX, INITRD (or APPEND's `initrd=`) and APPEND;
// - GRUB's grub.cfg (`boot/grub/`, `grub/`, and `grub2` for both): the menu entry `set default`
//   names by number or title at the top level, else the first, and its linux and initrd lines.
//   GRUB's script is not run: an argument that is a variable (`$vt_handoff`) is left out.
import path from 'node:path';
import type { PartitionFiles } from './partition-files';

/** A boot entry as its configuration names it: paths on its partition. */
export interface BootEntry {
  kernel: string;
  initrds: string[];
  cmdline: string;
  /** The configuration it was read from: `loader/entries/os.conf`. */
  file: string;
  /** Tried before each path the entry names when that path is not on the partition (BLS entries under `boot/`). */
  fallbackPrefix?: string;
}

const BLS_DIRS = ['loader', 'boot/loader'];
const SYSLINUX_CONFIGS = ['syslinux.cfg', 'syslinux/syslinux.cfg', 'boot/syslinux/syslinux.cfg'];
const GRUB_CONFIGS = ['boot/grub/grub.cfg', 'grub/grub.cfg', 'boot/grub2/grub.cfg', 'grub2/grub.cfg'];

/** The boot entry on this partition, or undefined when it has none of the configurations above. */
export async function bootEntryOn(files: PartitionFiles): Promise<BootEntry | undefined> {
  for (const dir of BLS_DIRS) {
    const entry = await blsEntry(files, dir);
    if (entry) return entry;
  }
  for (const [configs, parse] of [
    [SYSLINUX_CONFIGS, syslinuxEntry],
    [GRUB_CONFIGS, grubEntry],
  ] as const) {
    for (const file of configs) {
      const text = await files.text(file);
      const entry = text === undefined ? undefined : parse(text, file);
      if (entry) return entry;
    }
  }
  return undefined;
}

/** `key value` lines of a Boot Loader Specification file; a key given again adds a value. */
function blsFields(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^\s*([a-z-]+)\s+(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith('#')) continue;
    fields.set(match[1] as string, [...(fields.get(match[1] as string) ?? []), match[2] as string]);
  }
  return fields;
}

const globToRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

async function blsEntry(files: PartitionFiles, loaderDir: string): Promise<BootEntry | undefined> {
  const names = (await files.list(`${loaderDir}/entries`))?.filter((name) => name.endsWith('.conf'));
  if (!names?.length) return undefined;
  const loaderConf = await files.text(`${loaderDir}/loader.conf`);
  const wanted = loaderConf === undefined ? undefined : blsFields(loaderConf).get('default')?.[0];
  const name = (wanted && !wanted.startsWith('@') && names.find((n) => globToRegExp(wanted).test(n))) || names[0];
  const file = `${loaderDir}/entries/${name as string}`;
  const text = await files.text(file);
  const fields = text === undefined ? undefined : blsFields(text);
  const kernel = fields?.get('linux')?.[0];
  if (!fields || !kernel) return undefined;
  return {
    kernel,
    initrds: fields.get('initrd') ?? [],
    cmdline: (fields.get('options') ?? []).join(' '),
    file,
    ...(loaderDir.startsWith('boot/') ? { fallbackPrefix: 'boot' } : {}),
  };
}

/** The DEFAULT label's entry of a syslinux configuration (keywords in any case); paths relative to its directory. */
export function syslinuxEntry(text: string, file: string): BootEntry | undefined {
  const labels = new Map<string, { kernel?: string; initrd?: string; append?: string }>();
  let current: { kernel?: string; initrd?: string; append?: string } | undefined;
  let defaultLabel: string | undefined;
  for (const line of text.split('\n')) {
    const match = /^\s*(\S+)\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, keyword, value] = match as unknown as [string, string, string];
    const key = keyword.toUpperCase();
    if (key === 'DEFAULT') defaultLabel = value;
    else if (key === 'LABEL') labels.set(value, (current = {}));
    else if (current && (key === 'KERNEL' || key === 'LINUX')) current.kernel = value;
    else if (current && key === 'INITRD') current.initrd = value;
    else if (current && key === 'APPEND') current.append = value;
  }
  const entry = defaultLabel === undefined ? undefined : labels.get(defaultLabel);
  if (!entry?.kernel) return undefined;
  const args = (entry.append ?? '').split(/\s+/).filter(Boolean);
  const initrdArg = args.find((a) => a.startsWith('initrd='));
  const relative = (p: string) => (p.startsWith('/') ? p : path.posix.join(path.posix.dirname(file), p));
  return {
    kernel: relative(entry.kernel),
    initrds: (entry.initrd ?? initrdArg?.slice('initrd='.length) ?? '').split(',').filter(Boolean).map(relative),
    cmdline: args.filter((a) => a !== initrdArg).join(' '),
    file,
  };
}

/** A grub.cfg line's braces that open or close a block: not those of `${variable}` or inside quotes. */
function braceDepthChange(line: string): number {
  const bare = line.replace(/\$\{[^}]*\}/g, '').replace(/'[^']*'|"[^"]*"/g, '');
  return (bare.match(/\{/g)?.length ?? 0) - (bare.match(/\}/g)?.length ?? 0);
}

/** The entry `set default` names (a number or a title) among grub.cfg's top-level menu entries, else the first. */
export function grubEntry(text: string, file: string): BootEntry | undefined {
  const entries: Array<{ title: string; lines: string[] }> = [];
  let chosen: string | undefined;
  let depth = 0;
  let inEntry: { title: string; lines: string[] } | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (depth === 0) {
      const setDefault = /^set\s+default=(?:"([^"]*)"|'([^']*)'|(\S*))\s*$/.exec(line);
      if (setDefault) chosen = setDefault[1] ?? setDefault[2] ?? setDefault[3];
      const menuentry = /^menuentry\s+(["'])(.*?)\1/.exec(line);
      if (menuentry) entries.push((inEntry = { title: menuentry[2] as string, lines: [] }));
    } else if (inEntry) inEntry.lines.push(line);
    depth = Math.max(0, depth + braceDepthChange(line));
    if (depth === 0) inEntry = undefined;
  }
  const entry = (chosen !== undefined && (/^\d+$/.test(chosen) ? entries[Number(chosen)] : entries.find((e) => e.title === chosen))) || entries[0];
  const words = (keyword: RegExp) =>
    entry?.lines
      .map((line) => line.split(/\s+/))
      .find(([first]) => keyword.test(first as string))
      ?.slice(1);
  const linux = words(/^linux(efi|16)?$/);
  if (!linux?.[0]) return undefined;
  // `(hd0,gpt2)/vmlinuz` or `($root)/vmlinuz`: the file on the partition grub.cfg sits on.
  const onPartition = (p: string) => p.replace(/^\([^)]*\)/, '');
  return {
    kernel: onPartition(linux[0]),
    initrds: (words(/^initrd(efi|16)?$/) ?? []).map(onPartition),
    cmdline: linux
      .slice(1)
      .filter((arg) => !arg.includes('$'))
      .join(' '),
    file,
  };
}
