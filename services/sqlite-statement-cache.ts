// Prepared statements kept for reuse on the better-sqlite3 connection Prisma's adapter runs on.
// The adapter prepares every statement afresh (`client.prepare(sql).bind(args)`), because a
// better-sqlite3 statement can be bound only once. Preparing was 17% of the API's CPU for one
// node and 9% for a page of 50 (bench/README.md, "The API"). Here `prepare` hands out, per call,
// a statement bound to that call's arguments over one prepared statement per SQL text, which
// passes the arguments at each run instead. It offers exactly what the adapter calls on a
// bound statement; anything else is a TypeError, which the tests would meet at once.
import type { Database, Statement } from 'better-sqlite3';
import { RecentCache } from '../core/recent-cache';
import { wrapConnections, type SqliteFactory } from './sqlite-connections';

/** Distinct SQL texts kept: Prisma's own queries vary with their IN lists, so the cache is bounded. */
export const CACHED_STATEMENTS = 500;

type Args = unknown[];

/** What the adapter calls on `client.prepare(sql).bind(args)`. */
interface BoundStatement {
  readonly reader: boolean;
  columns(): ReturnType<Statement['columns']>;
  raw(): { all(): unknown[] };
  run(): ReturnType<Statement['run']>;
}

/** A prepared statement and its result columns, read once: better-sqlite3 builds them afresh on every call (70 µs for a node's 33). */
interface Prepared {
  statement: Statement<Args>;
  columns?: ReturnType<Statement['columns']>;
}

function bound(prepared: Prepared, args: Args): BoundStatement {
  const { statement } = prepared;
  return {
    reader: statement.reader,
    columns: () => (prepared.columns ??= statement.columns()),
    raw: () => ({ all: () => statement.raw(true).all(args) }),
    run: () => statement.run(args),
  };
}

/** The prepare the adapter finds on `client`: the last CACHED_STATEMENTS SQL texts stay prepared. */
function cachingPrepare(database: Database): (sql: string) => { bind(args: Args): BoundStatement } {
  const prepare = database.prepare.bind(database);
  const statements = new RecentCache<string, Prepared>(CACHED_STATEMENTS);
  return (sql) => {
    let prepared = statements.get(sql);
    if (!prepared) statements.set(sql, (prepared = { statement: prepare<Args>(sql) }));
    const kept = prepared;
    return { bind: (args) => bound(kept, args) };
  };
}

/**
 * Makes the adapter connection's `client` (its better-sqlite3 Database, a field the adapter does
 * not declare) keep its prepared statements. A connection without that client is an adapter
 * this was not written for: fail at start, never run slower unnoticed.
 */
export function cacheStatements<A extends object>(adapter: A): A {
  const client = (adapter as { client?: unknown }).client as (Database & { prepare: unknown }) | undefined;
  if (!client || typeof client.prepare !== 'function' || typeof client.exec !== 'function')
    throw new Error(
      'the SQLite driver adapter has no better-sqlite3 client: services/sqlite-statement-cache.ts needs updating for this @prisma/adapter-better-sqlite3',
    );
  client.prepare = cachingPrepare(client) as unknown as Database['prepare'];
  return adapter;
}

/** The factory, each connection it makes keeping its prepared statements. */
export function keepingPreparedStatements(factory: SqliteFactory): SqliteFactory {
  return wrapConnections(factory, cacheStatements);
}
