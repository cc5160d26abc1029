// The site agent's image cache on disk: data_dir/cache/<sha256>, one file per digest. A copy
// is written to a temp file and renamed to its digest's name only after its bytes hash to
// that digest, so a visible file is always a verified copy. When each copy was last used
// (LRU bookkeeping for eviction) is kept in index.json, written through a temp file + rename.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';

export const sha256Pattern = /^[0-9a-f]{64}$/;
const TEMP_PREFIX = '.partial-';
const INDEX_FILE = 'index.json';
const TOUCH_SAVE_EVERY_MS = 5_000;

const indexSchema = z.object({
  version: z.literal(1),
  images: z.record(z.string().regex(sha256Pattern), z.object({ sizeBytes: z.number().int().nonnegative(), lastUsedAt: z.number() })),
});

export interface CachedCopy {
  sha256: string;
  sizeBytes: number;
  /** Epoch milliseconds of the last pull or serve. */
  lastUsedAt: number;
}

export class ImageCacheStore {
  private readonly copies = new Map<string, CachedCopy>();
  private savedAt = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.load();
  }

  has(sha256: string): boolean {
    return this.copies.has(sha256);
  }

  get(sha256: string): CachedCopy | undefined {
    return this.copies.get(sha256);
  }

  list(): CachedCopy[] {
    return [...this.copies.values()];
  }

  totalBytes(): number {
    let total = 0;
    for (const copy of this.copies.values()) total += copy.sizeBytes;
    return total;
  }

  /** The verified copy's file, or undefined. Only digests (checked) name files here. */
  pathOf(sha256: string): string | undefined {
    return sha256Pattern.test(sha256) && this.copies.has(sha256) ? path.join(this.dir, sha256) : undefined;
  }

  /** Marks a copy used. Written to the index at most every few seconds: sanboot reads in many ranges. */
  touch(sha256: string, now = Date.now()): void {
    const copy = this.copies.get(sha256);
    if (!copy) return;
    copy.lastUsedAt = now;
    if (now - this.savedAt >= TOUCH_SAVE_EVERY_MS || now < this.savedAt) this.save();
  }

  /**
   * Writes `source` as the copy of `sha256`: into a temp file, hashed on the way, renamed to
   * the digest only when it matches. A mismatch or more than `maxBytes` leaves nothing behind.
   */
  async ingest(sha256: string, source: Readable, maxBytes = Number.MAX_SAFE_INTEGER): Promise<CachedCopy> {
    if (!sha256Pattern.test(sha256))
      throw new IronflowError('INVALID_INPUT', `a cache digest is 64 lower-case hex characters; got ${sha256.slice(0, 80)}`, { path: 'sha256' });
    const temp = path.join(this.dir, `${TEMP_PREFIX}${sha256}-${randomBytes(4).toString('hex')}`);
    const digest = createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new IronflowError('DRIVER_ERROR', `the source sent more than ${maxBytes} bytes`, { reason: 'too-large' }));
        digest.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, hashing, createWriteStream(temp, { mode: 0o600 }));
      const actual = digest.digest('hex');
      if (actual !== sha256)
        throw new IronflowError('DRIVER_ERROR', `its bytes hash to ${actual}, not ${sha256}`, { reason: 'digest-mismatch', sha256: actual });
      renameSync(temp, path.join(this.dir, sha256));
    } catch (error) {
      if (existsSync(temp)) unlinkSync(temp);
      throw error;
    }
    const copy = { sha256, sizeBytes: size, lastUsedAt: Date.now() };
    this.copies.set(sha256, copy);
    this.save();
    return copy;
  }

  remove(sha256: string): void {
    if (!this.copies.delete(sha256)) return;
    const file = path.join(this.dir, sha256);
    if (existsSync(file)) unlinkSync(file);
    this.save();
  }

  private load(): void {
    const indexPath = path.join(this.dir, INDEX_FILE);
    let index: z.infer<typeof indexSchema>['images'] = {};
    if (existsSync(indexPath)) {
      const parsed = indexSchema.safeParse(JSON.parse(readFileSync(indexPath, 'utf8')));
      if (parsed.success) index = parsed.data.images;
    }
    for (const name of readdirSync(this.dir)) {
      const file = path.join(this.dir, name);
      // A crash mid-pull leaves a temp file: never a copy, so it goes.
      if (name.startsWith(TEMP_PREFIX)) {
        unlinkSync(file);
        continue;
      }
      if (!sha256Pattern.test(name)) continue;
      // Only renamed after its digest matched: a copy even when the index missed it.
      const stat = statSync(file);
      this.copies.set(name, { sha256: name, sizeBytes: stat.size, lastUsedAt: index[name]?.lastUsedAt ?? stat.mtimeMs });
    }
    this.save();
  }

  private save(): void {
    const images: Record<string, { sizeBytes: number; lastUsedAt: number }> = {};
    for (const copy of this.copies.values()) images[copy.sha256] = { sizeBytes: copy.sizeBytes, lastUsedAt: copy.lastUsedAt };
    const file = path.join(this.dir, INDEX_FILE);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ version: 1, images })}\n`, { mode: 0o600 });
    renameSync(temp, file);
    this.savedAt = Date.now();
  }
}
