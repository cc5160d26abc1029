// The event log. Modules append with the transaction of the change they report, so an
// event exists exactly when its change does. Reading pages by a cursor (the seq).
import { newId } from './ids';
import type { DbOrTx } from './db';

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
  await tx.event.create({
    data: {
      id: newId('event'),
      tenantId: event.tenantId,
      type: event.type,
      subjectId: event.subjectId ?? null,
      data: (event.data ?? {}) as object,
    },
  });
}

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
    take: query.limit,
  });
  const events = rows.map((r) => ({
    id: r.id,
    seq: r.seq,
    tenantId: r.tenantId,
    type: r.type,
    subjectId: r.subjectId,
    data: r.data,
    createdAt: r.createdAt.toISOString(),
  }));
  const last = events[events.length - 1];
  return { events, nextCursor: last ? last.seq : (query.after ?? null) };
}
