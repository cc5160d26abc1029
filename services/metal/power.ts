// metal.power: the power axis only, never a state move. Legal in every state but those whose
// workflow drives the power. The verb records what was asked (node.power is the last
// requested power, not a BMC reading) and the caller starts a metal-power-<action> run,
// which does it through the site agent's BMC driver.
import type { Node } from '../../generated/prisma-sqlite/client';
import type { Db } from '../db';
import { IronflowError } from '../../core/errors';
import { appendEvent } from '../events';
import { checkPowerAllowed } from '../../core/provision-states';
import { updateNodeAtVersion } from './node-writes';
import { checkVersion, findMetalNode } from './transition';

export async function recordPowerRequest(db: Db, input: { tenantId: string; nodeId: string; version?: number; action: 'on' | 'off' | 'cycle' }): Promise<Node> {
  return db.$transaction(async (tx) => {
    const node = await findMetalNode(tx, input.tenantId, input.nodeId);
    checkVersion(node, input.version);
    checkPowerAllowed(node.provisionState);
    if (!node.bmcCredentialsRef) throw new IronflowError('INVALID_STATE', `node ${node.id} has no BMC credentials`, { state: node.provisionState });
    const power = input.action === 'off' ? 'off' : 'on';
    const updated = await updateNodeAtVersion(tx, node, { power });
    await appendEvent(tx, { tenantId: node.tenantId, type: 'node.power.requested', subjectId: node.id, data: { action: input.action } });
    return updated;
  });
}
