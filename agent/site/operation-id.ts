// A BMC command's operation id: the workflow, the step and the command, and nothing that
// changes between attempts or agents, so a retried or re-routed step finds the first
// attempt's record in the ledger instead of sending the command again.
import type { StepInput } from '../../core/plan';

export function operationIdFor(input: Pick<StepInput, 'workflowId' | 'stepKey'>, command: string): string {
  const clean = (text: string) => text.replace(/[^A-Za-z0-9._:@-]+/g, '.');
  return `${clean(input.workflowId)}/${clean(input.stepKey)}/${clean(command)}`.slice(0, 256);
}
