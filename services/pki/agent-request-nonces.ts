// Signed agent requests are once-only: each request id (nonce) is recorded per node until
// its timestamp leaves the skew window (after that the request is refused as stale anyway).
// The database's primary key decides, so a request replayed to another API process of the
// same control plane is refused too.
import { Prisma, type Db } from '../db';
import { refusal } from '../joins/refusal';
import { AGENT_REQUEST_MAX_SKEW_MS } from './agent-request';
import { executeStatement } from '../raw-statements';

/** Expired ids are deleted at most this often per process (one indexed delete). */
const PURGE_INTERVAL_MS = 10_000;
let nextPurgeAt = 0;

/** Records the request id, or refuses it (UNAUTHENTICATED, replayed-request) when already seen. */
export async function takeAgentRequestNonce(db: Db, request: { nodeId: string; nonce: string; timestampMs: number }, now = Date.now()): Promise<void> {
  if (now >= nextPurgeAt) {
    nextPurgeAt = now + PURGE_INTERVAL_MS;
    await db.agentRequestNonce.deleteMany({ where: { expiresAt: { lt: new Date(now) } } });
  }
  // Raw SQL: every agent request takes an id, and Prisma's model create cost three times the CPU.
  const expiresAt = new Date(request.timestampMs + AGENT_REQUEST_MAX_SKEW_MS + 1_000);
  const inserted = await executeStatement(
    db,
    Prisma.sql`INSERT INTO "AgentRequestNonce" ("nodeId", "nonce", "expiresAt") VALUES (${request.nodeId}, ${request.nonce}, ${expiresAt}) ON CONFLICT DO NOTHING`,
  );
  if (inserted === 0)
    throw refusal(
      'UNAUTHENTICATED',
      'replayed-request',
      'this signed request was already received (its x-ironflow-agent-nonce was used); agents sign every request afresh',
    );
}
