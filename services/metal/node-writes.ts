// A node's guarded update (`WHERE version = v`, else CONFLICT) in raw SQL (services/raw-statements.ts):
// every verb and every state move makes one, and Prisma compiling its model update and the
// re-read cost more CPU than the rest of the verb (bench/README.md, "The API"). Values are
// written as Prisma writes them: JSON columns as JSON text (a null, or Prisma.DbNull, as SQL
// NULL), dates and booleans bound as such, `updatedAt` set as @updatedAt sets it.
import type { Node } from '../../generated/prisma-sqlite/client';
import { Prisma, type DbOrTx } from '../db';
import { IronflowError } from '../../core/errors';
import { executeStatement } from '../raw-statements';
import { findNodeById } from './node-reads';

/** The Node columns Prisma types as Json: their values are written as JSON text. */
type JsonColumn = { [K in keyof Node]-?: Prisma.JsonValue extends Node[K] ? K : never }[keyof Node];
/** Every one of them, and only them: a column added to the schema as Json fails to compile until listed. */
const jsonColumns: Record<JsonColumn, true> = {
  macs: true,
  inventory: true,
  driverBindings: true,
  labels: true,
  deployProfile: true,
  lastError: true,
  hostSpec: true,
};

/** What a guarded update may set: any column but the ones the update itself owns. */
export type NodeColumns = {
  [K in Exclude<keyof Node, 'id' | 'version' | 'updatedAt'>]?: K extends JsonColumn ? Node[K] | typeof Prisma.DbNull : Node[K];
};

function boundValue(column: string, value: unknown): unknown {
  if (value === Prisma.DbNull || value === null) return null;
  if (value === Prisma.JsonNull || value === Prisma.AnyNull) throw new Error(`node column ${column}: write Prisma.DbNull (SQL NULL), not a JSON null`);
  return Object.hasOwn(jsonColumns, column) ? JSON.stringify(value) : value;
}

/**
 * Sets `columns` on the node if it is still at the version read (and bumps it), and answers the
 * row as written; a node changed meanwhile is CONFLICT, naming the fix.
 */
export async function updateNodeAtVersion(db: DbOrTx, node: Pick<Node, 'id' | 'version'>, columns: NodeColumns): Promise<Node> {
  const assignments = Object.entries(columns)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => {
      // Column names come from code (typed as Node's keys), never from a request: checked all the same.
      if (!/^[A-Za-z][A-Za-z0-9]*$/.test(column)) throw new Error(`not a node column: ${column}`);
      return Prisma.sql`${Prisma.raw(`"${column}"`)} = ${boundValue(column, value)}`;
    });
  const changed = await executeStatement(
    db,
    Prisma.sql`UPDATE "Node" SET ${Prisma.join([...assignments, Prisma.sql`"version" = ${node.version + 1}`, Prisma.sql`"updatedAt" = ${new Date()}`], ', ')}
      WHERE "id" = ${node.id} AND "version" = ${node.version}`,
  );
  if (changed !== 1) throw new IronflowError('CONFLICT', `node ${node.id} changed meanwhile; read it again and retry`, { path: 'version' });
  const row = await findNodeById(db, node.id);
  if (!row) throw new IronflowError('CONFLICT', `node ${node.id} changed meanwhile; read it again and retry`, { path: 'version' });
  return row;
}
