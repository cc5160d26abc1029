// One provision move, inside the caller's transaction: check the version read, write the
// move as a guarded update (`WHERE version = v`, else CONFLICT), name the state's workflow
// (node:<id>:<state>:<n>) when the new state runs one, clear lastError unless the move is a
// failure, and publish node.provision.<state>.
import type { Node } from '../../generated/prisma-sqlite/client';
import { Prisma, type DbOrTx, type Tx } from '../db';
import { IronflowError, notFound } from '../../core/errors';
import { appendEvent } from '../events';
import { oneNode, selectMetalNodes } from './node-reads';
import { updateNodeAtVersion, type NodeColumns } from './node-writes';
import { workflowFor, type Move, type NodeStateView } from '../../core/provision-states';
import { stateWorkflowId } from '../temporal/workflow-ids';
import { poolPolicyOf } from '../pools/pool-policy';

/** The state-table view of a node row. */
export const stateOf = (node: Node): NodeStateView => ({ state: node.provisionState, phase: node.provisionPhase, failedFrom: node.failedFrom });

/** A metal node of the tenant (a node without a provision state is not one). */
export async function findMetalNode(db: DbOrTx, tenantId: string | undefined, nodeId: string): Promise<Node> {
  const [node] = await selectMetalNodes(db, oneNode(nodeId, tenantId));
  if (!node) throw notFound('metal node', nodeId);
  return node;
}

/** The pool's `agent: 'none'` (out-of-band profiles only). */
export async function isAgentless(db: DbOrTx, poolId: string | null): Promise<boolean> {
  return (await poolPolicyOf(db, poolId))?.agent === 'none';
}

export function checkVersion(node: Node, expected: number | undefined): void {
  if (expected !== undefined && expected !== node.version) {
    throw new IronflowError('CONFLICT', `node ${node.id} is at version ${node.version}, not ${expected}; read it again and retry`, {
      path: 'version',
      version: node.version,
    });
  }
}

export interface MoveOptions {
  /** Other columns the move sets (deployProfile, failedFrom, lastError, …). */
  data?: Omit<NodeColumns, 'provisionState' | 'provisionPhase' | 'workflowId' | 'workflowSeq'>;
  /** What the event says besides from/to. */
  event?: Record<string, unknown>;
  /** Keep the node's workflow id (a move within rescue whose workflow is the same). */
  keepWorkflow?: boolean;
  /** The event's type when the move is not a change of state (node.provision.unrescuing). */
  eventType?: string;
}

export async function commitMove(tx: Tx, node: Node, move: Move, options: MoveOptions = {}): Promise<Node> {
  const agentless = await isAgentless(tx, node.poolId);
  const runs = workflowFor(move.to, move.phase, agentless) !== null;
  const workflowSeq = runs && !options.keepWorkflow ? node.workflowSeq + 1 : node.workflowSeq;
  const workflowId = options.keepWorkflow ? node.workflowId : runs ? stateWorkflowId(node.id, move.to, workflowSeq) : null;
  const updated = await updateNodeAtVersion(tx, node, {
    // A move that is not a failure is a success: the last failure's error no longer describes the node.
    ...(move.to === 'failed' ? {} : { lastError: Prisma.DbNull }),
    ...options.data,
    provisionState: move.to,
    provisionPhase: move.phase,
    workflowId,
    workflowSeq,
  });
  await appendEvent(tx, {
    tenantId: node.tenantId,
    type: options.eventType ?? `node.provision.${move.to}`,
    subjectId: node.id,
    data: {
      from: node.provisionState,
      to: move.to,
      ...(move.phase ? { phase: move.phase } : {}),
      ...(workflowId ? { workflowId } : {}),
      ...(options.event ?? {}),
    },
  });
  return updated;
}
