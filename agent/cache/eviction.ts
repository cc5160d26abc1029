// Trimming the cache to `[boot] cache_max_bytes`: least recently used first, never a copy
// the site still names (its pre-warm images and every image a deploy there is streaming).
// The decision is pure; trimCache applies it to the store.
import type { CachedCopy, ImageCacheStore } from './store';

/** The copies to remove so the rest fit in `maxBytes`; protected ones stay even when over. */
export function chooseEvictions(copies: readonly CachedCopy[], maxBytes: number, protectedDigests: ReadonlySet<string>): CachedCopy[] {
  let total = copies.reduce((sum, copy) => sum + copy.sizeBytes, 0);
  if (total <= maxBytes) return [];
  const candidates = copies
    .filter((copy) => !protectedDigests.has(copy.sha256))
    .sort((a, b) => a.lastUsedAt - b.lastUsedAt || a.sha256.localeCompare(b.sha256));
  const chosen: CachedCopy[] = [];
  for (const copy of candidates) {
    if (total <= maxBytes) break;
    chosen.push(copy);
    total -= copy.sizeBytes;
  }
  return chosen;
}

/** One pass: removes what chooseEvictions picks and answers it. */
export function trimCache(store: ImageCacheStore, maxBytes: number | undefined, protectedDigests: ReadonlySet<string>): CachedCopy[] {
  if (maxBytes === undefined) return [];
  const evicted = chooseEvictions(store.list(), maxBytes, protectedDigests);
  for (const copy of evicted) store.remove(copy.sha256);
  return evicted;
}
