// tenants.create: the id is the request's own idempotency key. A repeat of the same request
// answers the stored tenant with no new event; the same id with another name is CONFLICT
// (a create never renames, and never takes over an existing tenant such as root).
import type { Db, DbOrTx } from './db';
import { isUniqueViolation } from './db';
import { IronflowError } from '../core/errors';
import { appendEvent } from './events';

export interface TenantView {
  id: string;
  name: string;
}

/** Objects belong to an existing tenant: a root operator naming one that is not there is NOT_FOUND, with the fix. */
export async function requireTenant(db: DbOrTx, tenantId: string): Promise<void> {
  if (!(await db.tenant.findUnique({ where: { id: tenantId } }))) {
    throw new IronflowError('NOT_FOUND', `tenant ${tenantId} not found; create it first (ironflow tenants create)`, { path: 'tenantId' });
  }
}

export async function createTenant(db: Db, input: TenantView): Promise<{ tenant: TenantView; created: boolean }> {
  const replayOf = async (): Promise<{ tenant: TenantView; created: boolean } | undefined> => {
    const existing = await db.tenant.findUnique({ where: { id: input.id } });
    if (!existing) return undefined;
    if (existing.name !== input.name) {
      throw new IronflowError('CONFLICT', `tenant ${input.id} already exists under another name; choose another id`, { path: 'name', tenantId: input.id });
    }
    return { tenant: { id: existing.id, name: existing.name }, created: false };
  };

  const replay = await replayOf();
  if (replay) return replay;
  try {
    await db.$transaction(async (tx) => {
      await tx.tenant.create({ data: { id: input.id, name: input.name } });
      await appendEvent(tx, { tenantId: input.id, type: 'tenant.created', subjectId: input.id });
    });
    return { tenant: { id: input.id, name: input.name }, created: true };
  } catch (error) {
    // Two racing creates: the loser answers as a repeat (or CONFLICT) of the winner.
    if (!isUniqueViolation(error)) throw error;
    const winner = await replayOf();
    if (!winner) throw error;
    return winner;
  }
}
