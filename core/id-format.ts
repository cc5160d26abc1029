// Typed ids: `<prefix>_<26 chars>`, a 48-bit millisecond time then 80 random bits in
// Crockford base32 (lower case). Sortable by creation time, unguessable. Their shape (pure,
// what schemas check); services/ids.ts makes them.
export const idPrefixes = {
  tenant: 'tnt',
  credential: 'cred',
  site: 'site',
  node: 'node',
  pool: 'pool',
  joinToken: 'jt',
  joinRequest: 'jr',
  image: 'img',
  event: 'evt',
  secret: 'sec',
  check: 'chk',
  bulkRun: 'blk',
  quorumBatch: 'bat',
} as const;
export type IdKind = keyof typeof idPrefixes;

const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

export function encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

export function ulidBody(random: Uint8Array, now: number): string {
  const bytes = new Uint8Array(16);
  let t = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(random.subarray(0, 10), 6);
  // 128 bits → 26 base32 chars (the last carries 3 padding bits).
  return encode(bytes).slice(0, 26);
}

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${idPrefixes[kind]}_[0-9a-hjkmnp-tv-z]{26}$`);
}
