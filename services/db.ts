// The Prisma client for the configured database. Both generated clients come from the
// same schema (scripts/prisma.sh), so they share one type: the SQLite client's.
import { PrismaClient, Prisma } from '../generated/prisma-sqlite/client';
import { createAdapter } from './db-adapter';
import type { DatabaseTarget } from '../core/database-target';

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export type DbOrTx = Db | Tx;
export { Prisma };

export async function createDb(target: DatabaseTarget): Promise<Db> {
  const adapter = createAdapter(target);
  if (target.provider === 'postgresql') {
    const pgClient = await import('../generated/prisma-postgres/client');
    // Same models, same queries: only the SQL dialect of the generated runtime differs.
    return new pgClient.PrismaClient({ adapter }) as unknown as Db;
  }
  const db = new PrismaClient({ adapter });
  // Concurrent writers wait for the lock instead of failing at once with SQLITE_BUSY.
  await db.$executeRawUnsafe('PRAGMA busy_timeout = 10000');
  return db;
}

/** True for a unique-constraint violation (two racing creates: one wins, one sees this). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
