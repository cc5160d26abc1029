// The secret store: values sealed with AES-256-GCM at rest; callers hold references
// (`sec_…`) only. The key comes from IRONFLOW_SECRET_KEY (base64, 32 bytes) or a 0600 key
// file in the data dir, created on first use.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { IronflowError } from '../core/errors';
import { newId } from './ids';
import { Prisma, type DbOrTx } from './db';
import { queryRows } from './raw-statements';
import type { Secret } from '../generated/prisma-sqlite/client';

const KEY_BYTES = 32;

export function loadSecretKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  const fromEnv = env.IRONFLOW_SECRET_KEY;
  if (fromEnv) {
    const key = Buffer.from(fromEnv, 'base64');
    if (key.length !== KEY_BYTES) throw new IronflowError('INVALID_CONFIG', 'IRONFLOW_SECRET_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
    return key;
  }
  const file = path.join(dataDir, 'secret-store.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(KEY_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new IronflowError('INVALID_CONFIG', `${file} does not hold a 32-byte base64 key`);
  return key;
}

export interface SecretPut {
  tenantId: string;
  purpose: string;
  value: string;
  expiresAt?: Date;
}

export class SecretStore {
  constructor(private readonly key: Buffer) {}

  /** Seals a value and returns its reference. Pass the caller's transaction to commit together. */
  async put(tx: DbOrTx, secret: SecretPut): Promise<string> {
    const id = newId('secret');
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(id)); // a ciphertext moved to another row does not open
    const sealed = Buffer.concat([cipher.update(secret.value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    await tx.secret.create({
      data: {
        id,
        tenantId: secret.tenantId,
        purpose: secret.purpose,
        nonce: new Uint8Array(nonce),
        ciphertext: new Uint8Array(sealed),
        expiresAt: secret.expiresAt ?? null,
      },
    });
    return id;
  }

  async get(db: DbOrTx, ref: string): Promise<string> {
    // Raw: every BMC command's credentials and every boot's discovery token are read here.
    const [row] = await queryRows<Pick<Secret, 'id' | 'expiresAt'> & { nonce: Uint8Array | number[]; ciphertext: Uint8Array | number[] }>(
      db,
      Prisma.sql`SELECT "id", "nonce", "ciphertext", "expiresAt" FROM "Secret" WHERE "id" = ${ref}`,
    );
    if (!row || (row.expiresAt && row.expiresAt.getTime() <= Date.now())) {
      throw new IronflowError('NOT_FOUND', `secret ${ref} not found or expired`, { ref });
    }
    const sealed = Buffer.from(row.ciphertext);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(row.nonce));
    decipher.setAAD(Buffer.from(row.id));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new IronflowError('INTERNAL', `secret ${ref} does not open with this key (was IRONFLOW_SECRET_KEY or the key file changed?)`, { ref });
    }
  }

  async delete(db: DbOrTx, ref: string): Promise<void> {
    await db.secret.deleteMany({ where: { id: ref } });
  }
}
