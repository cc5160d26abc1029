// Tenants and API credentials. A credential belongs to one tenant and carries
// permissions; its bearer `ifk_<id>.<secret>` is shown once (when minted or rotated), only
// its hash is stored. A credential may expire; it can be revoked, and rotated (a new
// secret for the same id and permissions, the old one refused at once). Every request
// reads the row again: nothing is cached, so a revocation holds from the next request.
import type { ApiCredential } from '../generated/prisma-sqlite/client';
import { mintBearer, parseBearer, secretMatches } from './bearer';
import { appendEvent } from './events';
import { IronflowError, notFound } from '../core/errors';
import { newId } from './ids';
import { ALL_PERMISSIONS, grants, ROOT_TENANT, type Permission } from '../core/permissions';
import type { CredentialCreateInput, CredentialView } from '../core/schemas/credentials';
import { Prisma, type Db, type DbOrTx } from './db';
import { requireTenant } from './tenants';
import { queryRows } from './raw-statements';

export const CREDENTIAL_SCHEME = 'ifk';

export interface Principal {
  tenantId: string;
  credentialId: string;
  permissions: string[];
}

export async function ensureTenant(tx: DbOrTx, id: string, name: string): Promise<void> {
  await tx.tenant.upsert({ where: { id }, create: { id, name }, update: {} });
}

export function credentialView(row: ApiCredential, bearer?: string): CredentialView {
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    permissions: row.permissions as string[],
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    rotatedAt: row.rotatedAt?.toISOString() ?? null,
    ...(bearer ? { credential: bearer } : {}),
  };
}

export async function createCredential(
  tx: DbOrTx,
  input: { tenantId: string; name: string; permissions: string[]; expiresAt?: Date; by?: string },
): Promise<{ id: string; bearer: string; view: CredentialView }> {
  const id = newId('credential');
  const { bearer, secretHash } = mintBearer(CREDENTIAL_SCHEME, id);
  const row = await tx.apiCredential.create({
    data: { id, tenantId: input.tenantId, name: input.name, permissions: input.permissions, secretHash, expiresAt: input.expiresAt ?? null },
  });
  await appendEvent(tx, {
    tenantId: input.tenantId,
    type: 'security.credential.created',
    subjectId: id,
    data: { name: input.name, permissions: input.permissions, expiresAt: input.expiresAt?.toISOString() ?? null, ...(input.by ? { by: input.by } : {}) },
  });
  return { id, bearer, view: credentialView(row, bearer) };
}

type CredentialCheck = Pick<ApiCredential, 'id' | 'tenantId' | 'permissions' | 'secretHash' | 'revokedAt' | 'expiresAt'>;

export async function authenticate(db: Db, authorization: string | undefined, now = new Date()): Promise<Principal> {
  const fix = 'send Authorization: Bearer ifk_… (the root credential is in .ironflow/root-credential)';
  if (!authorization) throw new IronflowError('UNAUTHENTICATED', `no credential: ${fix}`);
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  const parsed = match?.[1] ? parseBearer(CREDENTIAL_SCHEME, match[1]) : undefined;
  if (!parsed) throw new IronflowError('UNAUTHENTICATED', `malformed credential: ${fix}`);
  // Raw SQL: Prisma compiling a model query costs more than the rest of an API read (services/metal/node-reads.ts).
  const [row] = await queryRows<CredentialCheck>(
    db,
    Prisma.sql`SELECT "id", "tenantId", "permissions", "secretHash", "revokedAt", "expiresAt" FROM "ApiCredential" WHERE "id" = ${parsed.id}`,
  );
  // An unknown id and a wrong secret read alike. Only the secret's holder learns more.
  if (!row || !secretMatches(parsed.secret, row.secretHash)) {
    throw new IronflowError('UNAUTHENTICATED', 'unknown or revoked credential');
  }
  if (row.revokedAt) throw new IronflowError('UNAUTHENTICATED', `credential ${row.id} was revoked at ${row.revokedAt.toISOString()}`);
  if (row.expiresAt && row.expiresAt <= now) {
    throw new IronflowError(
      'UNAUTHENTICATED',
      `credential ${row.id} expired at ${row.expiresAt.toISOString()}; ask for a new one (ironflow credentials rotate or create)`,
    );
  }
  return { tenantId: row.tenantId, credentialId: row.id, permissions: row.permissions as string[] };
}

/**
 * A credential acts only on credentials whose permissions it holds itself: minting,
 * rotating (which hands out the secret) or revoking a mightier one would be an escalation.
 */
function assertHolds(principal: Principal, wanted: readonly string[], what: string): void {
  const lacking = wanted.filter((p) =>
    p === ALL_PERMISSIONS ? !principal.permissions.includes(ALL_PERMISSIONS) : !grants(principal.permissions, p as Permission),
  );
  if (lacking.length > 0) {
    throw new IronflowError('PERMISSION_DENIED', `this credential cannot ${what}: it lacks ${lacking.join(', ')}`, { permissions: lacking });
  }
}

