// What a site agent's request for a step names: the machine, the workflow and, when it runs as
// an activity, the step's run of that workflow. The control plane authorizes the request for
// that run, and may reuse its answer that the run runs for a moment
// (services/temporal/recent-runs.ts); a new run under the same workflow id is never taken for it.
import { Context } from '@temporalio/activity';
import type { StepInput } from '../../core/plan';
import type { BmcAccessRequest } from '../../core/schemas/agent-bmc-access';

export function stepScope(input: { workflowId: StepInput['workflowId']; target: Pick<StepInput['target'], 'nodeId'> }): BmcAccessRequest {
  let runId: string | undefined;
  try {
    runId = Context.current().info.workflowExecution?.runId;
  } catch {
    // not in an activity (a tool, a test calling a step): the control plane asks Temporal each time
  }
  return { nodeId: input.target.nodeId, workflowId: input.workflowId, ...(runId ? { runId } : {}) };
}
