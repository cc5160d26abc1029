// The metal verbs. Each is ONE transaction (read, check the state table, guarded update
// with the version, event), then a wake-up of the node's lifecycle workflow, which does the
// work. A verb that leaves a state whose workflow is running also stops that workflow (its
// cleanup runs). Every answer is the node itself; routes turn it into the metal view.
import type { Client } from '@temporalio/client';
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db, DbOrTx, Tx } from '../db';
import { IronflowError, notFound } from '../../core/errors';
import { apiVerbName, verbMove } from '../../core/provision-states';
import { clearFailureMaintenance, holdOnFailure, refuseInMaintenance } from './maintenance';
import { checkVersion, commitMove, findMetalNode, stateOf } from './transition';
import { abortProvisionRun } from '../temporal/senders';
import { refuseNewPowerRun, refuseWhilePowerRuns } from './power';
import { wakeLifecycle } from '../temporal/starters';

export interface MetalDeps {
  db: Db;
  temporal: Client;
  controlQueue: string;
  /** The deploy profile as the node's tenant sees it (profiles/store; core does not import it). */
  resolveDeployProfile(db: DbOrTx, tenantId: string, id: string, version: number): Promise<{ target: string }>;
}

export interface VerbRequest {
  /** The caller's tenant; undefined when the lifecycle itself acts (its abort signal). */
  tenantId?: string;
  nodeId: string;
  version?: number;
  /** Bulk: the node must be in this pool. */
  poolId?: string;
  /** Who asked (credential:<id>), for the events that record it; undefined when the lifecycle acts. */
  actor?: string;
  /** The node's power run as applyVerb read it before the transaction: a newer one found inside is CONFLICT. */
  powerRunSeen?: string | null;
}

export type VerbArgs =
  | { verb: 'manage' | 'inspect' | 'provide' | 'rescue' | 'unrescue' | 'recover' | 'retire' }
  | { verb: 'deploy'; profileId: string; profileVersion: number }
  | { verb: 'release'; wipe: 'none' | 'quick' | 'secure-erase' | 'crypto-erase' }
  | { verb: 'abort'; reason: string };

async function decide(deps: Pick<MetalDeps, 'resolveDeployProfile'>, tx: Tx, node: Node, args: VerbArgs, actor: string | undefined): Promise<Node> {
  const state = node.provisionState;
  switch (args.verb) {
    case 'unrescue': {
      verbMove('unrescue', stateOf(node)); // INVALID_STATE outside rescue
      if (node.provisionPhase === 'unrescuing') return node; // a second call while metal-unrescue runs
      if (node.provisionPhase !== 'booted') {
        throw new IronflowError('CONFLICT', `node ${node.id}: the rescue ramdisk is still booting (${node.workflowId}); unrescue once it is up`, {
          phase: node.provisionPhase,
        });
      }
      const moved = await commitMove(tx, node, verbMove('unrescue', stateOf(node)), { eventType: 'node.provision.unrescuing' });
      return moved;
    }
    case 'abort': {
      const move = verbMove('abort', stateOf(node));
      const hold = await holdOnFailure(tx, node, `${state} aborted: ${args.reason}`, actor);
      return commitMove(tx, node, move, {
        data: { failedFrom: state, lastError: { code: 'ABORTED', message: args.reason }, ...hold },
        event: { reason: args.reason, verb: 'abort' },
      });
    }
    case 'recover': {
      const move = verbMove('recover', stateOf(node));
      // Recovering a failed deploy or release always wipes before ready.
      const wipe = move.to === 'releasing' && (node.releaseWipe === null || node.releaseWipe === 'none') ? 'quick' : node.releaseWipe;
      const cleared = await clearFailureMaintenance(tx, node, actor);
      return commitMove(tx, node, move, { data: { failedFrom: null, releaseWipe: wipe, ...cleared }, event: { verb: 'recover', failedFrom: node.failedFrom } });
    }
    case 'deploy': {
      const move = verbMove('deploy', stateOf(node));
      refuseInMaintenance(node, 'deploy');
      const profile = await deps.resolveDeployProfile(tx, node.tenantId, args.profileId, args.profileVersion);
      if (profile.target !== 'metal')
        throw new IronflowError('INVALID_INPUT', `profile ${args.profileId}@${args.profileVersion} targets ${profile.target}, not metal`, {
          path: 'profileId',
        });
      return commitMove(tx, node, move, {
        data: { deployProfile: { id: args.profileId, version: args.profileVersion } },
        event: { verb: 'deploy', profile: `${args.profileId}@${args.profileVersion}` },
      });
    }
    case 'release':
      return commitMove(tx, node, verbMove('release', stateOf(node)), {
        data: { releaseWipe: args.wipe },
        event: { verb: apiVerbName(args.verb), wipe: args.wipe },
      });
    default:
      return commitMove(tx, node, verbMove(args.verb, stateOf(node)), { event: { verb: args.verb } });
  }
}

