// One SMBIOS product UUID goes by three spellings (spec 001): as given; with its first three
// fields byte-swapped, as SMBIOS stores them and some tools print them; and with all 16 bytes
// reversed, as IPMI's Get System GUID prints it. The identity checks compare in all three.
const uuidPattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/;

const hexOf = (uuid: string): string | undefined => {
  const lower = uuid.trim().toLowerCase();
  return uuidPattern.test(lower) ? lower.replace(/-/g, '') : undefined;
};

const bytes = (hex: string): string[] => hex.match(/../g) ?? [];

/** The 32-hex-digit forms of a UUID's three spellings; empty for a malformed one. */
export function productUuidSpellings(uuid: string): string[] {
  const hex = hexOf(uuid);
  if (!hex) return [];
  const b = bytes(hex);
  const swapped = [...b.slice(0, 4).reverse(), ...b.slice(4, 6).reverse(), ...b.slice(6, 8).reverse(), ...b.slice(8)].join('');
  const reversed = [...b].reverse().join('');
  return [hex, swapped, reversed];
}

/** Whether two product UUIDs name the same machine in any of the three spellings. */
export function sameProductUuid(a: string, b: string): boolean {
  const other = hexOf(b);
  return other !== undefined && productUuidSpellings(a).includes(other);
}
