// The control plane's check of an attested step result (services/attestations/attestation.ts):
// signed by a certificate this control plane issued to THIS node, for the role of the agent
// that runs the step, not revoked when it signed, within its validity, during this run, over
// the exact result and this step's context. Anything else is refused with the step kind's
// code (UNVERIFIED_WIPE for a wipe, as the spec says; PERMISSION_DENIED otherwise) and a
// reason a machine can read (details.reason). Messages carry ids and serials, never a key.
import type { DbOrTx } from '../db';
import { IronflowError, type ErrorCode } from '../../core/errors';
import { pathPastDepth } from '../../core/json-depth';
import type { JsonObject, JsonValue } from '../../core/plan';
import {
  attestationSchema,
  attestationSignatureValid,
  attestationSigningInput,
  certificateSha256,
  splitAttested,
  type AttestationContext,
} from './attestation';

/** Results are shallow; a deeper one is refused before anything walks it (canonical JSON recurses). */
const MAX_RESULT_DEPTH = 32;
/** How far an attestation's time may lie outside the run (agents' clocks drift). */
export const ATTESTATION_CLOCK_SKEW_MS = 5 * 60_000;

export interface AttestationCheck {
  context: AttestationContext;
  /** The certificate role of the agent that runs the step (its queue): `ramdisk` or `node`. */
  role: string;
  /** When the workflow run started: an attestation issued before it belongs to another run. */
  runStartedAt: Date;
  now?: Date;
}

export interface VerifiedAttestation {
  result: JsonObject;
  serial: string;
  issuedAt: Date;
}

export const attestationRefusalCode = (use: string): ErrorCode => (use === 'disk.wipe' ? 'UNVERIFIED_WIPE' : 'PERMISSION_DENIED');

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function verifyAttestation(db: DbOrTx, output: JsonValue | undefined, check: AttestationCheck): Promise<VerifiedAttestation> {
  const { context, role } = check;
  const refuse = (reason: string, message: string, details: Record<string, unknown> = {}) =>
    new IronflowError(attestationRefusalCode(context.use), `the ${context.use} result of ${context.stepKey} is not counted: ${message}`, {
      ...details,
      reason,
      stepKey: context.stepKey,
      use: context.use,
    });

  if (!isObject(output)) throw refuse('attestation-missing', 'it is not a result object');
  if (pathPastDepth(output, MAX_RESULT_DEPTH)) throw refuse('result-malformed', `it nests deeper than ${MAX_RESULT_DEPTH} levels`);
  const { result, attestation } = splitAttested(output);
  if (attestation === undefined) {
    throw refuse(
      'attestation-missing',
      `it carries no attestation; only a result signed with node ${context.nodeId}'s current certificate counts (upgrade the agent that answered, or find what answered in its place)`,
    );
  }
  const parsed = attestationSchema.safeParse(attestation);
  if (!parsed.success)
    throw refuse(
      'attestation-malformed',
      `its attestation is malformed (${parsed.error.issues[0]?.path.join('.') || 'attestation'}: ${parsed.error.issues[0]?.message})`,
    );
  const { issuedAt: issuedAtText, signature } = parsed.data;
  const certificateDer = Buffer.from(parsed.data.certificate, 'base64');

  const row = await db.nodeCertificate.findUnique({ where: { fingerprint: certificateSha256(certificateDer) } });
  if (!row) throw refuse('certificate-unknown', 'it is signed with a certificate this control plane has no record of issuing');
  const cert = { serial: row.serial };
  if (row.nodeId !== context.nodeId)
    throw refuse('certificate-other-node', `it is signed with certificate ${row.serial} of node ${row.nodeId}, not of node ${context.nodeId}`, cert);
  if (row.role !== role)
    throw refuse(
      'certificate-role',
      `it is signed with the node's ${row.role} certificate ${row.serial}; a ${context.use} on ${role} counts only signed by the node's ${role} agent`,
      cert,
    );
  const issuedAt = new Date(issuedAtText);
  if (row.revokedAt && row.revokedAt.getTime() <= issuedAt.getTime())
    throw refuse('certificate-revoked', `certificate ${row.serial} was revoked at ${row.revokedAt.toISOString()}, before the result was signed`, cert);
  const now = check.now ?? new Date();
  if (issuedAt.getTime() < check.runStartedAt.getTime() - ATTESTATION_CLOCK_SKEW_MS || issuedAt.getTime() > now.getTime() + ATTESTATION_CLOCK_SKEW_MS) {
    throw refuse(
      'attestation-stale',
      `it was signed at ${issuedAtText}, outside run ${context.workflowId} (started ${check.runStartedAt.toISOString()}); check the agent's clock`,
      cert,
    );
  }
  if (issuedAt.getTime() < row.notBefore.getTime() || issuedAt.getTime() >= row.notAfter.getTime()) {
    throw refuse('certificate-expired', `certificate ${row.serial} was not valid at ${issuedAtText}, when the result says it was signed`, cert);
  }
  if (!attestationSignatureValid(certificateDer, attestationSigningInput(context, { issuedAt: issuedAtText, certificateDer }, result), signature)) {
    throw refuse(
      'signature-invalid',
      `its signature does not verify with certificate ${row.serial} over this result for node ${context.nodeId}, run ${context.workflowId}, step ${context.stepKey}`,
      cert,
    );
  }
  return { result, serial: row.serial, issuedAt };
}
