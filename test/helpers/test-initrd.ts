// What a QEMU machine boots in the real-firmware tests: Debian's kernel (linux-image-amd64)
// and a tiny initramfs built here from Debian's busybox-static, whose /init mounts /proc,
// prints a marker line and the kernel command line it received on the console (ttyS0 with
// `console=ttyS0`) and powers off. The archive (cpio newc, gzip) is written from Node, so a
// /dev/console node needs no mknod; it is built once per content and cached.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** Printed by /init before the command line, once the kernel ran it. */
export const INITRD_MARKER = 'IRONFLOW-TEST-INITRD-REACHED';
const CMDLINE_BEGIN = 'IRONFLOW-TEST-CMDLINE<<';
const CMDLINE_END = '>>IRONFLOW-TEST-CMDLINE';

const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox'];

const INIT = `#!/bin/busybox sh
/bin/busybox mkdir -p /proc
/bin/busybox mount -t proc proc /proc
echo "${INITRD_MARKER}" > /dev/console
echo "${CMDLINE_BEGIN}$(/bin/busybox cat /proc/cmdline)${CMDLINE_END}" > /dev/console
/bin/busybox poweroff -f
`;

/** The newest Debian kernel under /boot (linux-image-amd64 installs vmlinuz-<version>-amd64). */
export function debianKernel(): string {
  const kernels = existsSync('/boot')
    ? readdirSync('/boot')
        .filter((f) => /^vmlinuz-.*-amd64$/.test(f))
        .sort()
    : [];
  const newest = kernels.at(-1);
  if (!newest) throw new Error('no Debian kernel in /boot (vmlinuz-*-amd64): apt-get install -y linux-image-amd64 (or bash scripts/test-deps.sh)');
  return `/boot/${newest}`;
}

function staticBusybox(): string {
  const found = BUSYBOX_CANDIDATES.find((file) => existsSync(file));
  // A dynamically linked busybox (Debian's `busybox`) would need its libc in the initramfs.
  const isStatic = found !== undefined && !execFileSync('sh', ['-c', `ldd ${found} 2>&1 || true`], { encoding: 'utf8' }).includes('=>');
  if (!found || !isStatic) throw new Error('a static busybox is missing: apt-get install -y busybox-static (or bash scripts/test-deps.sh)');
  return found;
}

interface CpioEntry {
  name: string;
  mode: number;
  data?: Buffer;
  /** Character devices: major and minor. */
  rdev?: [number, number];
}

function cpioHeader(entry: CpioEntry, ino: number): Buffer {
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  const name = Buffer.from(`${entry.name}\0`);
  const fields = [
    '070701',
    hex(ino),
    hex(entry.mode),
    hex(0), // uid
    hex(0), // gid
    hex(1), // nlink
    hex(0), // mtime: fixed, so the archive's bytes depend on its content only
    hex(entry.data?.length ?? 0),
    hex(0), // dev major
    hex(0), // dev minor
    hex(entry.rdev?.[0] ?? 0),
    hex(entry.rdev?.[1] ?? 0),
    hex(name.length),
    hex(0), // check
  ].join('');
  return Buffer.concat([Buffer.from(fields, 'ascii'), name]);
}

const pad4 = (length: number) => Buffer.alloc((4 - (length % 4)) % 4);

/** A cpio "newc" archive of the entries, with its trailer. */
function cpioNewc(entries: CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  [...entries, { name: 'TRAILER!!!', mode: 0 }].forEach((entry, i) => {
    const header = cpioHeader(entry, i + 1);
    parts.push(header, pad4(header.length));
    if (entry.data) parts.push(entry.data, pad4(entry.data.length));
  });
  return Buffer.concat(parts);
}

/** Builds the marker initramfs (gzip) once per content; answers its path. */
export function buildMarkerInitrd(): string {
  const busybox = readFileSync(staticBusybox());
  const archive = gzipSync(
    cpioNewc([
      { name: 'bin', mode: 0o040755 },
      { name: 'bin/busybox', mode: 0o100755, data: busybox },
      { name: 'dev', mode: 0o040755 },
      // The kernel opens /dev/console for init before anything could mount devtmpfs.
      { name: 'dev/console', mode: 0o020600, rdev: [5, 1] },
      { name: 'proc', mode: 0o040755 },
      { name: 'init', mode: 0o100755, data: Buffer.from(INIT) },
    ]),
    { level: 6 },
  );
  const digest = createHash('sha256').update(archive).digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), 'ironflow-test-initrd');
  const file = path.join(dir, `marker-${digest}.img`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, archive);
    renameSync(temp, file);
  }
  return file;
}

/** The kernel command line /init printed on the console, or undefined when it has not yet. */
export function printedCmdline(serialLog: string): string | undefined {
  const begin = serialLog.indexOf(CMDLINE_BEGIN);
  if (begin < 0) return undefined;
  const end = serialLog.indexOf(CMDLINE_END, begin);
  if (end < 0) return undefined;
  return serialLog.slice(begin + CMDLINE_BEGIN.length, end).trim();
}
