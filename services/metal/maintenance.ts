// The maintenance axis (spec 004: separate from the provision state). A failure or an abort
// turns it on (source `failure`); an operator turns it on or off with `metal maintenance`
// (source `operator`). A failure's maintenance is cleared by an operator or by recover; an
// operator's only by an operator. While it is on, deploy is refused.
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db, Tx } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { updateNodeAtVersion } from './node-writes';
import { checkVersion, findMetalNode } from './transition';

export type MaintenanceSource = 'operator' | 'failure';
type MaintenanceColumns = Pick<Node, 'maintenance' | 'maintenanceReason' | 'maintenanceSource'>;

const REASON_MAX = 512;

/** What a failure (or an abort) sets: maintenance on with why (and its event), unless an operator's maintenance already holds the node. */
export async function holdOnFailure(tx: Tx, node: Node, reason: string, actor: string | undefined): Promise<MaintenanceColumns> {
  if (node.maintenance && node.maintenanceSource === 'operator')
    return { maintenance: true, maintenanceReason: node.maintenanceReason, maintenanceSource: 'operator' };
  const columns: MaintenanceColumns = { maintenance: true, maintenanceReason: reason.slice(0, REASON_MAX), maintenanceSource: 'failure' };
  await appendEvent(tx, {
    tenantId: node.tenantId,
    type: 'node.maintenance.on',
    subjectId: node.id,
    data: { by: 'failure', actor: actor ?? null, reason: columns.maintenanceReason },
  });
  return columns;
}

/** What recover clears: a failure's maintenance (and says so), never an operator's. */
export async function clearFailureMaintenance(tx: Tx, node: Node, actor: string | undefined): Promise<Partial<MaintenanceColumns>> {
  if (!node.maintenance || node.maintenanceSource !== 'failure') return {};
  await appendEvent(tx, {
    tenantId: node.tenantId,
    type: 'node.maintenance.off',
    subjectId: node.id,
    data: { by: 'recover', actor: actor ?? null, previousReason: node.maintenanceReason },
  });
  return { maintenance: false, maintenanceReason: null, maintenanceSource: null };
}

/** Deploy (and whatever else must not start on a held machine) refuses a node in maintenance, naming the fix. */
export function refuseInMaintenance(node: Node, verb: string): void {
  if (!node.maintenance) return;
  throw new IronflowError(
    'INVALID_STATE',
    `node ${node.id} is in maintenance (${node.maintenanceReason ?? 'no reason recorded'}): ${verb} is refused until it is cleared: ironflow metal maintenance ${node.id} --off --reason TEXT`,
    { verb, state: node.provisionState, maintenance: true, maintenanceReason: node.maintenanceReason },
  );
}

export interface MaintenanceRequest {
  tenantId: string;
  nodeId: string;
  on: boolean;
  reason: string;
  /** Who asked (credential:<id>): recorded in the event. */
  actor: string;
  version?: number;
}

/** `metal maintenance`: one guarded update and its event (node.maintenance.on/off). Repeating the same request changes nothing. */
export async function setMaintenance(db: Db, request: MaintenanceRequest): Promise<Node> {
  return db.$transaction(async (tx) => {
    const node = await findMetalNode(tx, request.tenantId, request.nodeId);
    checkVersion(node, request.version);
    if (node.provisionState === 'retired')
      throw new IronflowError('INVALID_STATE', `node ${node.id} is retired (terminal): maintenance no longer applies`, { state: node.provisionState });
    const reason = request.reason.slice(0, REASON_MAX);
    if (node.maintenance === request.on && (!request.on || (node.maintenanceReason === reason && node.maintenanceSource === 'operator'))) return node;
    const data: MaintenanceColumns = request.on
      ? { maintenance: true, maintenanceReason: reason, maintenanceSource: 'operator' }
      : { maintenance: false, maintenanceReason: null, maintenanceSource: null };
    const updated = await updateNodeAtVersion(tx, node, data);
    await appendEvent(tx, {
      tenantId: node.tenantId,
      type: request.on ? 'node.maintenance.on' : 'node.maintenance.off',
      subjectId: node.id,
      data: {
        by: 'operator',
        actor: request.actor,
        reason,
        ...(node.maintenance ? { previousReason: node.maintenanceReason, previousSource: node.maintenanceSource } : {}),
      },
    });
    return updated;
  });
}