function futureExpiry(expiresAt: string | undefined, now: Date): Date | undefined {
  if (expiresAt === undefined) return undefined;
  const at = new Date(expiresAt);
  if (at <= now) throw new IronflowError('INVALID_INPUT', `expiresAt ${expiresAt} is not in the future`, { path: 'expiresAt' });
  return at;
}

export async function mintCredential(db: Db, principal: Principal, input: CredentialCreateInput): Promise<CredentialView> {
  assertHolds(principal, input.permissions, 'grant these permissions');
  const expiresAt = futureExpiry(input.expiresAt, new Date());
  return db.$transaction(async (tx) => {
    await requireTenant(tx, input.tenantId);
    const created = await createCredential(tx, { ...input, expiresAt, by: principal.credentialId });
    return created.view;
  });
}

export async function listCredentials(
  db: Db,
  tenantId: string,
  page: { limit: number; cursor?: string },
): Promise<{ credentials: CredentialView[]; nextCursor: string | null }> {
  const rows = await db.apiCredential.findMany({
    where: { tenantId, ...(page.cursor ? { id: { gt: page.cursor } } : {}) },
    orderBy: { id: 'asc' },
    take: page.limit + 1,
  });
  const shown = rows.slice(0, page.limit);
  return { credentials: shown.map((row) => credentialView(row)), nextCursor: rows.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null };
}

async function findOwned(tx: DbOrTx, tenantId: string, credentialId: string): Promise<ApiCredential> {
  const row = await tx.apiCredential.findFirst({ where: { id: credentialId, tenantId } });
  if (!row) throw notFound('credential', credentialId);
  return row;
}

const isActive = (row: ApiCredential, now: Date) => !row.revokedAt && (!row.expiresAt || row.expiresAt > now);

/** Revoked from the next request on. Revoking twice answers the first revocation. */
export async function revokeCredential(db: Db, principal: Principal, tenantId: string, credentialId: string): Promise<CredentialView> {
  return db.$transaction(async (tx) => {
    const row = await findOwned(tx, tenantId, credentialId);
    if (row.revokedAt) return credentialView(row);
    const held = row.permissions as string[];
    assertHolds(principal, held, `revoke ${row.id}`);
    const now = new Date();
    if (row.tenantId === ROOT_TENANT && held.includes(ALL_PERMISSIONS)) {
      const others = await tx.apiCredential.findMany({ where: { tenantId: ROOT_TENANT, revokedAt: null, id: { not: row.id } } });
      if (!others.some((other) => isActive(other, now) && (other.permissions as string[]).includes(ALL_PERMISSIONS))) {
        throw new IronflowError('INVALID_STATE', `${row.id} is the root tenant's last active credential holding *; create another before revoking it`, {
          credentialId: row.id,
        });
      }
    }
    await tx.apiCredential.updateMany({ where: { id: row.id, revokedAt: null }, data: { revokedAt: now } });
    await appendEvent(tx, { tenantId, type: 'security.credential.revoked', subjectId: row.id, data: { by: principal.credentialId } });
    return credentialView({ ...row, revokedAt: now });
  });
}

/** A new secret for the same id and permissions; the old secret is refused from now on. */
export async function rotateCredential(
  db: Db,
  principal: Principal,
  tenantId: string,
  credentialId: string,
  input: { expiresAt?: string },
): Promise<CredentialView> {
  const now = new Date();
  const newExpiry = futureExpiry(input.expiresAt, now);
  return db.$transaction(async (tx) => {
    const row = await findOwned(tx, tenantId, credentialId);
    if (row.revokedAt)
      throw new IronflowError(
        'INVALID_STATE',
        `${row.id} was revoked at ${row.revokedAt.toISOString()}; a revoked credential cannot be rotated (create a new one)`,
        { credentialId: row.id },
      );
    assertHolds(principal, row.permissions as string[], `rotate ${row.id}`);
    const expiresAt = newExpiry ?? row.expiresAt;
    if (expiresAt && expiresAt <= now) {
      throw new IronflowError('INVALID_STATE', `${row.id} expired at ${expiresAt.toISOString()}; pass a new expiresAt to rotate it`, { path: 'expiresAt' });
    }
    const { bearer, secretHash } = mintBearer(CREDENTIAL_SCHEME, row.id);
    const changed = await tx.apiCredential.updateMany({ where: { id: row.id, revokedAt: null }, data: { secretHash, rotatedAt: now, expiresAt } });
    if (changed.count !== 1) throw new IronflowError('CONFLICT', `${row.id} changed while rotating; try again`, { credentialId: row.id });
    await appendEvent(tx, {
      tenantId,
      type: 'security.credential.rotated',
      subjectId: row.id,
      data: { by: principal.credentialId, expiresAt: expiresAt?.toISOString() ?? null },
    });
    return credentialView({ ...row, secretHash, rotatedAt: now, expiresAt }, bearer);
  });
}
