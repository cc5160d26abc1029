// When a deploy succeeds, the node's desired host state (Node.hostSpec) comes from the deploy
// profile's hostConfig and the pool's overriding units, filtered by the node's labels. It is
// computed here and written by the same transaction that applies `complete`.
import type { Db } from '../services/db';
import { isIronflowError } from '../core/errors';
import { resolveHostSpec } from '../core/host-config/host-spec';
import type { JsonObject } from '../core/plan';
import type { StateOutcome } from '../services/metal/lifecycle-moves';
import { findNodeById } from '../services/metal/node-reads';
import { resolveProfile } from '../profiles/store';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function withDeployHostSpec(db: Db, outcome: StateOutcome): Promise<StateOutcome> {
  if (outcome.outcome !== 'succeeded') return outcome;
  const node = await findNodeById(db, outcome.nodeId);
  if (!node || node.provisionState !== 'deploying' || node.workflowId !== outcome.workflowId) return outcome;
  const ref = node.deployProfile as { id?: string; version?: number } | null;
  if (!ref?.id || !ref.version) return outcome;
  const profile = await resolveProfile(db, node.tenantId, ref.id, ref.version);
  const pool = node.poolId ? await db.pool.findUnique({ where: { id: node.poolId } }) : null;
  const hostConfig = isRecord(profile.document) && isRecord(profile.document.hostConfig) ? profile.document.hostConfig : undefined;
  let hostSpec;
  try {
    hostSpec = resolveHostSpec({
      workflowId: outcome.workflowId,
      profile: `${ref.id}@${ref.version}`,
      hostConfig,
      poolPolicy: isRecord(pool?.policy) ? pool.policy : undefined,
      labels: isRecord(node.labels) ? (node.labels as Record<string, string>) : {},
    });
  } catch (error) {
    // A unit whose settings do not check fails the deploy, with the path of the unit.
    if (!isIronflowError(error)) throw error;
    return { ...outcome, outcome: 'failed', error: { code: error.code, message: error.message } };
  }
  return { ...outcome, hostSpec: hostSpec as unknown as JsonObject };
}