/** A verb's transaction and what it changed. */
export interface CommittedVerb {
  after: Node;
  /** False for a repeated call that changed nothing (a second unrescue). */
  changed: boolean;
  /** The state workflow the move left behind, which must be stopped (its cleanup runs). */
  superseded: string | null;
}

/**
 * The verb's transaction alone, no Temporal call: the node lifecycle applies its own abort signal
 * with it and stops its child from workflow code. `recordInTransaction` as for applyVerb.
 */
export async function commitVerb(
  deps: Pick<MetalDeps, 'db' | 'resolveDeployProfile'>,
  request: VerbRequest,
  args: VerbArgs,
  recordInTransaction?: (tx: Tx, moved: Node) => Promise<void>,
): Promise<CommittedVerb> {
  let before: Node | undefined;
  const after = await deps.db.$transaction(async (tx) => {
    const node = await findMetalNode(tx, request.tenantId, request.nodeId);
    if (request.poolId && node.poolId !== request.poolId) throw notFound('metal node', `${request.nodeId} in pool ${request.poolId}`);
    checkVersion(node, request.version);
    if (request.powerRunSeen !== undefined) refuseNewPowerRun(node, request.powerRunSeen, apiVerbName(args.verb));
    before = node;
    const moved = await decide(deps, tx, node, args, request.actor);
    await recordInTransaction?.(tx, moved);
    return moved;
  });
  if (!before || after === before) return { after, changed: false, superseded: null };
  const superseded = before.workflowId && before.workflowId !== after.workflowId ? before.workflowId : null;
  return { after, changed: true, superseded };
}

/** Why a superseded state workflow is stopped: the abort's reason, or the verb that superseded it. */
export const stopReason = (args: VerbArgs): string => (args.verb === 'abort' ? args.reason : `superseded by ${args.verb}`);

/**
 * Applies one verb to one node: the transaction, then stopping a superseded workflow and waking the lifecycle.
 * `recordInTransaction` writes the caller's own record of the move in the same transaction (a bulk
 * run's outcome), so a retried caller never applies the verb twice nor loses that it did.
 */
export async function applyVerb(
  deps: MetalDeps,
  request: VerbRequest,
  args: VerbArgs,
  recordInTransaction?: (tx: Tx, moved: Node) => Promise<void>,
): Promise<Node> {
  // Every move but abort starts or changes a workflow that drives the power: never beside a power run (services/metal/power.ts).
  if (args.verb !== 'abort') {
    const seen = await findMetalNode(deps.db, request.tenantId, request.nodeId);
    await refuseWhilePowerRuns(deps.temporal, seen, apiVerbName(args.verb));
    request = { ...request, powerRunSeen: seen.powerWorkflowId };
  }
  const { after, changed, superseded } = await commitVerb(deps, request, args, recordInTransaction);
  if (!changed) return after;
  if (superseded) await abortProvisionRun(deps.temporal, superseded, stopReason(args));
  await wakeLifecycle(deps.temporal, deps.controlQueue, after);
  return after;
}
