// The scans and clips that run on what anyone may send: JSON depth on raw text (strings and
// escapes are text, not depth) and the bounds of an event's fields.
import { describe, expect, it } from 'vitest';
import { jsonNestsDeeperThan } from '../../api/body-limits';
import { boundValue, EVENT_BOUNDS } from '../../core/event-bounds';

describe('jsonNestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings or after escapes', () => {
    expect(jsonNestsDeeperThan('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(jsonNestsDeeperThan('{"a":[1,{"b":[]}]}', 3)).toBe(true);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '[[[[{{{{' }), 1)).toBe(false);
    // An escaped quote does not end the string; an escaped backslash does not escape the quote after it.
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '\\"[[[[', t: 'x\\' }), 1)).toBe(false);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: '\\', k: [[[1]]] }), 3)).toBe(true);
    expect(jsonNestsDeeperThan('['.repeat(1_000_000), 64)).toBe(true);
  });
});

describe('boundValue', () => {
  it('clips strings, lists, keys and depth, and says what it cut', () => {
    const bounds = { maxString: 8, maxItems: 2, maxDepth: 2 };
    expect(boundValue('x'.repeat(20), bounds)).toBe('xxxxxxxx…[12 more characters]');
    expect(boundValue([1, 2, 3, 4], bounds)).toEqual([1, 2, '[2 more items]']);
    expect(boundValue({ a: 1, b: 2, c: 3 }, bounds)).toEqual({ a: 1, b: 2, '[more keys]': 1 });
    expect(boundValue({ a: { b: { c: 1 } } }, bounds)).toEqual({ a: { b: '[nested too deep]' } });
    expect(boundValue({ at: new Date(0), n: null, ok: true }, EVENT_BOUNDS)).toEqual({ at: '1970-01-01T00:00:00.000Z', n: null, ok: true });
  });
});
