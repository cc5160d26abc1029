// The documents of the destructive-batch quorum (docs/quorum.md), and the one byte string
// each signs or pins as (canonical JSON, core/attestations/canonical-json.ts):
// - a tenant's policy: its approvers' Ed25519 public keys and how many must sign (M of N).
//   Its sha256 is what site agents pin: the approvers' keys reach an agent only through a
//   document whose digest the site's operator put in its config, never from the control plane alone.
// - a batch: what may run (command kinds, the nodes as a Merkle root), why (reason), until
//   when, under which policy. Approvers sign "ironflow-quorum-batch-v1\n" + its sha256 (hex).
// - a bundle: what travels with each destructive command: the policy, the batch, the
//   signatures, and the command's node's Merkle path.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../core/attestations/canonical-json';
import { DESTRUCTIVE_KINDS } from '../../core/quorum/destructive';

export const BATCH_SIGNING_PREFIX = 'ironflow-quorum-batch-v1\n';
/** An approver's "no": another prefix, so an approval can never be replayed as a refusal or the other way round. */
export const BATCH_REFUSAL_PREFIX = 'ironflow-quorum-refuse-v1\n';
export const MAX_APPROVERS = 32;
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const base64 = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9+/]+={0,2}$/);
export const approverIdSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'an approver id is 1 to 64 of a-z 0-9 . _ - (starting with a letter or digit)');

/** An Ed25519 public key (SPKI PEM); anything else is refused here. */
export const ed25519PublicKeyPem = z
  .string()
  .max(1024)
  .refine((pem) => {
    try {
      return createPublicKey(pem).asymmetricKeyType === 'ed25519';
    } catch {
      return false;
    }
  }, 'an Ed25519 public key in PEM (openssl genpkey -algorithm ed25519 -out a.key; openssl pkey -in a.key -pubout)');

export const approverSchema = z.object({ id: approverIdSchema, name: z.string().min(1).max(128), publicKeyPem: ed25519PublicKeyPem }).strict();
export type Approver = z.infer<typeof approverSchema>;

export const policyDocumentSchema = z
  .object({
    v: z.literal(1),
    tenantId: z.string().min(1).max(64),
    /** M: how many distinct approvers must sign a batch. */
    required: z.number().int().min(1).max(MAX_APPROVERS),
    approvers: z.array(approverSchema).min(1).max(MAX_APPROVERS),
  })
  .strict()
  .superRefine((p, ctx) => {
    const ids = p.approvers.map((a) => a.id);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', path: ['approvers'], message: 'approver ids must be distinct' });
    const keys = p.approvers.map((a) => createPublicKey(a.publicKeyPem).export({ type: 'spki', format: 'der' }).toString('hex'));
    if (new Set(keys).size !== keys.length) ctx.addIssue({ code: 'custom', path: ['approvers'], message: 'each approver needs a key of their own' });
    if (p.required > p.approvers.length)
      ctx.addIssue({ code: 'custom', path: ['required'], message: `required (${p.required}) is more than the ${p.approvers.length} approvers` });
  });
export type PolicyDocument = z.infer<typeof policyDocumentSchema>;

export const batchKinds = ['workflow', 'power', 'bulk'] as const;
export type BatchKind = (typeof batchKinds)[number];

export const batchDocumentSchema = z
  .object({
    v: z.literal(1),
    batchId: z.string().min(1).max(64),
    tenantId: z.string().min(1).max(64),
    kind: z.enum(batchKinds),
    /** What approvers read: the verb, who asked, the profile or the bulk's own reason. */
    reason: z.string().min(1).max(1024),
    /** The policy this batch is signed under (its sha256). */
    policySha256: hex64,
    /** The command kinds it allows. */
    commands: z.array(z.enum(DESTRUCTIVE_KINDS)).min(1).max(DESTRUCTIVE_KINDS.length),
    /** The provision states (a workflow's one, or a bulk verb's whole chain) it is for: information for approvers. */
    states: z.array(z.string().min(1).max(32)).max(16),
    nodes: z.object({ root: hex64, count: z.number().int().min(1).max(10_000) }).strict(),
    /** The workflow or bulk run it serves. */
    subject: z.string().min(1).max(256),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .strict();
export type BatchDocument = z.infer<typeof batchDocumentSchema>;

export const batchSignatureSchema = z.object({ approverId: approverIdSchema, signature: base64 }).strict();
export type BatchSignature = z.infer<typeof batchSignatureSchema>;

export const quorumBundleSchema = z
  .object({
    policy: policyDocumentSchema,
    document: batchDocumentSchema,
    signatures: z.array(batchSignatureSchema).max(MAX_APPROVERS),
    /** The command's node's path to document.nodes.root. */
    proof: z.array(z.object({ hash: hex64, left: z.boolean() }).strict()).max(16),
  })
  .strict();
export type QuorumBundle = z.infer<typeof quorumBundleSchema>;

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
export const policyDigest = (policy: PolicyDocument): string => sha256Hex(canonicalJson(policy));
export const batchDigest = (document: BatchDocument): string => sha256Hex(canonicalJson(document));
export const batchSigningInput = (digest: string): Buffer => Buffer.from(`${BATCH_SIGNING_PREFIX}${digest}`, 'utf8');

/** An approver's signature over a batch (the CLI signs with the approver's own key, on their machine). */
export const signBatch = (digest: string, privateKey: KeyObject): string => sign(null, batchSigningInput(digest), privateKey).toString('base64');

export function batchSignatureValid(digest: string, signature: string, publicKeyPem: string, prefix = BATCH_SIGNING_PREFIX): boolean {
  try {
    return verify(null, Buffer.from(`${prefix}${digest}`, 'utf8'), createPublicKey(publicKeyPem), Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** An approver's refusal of a batch, signed on their machine like an approval. */
export const signBatchRefusal = (digest: string, privateKey: KeyObject): string =>
  sign(null, Buffer.from(`${BATCH_REFUSAL_PREFIX}${digest}`, 'utf8'), privateKey).toString('base64');
