// A BMC command's operation id: the workflow, the step and the command, and nothing that
// changes between attempts or agents, so a retried or re-routed step finds the first
// attempt's record in the ledger instead of sending the command again.
import { bmcOperationId } from '../../core/bmc-operation-id';
import type { StepInput } from '../../core/plan';

export function operationIdFor(input: Pick<StepInput, 'workflowId' | 'stepKey'>, command: string): string {
  return bmcOperationId(input.workflowId, input.stepKey, command);
}
