// services/postgres-statement-names.ts: which texts run as named statements, and the bound.
import { describe, expect, it } from 'vitest';
import { MAX_NAMED_STATEMENTS, nameStatement, statementName } from '../../services/postgres-statement-names';

describe('PostgreSQL statement names', () => {
  it('names a text once, the same way each time, and leaves unnamed what was never marked', () => {
    nameStatement('SELECT "id" FROM "Node" WHERE "id" = $1');
    const name = statementName('SELECT "id" FROM "Node" WHERE "id" = $1');
    expect(name).toMatch(/^ironflow_[0-9a-f]{20}$/);
    nameStatement('SELECT "id" FROM "Node" WHERE "id" = $1');
    expect(statementName('SELECT "id" FROM "Node" WHERE "id" = $1')).toBe(name);
    expect(statementName('SELECT "id" FROM "Site" WHERE "id" = $1')).toBeUndefined();
    nameStatement('SELECT "id" FROM "Site" WHERE "id" = $1');
    expect(statementName('SELECT "id" FROM "Site" WHERE "id" = $1')).not.toBe(name);
  });

  it(`names at most ${MAX_NAMED_STATEMENTS} texts: past them a text runs unnamed, and those named keep their name`, () => {
    // The names are per process, and test files share theirs: others may have named texts before.
    for (let i = 0; i < MAX_NAMED_STATEMENTS + 10; i++) nameStatement(`SELECT ${i} AS "n"`);
    const named = Array.from({ length: MAX_NAMED_STATEMENTS + 10 }, (_, i) => statementName(`SELECT ${i} AS "n"`));
    const count = named.filter((n) => n !== undefined).length;
    // The first test's two texts hold their places; the texts named are the first ones marked.
    expect(count).toBeLessThanOrEqual(MAX_NAMED_STATEMENTS - 2);
    expect(named.slice(0, count).every((n) => n !== undefined)).toBe(true);
    expect(named.slice(count).every((n) => n === undefined)).toBe(true);
    nameStatement('SELECT "late" AS "n"');
    expect(statementName('SELECT "late" AS "n"')).toBeUndefined();
    expect(statementName('SELECT "id" FROM "Node" WHERE "id" = $1')).toMatch(/^ironflow_/);
  });
});
