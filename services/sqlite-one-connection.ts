// Prisma's better-sqlite3 adapter runs every statement on ONE connection, and only its
// transactions wait for each other: a query from outside a transaction that arrives while one
// is open (its callback awaiting) runs inside that transaction. It reads the transaction's
// uncommitted rows, and its own writes are undone when the transaction rolls back: the fleet
// bench lost BMC operation records this way when 100 machines deployed at once.
// This wrapper queues every statement behind an open transaction, first come first served.
// Prisma rolls back a transaction it gave up waiting for (maxWait) once it starts, and one past
// its timeout, so the queue always moves on.
// Transactions begin IMMEDIATE (the adapter's own BEGIN is deferred): a deferred transaction
// that read first and then writes gets SQLITE_BUSY at once, with no busy wait, when another
// process (a second worker on the same file) wrote meanwhile. An immediate one takes the write
// lock up front, and waits for it within the busy timeout.
import { wrapConnections, type SqliteConnection, type SqliteFactory } from './sqlite-connections';

type Adapter = SqliteConnection;
type Transaction = Awaited<ReturnType<Adapter['startTransaction']>>;

/** A first-come-first-served lock: acquire() resolves with the function that releases it. */
class Queue {
  private tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return turn;
  }

  async run<T>(statement: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await statement();
    } finally {
      release();
    }
  }
}

/** A transaction on the adapter's connection, begun IMMEDIATE; its commit or rollback lets the queue move on. */
async function immediateTransaction(adapter: Adapter, release: () => void): Promise<Transaction> {
  await adapter.executeScript('BEGIN IMMEDIATE');
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    // Prisma sends COMMIT or ROLLBACK itself through executeRaw, then calls commit() or rollback().
    options: { usePhantomQuery: false },
    queryRaw: (query) => adapter.queryRaw(query),
    executeRaw: (query) => adapter.executeRaw(query),
    commit: async () => release(),
    rollback: async () => release(),
  };
}

function serialized(adapter: Adapter): Adapter {
  const queue = new Queue();
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) => queue.run(() => adapter.queryRaw(query)),
    executeRaw: (query) => queue.run(() => adapter.executeRaw(query)),
    executeScript: (script) => queue.run(() => adapter.executeScript(script)),
    async startTransaction(isolationLevel) {
      if (isolationLevel && isolationLevel !== 'SERIALIZABLE') return adapter.startTransaction(isolationLevel); // the adapter's refusal
      const release = await queue.acquire();
      try {
        return await immediateTransaction(adapter, release);
      } catch (error) {
        release();
        throw error;
      }
    },
    dispose: () => adapter.dispose(),
  };
}

/** The factory Prisma is given: every connection it makes runs one statement or transaction at a time. */
export function oneStatementAtATime(factory: SqliteFactory): SqliteFactory {
  return wrapConnections(factory, serialized);
}
