// A map of at most `max` entries that forgets the least recently used first: state that
// untrusted input can fill (one entry per certificate an agent presents, per refused source)
// without growing.
export class RecentCache<K, V> {
  // Insertion order is use order: a hit is re-inserted last, so the first key is the least recently used.
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

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
}
