// A read-then-write transaction on one counter row: the shape that two processes on one SQLite
// file break when their transactions begin deferred (services/sqlite-one-connection.ts).
import type { Db } from '../../services/db';

export const counterKey = (nodeId: string) => ({ nodeId_provisionState: { nodeId, provisionState: 'counter' } });

export async function incrementCounter(db: Db, nodeId: string): Promise<void> {
  await db.$transaction(async (tx) => {
    const row = await tx.profileRunSeq.findUniqueOrThrow({ where: counterKey(nodeId) });
    await tx.profileRunSeq.update({ where: counterKey(nodeId), data: { last: row.last + 1 } });
  });
}
