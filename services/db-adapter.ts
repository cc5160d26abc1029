// Driver adapters for both databases. The query engine and the schema engine both run
// without native binaries through these.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import type { DatabaseTarget } from '../core/database-target';
import { statementName } from './postgres-statement-names';
import { forgettingStatements } from './prisma-debug-history';
import { wrapConnections } from './sqlite-connections';
import { oneStatementAtATime } from './sqlite-one-connection';
import { keepingPreparedStatements } from './sqlite-statement-cache';
import { reportTransaction } from './transaction-connections';

const PG_NAME_OID = 19;
const PG_TEXT_OID = 25;

type QueryResultLike = { fields?: Array<{ dataTypeID: number }> } | Array<{ fields?: Array<{ dataTypeID: number }> }>;

// Upstream bug prisma/orm#27403: the schema engine reads catalog columns of type `name`
// (OID 19), which @prisma/adapter-pg cannot map. Report them as text (OID 25), for the
// pool's own queries and for the clients it hands out, in promise and callback forms.
function reportNameColumnsAsText(result: QueryResultLike): QueryResultLike {
  for (const r of Array.isArray(result) ? result : [result]) {
    for (const field of r?.fields ?? []) if (field.dataTypeID === PG_NAME_OID) field.dataTypeID = PG_TEXT_OID;
  }
  return result;
}

type Queryable = { query: (...args: unknown[]) => unknown };

/** A query config (the adapter's form) whose text is one of the named statements gets its name (services/postgres-statement-names.ts). */
function withStatementName(args: unknown[]): void {
  const config = args[0] as { text?: unknown; name?: unknown } | undefined;
  if (typeof config !== 'object' || config === null || typeof config.text !== 'string' || config.name !== undefined) return;
  const name = statementName(config.text);
  if (name) config.name = name;
}

function patchQuery(target: pg.Pool | pg.PoolClient): void {
  const queryable = target as unknown as Queryable;
  const original = queryable.query.bind(target);
  queryable.query = (...args: unknown[]) => {
    withStatementName(args);
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      const callback = last as (err: unknown, res?: QueryResultLike) => void;
      args[args.length - 1] = (err: unknown, res?: QueryResultLike) => callback(err, res && reportNameColumnsAsText(res));
      return original(...args);
    }
    const out = original(...args);
    return out instanceof Promise ? out.then((res: QueryResultLike) => reportNameColumnsAsText(res)) : out;
  };
}

/**
 * How long a pooled connection may sit idle before the pool closes it. pg's default, 10 s, closed
 * the connections a busy API had needed a moment before: the pool hands out the one released
 * last, so under steady load most sit idle, and each burst opened them anew, a new PostgreSQL
 * backend each, its caches cold and its named statements unprepared. Three minutes of bench/api
 * reads (100–1000 a second) and verbs opened 42 connections; with 5 minutes, 12.
 */
const IDLE_CONNECTION_MS = 5 * 60_000;

function postgresPool(url: string): pg.Pool {
  // allowExitOnIdle: a process with nothing else to do exits though the pool's connections are
  // open (the Prisma CLI never disposes of its adapter: `migrate deploy` would wait out the idle timeout).
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: IDLE_CONNECTION_MS, allowExitOnIdle: true });
  // An idle client's connection ended by the server (a restart, a shutdown) is an 'error' event
  // of the pool: unhandled, it kills the process. The pool has dropped that client already and
  // the next query opens a new connection, so there is nothing to do.
  pool.on('error', () => undefined);
  patchQuery(pool);
  // Each client once, when the pool opens its connection: pool.connect hands the same client out
  // again and again, and a patch per hand-out nested a wrapper per query until the stack overflowed.
  pool.on('connect', (client) => patchQuery(client));
  return pool;
}

type Factory = SqlMigrationAwareDriverAdapterFactory;
type Connection = SqlDriverAdapter;

/**
 * PostgreSQL, a pool for each connection Prisma opens, ended when Prisma disposes of it
 * ($disconnect): a control plane that stops gives its connections back at once, not when they
 * time out (the tests start and stop many, against one server's max_connections). A pool opens
 * no connection until asked, so the one made for the names below costs nothing.
 */
function postgresFactory(url: string): Factory {
  const withOwnPool = () => new PrismaPg(postgresPool(url), { disposeExternalPool: true });
  const { provider, adapterName } = withOwnPool();
  return {
    provider,
    adapterName,
    connect: async () => forgettingStatements(await withOwnPool().connect()),
    connectToShadowDb: () => withOwnPool().connectToShadowDb(),
  };
}

/**
 * The factory, telling `connected` of each connection Prisma opens through it, and of its end
 * (null) when Prisma disposes of it (services/raw-statements.ts runs statements on it), and
 * each transaction it starts to the `$transaction` call that asked for it
 * (services/transaction-connections.ts).
 */
function reportingConnections(factory: Factory, connected: (connection: Connection | null) => void): Factory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connection = await factory.connect();
      const startTransaction = connection.startTransaction.bind(connection);
      connection.startTransaction = async (isolationLevel) => reportTransaction(await startTransaction(isolationLevel));
      const dispose = connection.dispose.bind(connection);
      connection.dispose = async () => {
        connected(null);
        await dispose();
      };
      connected(connection);
      return connection;
    },
    connectToShadowDb: () => factory.connectToShadowDb(),
  };
}

export function createAdapter(target: DatabaseTarget, connected: (connection: Connection | null) => void = () => undefined): Factory {
  if (target.provider === 'postgresql') return reportingConnections(postgresFactory(target.url), connected);
  mkdirSync(path.dirname(target.file), { recursive: true });
  const sqlite = wrapConnections(new PrismaBetterSqlite3({ url: `file:${target.file}` }), forgettingStatements);
  return reportingConnections(oneStatementAtATime(keepingPreparedStatements(sqlite)), connected);
}
