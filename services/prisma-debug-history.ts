// @prisma/debug keeps the arguments of its last 100 calls, with debugging off too, for crash
// reports that nothing in this process reads: the driver adapters log every statement they run
// there, its text and its values. Under load the last 100 lived long enough to be promoted to the
// old generation: at 500 page reads a second, half of all the API promoted, which set how often
// it stalled in a major collection (bench/README.md, "The API"). Each statement forgets them as
// soon as it is sent: the adapters log it before their first await.
import { clearLogs } from '@prisma/debug';
import type { SqlDriverAdapter, SqlQueryable } from '@prisma/driver-adapter-utils';

function forgetting<T extends SqlQueryable>(queryable: T): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  const executeRaw = queryable.executeRaw.bind(queryable);
  queryable.queryRaw = (query) => {
    const result = queryRaw(query);
    clearLogs();
    return result;
  };
  queryable.executeRaw = (query) => {
    const result = executeRaw(query);
    clearLogs();
    return result;
  };
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
