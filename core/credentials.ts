// Tenants and API credentials. A credential belongs to one tenant and carries
// permissions; its bearer `ifk_<id>.<secret>` is shown once, only its hash is stored.
import { mintBearer, parseBearer, secretMatches } from './bearer';
import { appendEvent } from './events';
import { IronflowError } from './errors';
import { newId } from './ids';
import type { Db, DbOrTx } from './db';

export const CREDENTIAL_SCHEME = 'ifk';

export interface Principal {
  tenantId: string;
  credentialId: string;
  permissions: string[];
}

export async function ensureTenant(tx: DbOrTx, id: string, name: string): Promise<void> {
  await tx.tenant.upsert({ where: { id }, create: { id, name }, update: {} });
}

export async function createCredential(
  tx: DbOrTx,
  input: { tenantId: string; name: string; permissions: string[] },
): Promise<{ id: string; bearer: string }> {
  const id = newId('credential');
  const { bearer, secretHash } = mintBearer(CREDENTIAL_SCHEME, id);
  await tx.apiCredential.create({
    data: { id, tenantId: input.tenantId, name: input.name, permissions: input.permissions, secretHash },
  });
  await appendEvent(tx, {
    tenantId: input.tenantId,
    type: 'security.credential.created',
    subjectId: id,
    data: { name: input.name, permissions: input.permissions },
  });
  return { id, bearer };
}

export async function authenticate(db: Db, authorization: string | undefined): Promise<Principal> {
  const fix = 'send Authorization: Bearer ifk_… (the root credential is in .ironflow/root-credential)';
  if (!authorization) throw new IronflowError('UNAUTHENTICATED', `no credential: ${fix}`);
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  const parsed = match?.[1] ? parseBearer(CREDENTIAL_SCHEME, match[1]) : undefined;
  if (!parsed) throw new IronflowError('UNAUTHENTICATED', `malformed credential: ${fix}`);
  const row = await db.apiCredential.findUnique({ where: { id: parsed.id } });
  if (!row || row.revokedAt || !secretMatches(parsed.secret, row.secretHash)) {
    throw new IronflowError('UNAUTHENTICATED', 'unknown or revoked credential');
  }
  return { tenantId: row.tenantId, credentialId: row.id, permissions: row.permissions as string[] };
}
