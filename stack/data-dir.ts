// The dev stack's data dir holds the databases, the secret store's key, the root credential
// and the logs: its owner's only. Called first by `npm start`, before anything writes there.
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Owner-only from now on (umask 077, inherited by Temporal and the migrations), and tightened now. */
export function secureDataDir(dataDir: string): void {
  // Files are created by this process and its children (SQLite, Temporal, Prisma): the umask
  // reaches all of them, where a mode on each of our own writes would miss theirs.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  tighten(dataDir);
}

/** A data dir an earlier version left 0755/0644: directories 0700, files 0600 (0700 for a program). */
function tighten(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    // Symbolic links are left alone: chmod would follow them out of the data dir.
    if (entry.isDirectory()) tighten(full);
    else if (entry.isFile()) chmodSync(full, statSync(full).mode & 0o100 ? 0o700 : 0o600);
  }
}
