// @prisma/debug keeps the arguments of its last 100 calls, with debugging off too, for crash
// reports that nothing in this process reads: the driver adapters log every statement they run
// there, its text and its values. Under load the last 100 lived long enough to be promoted to
// the old generation: at 500 page reads a second, about half of all the API promoted, which set
// how often it stalled in a major collection (bench/README.md, "The API"). Each statement
// forgets them as soon as it is sent: the adapters log it before their first await.
import { clearLogs } from '@prisma/debug';
import type { SqlDriverAdapter, SqlQueryable } from '@prisma/driver-adapter-utils';

/** `send`, then the history cleared: the statement `send` logged with it. */
function clearingAfter<Query, Result>(send: (query: Query) => Result): (query: Query) => Result {
  return (query) => {
    const result = send(query);
    clearLogs();
    return result;
  };
}

function forgetting<T extends SqlQueryable>(queryable: T): T {
  queryable.queryRaw = clearingAfter(queryable.queryRaw.bind(queryable));
  queryable.executeRaw = clearingAfter(queryable.executeRaw.bind(queryable));
  return queryable;
}

/**
 * The adapter's own `connection`, changed in place so that @prisma/debug forgets its statements
 * and its transactions' once sent: every wrapper around it calls these.
 */
export function forgettingStatements<T extends SqlDriverAdapter>(connection: T): T {
  const startTransaction = connection.startTransaction.bind(connection);
  connection.startTransaction = async (isolationLevel) => forgetting(await startTransaction(isolationLevel));
  return forgetting(connection);
}
