// The control-plane side of the builtin steps (core/steps/builtin.ts). Each takes the
// StepInput the provision workflow builds; the activity name is the step's `use`.
import { Context } from '@temporalio/activity';
import { isConnected } from '../core/agent-queues';
import { appendEvent } from '../core/events';
import type { StepInput } from '../core/plan';
import type { ActivityDeps } from './deps';

const POLL_MS = 1000;

export function createProvisionStepActivities(deps: ActivityDeps) {
  return {
    async 'event.append'(input: StepInput): Promise<{ appended: true }> {
      const message = String(input.with.message ?? '');
      await appendEvent(deps.db, {
        tenantId: input.target.tenantId,
        type: 'workflow.step.note',
        subjectId: input.target.nodeId,
        data: { workflowId: input.workflowId, step: input.stepKey, message },
      });
      return { appended: true };
    },

    /** Polls the machine's sessions until an agent of the role is connected; heartbeats while it waits. */
    async 'wait.agentJoined'(input: StepInput): Promise<{ agentNodeId: string; role: string }> {
      const role = String(input.with.role);
      const context = Context.current();
      for (;;) {
        const session = await deps.db.agentSession.findUnique({ where: { nodeId: input.target.nodeId } });
        if (session && session.role === role && isConnected(session.lastSeenAt)) return { agentNodeId: session.nodeId, role };
        context.heartbeat({ waitingFor: `a ${role} agent of ${input.target.nodeId}` });
        await context.sleep(POLL_MS); // throws when the step is cancelled
      }
    },
  };
}
export type ProvisionStepActivities = ReturnType<typeof createProvisionStepActivities>;
