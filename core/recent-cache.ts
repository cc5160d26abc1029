// A map of at most `max` entries that forgets the least recently used first: state that
// untrusted input or a busy fleet can fill (one entry per certificate an agent presents, per
// refused source, per run asked about) without growing. Every bounded memory in the tree is
// one of these, so the bound and the eviction order are written once. Values of very different
// sizes (a step's output) are bounded by their weight as well (`budget`): a count alone would
// let a thousand large values fill the memory.

/** A bound on the values' summed weight (bytes, say), each weighed once as it is set. */
export interface WeightBudget<V> {
  max: number;
  weigh(value: V): number;
}

export class RecentCache<K, V> {
  // Insertion order is use order: a hit is re-inserted last, so the first key is the least recently used.
  private readonly entries = new Map<K, V>();
  private readonly weights = new Map<K, number>();
  private weight = 0;

  constructor(
    private readonly max: number,
    private readonly budget?: WeightBudget<V>,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a RecentCache holds at least 1 entry, not ${max}`);
    if (budget && !(budget.max > 0)) throw new RangeError(`a RecentCache's weight budget is above 0, not ${budget.max}`);
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

  /**
   * Sets the value as the most recently used; past `max` entries, or past the budget's weight,
   * the least recently used go. A value heavier than the whole budget is not kept (nor is the
   * key's value before it): answers whether it was.
   */
  set(key: K, value: V): boolean {
    this.delete(key);
    const weight = this.budget ? this.budget.weigh(value) : 0;
    if (this.budget && weight > this.budget.max) return false;
    this.entries.set(key, value);
    if (this.budget) {
      this.weights.set(key, weight);
      this.weight += weight;
    }
    while (this.entries.size > this.max || (this.budget && this.weight > this.budget.max)) this.delete(this.entries.keys().next().value as K);
    return true;
  }

  delete(key: K): void {
    this.entries.delete(key);
    const weight = this.weights.get(key);
    if (weight === undefined) return;
    this.weights.delete(key);
    this.weight -= weight;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The kept values' summed weight (0 without a budget). */
  get totalWeight(): number {
    return this.weight;
  }

  /** Least recently used first; deleting while iterating is safe. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries.entries();
  }
}
