// Opens a file by name inside one directory and nowhere else: TFTP's root and /boot/files
// share it. A name is one path segment of safe characters (no '/', no '..', no leading dot),
// and the file's real path (symlinks resolved) must still be inside the directory's real
// path, so a symlink placed in the directory cannot point out of it. Like tftpd-hpa's chroot
// (-s), this refuses Debian's /usr/lib/ipxe/ipxe.efi, a symlink to /boot/ipxe.efi: copy
// the builds you serve into the root instead.
import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const safeName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isSafeFileName(name: string): boolean {
  return safeName.test(name) && !name.includes('..');
}

export interface JailedFile {
  handle: FileHandle;
  size: number;
  mtimeMs: number;
  ino: number;
}

type JailedOpen = { ok: true; file: JailedFile } | { ok: false; reason: 'bad-name' | 'not-found' | 'outside' | 'not-a-file' };

export async function openInside(dir: string, name: string): Promise<JailedOpen> {
  if (!isSafeFileName(name)) return { ok: false, reason: 'bad-name' };
  let real: string;
  let realDir: string;
  try {
    [realDir, real] = await Promise.all([realpath(dir), realpath(path.join(dir, name))]);
  } catch {
    return { ok: false, reason: 'not-found' };
  }
  if (path.dirname(real) !== realDir) return { ok: false, reason: 'outside' };
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symlink swapped in after the realpath check fails here instead of being followed.
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { ok: false, reason: 'not-found' };
  }
  const stat = await handle.stat().catch(() => null);
  if (!stat?.isFile()) {
    await handle.close();
    return { ok: false, reason: 'not-a-file' };
  }
  return { ok: true, file: { handle, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino } };
}
