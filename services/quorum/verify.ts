// The check before a destructive command, the same code on every side that runs one: the
// site agent (BMC commands, site.httpProxy), the ramdisk (disk.wipe, deploy.image) and the
// control plane. The policy must be one the checker pinned (its sha256), the batch signed by
// M distinct approvers of that policy with nothing forged, duplicated or unknown among the
// signatures, unexpired, for this command's kind, and the node on the batch's Merkle root.
// A refusal is PERMISSION_DENIED with details.reason a machine can read.
import { IronflowError } from '../../core/errors';
import { batchDigest, batchSignatureValid, policyDigest, quorumBundleSchema, type QuorumBundle } from './documents';
import { merkleProofValid } from './merkle';

export const quorumRefusalReasons = [
  'quorum-missing',
  'quorum-malformed',
  'quorum-policy-not-pinned',
  'quorum-signatures',
  'quorum-expired',
  'quorum-out-of-scope',
] as const;
export type QuorumRefusalReason = (typeof quorumRefusalReasons)[number];

export interface QuorumCheck {
  /** sha256 (hex) of every policy this checker trusts; empty: the checker enforces nothing. */
  pins: readonly string[];
  nodeId: string;
  kind: string;
  now?: Date;
}

export class QuorumRefusal extends IronflowError {
  constructor(reason: QuorumRefusalReason, message: string, details: Record<string, unknown> = {}) {
    super('PERMISSION_DENIED', `destructive-batch quorum: ${message}`, { ...details, reason });
  }
}

/** The approvers whose signatures verify; throws on any signature that is forged, duplicated or from no approver. */
export function checkSignatures(bundle: Pick<QuorumBundle, 'policy' | 'signatures'>, digest: string): string[] {
  const keys = new Map(bundle.policy.approvers.map((a) => [a.id, a.publicKeyPem]));
  const seen = new Set<string>();
  for (const s of bundle.signatures) {
    const key = keys.get(s.approverId);
    if (!key)
      throw new QuorumRefusal('quorum-signatures', `${s.approverId} is not an approver of tenant ${bundle.policy.tenantId}`, { approverId: s.approverId });
    if (seen.has(s.approverId)) throw new QuorumRefusal('quorum-signatures', `${s.approverId} signed twice`, { approverId: s.approverId });
    if (!batchSignatureValid(digest, s.signature, key))
      throw new QuorumRefusal('quorum-signatures', `the signature of ${s.approverId} does not verify over batch ${digest.slice(0, 16)}…`, {
        approverId: s.approverId,
      });
    seen.add(s.approverId);
  }
  return [...seen];
}

/** Runs the command only when this returns; a checker without pins returns at once. */
export function verifyQuorumBundle(input: unknown, check: QuorumCheck): QuorumBundle | undefined {
  if (check.pins.length === 0) return undefined;
  if (input === undefined || input === null)
    throw new QuorumRefusal('quorum-missing', `${check.kind} on ${check.nodeId} carries no approved batch, and this agent's site requires one`, {
      kind: check.kind,
      nodeId: check.nodeId,
    });
  const parsed = quorumBundleSchema.safeParse(input);
  if (!parsed.success)
    throw new QuorumRefusal('quorum-malformed', `the batch sent with ${check.kind} is malformed at ${parsed.error.issues[0]?.path.join('.') || 'its top'}`, {
      kind: check.kind,
    });
  const bundle = parsed.data;
  const { document, policy } = bundle;
  const ids = { batchId: document.batchId, kind: check.kind, nodeId: check.nodeId };
  const pinned = policyDigest(policy);
  if (!check.pins.includes(pinned))
    throw new QuorumRefusal(
      'quorum-policy-not-pinned',
      `batch ${document.batchId} is signed under policy ${pinned.slice(0, 16)}…, which this agent does not pin`,
      { ...ids, policySha256: pinned },
    );
  if (document.policySha256 !== pinned || document.tenantId !== policy.tenantId)
    throw new QuorumRefusal('quorum-policy-not-pinned', `batch ${document.batchId} names another policy or tenant than the one sent with it`, ids);
  const approvers = checkSignatures(bundle, batchDigest(document));
  if (approvers.length < policy.required)
    throw new QuorumRefusal('quorum-signatures', `batch ${document.batchId} has ${approvers.length} of the ${policy.required} approvals it needs`, {
      ...ids,
      approvals: approvers.length,
      required: policy.required,
    });
  const now = check.now ?? new Date();
  if (now.getTime() >= Date.parse(document.expiresAt))
    throw new QuorumRefusal('quorum-expired', `batch ${document.batchId} expired at ${document.expiresAt}`, { ...ids, expiresAt: document.expiresAt });
  if (!(document.commands as readonly string[]).includes(check.kind))
    throw new QuorumRefusal('quorum-out-of-scope', `batch ${document.batchId} does not allow ${check.kind} (it allows ${document.commands.join(', ')})`, ids);
  if (!merkleProofValid(document.nodes.root, check.nodeId, bundle.proof))
    throw new QuorumRefusal('quorum-out-of-scope', `batch ${document.batchId} does not cover node ${check.nodeId}`, ids);
  return bundle;
}
