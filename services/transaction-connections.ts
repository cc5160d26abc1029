// The driver adapter's transaction behind each interactive transaction's client, so the raw
// statements made inside one (services/raw-statements.ts) go straight to it instead of through
// the transaction client's $queryRaw, which runs Prisma's request pipeline for each: a
// maintenance verb (a read, an update, an event, in one transaction) spent more of its CPU in
// that pipeline than in SQLite (bench/README.md, "The API"). Prisma asks the connection for the
// transaction within the async context of the `$transaction` call that wants it, so that call
// leaves a holder in AsyncLocalStorage for the connection to fill. Once Prisma has committed or
// rolled back (its timeout included), a statement sent to the transaction is refused: on SQLite
// it would otherwise run outside any transaction, between other callers' statements.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from '@prisma/driver-adapter-utils';
import type { Db, Tx } from './db';

type Statements = Pick<Transaction, 'provider' | 'queryRaw' | 'executeRaw'>;

const starting = new AsyncLocalStorage<{ transaction?: Statements }>();

const endingStatements = new Set(['COMMIT', 'ROLLBACK']);

/** The adapter's transaction with its statements refused once it has ended. */
function endingWithCommit(transaction: Transaction): { wrapped: Transaction; statements: Statements } {
  let ended = false;
  const refuseIfEnded = () => {
    if (ended) throw new Error('this transaction has ended (committed, rolled back or timed out): its statements must run before it ends');
  };
  const statements: Statements = {
    provider: transaction.provider,
    queryRaw: async (query) => {
      refuseIfEnded();
      return transaction.queryRaw(query);
    },
    executeRaw: async (query) => {
      refuseIfEnded();
      return transaction.executeRaw(query);
    },
  };
  const wrapped: Transaction = {
    provider: transaction.provider,
    adapterName: transaction.adapterName,
    options: transaction.options,
    queryRaw: (query) => transaction.queryRaw(query),
    executeRaw: (query) => {
      // Prisma sends COMMIT or ROLLBACK itself before it calls commit() or rollback() (sqlite-one-connection.ts).
      if (endingStatements.has(query.sql)) ended = true;
      return transaction.executeRaw(query);
    },
    commit: async () => {
      ended = true;
      await transaction.commit();
    },
    rollback: async () => {
      ended = true;
      await transaction.rollback();
    },
  };
  return { wrapped, statements };
}

/** What the connection hands Prisma for a new transaction: reported to the `$transaction` call that asked for it, if it waits for one. */
export function reportTransaction(transaction: Transaction): Transaction {
  const holder = starting.getStore();
  if (!holder) return transaction;
  const { wrapped, statements } = endingWithCommit(transaction);
  holder.transaction = statements;
  return wrapped;
}

/**
 * Makes `db.$transaction(callback)` tell `bind` which adapter transaction each callback's client
 * runs on. The array form (statements Prisma batches itself) is left as it is.
 */
export function bindingTransactions(db: Db, bind: (tx: Tx, transaction: Statements) => void): void {
  const original = db.$transaction.bind(db) as (...args: unknown[]) => Promise<unknown>;
  const $transaction = (first: unknown, ...rest: unknown[]): Promise<unknown> => {
    if (typeof first !== 'function') return original(first, ...rest);
    const callback = first as (tx: Tx) => Promise<unknown>;
    const holder: { transaction?: Statements } = {};
    return starting.run(holder, () =>
      original(
        async (tx: Tx) => {
          if (holder.transaction) bind(tx, holder.transaction);
          return callback(tx);
        },
        ...rest,
      ),
    );
  };
  Object.defineProperty(db, '$transaction', { value: $transaction, configurable: true, writable: true });
}
