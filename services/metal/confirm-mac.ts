// metal.confirmMac (spec 001, "Discovering new machines"): the operator's decision that a MAC
// is a machine's PXE MAC, usually the candidate PXE discovery found. One code path for its
// three doors (the REST route, the `confirmMac` signal and the `confirmMac` Update), so each
// refuses and stores alike. It works whether or not a workflow runs: a waiting
// metal.ensureRamdisk reads the stored MAC and goes on from it.
import type { Client } from '@temporalio/client';
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db, DbOrTx } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { malformedMacMessage, normalizeMac } from '../../core/mac';
import { notifyMacConfirmed } from '../temporal/senders';
import { findMetalNode } from './transition';

export interface ConfirmMacRequest {
  /** Absent for the Temporal doors: whoever may signal the workflow may decide (no tenant scope). */
  tenantId?: string;
  nodeId: string;
  mac: unknown;
  /** For the audit trail: the API request id, or the signal's / Update's id. */
  requestId: string;
}

export const macsOf = (node: Pick<Node, 'macs'>): string[] =>
  (Array.isArray(node.macs) ? node.macs : []).map((m) => (typeof m === 'string' ? normalizeMac(m) : undefined)).filter((m): m is string => m !== undefined);

/** The node of the site (other than `exceptNodeId`) whose MACs include `mac`, if any. */
export async function nodeWithMac(db: DbOrTx, siteId: string, mac: string, exceptNodeId?: string): Promise<Node | undefined> {
  const nodes = await db.node.findMany({
    where: { siteId, deletedAt: null, provisionState: { not: null }, ...(exceptNodeId ? { id: { not: exceptNodeId } } : {}) },
  });
  return nodes.find((n) => macsOf(n).includes(mac));
}

/** Checks, stores `macSource: operator` and publishes node.pxe-mac.confirmed; answers the updated node. */
export async function confirmMac(db: Db, request: ConfirmMacRequest): Promise<Node> {
  const mac = typeof request.mac === 'string' ? normalizeMac(request.mac) : undefined;
  if (!mac) throw new IronflowError('INVALID_INPUT', malformedMacMessage(request.mac), { path: 'mac' });
  return db.$transaction(async (tx) => {
    const node = await findMetalNode(tx, request.tenantId, request.nodeId);
    if (node.provisionState === 'retired') throw new IronflowError('INVALID_STATE', `node ${node.id} is retired`, { state: node.provisionState });
    const known = macsOf(node);
    if (known.length > 0)
      throw new IronflowError('INVALID_STATE', `node ${node.id} already has its MACs (${known.join(', ')}); nothing to confirm`, {
        state: node.provisionState,
        macs: known,
      });
    const other = await nodeWithMac(tx, node.siteId, mac, node.id);
    if (other) throw new IronflowError('CONFLICT', `MAC ${mac} belongs to node ${other.id} of the same site`, { path: 'mac', nodeId: other.id });
    // Guarded by the version read, so two deciders at once cannot both bind.
    const updated = await tx.node.updateMany({
      where: { id: node.id, version: node.version },
      data: { macs: [mac], macSource: 'operator', discoveredMac: null, version: { increment: 1 } },
    });
    if (updated.count !== 1)
      throw new IronflowError('CONFLICT', `node ${node.id} changed while its MAC was confirmed; read it again and retry`, { path: 'version' });
    await appendEvent(tx, {
      tenantId: node.tenantId,
      type: 'node.pxe-mac.confirmed',
      subjectId: node.id,
      data: { nodeId: node.id, mac, discovered: node.discoveredMac === mac, requestId: request.requestId },
    });
    return tx.node.findUniqueOrThrow({ where: { id: node.id } });
  });
}

/**
 * confirmMac, then tells the node's running state workflow (a profile step that awaits
 * `confirmMac` goes on). metal.ensureRamdisk needs no word: it reads the node. A workflow
 * that ended meanwhile needs none either.
 */
export async function confirmMacAndWake(db: Db, temporal: Client, request: ConfirmMacRequest): Promise<Node> {
  const node = await confirmMac(db, request);
  if (node.workflowId) await notifyMacConfirmed(temporal, node.workflowId, macsOf(node)[0] as string);
  return node;
}
