import { describe, expect, it } from 'vitest';
import { idPattern } from '../../core/id-format';
import { derivedId, newId } from '../../services/ids';

describe('typed ids', () => {
  it('carry their kind and match its pattern', () => {
    const id = newId('site');
    expect(id).toMatch(/^site_/);
    expect(id).toMatch(idPattern('site'));
    expect(id).not.toMatch(idPattern('node'));
  });

  it('sort by creation time', () => {
    const earlier = newId('node', Date.UTC(2026, 0, 1));
    const later = newId('node', Date.UTC(2026, 0, 1) + 1);
    const muchLater = newId('node', Date.UTC(2030, 5, 1));
    expect([muchLater, later, earlier].sort()).toEqual([earlier, later, muchLater]);
  });

  it('are unguessable: 10,000 ids in the same millisecond are distinct', () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('joinToken', now)));
    expect(ids.size).toBe(10_000);
  });

  it('derive the same id from the same inputs, another from other inputs', () => {
    expect(derivedId('site', 'root', 'cred_1', 'key')).toBe(derivedId('site', 'root', 'cred_1', 'key'));
    expect(derivedId('site', 'root', 'cred_1', 'key')).not.toBe(derivedId('site', 'root', 'cred_2', 'key'));
    // Separators cannot be forged by moving text between parts.
    expect(derivedId('site', 'ab', 'c')).not.toBe(derivedId('site', 'a', 'bc'));
    expect(derivedId('site', 'x')).toMatch(idPattern('site'));
  });
});
