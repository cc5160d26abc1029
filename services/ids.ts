// Makes typed ids (core/id-format.ts says their shape): random ones, and stable ones derived
// from their inputs.
import { createHash, randomBytes } from 'node:crypto';
import { encode, idPrefixes, ulidBody, type IdKind } from '../core/id-format';

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${idPrefixes[kind]}_${ulidBody(randomBytes(10), now)}`;
}

/** A stable id derived from its inputs (idempotent creates): same inputs, same id. */
export function derivedId(kind: IdKind, ...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return `${idPrefixes[kind]}_${encode(digest.subarray(0, 16)).slice(0, 26)}`;
}
