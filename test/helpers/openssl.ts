// The real `openssl` as an agent would use it: keys, CSRs, verify, and reading certificates.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

export type KeyKind = 'ec' | 'ed25519' | 'rsa';

export function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function workDir(): string {
  return mkdtempSync(path.join(inject('runDir'), 'ironflow-openssl-'));
}

/** A new key in `dir/<name>.key` and a CSR for it; answers the CSR's PEM. */
export function newKeyAndCsr(dir: string, name: string, kind: KeyKind): string {
  const keyArgs =
    kind === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : kind === 'ed25519' ? ['-newkey', 'ed25519'] : ['-newkey', 'rsa:2048'];
  openssl(['req', '-new', ...keyArgs, '-nodes', '-keyout', `${name}.key`, '-subj', '/CN=agent', '-out', `${name}.csr`], dir);
  return readFileSync(path.join(dir, `${name}.csr`), 'utf8');
}

/** A CSR signed by an existing key (`dir/<keyName>.key`). */
export function csrForKey(dir: string, keyName: string, out: string): string {
  openssl(['req', '-new', '-key', `${keyName}.key`, '-subj', '/CN=agent', '-out', `${out}.csr`], dir);
  return readFileSync(path.join(dir, `${out}.csr`), 'utf8');
}

export function writeFile(dir: string, name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}
