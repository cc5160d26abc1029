// A factory of SQLite driver-adapter connections whose every connection goes through a wrapper:
// how services/sqlite-one-connection.ts and services/sqlite-statement-cache.ts change each
// connection Prisma opens, shadow database included.
import type { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';

export type SqliteFactory = Pick<PrismaBetterSqlite3, 'provider' | 'adapterName' | 'connect' | 'connectToShadowDb'>;
export type SqliteConnection = Awaited<ReturnType<PrismaBetterSqlite3['connect']>>;

/** The factory, each connection it makes passed through `wrap`. */
export function wrapConnections(factory: SqliteFactory, wrap: (connection: SqliteConnection) => SqliteConnection): SqliteFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => wrap(await factory.connect()),
    connectToShadowDb: async () => wrap(await factory.connectToShadowDb()),
  };
}
