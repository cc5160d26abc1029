// The agents' side of attested results (services/attestations/attestation.ts): a step result
// signed with the key of the agent's current node certificate, bound to this node and the
// step's run and key, so the control plane can count it (and nothing else in its place).
import { attestResult, type Attestation } from '../../services/attestations/attestation';
import type { JsonObject, StepInput } from '../../core/plan';
import type { Signer } from './control-plane-client';

export function attestStepResult<R extends JsonObject>(signer: Signer, nodeId: string, input: StepInput, result: R): R & { attestation: Attestation } {
  return attestResult(signer.key, signer.certificatePem(), { use: input.use, nodeId, workflowId: input.workflowId, stepKey: input.stepKey }, result);
}
