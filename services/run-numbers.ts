// The <n> of a node's provision run ids (node:<id>:<state>:<n>: services/temporal/workflow-ids.ts).
import { IronflowError } from '../core/errors';
import { Prisma, type DbOrTx } from './db';
import { queryRows } from './raw-statements';

/**
 * The next <n> of the node's runs in this state: one statement, so concurrent starts never
 * share one (an insert that meets the row increments it), and inside a transaction it is
 * undone with it. Raw SQL: Prisma compiling the model upsert cost more than the rest of the
 * statement, on every start.
 */
export async function nextRunNumber(db: DbOrTx, nodeId: string, provisionState: string): Promise<number> {
  const [row] = await queryRows<{ last: number | bigint }>(
    db,
    Prisma.sql`
    INSERT INTO "ProfileRunSeq" ("nodeId", "provisionState", "last") VALUES (${nodeId}, ${provisionState}, 1)
    ON CONFLICT ("nodeId", "provisionState") DO UPDATE SET "last" = "ProfileRunSeq"."last" + 1
    RETURNING "last"`,
  );
  if (!row) throw new IronflowError('INTERNAL', `no run number was returned for node ${nodeId} in ${provisionState}`);
  return Number(row.last);
}
