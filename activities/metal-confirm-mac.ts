// metal.confirmMac for the Temporal doors: the `confirmMac` signal and Update of the node
// lifecycle and provision workflows run this activity, the same code path as the REST route
// (services/metal/confirm-mac.ts). A refused signal cannot answer its sender, so it is recorded as
// an event too (the workflow's status query lists it). The `wake` door is the `macConfirmed`
// signal's: it carries nothing the workflow trusts (anyone reaching Temporal can send it), so
// the MAC is read back from the node row, and only one an operator confirmed counts.
import { Context } from '@temporalio/activity';
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import { IronflowError } from '../core/errors';
import { confirmMacAndWake, macsOf } from '../services/metal/confirm-mac';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

export interface ConfirmMacActivityInput {
  nodeId: string;
  mac: unknown;
  door: 'signal' | 'update' | 'wake';
}

const MAX_RECORDED_INPUT = 64;

/** The node's MAC as metal.confirmMac stored it (an operator's decision), or a refusal. */
async function operatorConfirmedMac(deps: ActivityDeps, nodeId: string): Promise<string> {
  const node = await deps.db.node.findUnique({ where: { id: nodeId } });
  if (!node) throw new IronflowError('NOT_FOUND', `node ${nodeId} not found`, {});
  const mac = node.macSource === 'operator' ? macsOf(node)[0] : undefined;
  if (!mac)
    throw new IronflowError(
      'INVALID_STATE',
      `no MAC of node ${nodeId} was confirmed by metal.confirmMac; a macConfirmed signal only wakes the workflow, it confirms nothing`,
      { reason: 'mac-not-confirmed' },
    );
  return mac;
}

export function createMetalConfirmMacActivities(deps: ActivityDeps) {
  return {
    async 'metal.confirmMac'(input: ConfirmMacActivityInput): Promise<{ mac: string }> {
      const { workflowExecution, activityId } = Context.current().info;
      const requestId = `${input.door}:${workflowExecution?.workflowId ?? '?'}:${activityId}`;
      return asStep(async () => {
        try {
          if (input.door === 'wake') return { mac: await operatorConfirmedMac(deps, input.nodeId) };
          const node = await confirmMacAndWake(deps.db, deps.temporal, { nodeId: input.nodeId, mac: input.mac, requestId });
          return { mac: (node.macs as string[])[0] as string };
        } catch (err) {
          if (input.door !== 'update' && isIronflowError(err) && err.code !== 'NOT_FOUND') {
            const node = await deps.db.node.findUnique({ where: { id: input.nodeId }, select: { tenantId: true } });
            const given = typeof input.mac === 'string' ? input.mac.slice(0, MAX_RECORDED_INPUT) : typeof input.mac;
            if (node)
              await appendEvent(deps.db, {
                tenantId: node.tenantId,
                type: 'node.pxe-mac.refused',
                subjectId: input.nodeId,
                data: { nodeId: input.nodeId, mac: given, code: err.code, reason: err.message, requestId },
              });
          }
          throw err;
        }
      });
    },
  };
}
