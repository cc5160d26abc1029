// Which database a URL names: PostgreSQL for postgres://…, SQLite for file:….
export type DatabaseTarget = { provider: 'sqlite'; file: string } | { provider: 'postgresql'; url: string };

export function databaseTarget(config: { databaseUrl: string }): DatabaseTarget {
  const url = config.databaseUrl;
  if (/^postgres(ql)?:\/\//.test(url)) return { provider: 'postgresql', url };
  if (url.startsWith('file:')) return { provider: 'sqlite', file: url.slice('file:'.length) };
  throw new Error(`DATABASE_URL must be postgres://… or file:…; got a URL of another scheme`);
}
