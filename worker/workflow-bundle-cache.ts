// The workflow bundle kept between starts, in the data dir. Building it runs webpack: about 3 s
// of CPU at every start of a control-plane worker, 2 s before it is ready, and about 40 MB that
// stays resident after (bench/README.md). A kept bundle is used only when every file it was
// built from (each module webpack put in it: Ironflow's own sources and the packages' files)
// still holds what it held then and the key is the same (the SDK, webpack, swc and Node
// versions, what the bundle is asked to hold, the project's file names and lockfile: see
// projectDigest); anything else builds it again and replaces it.
// Files are compared by content, never by time: a checkout, a copy or a clock change cannot
// make a stale bundle look fresh.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const BUNDLE_FILE = 'workflow-bundle.js';
const MANIFEST_FILE = 'workflow-bundle.json';

/** What a kept bundle was built from. */
interface Manifest {
  key: string;
  /** The bundle's own digest: a manifest written by another process for another bundle never vouches for this one. */
  bundle: string;
  /** Each module's absolute path and the digest of its content. */
  files: Record<string, string>;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * The files a development-mode webpack bundle was built from: each module starts with a
 * `/***\/ "./path"` line, the path relative to webpack's context (the working directory).
 * Ignored modules (`?1a2b`) are no files. Null when a module is not a readable file: such a
 * bundle cannot be checked later, so it is not kept.
 */
export function bundleInputs(code: string, context: string): Record<string, string> | null {
  const files: Record<string, string> = {};
  for (const [, relative] of code.matchAll(/^\/\*\*\*\/ "([^"]+)"$/gm)) {
    if (!relative || relative.startsWith('?')) continue;
    const file = path.resolve(context, relative);
    try {
      files[file] = sha256(readFileSync(file));
    } catch {
      return null;
    }
  }
  return Object.keys(files).length ? files : null;
}

/**
 * A digest of the project's file names (not node_modules, not dot-directories such as .git or
 * the data dir) and of its lockfile. A file added where an import would now resolve to it, or a
 * package that now resolves an import to another of its files, changes what webpack would build
 * without changing any file the kept bundle holds: either changes this digest, which goes into
 * the key.
 */
export function projectDigest(root: string): string {
  const names: string[] = [];
  const walk = (dir: string, relative: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const name = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(path.join(dir, entry.name), name);
      else names.push(name);
    }
  };
  walk(root, '');
  let lockfile = '';
  try {
    lockfile = sha256(readFileSync(path.join(root, 'package-lock.json')));
  } catch {
    // An install without a lockfile: the packages' versions in the key stand for it.
  }
  return sha256(JSON.stringify({ names: names.sort(), lockfile }));
}

function keptBundle(dir: string, key: string): string | null {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
    if (manifest.key !== key) return null;
    for (const [file, digest] of Object.entries(manifest.files)) if (sha256(readFileSync(file)) !== digest) return null;
    const code = readFileSync(path.join(dir, BUNDLE_FILE), 'utf8');
    return sha256(code) === manifest.bundle ? code : null;
  } catch {
    return null; // none kept yet, or a file it was built from is gone
  }
}

/** Written whole or not at all: a reader sees the old file or the new one (the data dir is its owner's only). */
function writeAtomically(file: string, data: string): void {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, data, { mode: 0o600 });
  renameSync(partial, file);
}

/**
 * The bundle kept in `dir` when it is still what `build` would make for `key`, else `build`'s,
 * which is kept for the next start. A bundle that cannot be kept (an unreadable module, a
 * read-only dir) is used all the same.
 */
export async function cachedWorkflowBundle(dir: string, key: string, build: () => Promise<{ code: string }>): Promise<{ code: string; kept: boolean }> {
  const kept = keptBundle(dir, key);
  if (kept !== null) return { code: kept, kept: true };
  const { code } = await build();
  const files = bundleInputs(code, process.cwd());
  if (files) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeAtomically(path.join(dir, BUNDLE_FILE), code);
      writeAtomically(path.join(dir, MANIFEST_FILE), JSON.stringify({ key, bundle: sha256(code), files } satisfies Manifest));
    } catch {
      // Not kept: the next start builds it again.
    }
  }
  return { code, kept: false };
}
