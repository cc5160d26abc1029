// Metal node rows read with raw SQL (services/raw-statements.ts). Prisma 6.19's client compiled
// every model query into a plan, afresh each time: for the Node model's columns that cost ~0.7 ms
// a node and ~4 ms a page of 50, most of an API read's CPU (bench/figures/api.ts); Prisma 7
// keeps the plans, but its request pipeline still costs more than the raw statement. Raw rows are
// mapped by their columns' types (dates, JSON, booleans) as a model's are, so they are the
// model's rows, on SQLite and on PostgreSQL alike.
import type { Node } from '../../generated/prisma-sqlite/client';
import { Prisma, type DbOrTx } from '../db';
import type { MetalListQuery } from '../../core/schemas/metal';
import { metalViewColumns, type MetalViewRow } from '../../core/metal/view';
import { queryRows } from '../raw-statements';
import { notFound } from '../../core/errors';

/** Only the live (not deleted) metal nodes, those with a provision state, that also meet `conditions`. */
const liveMetalNodes = (conditions: Prisma.Sql[]) =>
  Prisma.join([...conditions, Prisma.sql`"deletedAt" IS NULL`, Prisma.sql`"provisionState" IS NOT NULL`], ' AND ');

/** The live metal nodes that meet `conditions`, whole rows. */
export function selectMetalNodes(db: DbOrTx, conditions: Prisma.Sql[]): Promise<Node[]> {
  return queryRows<Node>(db, Prisma.sql`SELECT * FROM "Node" WHERE ${liveMetalNodes(conditions)}`);
}

/** The conditions that pick one node by id, within the tenant when one is given. */
export const oneNode = (nodeId: string, tenantId: string | undefined): Prisma.Sql[] => [
  Prisma.sql`"id" = ${nodeId}`,
  ...(tenantId ? [Prisma.sql`"tenantId" = ${tenantId}`] : []),
];

const viewColumns = Prisma.raw(metalViewColumns.map((column) => `"${column}"`).join(', '));

/** A live metal node of the tenant (any tenant when undefined) with only the columns its view reads: never its inventory or host spec, which can be large. */
export async function findMetalNodeView(db: DbOrTx, tenantId: string | undefined, nodeId: string): Promise<MetalViewRow> {
  const [row] = await queryRows<MetalViewRow>(db, Prisma.sql`SELECT ${viewColumns} FROM "Node" WHERE ${liveMetalNodes(oneNode(nodeId, tenantId))}`);
  if (!row) throw notFound('metal node', nodeId);
  return row;
}

/** One page of the tenant's metal nodes by id, with the columns their view reads, and the cursor of the next page when there is one. */
export async function listMetalNodes(db: DbOrTx, q: MetalListQuery): Promise<{ nodes: MetalViewRow[]; nextCursor: string | null }> {
  const rows = await queryRows<MetalViewRow>(
    db,
    Prisma.sql`SELECT ${viewColumns} FROM "Node" WHERE ${liveMetalNodes([
      Prisma.sql`"tenantId" = ${q.tenantId}`,
      ...(q.state ? [Prisma.sql`"provisionState" = ${q.state}`] : []),
      ...(q.poolId ? [Prisma.sql`"poolId" = ${q.poolId}`] : []),
      ...(q.siteId ? [Prisma.sql`"siteId" = ${q.siteId}`] : []),
      ...(q.cursor ? [Prisma.sql`"id" > ${q.cursor}`] : []),
    ])} ORDER BY "id" ASC LIMIT ${q.limit + 1}`,
  );
  const nodes = rows.slice(0, q.limit);
  return { nodes, nextCursor: rows.length > q.limit ? (nodes[nodes.length - 1]?.id ?? null) : null };
}

/** A node's row by id, deleted or not, or null: each BMC request of a site agent reads it (services/bmc-access.ts). */
export async function findNodeById(db: DbOrTx, nodeId: string): Promise<Node | null> {
  const [row] = await queryRows<Node>(db, Prisma.sql`SELECT * FROM "Node" WHERE "id" = ${nodeId}`);
  return row ?? null;
}

/** What a node agent's heartbeat answers from its node: the desired host state (Node.hostSpec, or null) and the provision state (its beat interval). */
export async function nodeSessionView(db: DbOrTx, nodeId: string): Promise<{ hostSpec: Record<string, unknown> | null; provisionState: string | null }> {
  const [row] = await queryRows<Pick<Node, 'hostSpec' | 'provisionState'>>(
    db,
    Prisma.sql`SELECT "hostSpec", "provisionState" FROM "Node" WHERE "id" = ${nodeId}`,
  );
  return { hostSpec: (row?.hostSpec ?? null) as Record<string, unknown> | null, provisionState: row?.provisionState ?? null };
}
