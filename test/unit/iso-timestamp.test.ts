// isoTimestamp (core/iso-timestamp.ts) writes exactly what toISOString writes, fields padded,
// and leaves the years it does not write, and invalid dates, to toISOString.
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../core/iso-timestamp';

describe('isoTimestamp', () => {
  it('writes what toISOString writes, for dates across the years it writes and their edges', () => {
    const dates = [
      new Date(0),
      new Date('2026-01-02T03:04:05.006Z'),
      new Date('2026-12-31T23:59:59.999Z'),
      new Date('1000-01-01T00:00:00.000Z'),
      new Date('9999-12-31T23:59:59.999Z'),
      new Date('2024-02-29T12:00:00.010Z'),
      new Date('1969-12-31T23:59:59.100Z'),
    ];
    // A spread of instants with every field's width: 400 years, millisecond precision.
    for (let i = 0; i < 2000; i++) dates.push(new Date(Date.UTC(1900, 0, 1) + Math.floor(((i * 7919) % 2000) * 6_311_520_000 + i * 37)));
    for (const date of dates) expect(isoTimestamp(date)).toBe(date.toISOString());
  });

  it("leaves years outside 1000–9999 to toISOString's own forms", () => {
    for (const date of [new Date('0999-12-31T23:59:59.999Z'), new Date(Date.UTC(10000, 0, 1)), new Date(Date.UTC(-1, 0, 1)), new Date(8.64e15)]) {
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }
  });

  it('throws as toISOString does for an invalid date', () => {
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
