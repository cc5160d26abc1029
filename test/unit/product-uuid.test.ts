// A product UUID's three spellings (spec 001): as given, SMBIOS byte-swapped, IPMI reversed.
import { describe, expect, it } from 'vitest';
import { productUuidSpellings, sameProductUuid } from '../../core/product-uuid';

const given = '4c4c4544-0042-3510-8052-b4c04f4e3732';
const smbiosSwapped = '44454c4c-4200-1035-8052-b4c04f4e3732';
const ipmiReversed = '32374e4f-c0b4-5280-1035-420044454c4c';

describe('product UUID spellings', () => {
  it('are the UUID as given, with its first three fields byte-swapped, and fully reversed', () => {
    expect(productUuidSpellings(given)).toEqual([
      '4c4c454400423510' + '8052b4c04f4e3732',
      '44454c4c42001035' + '8052b4c04f4e3732',
      '32374e4fc0b45280' + '1035420044454c4c',
    ]);
  });

  it('match the same machine in any spelling, any case, with or without dashes', () => {
    for (const other of [given, smbiosSwapped, ipmiReversed.toUpperCase(), given.replace(/-/g, '')]) expect(sameProductUuid(given, other)).toBe(true);
    expect(sameProductUuid(smbiosSwapped, given)).toBe(true);
  });

  it('do not match another machine or a malformed UUID', () => {
    expect(sameProductUuid(given, '4c4c4544-0042-3510-8052-b4c04f4e3733')).toBe(false);
    expect(sameProductUuid(given, 'not-a-uuid')).toBe(false);
    expect(productUuidSpellings('not-a-uuid')).toEqual([]);
  });
});
