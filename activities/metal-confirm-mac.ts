// metal.confirmMac for the Temporal doors: the `confirmMac` signal and Update of the node
// lifecycle and provision workflows run this activity, the same code path as the REST route
// (core/metal/confirm-mac.ts). A refused signal cannot answer its sender, so it is recorded as
// an event too (the workflow's status query lists it).
import { Context } from '@temporalio/activity';
import { isIronflowError } from '../core/errors';
import { appendEvent } from '../core/events';
import { confirmMacAndWake } from '../core/metal/confirm-mac';
import type { ActivityDeps } from './deps';
import { asStep } from './step-failure';

export interface ConfirmMacActivityInput {
  nodeId: string;
  mac: unknown;
  door: 'signal' | 'update';
}

const MAX_RECORDED_INPUT = 64;

export function createMetalConfirmMacActivities(deps: ActivityDeps) {
  return {
    async 'metal.confirmMac'(input: ConfirmMacActivityInput): Promise<{ mac: string }> {
      const { workflowExecution, activityId } = Context.current().info;
      const requestId = `${input.door}:${workflowExecution?.workflowId ?? '?'}:${activityId}`;
      return asStep(async () => {
        try {
          const node = await confirmMacAndWake(deps.db, deps.temporal, { nodeId: input.nodeId, mac: input.mac, requestId });
          return { mac: (node.macs as string[])[0] as string };
        } catch (err) {
          if (input.door === 'signal' && isIronflowError(err) && err.code !== 'NOT_FOUND') {
            const node = await deps.db.node.findUnique({ where: { id: input.nodeId }, select: { tenantId: true } });
            const given = typeof input.mac === 'string' ? input.mac.slice(0, MAX_RECORDED_INPUT) : typeof input.mac;
            if (node) await appendEvent(deps.db, { tenantId: node.tenantId, type: 'node.pxe-mac.refused', subjectId: input.nodeId, data: { nodeId: input.nodeId, mac: given, code: err.code, reason: err.message, requestId } });
          }
          throw err;
        }
      });
    },
  };
}
