// A BMC operation id is `<workflowId>/<stepKey>/<command>`, each part cleaned to the id
// alphabet. The agent builds it (agent/site/operation-id.ts); the control plane checks that
// an id an agent reads or writes belongs to the workflow the agent names.

export const MAX_OPERATION_ID = 256;

/** Replaces anything outside the operation id alphabet with a dot. */
export function cleanOperationIdPart(text: string): string {
  return text.replace(/[^A-Za-z0-9._:@-]+/g, '.');
}

export function bmcOperationId(workflowId: string, stepKey: string, command: string): string {
  return `${cleanOperationIdPart(workflowId)}/${cleanOperationIdPart(stepKey)}/${cleanOperationIdPart(command)}`.slice(0, MAX_OPERATION_ID);
}

/** Whether `operationId` is one of `workflowId`'s (an id cut at the maximum length still counts). */
export function operationIdBelongsTo(operationId: string, workflowId: string): boolean {
  const prefix = `${cleanOperationIdPart(workflowId)}/`;
  if (operationId.startsWith(prefix)) return true;
  return operationId.length === MAX_OPERATION_ID && prefix.startsWith(operationId);
}
