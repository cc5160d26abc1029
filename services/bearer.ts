// Bearer secrets (API credentials, join tokens): shown once, only a hash is stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface MintedBearer {
  bearer: string;
  secretHash: string;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** `<scheme>_<id>.<secret>`, e.g. `ifjt_jt_01k….<secret>`. */
export function mintBearer(scheme: string, id: string): MintedBearer {
  const secret = randomBytes(32).toString('base64url');
  return { bearer: `${scheme}_${id}.${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a bearer into its id and secret, or undefined when it is not of this scheme. */
export function parseBearer(scheme: string, bearer: string): { id: string; secret: string } | undefined {
  if (bearer.length > 512 || !bearer.startsWith(`${scheme}_`)) return undefined;
  const rest = bearer.slice(scheme.length + 1);
  const dot = rest.lastIndexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return undefined;
  return { id: rest.slice(0, dot), secret: rest.slice(dot + 1) };
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
