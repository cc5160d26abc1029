// `ironflow batches …`: the destructive-batch quorum (docs/quorum.md). A tenant admin sets the
// policy (approvers' public keys, M); approvers list and read batches (their reason, nodes,
// commands) and approve (or refuse) one by signing it with their own Ed25519 key, here on their machine:
// the private key never leaves it. Before signing, the client recomputes the batch's digest
// from the document and its Merkle root from the node list it was shown, and checks that the
// policy the batch names is the tenant's and lists this key, so it signs exactly what it showed.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { IronflowError } from '../../core/errors';
import { ROOT_TENANT } from '../../core/permissions';
import { batchDigest, signBatch, signBatchRefusal, type Approver } from '../../services/quorum/documents';
import { merkleRoot } from '../../services/quorum/merkle';
import { idOf, tenantIdSchema } from '../../core/schemas/common';
import { batchRefusalSchema, batchStatuses, type BatchViewAnswer } from '../../services/schemas/quorum';
import { defineCommand } from '../command';
import type { CliContext } from '../context';

const tenant = { tenantId: tenantIdSchema.default(ROOT_TENANT) };

function readFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new IronflowError('INVALID_INPUT', `--${flag} ${file}: cannot read it (${(error as Error).message})`, { path: flag });
  }
}

/** `--approvers FILE`: a JSON list of { id, name, publicKeyFile } (a path relative to the list) or { id, name, publicKeyPem }. */
function readApprovers(file: string): Approver[] {
  const entries = z
    .array(z.object({ id: z.string(), name: z.string(), publicKeyFile: z.string().optional(), publicKeyPem: z.string().optional() }))
    .safeParse(JSON.parse(readFile(file, 'approvers')));
  if (!entries.success)
    throw new IronflowError('INVALID_INPUT', `--approvers ${file}: a JSON list of { "id", "name", "publicKeyFile" }`, { path: 'approvers' });
  return entries.data.map((a) => ({
    id: a.id,
    name: a.name,
    publicKeyPem: a.publicKeyPem ?? readFile(path.resolve(path.dirname(file), a.publicKeyFile ?? ''), 'approvers'),
  }));
}

