// Attested step results (disk.wipe, diag.dcgm): the machine's agent signs the exact result
// it returns with the key of its current node certificate, bound to the node, the workflow
// run and the step, so the control plane can tell this machine's answer to this step from
// anything else that passed through (a replay from another node or run, an edited result,
// a bare `{ attested: true }`). The result travels with its attestation beside it:
//
//   { ...result, attestation: { v: 1, certificate, issuedAt, signature } }
//
// Signed bytes: "ironflow-attestation-v1\n" + canonical JSON of
//   { v, use, nodeId, workflowId, stepKey, issuedAt, certificateSha256, result }
// The verifier rebuilds them from its own record of the step (never from what the agent
// claims), so a context that differs in any field is a signature that does not verify.
import { createHash, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { attestationSchema, type Attestation } from '../../core/attestations/attestation-schema';
import type { JsonObject } from '../../core/plan';
import { stepRegistry } from '../../core/steps/builtin';
import { fromPem } from '../../core/pki/pem';
import { canonicalJson } from '../../core/attestations/canonical-json';

export const ATTESTATION_PREFIX = 'ironflow-attestation-v1\n';
/** Whether the control plane relies on the step's result only when attested (the registry's `attested`: disk.wipe, diag.dcgm). */
export const isAttestedStepUse = (use: string): boolean => stepRegistry.get(use)?.attested === true;

/** What the signature is bound to: the control plane fills it from its own plan and node. */
export interface AttestationContext {
  use: string;
  nodeId: string;
  workflowId: string;
  stepKey: string;
}

export { attestationSchema, type Attestation };

const digestFor = (key: KeyObject): string | null => (key.asymmetricKeyType === 'ed25519' ? null : 'sha256');
export const certificateSha256 = (der: Uint8Array): string => createHash('sha256').update(der).digest('hex');

/** The exact bytes an attestation's signature covers. */
export function attestationSigningInput(context: AttestationContext, header: { issuedAt: string; certificateDer: Uint8Array }, result: JsonObject): Buffer {
  const statement = {
    v: 1,
    use: context.use,
    nodeId: context.nodeId,
    workflowId: context.workflowId,
    stepKey: context.stepKey,
    issuedAt: header.issuedAt,
    certificateSha256: certificateSha256(header.certificateDer),
    result,
  };
  return Buffer.from(`${ATTESTATION_PREFIX}${canonicalJson(statement)}`, 'utf8');
}

/** The result with its attestation, signed by `key` (the private key of `certificatePem`). */
export function attestResult<R extends JsonObject>(
  key: KeyObject,
  certificatePem: string,
  context: AttestationContext,
  result: R,
  now = new Date(),
): R & { attestation: Attestation } {
  if ('attestation' in result) throw new Error('a result to attest must not carry an attestation of its own');
  const certificateDer = fromPem(certificatePem, ['CERTIFICATE'], 'certificate');
  const issuedAt = now.toISOString();
  const signature = sign(digestFor(key), attestationSigningInput(context, { issuedAt, certificateDer }, result), key).toString('base64');
  return { ...result, attestation: { v: 1, certificate: Buffer.from(certificateDer).toString('base64'), issuedAt, signature } };
}

/** A step output split into the result as signed and its attestation (unchecked; undefined when absent). */
export function splitAttested(output: JsonObject): { result: JsonObject; attestation: unknown } {
  const { attestation, ...result } = output;
  return { result, attestation };
}

/** Whether the signature verifies with the certificate's key over these bytes. */
export function attestationSignatureValid(certificateDer: Uint8Array, signedBytes: Buffer, signatureBase64: string): boolean {
  try {
    const key = new X509Certificate(Buffer.from(certificateDer)).publicKey;
    return verify(digestFor(key), signedBytes, key, Buffer.from(signatureBase64, 'base64'));
  } catch {
    return false;
  }
}
