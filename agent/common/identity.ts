// The agent's identity in data_dir: its key (ECDSA P-256, generated once, 0600), its
// certificate chain (certificate.pem) and what the join answered (identity.json). The key
// never leaves this file; a restart loads all three and does not join again.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IronflowError, parseWith } from '../../core/errors';
import { agentTemporalSchema } from '../../core/schemas/join';
import type { Signer } from './control-plane-client';
import { createFileDurably, writeFileDurably } from './durable-file';

const KEY_FILE = 'agent.key';
const CHAIN_FILE = 'certificate.pem';
const IDENTITY_FILE = 'identity.json';

const storedIdentitySchema = z.object({
  nodeId: z.string(),
  role: z.string(),
  siteId: z.string().nullable(),
  temporal: agentTemporalSchema,
  /** The current certificate's validity (ISO). */
  issuedAt: z.string(),
  expiresAt: z.string(),
});
type StoredIdentity = z.infer<typeof storedIdentitySchema>;

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/** The agent's key: loaded, or generated on first start. Refuses a key others can read. */
export function loadOrCreateKey(dataDir: string): KeyObject {
  ensureDataDir(dataDir);
  const file = path.join(dataDir, KEY_FILE);
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    createFileDurably(file, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, 0o600);
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new IronflowError('INVALID_CONFIG', `${file} is readable by others (mode ${mode.toString(8)}); chmod 600 ${file}`, { path: file });
  }
  return createPrivateKey({ key: readFileSync(file) });
}

export interface AgentIdentity extends Signer {
  dataDir: string;
  current: StoredIdentity;
  chain: string[];
}

function splitChain(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g)?.map((c) => (c.endsWith('\n') ? c : `${c}\n`)) ?? [];
}

/** The identity a previous join stored, or undefined when this agent has not joined yet. */
export function loadIdentity(dataDir: string, key: KeyObject): AgentIdentity | undefined {
  const identityFile = path.join(dataDir, IDENTITY_FILE);
  const chainFile = path.join(dataDir, CHAIN_FILE);
  if (!existsSync(identityFile) || !existsSync(chainFile)) return undefined;
  const current = parseWith(storedIdentitySchema, JSON.parse(readFileSync(identityFile, 'utf8')), 'INVALID_CONFIG');
  const chain = splitChain(readFileSync(chainFile, 'utf8'));
  if (chain.length === 0) throw new IronflowError('INVALID_CONFIG', `${chainFile} holds no certificate; remove ${identityFile} to join again`);
  return identityOf(dataDir, key, current, chain);
}

export function identityOf(dataDir: string, key: KeyObject, current: StoredIdentity, chain: string[]): AgentIdentity {
  const identity: AgentIdentity = { dataDir, key, current, chain, certificatePem: () => identity.chain[0] as string };
  return identity;
}

/** Stores the identity's chain (join or renewal): the chain first, then what names it. */
export function persistIdentity(identity: AgentIdentity): void {
  ensureDataDir(identity.dataDir);
  writeFileDurably(path.join(identity.dataDir, CHAIN_FILE), identity.chain.join(''), 0o644);
  writeFileDurably(path.join(identity.dataDir, IDENTITY_FILE), `${JSON.stringify(identity.current, null, 2)}\n`, 0o644);
}
