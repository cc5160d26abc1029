// The SQLite connection keeps its prepared statements (services/sqlite-statement-cache.ts): the
// same SQL is prepared once and run with each call's own arguments, its columns are read once,
// the least recently used text is dropped past the bound, and a connection without the client
// it expects is refused.
// On a real better-sqlite3 database in memory, and through the adapter Prisma is given.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAdapter } from '../../services/db-adapter';
import { CACHED_STATEMENTS, cacheStatements } from '../../services/sqlite-statement-cache';

type Prepare = (sql: string) => { bind(args: unknown[]): { reader: boolean; columns(): unknown[]; raw(): { all(): unknown[] }; run(): { changes: number } } };

const opened: Database.Database[] = [];
afterEach(() => opened.splice(0).forEach((database) => database.close()));

/** A database with a table of three rows, its prepare counted, kept as the adapter keeps it. */
function adapterOnDatabase(): { prepare: Prepare; prepared: string[] } {
  const client = new Database(':memory:');
  opened.push(client);
  client.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");
  const prepared: string[] = [];
  const prepare = client.prepare.bind(client);
  client.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof client.prepare;
  cacheStatements({ client });
  return { prepare: client.prepare as unknown as Prepare, prepared };
}

describe('the SQLite statement cache', () => {
  it('prepares a SQL text once and runs it with each call’s own arguments', () => {
    const { prepare, prepared } = adapterOnDatabase();
    const select = 'SELECT name FROM t WHERE id = ?';
    const names = [1, 2, 3, 1].map((id) => prepare(select).bind([id]).raw().all());
    expect(names).toEqual([[['one']], [['two']], [['three']], [['one']]]);
    expect(prepared).toEqual([select]);

    const bound = prepare(select).bind([2]);
    expect(bound.reader).toBe(true);
    expect(bound.columns()).toMatchObject([{ name: 'name', type: 'TEXT' }]);
    // Read from the statement once: better-sqlite3 builds them afresh on every call.
    expect(prepare(select).bind([3]).columns()).toBe(bound.columns());

    const update = 'UPDATE t SET name = ? WHERE id = ?';
    expect(prepare(update).bind(['deux', 2]).run().changes).toBe(1);
    expect(prepare(update).bind(['trois', 3]).run().changes).toBe(1);
    expect(prepare(update).bind(['none', 9]).run().changes).toBe(0);
    expect(prepare(update).bind([]).reader).toBe(false);
    expect(prepare('SELECT name FROM t ORDER BY id').bind([]).raw().all()).toEqual([['one'], ['deux'], ['trois']]);
    expect(prepared).toEqual([select, update, 'SELECT name FROM t ORDER BY id']);
  });

  it('keeps the most recently used texts, up to its bound, and prepares a dropped one again', () => {
    const { prepare, prepared } = adapterOnDatabase();
    const text = (n: number) => `SELECT ${n} AS n`;
    for (let n = 0; n <= CACHED_STATEMENTS; n++) expect(prepare(text(n)).bind([]).raw().all()).toEqual([[n]]);
    expect(prepared).toHaveLength(CACHED_STATEMENTS + 1);

    // Text 0 was the least recently used when the bound was passed: it is gone; text 1 is kept.
    prepare(text(1)).bind([]).raw().all();
    expect(prepared).toHaveLength(CACHED_STATEMENTS + 1);
    expect(prepare(text(0)).bind([]).raw().all()).toEqual([[0]]);
    expect(prepared).toHaveLength(CACHED_STATEMENTS + 2);
    // Preparing text 0 again dropped text 2 (text 1 was used since), never text 1.
    prepare(text(1)).bind([]).raw().all();
    expect(prepared).toHaveLength(CACHED_STATEMENTS + 2);
    prepare(text(2)).bind([]).raw().all();
    expect(prepared.at(-1)).toBe(text(2));
  });

  it('refuses a connection that has no better-sqlite3 client, naming the file to update', () => {
    expect(() => cacheStatements({})).toThrow(/services\/sqlite-statement-cache\.ts/);
    expect(() => cacheStatements({ client: { prepare: 'not a function' } })).toThrow(/no better-sqlite3 client/);
  });

  it('lets SQL errors through as better-sqlite3 gives them', () => {
    const { prepare } = adapterOnDatabase();
    expect(() => prepare('SELECT x FROM nowhere')).toThrow(/no such table: nowhere/);
    expect(() => prepare('INSERT INTO t VALUES (?, ?)').bind([1, 'again']).run()).toThrow(/UNIQUE constraint failed/);
  });

  it('is on for the connections the SQLite adapter Prisma is given opens', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ironflow-statement-cache-'));
    const prepared = vi.spyOn(Database.prototype, 'prepare');
    try {
      const connection = await createAdapter({ provider: 'sqlite', file: path.join(dir, 'cache.db') }).connect();
      const select = { sql: 'SELECT ? AS n', args: [1], argTypes: [{ scalarType: 'int' as const, arity: 'scalar' as const }] };
      for (const n of [1, 2, 3]) expect((await connection.queryRaw({ ...select, args: [n] })).rows).toEqual([[n]]);
      expect(prepared.mock.calls.filter(([sql]) => sql === select.sql)).toHaveLength(1);
      await connection.dispose();
    } finally {
      prepared.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
