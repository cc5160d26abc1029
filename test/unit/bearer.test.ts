import { describe, expect, it } from 'vitest';
import { hashSecret, mintBearer, parseBearer, secretMatches } from '../../services/bearer';

describe('bearer secrets', () => {
  it('mint a bearer whose secret matches only its stored hash', () => {
    const { bearer, secretHash } = mintBearer('ifjt', 'jt_abc');
    expect(bearer).toMatch(/^ifjt_jt_abc\.[A-Za-z0-9_-]{43}$/);
    expect(secretHash).not.toContain(bearer.split('.')[1]);
    const parsed = parseBearer('ifjt', bearer);
    expect(parsed?.id).toBe('jt_abc');
    expect(secretMatches(parsed?.secret ?? '', secretHash)).toBe(true);
    expect(secretMatches(`${parsed?.secret}x`, secretHash)).toBe(false);
    expect(secretMatches('anything', hashSecret('else'))).toBe(false);
  });

  it('refuse bearers of another scheme, without a secret, or oversized', () => {
    expect(parseBearer('ifk', 'ifjt_jt_1.secret')).toBeUndefined();
    expect(parseBearer('ifk', 'ifk_cred_1.')).toBeUndefined();
    expect(parseBearer('ifk', 'ifk_cred_1')).toBeUndefined();
    expect(parseBearer('ifk', `ifk_cred_1.${'a'.repeat(600)}`)).toBeUndefined();
  });
});
