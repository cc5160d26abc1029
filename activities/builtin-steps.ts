// The control-plane side of the builtin steps (core/steps/builtin.ts). Each takes the
// StepInput the provision workflow builds; the activity name is the step's `use`.
import { Context } from '@temporalio/activity';
import { isConnected } from '../core/agent-queues';
import { waitedFor } from '../core/deadlines';
import { IronflowError } from '../core/errors';
import { appendEvent } from '../services/events';
import type { StepInput } from '../core/plan';
import { stepDeadline } from '../services/step-deadline';
import { stepProgressSignal } from '../workflows/provision-handles';
import { asStep } from './step-failure';
import type { ActivityDeps } from './deps';

const POLL_MS = 1000;

export function createBuiltinStepActivities(deps: ActivityDeps) {
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

    /** Polls the machine's sessions until an agent of the role is connected, up to the step's deadline; heartbeats while it waits. */
    async 'wait.agentJoined'(input: StepInput): Promise<{ agentNodeId: string; role: string }> {
      const role = String(input.with.role);
      const context = Context.current();
      const started = Date.now();
      const deadline = stepDeadline(started);
      const what = `the ${role} agent of node ${input.target.nodeId} to join`;
      // The workflow's status says what the step waits for, and until when.
      await deps.temporal.workflow
        .getHandle(input.workflowId)
        .signal(stepProgressSignal, {
          key: input.stepKey,
          progress: { waitingFor: what, since: new Date(started).toISOString(), until: new Date(deadline).toISOString() },
        })
        .catch(() => undefined); // the status only: the wait goes on without it
      return asStep(async () => {
        for (;;) {
          const session = await deps.db.agentSession.findUnique({ where: { nodeId: input.target.nodeId } });
          if (session && session.role === role && isConnected(session.lastSeenAt)) return { agentNodeId: session.nodeId, role };
          if (Date.now() >= deadline)
            throw new IronflowError('DRIVER_ERROR', `${waitedFor(Date.now() - started, what)}: none joined`, {
              nodeId: input.target.nodeId,
              role,
              reason: 'join-deadline',
            });
          context.heartbeat({ waitingFor: what });
          await context.sleep(POLL_MS); // throws when the step is cancelled
        }
      });
    },
  };
}
export type BuiltinStepActivities = ReturnType<typeof createBuiltinStepActivities>;
