// The event log. Modules append with the transaction of the change they report, so an
// event exists exactly when its change does. Reading pages by a cursor (the seq).
import { boundValue, clipString } from '../core/event-bounds';
import { newId } from './ids';
import { Prisma, type DbOrTx } from './db';
import { executeStatement } from './raw-statements';

export interface EventInput {
  tenantId: string;
  type: string;
  subjectId?: string;
  /** Never a secret: ids and references only. */
  data?: Record<string, unknown>;
}

export interface EventView {
  id: string;
  seq: number;
  tenantId: string;
  type: string;
  subjectId: string | null;
  data: unknown;
  createdAt: string;
}

export async function appendEvent(tx: DbOrTx, event: EventInput): Promise<void> {
  // Raw: every change appends one, and Prisma compiling the model create cost more than the
  // insert. createdAt is bound, not the column's default: SQLite's CURRENT_TIMESTAMP has
  // another text form than the dates written as parameters, and the two would not compare.
  // Bounded: events record what anyone may send (core/event-bounds.ts).
  const data = JSON.stringify(boundValue(event.data ?? {}));
  const subjectId = event.subjectId === undefined ? null : clipString(event.subjectId, 256);
  await executeStatement(
    tx,
    Prisma.sql`INSERT INTO "Event" ("id", "tenantId", "type", "subjectId", "data", "createdAt")
      VALUES (${newId('event')}, ${event.tenantId}, ${clipString(event.type, 128)}, ${subjectId}, ${data}, ${new Date()})`,
  );
}

/**
 * One page of a tenant's events after the cursor. `type` matches a type or a prefix of one
 * (the schema keeps it to the characters event types use, so no LIKE wildcard reaches SQL).
 * `nextCursor` is the last seq of a page with more after it, and null on the last page.
 */
export async function listEvents(
  db: DbOrTx,
  query: { tenantId: string; after?: number; limit: number; type?: string },
): Promise<{ events: EventView[]; nextCursor: number | null }> {
  const rows = await db.event.findMany({
    where: {
      tenantId: query.tenantId,
      seq: { gt: query.after ?? 0 },
      ...(query.type ? { type: { startsWith: query.type } } : {}),
    },
    orderBy: { seq: 'asc' },
    // One more than asked tells whether this page is the last.
    take: query.limit + 1,
  });
  const events = rows.slice(0, query.limit).map((r) => ({
    id: r.id,
    seq: r.seq,
    tenantId: r.tenantId,
    type: r.type,
    subjectId: r.subjectId,
    data: r.data,
    createdAt: r.createdAt.toISOString(),
  }));
  const last = events[events.length - 1];
  return { events, nextCursor: rows.length > query.limit && last ? last.seq : null };
}
