// Files on one partition of a disk, read with no mount: FAT through mtools, ext2/3/4 through
// debugfs, both addressing the partition by its byte offset into the disk (a block device in
// the ramdisk, an image file in tests). Every read is bounded (bounded-tool-output.ts): the
// disk holds what the tenant's image wrote.
import path from 'node:path';
import { IronflowError } from '../../core/errors';
import { boundedToolOutput } from './bounded-tool-output';
import { SECTOR, type ListedPartition } from './partition-table';

/** A boot loader's configuration file is read up to this size; a larger one is not a boot entry's. */
export const TEXT_BYTES_MAX = 256 * 1024;
/** Names a directory listing keeps (a boot loader's entries directory). */
const LISTED_NAMES_MAX = 256;
/** Symbolic links followed in a row (ext: /boot/vmlinuz → vmlinuz-6.1.0-…). */
const LINKS_FOLLOWED_MAX = 8;
/** A path from the disk is named in a step's error (and so its run's history) up to this length. */
const PATH_SHOWN = 256;

export interface PartitionFiles {
  /** For messages: `partition 2`. */
  readonly partition: number;
  readonly fileSystem: 'FAT' | 'ext';
  /** The names in `dir` (a path from the partition's root), or undefined when it is not a directory there. */
  list(dir: string): Promise<string[] | undefined>;
  /** The file's text, or undefined when it is missing or larger than TEXT_BYTES_MAX. */
  text(file: string): Promise<string | undefined>;
  /**
   * Copies `file` to the local path `to`; answers its size. Rejects UNSUPPORTED when it is
   * missing (`boot-file-missing`) or larger than `maxBytes` (`boot-files-too-large`).
   */
  copy(file: string, to: string, maxBytes: number): Promise<number>;
}

const relative = (file: string) => file.replace(/^\/+/, '');
/** Paths the tools are handed come from the disk: one with a quote or a control character is not read. */
const readable = (file: string) => !/["\\\u0000-\u001f]/.test(file);

/** A path from the disk as a message shows it: quoted, control characters escaped, at most PATH_SHOWN characters. */
export const shownPath = (file: string) => JSON.stringify(file.slice(0, PATH_SHOWN));

function missing(files: PartitionFiles, file: string): IronflowError {
  return new IronflowError('UNSUPPORTED', `the boot entry names ${shownPath(file)}, which ${files.fileSystem} partition ${files.partition} does not hold`, {
    reason: 'boot-file-missing',
  });
}

function tooLarge(files: PartitionFiles, file: string, maxBytes: number): IronflowError {
  return new IronflowError(
    'UNSUPPORTED',
    `${shownPath(file)} on partition ${files.partition} is larger than the ${maxBytes} bytes boot.kexec had left to copy into the ramdisk's memory; boot the disk through the BMC instead`,
    { reason: 'boot-files-too-large' },
  );
}

/** A FAT partition, read with mtools (`mdir -b`, `mtype`). */
export function fatFiles(disk: string, partition: ListedPartition): PartitionFiles {
  const image = `${disk}@@${partition.startSector * SECTOR}`;
  const files: PartitionFiles = {
    partition: partition.partition,
    fileSystem: 'FAT',
    async list(dir) {
      const out = await boundedToolOutput('mdir', ['-b', '-i', image, `::/${relative(dir)}`], { maxBytes: TEXT_BYTES_MAX });
      if (out.exitCode !== 0 || out.overLimit) return undefined;
      return namesOf(
        out.stdout
          .toString('utf8')
          .split('\n')
          .map((line) => path.posix.basename(line.trim())),
      );
    },
    async text(file) {
      if (!readable(file)) return undefined;
      const out = await boundedToolOutput('mtype', ['-i', image, `::/${relative(file)}`], { maxBytes: TEXT_BYTES_MAX });
      return out.exitCode === 0 && !out.overLimit ? out.stdout.toString('utf8') : undefined;
    },
    async copy(file, to, maxBytes) {
      if (!readable(file)) throw missing(files, file);
      const out = await boundedToolOutput('mtype', ['-i', image, `::/${relative(file)}`], { maxBytes, to });
      if (out.overLimit) throw tooLarge(files, file, maxBytes);
      if (out.exitCode !== 0) throw missing(files, file);
      return out.bytes;
    },
  };
  return files;
}

/** debugfs prints its version banner on stderr; anything else there is its error (it exits 0 on most). */
const debugfsFailed = (stderr: string) => stderr.split('\n').some((line) => line.trim() !== '' && !/^debugfs \d/.test(line.trim()));

/** An ext2/3/4 partition, read with debugfs (`ls -p`, `stat`, `cat`); undefined when it holds no ext file system. */
export async function extFiles(disk: string, partition: ListedPartition): Promise<PartitionFiles | undefined> {
  const device = `${disk}?offset=${partition.startSector * SECTOR}`;
  const debugfs = (request: string, options: { maxBytes: number; to?: string }) => boundedToolOutput('debugfs', ['-R', request, device], options);
  const probe = await debugfs('stats -h', { maxBytes: TEXT_BYTES_MAX });
  if (probe.exitCode !== 0 || debugfsFailed(probe.stderr)) return undefined;

  /** The file `file` names once its symbolic links are followed, or undefined when it is missing. */
  async function resolved(file: string): Promise<string | undefined> {
    let current = `/${relative(file)}`;
    for (let hop = 0; hop <= LINKS_FOLLOWED_MAX; hop++) {
      if (!readable(current)) return undefined;
      const out = await debugfs(`stat "${current}"`, { maxBytes: TEXT_BYTES_MAX });
      const stat = out.stdout.toString('utf8');
      if (out.overLimit || debugfsFailed(out.stderr) || !/Type: regular|Type: symlink/.test(stat)) return undefined;
      if (!/Type: symlink/.test(stat)) return current;
      const target = /Fast link dest: "(.*)"/.exec(stat)?.[1];
      if (target === undefined) return undefined;
      current = path.posix.resolve(path.posix.dirname(current), target);
    }
    return undefined;
  }

  const files: PartitionFiles = {
    partition: partition.partition,
    fileSystem: 'ext',
    async list(dir) {
      if (!readable(dir)) return undefined;
      const out = await debugfs(`ls -p "/${relative(dir)}"`, { maxBytes: TEXT_BYTES_MAX });
      if (out.overLimit || debugfsFailed(out.stderr)) return undefined;
      // `/inode/mode/uid/gid/name/size/` a line.
      return namesOf(
        out.stdout
          .toString('utf8')
          .split('\n')
          .map((line) => line.split('/')[5] ?? ''),
      );
    },
    async text(file) {
      const target = await resolved(file);
      if (target === undefined) return undefined;
      const out = await debugfs(`cat "${target}"`, { maxBytes: TEXT_BYTES_MAX });
      return out.overLimit || debugfsFailed(out.stderr) ? undefined : out.stdout.toString('utf8');
    },
    async copy(file, to, maxBytes) {
      const target = await resolved(file);
      if (target === undefined) throw missing(files, file);
      const out = await debugfs(`cat "${target}"`, { maxBytes, to });
      if (out.overLimit) throw tooLarge(files, file, maxBytes);
      if (debugfsFailed(out.stderr)) throw missing(files, file);
      return out.bytes;
    },
  };
  return files;
}

function namesOf(names: string[]): string[] {
  return names
    .filter((name) => name !== '' && name !== '.' && name !== '..')
    .sort()
    .slice(0, LISTED_NAMES_MAX);
}