function readPrivateKey(file: string): KeyObject {
  try {
    const key = createPrivateKey(readFile(file, 'key'));
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${key.asymmetricKeyType} key`);
    return key;
  } catch (error) {
    if (error instanceof IronflowError) throw error;
    throw new IronflowError('INVALID_INPUT', `--key ${file}: not an Ed25519 private key in PEM (${(error as Error).message})`, { path: 'key' });
  }
}

const batchColumns = [
  { header: 'batch', value: (b: Record<string, unknown>) => b.batchId },
  { header: 'kind', value: (b: Record<string, unknown>) => b.kind },
  { header: 'status', value: (b: Record<string, unknown>) => b.status },
  { header: 'approvals', value: (b: Record<string, unknown>) => `${(b.approvals as unknown[]).length}/${String(b.required)}` },
  { header: 'nodes', value: (b: Record<string, unknown>) => b.nodeCount },
  { header: 'expires', value: (b: Record<string, unknown>) => b.expiresAt },
  { header: 'reason', value: (b: Record<string, unknown>) => b.reason },
];

const batchesPolicySetCommand = defineCommand({
  name: 'batches policy set',
  summary:
    "Turn the destructive-batch quorum on (or change it) for a tenant: --required M --approvers FILE.json (each { id, name, publicKeyFile }); pin the answer's sha256 in each site agent's [quorum] pinned_policies",
  flags: z.object({ ...tenant, required: z.number().int().min(1), approvers: z.string().min(1) }),
  run: (ctx, f) => ctx.api.call('PUT', '/v1/quorum/policy', { tenantId: f.tenantId, required: f.required, approvers: readApprovers(f.approvers) }),
});

const batchesPolicyShowCommand = defineCommand({
  name: 'batches policy show',
  summary: "A tenant's quorum policy: approvers, how many must sign, and the sha256 site agents pin",
  flags: z.object(tenant),
  run: (ctx, f) => ctx.api.call('GET', `/v1/quorum/policy?tenantId=${encodeURIComponent(f.tenantId)}`),
});

const batchesPolicyRemoveCommand = defineCommand({
  name: 'batches policy remove',
  summary: "Turn a tenant's quorum off (site agents that pin it keep refusing until their pin is removed)",
  flags: z.object(tenant),
  run: (ctx, f) => ctx.api.call('DELETE', `/v1/quorum/policy?tenantId=${encodeURIComponent(f.tenantId)}`),
});

const batchesListCommand = defineCommand({
  name: 'batches list',
  summary: "A tenant's batches, newest first: [--status pending|approved|expired]",
  flags: z.object({ ...tenant, status: z.enum(batchStatuses).optional(), limit: z.number().int().min(1).max(200).default(50) }),
  run: (ctx, f) =>
    ctx.api.call(
      'GET',
      `/v1/quorum/batches?${new URLSearchParams({ tenantId: f.tenantId, limit: String(f.limit), ...(f.status ? { status: f.status } : {}) }).toString()}`,
    ),
  table: { rows: (r) => (r as { batches: Array<Record<string, unknown>> }).batches, columns: batchColumns },
});

const fetchBatch = (ctx: CliContext, tenantId: string, batchId: string) =>
  ctx.api.call<BatchViewAnswer & { nodeIds: string[] }>('GET', `/v1/quorum/batches/${batchId}?tenantId=${encodeURIComponent(tenantId)}`);

const batchesShowCommand = defineCommand({
  name: 'batches show',
  summary: 'One batch: what it allows (commands, nodes, states), why (reason), its approvals: ironflow batches show ID',
  flags: z.object({ ...tenant, batchId: idOf('quorumBatch') }),
  positionals: ['batchId'],
  run: (ctx, f) => fetchBatch(ctx, f.tenantId, f.batchId),
});

/**
 * The digest to sign, computed here from what the control plane showed: refused unless the
 * node list hashes to the document's root, the document names the tenant's current policy, and
 * that policy lists this key for this approver.
 */
async function checkedDigest(ctx: CliContext, f: { tenantId: string; batchId: string; approver: string }, key: KeyObject): Promise<string> {
  const batch = await fetchBatch(ctx, f.tenantId, f.batchId);
  const { document } = batch;
  if (document.batchId !== f.batchId || document.tenantId !== f.tenantId)
    throw new IronflowError('INVALID_STATE', `the control plane answered another batch's document (${document.batchId}); not signed`, {
      reason: 'document-mismatch',
    });
  if (document.nodes.count !== batch.nodeIds.length || merkleRoot(batch.nodeIds) !== document.nodes.root) {
    throw new IronflowError('INVALID_STATE', `batch ${f.batchId}: its node list does not hash to the root its document names; not signed`, {
      reason: 'node-root-mismatch',
    });
  }
  const policy = await ctx.api.call<{ sha256: string; approvers: Approver[] }>('GET', `/v1/quorum/policy?tenantId=${encodeURIComponent(f.tenantId)}`);
  if (policy.sha256 !== document.policySha256)
    throw new IronflowError('INVALID_STATE', `batch ${f.batchId} names a policy the tenant no longer has; not signed`, { reason: 'policy-mismatch' });
  const mine = createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('hex');
  const listed = policy.approvers.find((a) => a.id === f.approver);
  if (!listed || createPublicKey(listed.publicKeyPem).export({ type: 'spki', format: 'der' }).toString('hex') !== mine) {
    throw new IronflowError('PERMISSION_DENIED', `--key is not the key the policy lists for approver ${f.approver}; not signed`, { path: 'key' });
  }
  return batchDigest(document);
}

const signerFlags = { ...tenant, batchId: idOf('quorumBatch'), approver: z.string().min(1).max(64), key: z.string().min(1) };

const batchesApproveCommand = defineCommand({
  name: 'batches approve',
  summary: 'Approve a batch with your own key, signed here: ironflow batches approve ID --approver YOUR_ID --key FILE.pem',
  flags: z.object(signerFlags),
  positionals: ['batchId'],
  run: async (ctx, f) => {
    const key = readPrivateKey(f.key);
    const signature = signBatch(await checkedDigest(ctx, f, key), key);
    return ctx.api.call('POST', `/v1/quorum/batches/${f.batchId}/approvals`, { tenantId: f.tenantId, approverId: f.approver, signature });
  },
});

const batchesRefuseCommand = defineCommand({
  name: 'batches refuse',
  summary:
    'Refuse a pending batch with your own key (its run fails, nothing destructive is sent): ironflow batches refuse ID --approver YOUR_ID --key FILE.pem --reason TEXT',
  flags: z.object({ ...signerFlags, reason: batchRefusalSchema.shape.reason }),
  positionals: ['batchId'],
  run: async (ctx, f) => {
    const key = readPrivateKey(f.key);
    const signature = signBatchRefusal(await checkedDigest(ctx, f, key), key);
    return ctx.api.call('POST', `/v1/quorum/batches/${f.batchId}/refusals`, { tenantId: f.tenantId, approverId: f.approver, signature, reason: f.reason });
  },
});

export const batchCommands = [
  batchesPolicySetCommand,
  batchesPolicyShowCommand,
  batchesPolicyRemoveCommand,
  batchesListCommand,
  batchesShowCommand,
  batchesApproveCommand,
  batchesRefuseCommand,
];
