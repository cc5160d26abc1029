// The control-plane side of the builtin steps (core/steps/builtin.ts). Each takes the
// StepInput the provision workflow builds; the activity name is the step's `use`.
// wait.agentJoined is no activity: the workflow waits for its agentJoined signal
// (workflows/provision/workflow-steps.ts).
import { appendEvent } from '../services/events';
import type { StepInput } from '../core/plan';
import type { ActivityDeps } from './deps';

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
  };
}
export type BuiltinStepActivities = ReturnType<typeof createBuiltinStepActivities>;
