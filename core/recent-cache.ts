// A map of at most `max` entries that forgets the least recently used first: state that
// untrusted input or a busy fleet can fill (one entry per certificate an agent presents, per
// refused source, per run asked about) without growing. Every bounded memory in the tree is
// one of these, so the bound and the eviction order are written once.
export class RecentCache<K, V> {
  // Insertion order is use order: a hit is re-inserted last, so the first key is the least recently used.
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a RecentCache holds at least 1 entry, not ${max}`);
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** The value, its place in the order unchanged. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Sets the value as the most recently used; past `max` entries the least recently used go. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Least recently used first; deleting while iterating is safe. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries.entries();
  }
}
