// An agent's heartbeat, recorded in its session row. At fleet scale this runs about 70 times a
// second (1,000 node agents every 15 s), so a known agent's beat is one raw UPDATE: Prisma 6.19
// compiled each model query afresh, about 0.65 ms of CPU each here against 0.2 ms raw
// (bench/README.md, "1,000 machines at once"), and Prisma 7, which keeps the plans, still takes
// about twice a raw statement's CPU for a model read. A first beat, or a site agent's with its
// site status (a JSON column), takes the model's upsert.
import { isConnected } from '../../core/agent-queues';
import { Prisma, type Db } from '../db';
import { executeStatement, queryRows } from '../raw-statements';

export interface Heartbeat {
  nodeId: string;
  siteId: string;
  role: string;
  taskQueue: string;
  /** A site agent's site-section status, when its beat carries one. */
  siteStatus?: Prisma.InputJsonValue;
  /** A node agent's first beat since it started (a reboot, or the agent restarted). */
  opened?: boolean;
}

export interface PreviousSession {
  lastSeenAt: Date;
  role: string;
}

/** Records the beat at `now`; answers the session as it was before (null on the agent's first beat). */
export async function recordHeartbeat(db: Db, beat: Heartbeat, now: Date): Promise<PreviousSession | null> {
  const [previous] = await queryRows<PreviousSession>(db, Prisma.sql`SELECT "lastSeenAt", "role" FROM "AgentSession" WHERE "nodeId" = ${beat.nodeId}`);
  // A new connection: a beat after the session lapsed, another agent of the machine (its ramdisk,
  // then its installed OS), or an agent that says it opened. Rejoin waits read connectedAt.
  const reconnected =
    previous !== undefined && (!isConnected(previous.lastSeenAt, now.getTime(), previous.role) || previous.role !== beat.role || beat.opened === true);
  if (previous && beat.siteStatus === undefined) {
    const connectedAt = reconnected ? Prisma.sql`, "connectedAt" = ${now}` : Prisma.empty;
    await executeStatement(
      db,
      Prisma.sql`UPDATE "AgentSession" SET "lastSeenAt" = ${now}, "taskQueue" = ${beat.taskQueue}, "role" = ${beat.role}${connectedAt} WHERE "nodeId" = ${beat.nodeId}`,
    );
    return previous;
  }
  const siteStatus = beat.siteStatus === undefined ? {} : { siteStatus: beat.siteStatus };
  const fields = { lastSeenAt: now, taskQueue: beat.taskQueue, role: beat.role, ...siteStatus };
  await db.agentSession.upsert({
    where: { nodeId: beat.nodeId },
    create: { nodeId: beat.nodeId, siteId: beat.siteId, ...fields },
    update: { ...fields, ...(reconnected ? { connectedAt: now } : {}) },
  });
  return previous ?? null;
}
