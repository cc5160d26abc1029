import { describe, expect, it } from 'vitest';
import { RecentCache } from '../../core/recent-cache';

describe('a RecentCache', () => {
  it('keeps at most its size, forgetting the least recently used first', () => {
    const cache = new RecentCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('leaves the order alone on peek and has, so a peeked entry still goes first', () => {
    const cache = new RecentCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.peek('a')).toBe(1);
    expect(cache.has('a')).toBe(true);
    cache.set('c', 3);
    expect(cache.has('a')).toBe(false);
    expect([...cache]).toEqual([
      ['b', 2],
      ['c', 3],
    ]);
  });

  it('moves a key set again to the end, and iterates least recently used first while deleting', () => {
    const cache = new RecentCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.set('a', 4);
    const seen: string[] = [];
    for (const [key] of cache) {
      seen.push(key);
      if (key === 'c') cache.delete(key);
    }
    expect(seen).toEqual(['b', 'c', 'a']);
    expect([...cache]).toEqual([
      ['b', 2],
      ['a', 4],
    ]);
    cache.delete('b');
    expect(cache.size).toBe(1);
  });

  it('keeps the values within a weight budget, forgetting the least recently used first', () => {
    const cache = new RecentCache<string, string>(10, { max: 10, weigh: (value) => value.length });
    expect(cache.set('a', 'aaaa')).toBe(true);
    expect(cache.set('b', 'bbbb')).toBe(true);
    expect(cache.get('a')).toBe('aaaa');
    expect(cache.set('c', 'cccc')).toBe(true); // 12 > 10: b, the least recently used, goes
    expect([...cache].map(([key]) => key)).toEqual(['a', 'c']);
    expect(cache.totalWeight).toBe(8);

    // Set again, a key's old weight is taken off before its new one counts.
    cache.set('a', 'aa');
    expect(cache.totalWeight).toBe(6);

    // A value heavier than the budget is not kept, and neither is the key's value before it.
    expect(cache.set('c', 'x'.repeat(11))).toBe(false);
    expect(cache.has('c')).toBe(false);
    expect([...cache].map(([key]) => key)).toEqual(['a']);
    expect(cache.totalWeight).toBe(2);
    cache.delete('a');
    expect(cache.totalWeight).toBe(0);
  });

  it('refuses a size below one', () => {
    expect(() => new RecentCache(0)).toThrow(RangeError);
    expect(() => new RecentCache(1.5)).toThrow(/at least 1 entry/);
    expect(() => new RecentCache(1, { max: 0, weigh: () => 1 })).toThrow(/above 0/);
  });
});
