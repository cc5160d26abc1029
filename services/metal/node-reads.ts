// Metal node rows read with raw SQL. Prisma's client engine compiles every model query into a
// plan, afresh each time: for the Node model's columns that cost ~0.7 ms a node and ~4 ms a
// page of 50, most of an API read's CPU (bench/figures/api.ts). Prisma maps a raw row's
// columns by their declared types (dates, JSON, booleans) as it maps a model's, so the rows
// are the model's rows, on SQLite and on PostgreSQL alike.
import type { Node } from '../../generated/prisma-sqlite/client';
import { Prisma, type DbOrTx } from '../db';
import type { MetalListQuery } from '../../core/schemas/metal';

/** The live (not deleted) metal nodes, those with a provision state, that also meet `conditions`. */
export function selectMetalNodes(db: DbOrTx, conditions: Prisma.Sql[], tail: Prisma.Sql = Prisma.empty): Promise<Node[]> {
  const where = Prisma.join([...conditions, Prisma.sql`"deletedAt" IS NULL`, Prisma.sql`"provisionState" IS NOT NULL`], ' AND ');
  return db.$queryRaw<Node[]>`SELECT * FROM "Node" WHERE ${where} ${tail}`;
}

/** One page of the tenant's metal nodes by id, and the cursor of the next when there is one. */
export async function listMetalNodes(db: DbOrTx, q: MetalListQuery): Promise<{ nodes: Node[]; nextCursor: string | null }> {
  const rows = await selectMetalNodes(
    db,
    [
      Prisma.sql`"tenantId" = ${q.tenantId}`,
      ...(q.state ? [Prisma.sql`"provisionState" = ${q.state}`] : []),
      ...(q.poolId ? [Prisma.sql`"poolId" = ${q.poolId}`] : []),
      ...(q.siteId ? [Prisma.sql`"siteId" = ${q.siteId}`] : []),
      ...(q.cursor ? [Prisma.sql`"id" > ${q.cursor}`] : []),
    ],
    Prisma.sql`ORDER BY "id" ASC LIMIT ${q.limit + 1}`,
  );
  const nodes = rows.slice(0, q.limit);
  return { nodes, nextCursor: rows.length > q.limit ? (nodes[nodes.length - 1]?.id ?? null) : null };
}

/** A node's row by id, deleted or not, or null: each BMC request of a site agent reads it (services/bmc-access.ts). */
export async function findNodeById(db: DbOrTx, nodeId: string): Promise<Node | null> {
  const [row] = await db.$queryRaw<Node[]>`SELECT * FROM "Node" WHERE "id" = ${nodeId}`;
  return row ?? null;
}

/** A node's desired host state (Node.hostSpec), or null: every node agent's heartbeat reads it. */
export async function nodeHostSpec(db: DbOrTx, nodeId: string): Promise<Record<string, unknown> | null> {
  const [row] = await db.$queryRaw<Array<Pick<Node, 'hostSpec'>>>`SELECT "hostSpec" FROM "Node" WHERE "id" = ${nodeId}`;
  return (row?.hostSpec ?? null) as Record<string, unknown> | null;
}
