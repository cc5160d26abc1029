// The history key ring: the AES-256 keys that seal Temporal payloads, in a 0600 JSON file of
// the data dir (beside the secret store's key), created with one key on first start. The
// last key of the list seals; every key listed unseals, so rotation is adding a key at the
// end and restarting, and a key is removed only once no history sealed with it is kept.
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';

export const HISTORY_KEYS_FILE = 'history-keys.json';
export const HISTORY_KEY_BYTES = 32;
/** Key ids travel in every sealed payload's metadata and in error messages: short and plain. */
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const keyRingFileSchema = z.object({
  keys: z
    .array(
      z.object({
        id: z.string().regex(KEY_ID_PATTERN, 'a key id is 1-64 letters, digits, dots, dashes or underscores'),
        /** base64 of 32 random bytes (openssl rand -base64 32). */
        key: z.string(),
        createdAt: z.string().optional(),
      }),
    )
    .min(1, 'the key ring needs at least one key'),
});
export type HistoryKeyRingFile = z.infer<typeof keyRingFileSchema>;

export interface HistoryKeyRing {
  /** Where it was read from (named by errors). */
  file: string;
  /** The key new payloads are sealed with: the last one listed. */
  current: { id: string; key: Buffer };
  /** Every key by id, the current one included. */
  byId: ReadonlyMap<string, Buffer>;
}

export const newHistoryKeyEntry = (now = new Date()): HistoryKeyRingFile['keys'][number] => ({
  id: `hk-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex')}`,
  key: randomBytes(HISTORY_KEY_BYTES).toString('base64'),
  createdAt: now.toISOString(),
});

/** Checks a key ring document; INVALID_CONFIG names the file, the entry and the fix. */
export function parseHistoryKeyRing(file: string, text: string): HistoryKeyRing {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new IronflowError('INVALID_CONFIG', `${file} is not JSON: restore it from a backup (it holds the keys of every sealed history)`);
  }
  const parsed = keyRingFileSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new IronflowError('INVALID_CONFIG', `${file}: ${issue?.path.join('.')}: ${issue?.message}`, { path: issue?.path.join('.') });
  }
  const byId = new Map<string, Buffer>();
  parsed.data.keys.forEach((entry, index) => {
    const key = Buffer.from(entry.key, 'base64');
    if (key.length !== HISTORY_KEY_BYTES) {
      throw new IronflowError('INVALID_CONFIG', `${file}: keys.${index}.key is not 32 bytes of base64 (make one with openssl rand -base64 32)`, {
        path: `keys.${index}.key`,
      });
    }
    if (byId.has(entry.id)) throw new IronflowError('INVALID_CONFIG', `${file}: key id ${entry.id} is listed twice`, { path: `keys.${index}.id` });
    byId.set(entry.id, key);
  });
  const last = parsed.data.keys[parsed.data.keys.length - 1];
  if (!last) throw new IronflowError('INVALID_CONFIG', `${file}: the key ring needs at least one key`);
  return { file, current: { id: last.id, key: byId.get(last.id) as Buffer }, byId };
}

/**
 * Writes the first key ring, unless another process got there first: the file appears whole
 * (written aside, then linked into place), so a concurrent reader never sees half of it.
 */
function createKeyRingFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  const document: HistoryKeyRingFile = { keys: [newHistoryKeyEntry()] };
  writeFileSync(draft, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
}

export const historyKeysFile = (dataDir: string): string => path.join(dataDir, HISTORY_KEYS_FILE);

/** The data dir's key ring, created with one fresh key when there is none. */
export function loadHistoryKeyRing(dataDir: string): HistoryKeyRing {
  const file = historyKeysFile(dataDir);
  if (!existsSync(file)) createKeyRingFile(file);
  return parseHistoryKeyRing(file, readFileSync(file, 'utf8'));
}
