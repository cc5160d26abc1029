// boot.kexec on a real machine: the installed OS's kernel, initrds and command line, read
// from its boot loader's configuration on the disk the image went to, are loaded with
// kexec-tools (`kexec -l`) before the step answers, and started (`kexec -e`) after it, so a
// machine that cannot kexec fails the step instead of leaving the run to wait for a join.
// They are read from the disk's FAT partitions (an EFI system partition, a syslinux boot
// partition) through mtools, with no mount, in this order:
// - a Boot Loader Specification entry (`loader/entries/*.conf`: linux, initrd, options), the
//   one `loader/loader.conf` names as `default`, else the first by file name: systemd-boot's;
// - syslinux.cfg (at the root, `syslinux/` or `boot/syslinux/`): its DEFAULT label's KERNEL or
//   LINUX, INITRD (or APPEND's `initrd=`) and APPEND.
// A disk with neither (GRUB on ext4, say) is UNSUPPORTED with that reason: boot it through the
// BMC instead (management.setBootDevice, then power.setPower cycle), as Ironic does.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { IronflowError } from '../../core/errors';
import { gptPartitions } from './gpt-partition';
import { mbrPartitions } from './mbr-partition';
import { GPT_PROTECTIVE, mbrEntryTypes, SECTOR, type ListedPartition } from './partition-table';
import type { LoadedKexec } from './hardware';
import { runTool } from './run-tool';

/** Partition types a boot loader's FAT file system sits in: FAT MBR types; the EFI system, basic data and XBOOTLDR GPT types. */
const FAT_TYPES = new Set([
  '01',
  '04',
  '06',
  '0b',
  '0c',
  '0e',
  'ef',
  'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7',
  'BC13C2FF-59E6-4262-A352-B275FD6F7172',
]);
const SYSLINUX_CONFIGS = ['syslinux.cfg', 'syslinux/syslinux.cfg', 'boot/syslinux/syslinux.cfg'];

/** What kexec loads: the kernel and initrd as local files, and the command line. */
export interface KexecTarget {
  kernel: string;
  /** The entry's initrds, joined in order into one file (the kernel reads concatenated cpio archives); undefined for none. */
  initrd?: string;
  cmdline: string;
  /** Where it was read: `partition 1, loader/entries/ironflow.conf`. */
  source: string;
}

/** A boot entry as its configuration names it: paths on its partition. */
interface BootEntry {
  kernel: string;
  initrds: string[];
  cmdline: string;
  file: string;
}

const copyOut = (disk: string, partition: ListedPartition, from: string, to: string) =>
  runTool('mcopy', ['-s', '-n', '-i', `${disk}@@${partition.startSector * SECTOR}`, `::/${from.replace(/^\/+/, '')}`, to], 'kexec-read-boot-entry');

/** The copied file's text, or undefined when the partition does not have it. */
async function textOf(disk: string, partition: ListedPartition, from: string, dir: string): Promise<string | undefined> {
  const to = path.join(dir, path.basename(from));
  return copyOut(disk, partition, from, to).then(
    () => readFileSync(to, 'utf8'),
    () => undefined,
  );
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

async function blsEntry(disk: string, partition: ListedPartition, dir: string): Promise<BootEntry | undefined> {
  const hasLoader = await copyOut(disk, partition, 'loader', dir).then(
    () => true,
    () => false,
  );
  const copied = path.join(dir, 'loader');
  if (!hasLoader || !existsSync(path.join(copied, 'entries'))) return undefined;
  const names = readdirSync(path.join(copied, 'entries'))
    .filter((name) => name.endsWith('.conf'))
    .sort();
  const loaderConf = existsSync(path.join(copied, 'loader.conf')) ? blsFields(readFileSync(path.join(copied, 'loader.conf'), 'utf8')) : undefined;
  const wanted = loaderConf?.get('default')?.[0];
  const name = (wanted && !wanted.startsWith('@') && names.find((n) => globToRegExp(wanted).test(n))) || names[0];
  if (!name) return undefined;
  const fields = blsFields(readFileSync(path.join(copied, 'entries', name), 'utf8'));
  const kernel = fields.get('linux')?.[0];
  if (!kernel) return undefined;
  return { kernel, initrds: fields.get('initrd') ?? [], cmdline: (fields.get('options') ?? []).join(' '), file: `loader/entries/${name}` };
}

/** The DEFAULT label's entry of a syslinux configuration (keywords in any case); paths relative to its directory. */
function syslinuxEntry(text: string, file: string): BootEntry | undefined {
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

async function syslinuxConfigEntry(disk: string, partition: ListedPartition, dir: string): Promise<BootEntry | undefined> {
  for (const file of SYSLINUX_CONFIGS) {
    const text = await textOf(disk, partition, file, dir);
    if (text !== undefined) return syslinuxEntry(text, file);
  }
  return undefined;
}

async function partitionsOf(disk: string): Promise<ListedPartition[]> {
  const handle = await open(disk, 'r');
  try {
    const mbr = Buffer.alloc(SECTOR);
    await handle.read(mbr, 0, SECTOR, 0);
    return mbrEntryTypes(mbr).includes(GPT_PROTECTIVE) ? await gptPartitions(handle) : mbrPartitions(mbr);
  } finally {
    await handle.close();
  }
}

/** The installed OS's boot entry on `disk`, its kernel and initrds copied under `workDir`. */
export async function findKexecTarget(disk: string, workDir: string): Promise<KexecTarget> {
  const candidates = (await partitionsOf(disk)).filter((p) => FAT_TYPES.has(p.type));
  for (const partition of candidates) {
    const dir = path.join(workDir, `partition-${partition.partition}`);
    mkdirSync(dir, { recursive: true });
    const entry = (await blsEntry(disk, partition, dir)) ?? (await syslinuxConfigEntry(disk, partition, dir));
    if (!entry) continue;
    const kernel = path.join(workDir, 'kernel');
    await copyOut(disk, partition, entry.kernel, kernel);
    const initrds: string[] = [];
    for (const [i, file] of entry.initrds.entries()) {
      initrds.push(path.join(workDir, `initrd.${i}`));
      await copyOut(disk, partition, file, initrds[i] as string);
    }
    let initrd = initrds[0];
    if (initrds.length > 1) {
      initrd = path.join(workDir, 'initrd');
      writeFileSync(initrd, Buffer.concat(initrds.map((file) => readFileSync(file))));
    }
    return { kernel, ...(initrd ? { initrd } : {}), cmdline: entry.cmdline, source: `partition ${partition.partition}, ${entry.file}` };
  }
  throw new IronflowError(
    'UNSUPPORTED',
    `no boot entry to kexec on ${disk}: no loader/entries/*.conf (Boot Loader Specification) or syslinux.cfg on its ${candidates.length} FAT partition(s); boot the disk through the BMC instead (management.setBootDevice, then power.setPower cycle)`,
    { reason: 'no-boot-entry' },
  );
}

/** Loads the installed OS from `disk` (kexec -l); answers where it was read and what starts it (kexec -e). */
export async function loadKexec(disk: string): Promise<LoadedKexec> {
  const target = await findKexecTarget(disk, await mkdtemp(path.join(os.tmpdir(), 'kexec-')));
  await runTool(
    'kexec',
    ['-l', target.kernel, ...(target.initrd ? [`--initrd=${target.initrd}`] : []), `--command-line=${target.cmdline}`],
    'kexec-load',
    `kexec -l of the kernel of ${target.source} (its command line not shown)`,
  );
  return { source: target.source, start: async () => void (await runTool('kexec', ['-e'], 'kexec-start')) };
}
