// A CA file named in a config (PEM certificates): read at start, INVALID_CONFIG naming the
// key, the file and what is wrong with it, so a typo never surfaces as a TLS error later.
import { readFileSync } from 'node:fs';
import { IronflowError } from '../core/errors';

export function readCaFile(file: string, key: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new IronflowError('INVALID_CONFIG', `${key} ${file} cannot be read: ${(error as Error).message}`, { path: key });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new IronflowError('INVALID_CONFIG', `${key} ${file} holds no PEM certificate`, { path: key });
  return pem;
}
