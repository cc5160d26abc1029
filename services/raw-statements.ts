// Raw SQL handed straight to the driver adapter Prisma itself runs on, for the statements every
// API read and every agent request makes. Through Prisma's client a raw statement still goes
// through its request pipeline and query compiler: about 0.3 ms of CPU a statement more than
// the adapter alone, and 1.37 against 0.60 ms for a page of 50 nodes on PostgreSQL
// (bench/README.md, "The API"). Rows come back mapped as Prisma maps a raw result (its
// serializeRawSql and deserializeRawResult): dates as Date, JSON parsed, booleans as booleans,
// 64-bit integers as bigint, so callers get the same rows either way. Inside a transaction the
// statement goes to that transaction's adapter transaction (services/transaction-connections.ts),
// or through the transaction's client when it has none: only they hold its connection.
import { ColumnTypeEnum, isDriverAdapterError, type ColumnType, type SqlDriverAdapter, type SqlQuery, type SqlResultSet } from '@prisma/driver-adapter-utils';
import type { Db, DbOrTx, Prisma, Tx } from './db';
import { nameStatement } from './postgres-statement-names';

type Connection = Pick<SqlDriverAdapter, 'provider' | 'queryRaw' | 'executeRaw'>;

/** The connection Prisma opened for each client (services/db-adapter.ts), and each interactive transaction's client's transaction. */
const connections = new WeakMap<object, Connection>();

/** Binds a client to the adapter connection its queries run on; null when Prisma closed it (the client's statements go through Prisma, which opens another). */
export function bindConnection(db: Db, connection: Connection | null): void {
  if (connection) connections.set(db, connection);
  else connections.delete(db);
}

/** Binds a transaction's client to its adapter transaction (services/transaction-connections.ts). */
export function bindTransaction(tx: Tx, transaction: Connection): void {
  connections.set(tx, transaction);
}

type Convert = (value: unknown) => unknown;

const toBoolean: Convert = (value) => (typeof value === 'boolean' ? value : value === 1 || value === '1' || value === 'true');
const toDate: Convert = (value) => new Date(value as string);

/** How a non-null value of the column type becomes what Prisma's $queryRaw gives; undefined: as the driver gave it. */
function converter(type: ColumnType | undefined): Convert | undefined {
  switch (type) {
    case ColumnTypeEnum.Int32:
      return (value) => Math.trunc(Number(value));
    case ColumnTypeEnum.Int64:
      return (value) => BigInt(typeof value === 'number' ? Math.trunc(value) : (value as string));
    case ColumnTypeEnum.Boolean:
      return toBoolean;
    case ColumnTypeEnum.Date:
    case ColumnTypeEnum.DateTime:
      return toDate;
    case ColumnTypeEnum.Json:
      return (value) => JSON.parse(value as string);
    default:
      return undefined;
  }
}

function mapRows<T>(result: SqlResultSet): T[] {
  const { columnNames, columnTypes } = result;
  const converters = columnTypes.map(converter);
  // Each row starts as a copy of one object that already has every column. Adding a row's
  // columns one by one by name turned a row of more than 16 columns (a node has 31) into a
  // dictionary-mode object, slower for every read after, and about 4 KB each (bench/README.md).
  const shape: Record<string, unknown> = Object.fromEntries(columnNames.map((name) => [name, null]));
  return result.rows.map((row) => {
    const out = { ...shape };
    for (let i = 0; i < columnNames.length; i++) {
      const value = row[i];
      const convert = converters[i];
      out[columnNames[i] as string] = value === null || convert === undefined ? value : convert(value);
    }
    return out as T;
  });
}

function argType(value: unknown): SqlQuery['argTypes'][number] {
  if (value instanceof Date) return { scalarType: 'datetime', arity: 'scalar' };
  switch (typeof value) {
    case 'string':
      return { scalarType: 'string', arity: 'scalar' };
    case 'number':
      return { scalarType: Number.isInteger(value) ? 'int' : 'float', arity: 'scalar' };
    case 'bigint':
      return { scalarType: 'bigint', arity: 'scalar' };
    case 'boolean':
      return { scalarType: 'boolean', arity: 'scalar' };
    default:
      return { scalarType: 'unknown', arity: 'scalar' };
  }
}

function toQuery(connection: Connection, sql: Prisma.Sql): SqlQuery {
  // PostgreSQL numbers its placeholders ($1) and prepares the text once per connection; SQLite takes them in order (?).
  if (connection.provider === 'postgres') nameStatement(sql.text);
  return { sql: connection.provider === 'postgres' ? sql.text : sql.sql, args: sql.values, argTypes: sql.values.map(argType) };
}

/**
 * The adapter's error with what the database said in its message (the adapter's own message is
 * only its kind). Never PostgreSQL's `detail`: it can quote the failing row's values ("Failing
 * row contains (…)"), and a message reaches logs and answers.
 */
function statementError(error: unknown): unknown {
  if (!(error instanceof Error) || !isDriverAdapterError(error)) return error;
  const { kind, ...said } = error.cause as { kind: string } & Record<string, unknown>;
  delete said.detail;
  return new StatementError(kind, `the database refused the statement: ${kind} ${JSON.stringify(said)}`);
}

/** A statement the database refused; `kind` is the driver adapter's (UniqueConstraintViolation, …). */
export class StatementError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
    this.name = 'StatementError';
  }
}

/** The rows `sql` selects, mapped as Prisma's $queryRaw maps them. */
export async function queryRows<T>(db: DbOrTx, sql: Prisma.Sql): Promise<T[]> {
  const connection = connections.get(db);
  if (!connection) return db.$queryRaw<T[]>(sql);
  return mapRows<T>(await connection.queryRaw(toQuery(connection, sql)).catch((error: unknown) => Promise.reject(statementError(error))));
}

/** Runs `sql` and answers how many rows it changed, as Prisma's $executeRaw does. */
export async function executeStatement(db: DbOrTx, sql: Prisma.Sql): Promise<number> {
  const connection = connections.get(db);
  if (!connection) return db.$executeRaw(sql);
  return connection.executeRaw(toQuery(connection, sql)).catch((error: unknown) => Promise.reject(statementError(error)));
}
