// The Prisma client for the configured database. Both generated clients come from the
// same schema (scripts/prisma.sh), so they share one type: the SQLite client's.
import { isDriverAdapterError } from '@prisma/driver-adapter-utils';
import { PrismaClient, Prisma } from '../generated/prisma-sqlite/client';
import { createAdapter } from './db-adapter';
import { bindConnection, bindTransaction, StatementError } from './raw-statements';
import { bindingTransactions } from './transaction-connections';
import type { DatabaseTarget } from '../core/database-target';

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export type DbOrTx = Db | Tx;
export { Prisma };

/**
 * How long a transaction may wait for the database's connection (Prisma's default, 2 s, failed
 * joins with "Unable to start a transaction in the given time" when a fleet of machines joined
 * at once on SQLite's one connection: as long as SQLite's busy timeout now), and may run (a
 * join signs a certificate inside its transaction: 5 s is short on a loaded machine).
 */
const transactionOptions = { maxWait: 10_000, timeout: 15_000 };

export async function createDb(target: DatabaseTarget): Promise<Db> {
  let db: Db | undefined;
  const adapter = createAdapter(target, (connection) => db && bindConnection(db, connection));
  if (target.provider === 'postgresql') {
    const pgClient = await import('../generated/prisma-postgres/client');
    // Same models, same queries: only the SQL dialect of the generated runtime differs.
    db = new pgClient.PrismaClient({ adapter, transactionOptions }) as unknown as Db;
    bindingTransactions(db, bindTransaction);
    await db.$connect();
    return db;
  }
  db = new PrismaClient({ adapter, transactionOptions });
  bindingTransactions(db, bindTransaction);
  // Concurrent writers wait for the lock instead of failing at once with SQLITE_BUSY.
  await db.$executeRawUnsafe('PRAGMA busy_timeout = 10000');
  // Write-ahead logging: a commit appends to the log instead of rewriting a rollback journal,
  // 0.03 ms instead of 0.9 ms a write here (bench/README.md), and readers in another process
  // no longer block the writer. synchronous stays FULL, so a commit survives a power loss too.
  await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  return db;
}

/** True for a unique-constraint violation (two racing creates: one wins, one sees this), from a model query or a raw statement. */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof StatementError) return error.kind === 'UniqueConstraintViolation';
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  // A raw statement through the client (in a transaction): "raw query failed", the adapter's error inside.
  const adapterError = error.meta?.driverAdapterError;
  return error.code === 'P2010' && isDriverAdapterError(adapterError) && adapterError.cause.kind === 'UniqueConstraintViolation';
}
