// Batches in the database: requested by whoever is about to send destructive commands (a
// workflow for its node, metal power for one command, metal bulk for its run), approved by
// signatures verified on receipt, read by approvers, and bundled for the agents. Every
// request, approval and refusal is an event. A batch is asked for once per subject (a
// retried request finds the first).
import type { QuorumBatch } from '../../generated/prisma-sqlite/client';
import { isUniqueViolation, type Db, type DbOrTx } from '../db';
import { IronflowError, notFound } from '../../core/errors';
import { appendEvent } from '../events';
import { newId } from '../ids';
import { BATCH_REFUSAL_PREFIX, batchDigest, batchSignatureValid, type BatchDocument, type BatchKind, type QuorumBundle } from './documents';
import type { DestructiveKind } from '../../core/quorum/destructive';
import { merkleProof, merkleRoot } from './merkle';
import { findQuorumPolicy, policyOf } from './policy-store';
import { checkSignatures, QuorumRefusal, verifyQuorumBundle } from './verify';

/** How long a batch waits for approval and then allows its commands (a workflow's whole run). */
export const DEFAULT_BATCH_TTL_MS = 24 * 3600_000;
export const MAX_BATCH_NODES = 10_000;

export type BatchStatus = 'pending' | 'approved' | 'expired' | 'refused';

export interface BatchRequest {
  tenantId: string;
  kind: BatchKind;
  /** The workflow id or bulk run id the batch serves (one batch each). */
  subject: string;
  reason: string;
  commands: DestructiveKind[];
  states: string[];
  nodeIds: string[];
  ttlMs?: number;
}

export interface BatchView {
  batchId: string;
  tenantId: string;
  kind: BatchKind;
  subject: string;
  reason: string;
  status: BatchStatus;
  commands: string[];
  states: string[];
  nodeCount: number;
  /** What approvers sign ("ironflow-quorum-batch-v1\n" + this). */
  sha256: string;
  document: BatchDocument;
  required: number;
  approvals: Array<{ approverId: string; approvedAt: string }>;
  createdAt: string;
  expiresAt: string;
  approvedAt: string | null;
}

const documentOf = (row: QuorumBatch): BatchDocument => row.document as unknown as BatchDocument;
export const nodeIdsOf = (row: QuorumBatch): string[] => row.nodeIds as unknown as string[];

/** A pending batch past its expiry is expired now (once, with its event). */
async function settleExpiry(db: Db, row: QuorumBatch, now = new Date()): Promise<QuorumBatch> {
  if (row.status !== 'pending' || now < row.expiresAt) return row;
  const updated = await db.$transaction(async (tx) => {
    const changed = await tx.quorumBatch.updateMany({ where: { id: row.id, status: 'pending' }, data: { status: 'expired' } });
    if (changed.count === 1)
      await appendEvent(tx, {
        tenantId: row.tenantId,
        type: 'quorum.batch.expired',
        subjectId: row.id,
        data: { kind: row.kind, subject: row.subject, expiresAt: row.expiresAt.toISOString() },
      });
    return tx.quorumBatch.findUniqueOrThrow({ where: { id: row.id } });
  });
  return updated;
}

export async function findBatch(db: Db, tenantId: string, batchId: string): Promise<QuorumBatch> {
  const row = await db.quorumBatch.findFirst({ where: { id: batchId, tenantId } });
  if (!row) throw notFound('batch', batchId);
  return settleExpiry(db, row);
}

export async function batchView(db: DbOrTx, row: QuorumBatch): Promise<BatchView> {
  const document = documentOf(row);
  const approvals = await db.quorumApproval.findMany({ where: { batchId: row.id }, orderBy: { createdAt: 'asc' } });
  const policy = await findQuorumPolicy(db, row.tenantId);
  return {
    batchId: row.id,
    tenantId: row.tenantId,
    kind: row.kind as BatchKind,
    subject: row.subject,
    reason: row.reason,
    status: row.status as BatchStatus,
    commands: document.commands,
    states: document.states,
    nodeCount: document.nodes.count,
    sha256: row.sha256,
    document,
    required: policy && policy.sha256 === document.policySha256 ? policyOf(policy).required : 0,
    approvals: approvals.map((a) => ({ approverId: a.approverId, approvedAt: a.createdAt.toISOString() })),
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    approvedAt: row.approvedAt?.toISOString() ?? null,
  };
}

/** The tenant's batch for `subject`, asked for now if there is none; null when the tenant has no quorum policy. */
export async function requestBatch(db: Db, request: BatchRequest): Promise<QuorumBatch | null> {
  const policy = await findQuorumPolicy(db, request.tenantId);
  if (!policy) return null;
  const existing = await db.quorumBatch.findUnique({ where: { tenantId_subject: { tenantId: request.tenantId, subject: request.subject } } });
  if (existing) return settleExpiry(db, existing);
  const nodeIds = [...new Set(request.nodeIds)];
  if (nodeIds.length === 0 || nodeIds.length > MAX_BATCH_NODES)
    throw new IronflowError('INVALID_INPUT', `a batch covers 1 to ${MAX_BATCH_NODES} nodes, not ${nodeIds.length}`, { path: 'nodeIds' });
  const id = newId('quorumBatch');
  const created = new Date();
  const expires = new Date(created.getTime() + (request.ttlMs ?? DEFAULT_BATCH_TTL_MS));
  const document: BatchDocument = {
    v: 1,
    batchId: id,
    tenantId: request.tenantId,
    kind: request.kind,
    reason: request.reason.slice(0, 1024),
    policySha256: policy.sha256,
    commands: [...new Set(request.commands)].sort(),
    states: request.states,
    nodes: { root: merkleRoot(nodeIds), count: nodeIds.length },
    subject: request.subject,
    createdAt: created.toISOString(),
    expiresAt: expires.toISOString(),
  };
  try {
    return await db.$transaction(async (tx) => {
      const row = await tx.quorumBatch.create({
        data: {
          id,
          tenantId: request.tenantId,
          kind: request.kind,
          subject: request.subject,
          reason: document.reason,
          document: document as object,
          sha256: batchDigest(document),
          nodeIds,
          status: 'pending',
          expiresAt: expires,
          createdAt: created,
        },
      });
      await appendEvent(tx, {
        tenantId: request.tenantId,
        type: 'quorum.batch.requested',
        subjectId: id,
        data: {
          kind: request.kind,
          subject: request.subject,
          reason: document.reason,
          commands: document.commands,
          states: document.states,
          nodes: nodeIds.length,
          ...(nodeIds.length === 1 ? { nodeId: nodeIds[0] } : {}),
          required: policyOf(policy).required,
          expiresAt: document.expiresAt,
        },
      });
      return row;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return db.quorumBatch.findUniqueOrThrow({ where: { tenantId_subject: { tenantId: request.tenantId, subject: request.subject } } }); // a concurrent request won
  }
}

export interface ApprovalInput {
  tenantId: string;
  batchId: string;
  approverId: string;
  /** base64 Ed25519 over "ironflow-quorum-batch-v1\n" + the batch's sha256. */
  signature: string;
}

/**
 * Records one approver's signature after verifying it under the policy the batch names.
 * Refused (with a quorum.approval.refused event): an expired batch, a policy that changed
 * since the batch was asked for, an approver the policy does not list, a second signature
 * of the same approver, a signature that does not verify.
 */
export async function approveBatch(db: Db, input: ApprovalInput, actorId: string): Promise<QuorumBatch> {
  const row = await findBatch(db, input.tenantId, input.batchId);
  const refuse = async (error: IronflowError): Promise<never> => {
    await appendEvent(db, {
      tenantId: row.tenantId,
      type: 'quorum.approval.refused',
      subjectId: row.id,
      data: { approverId: input.approverId.slice(0, 64), reason: String(error.details.reason ?? error.code), message: error.message, actorId },
    });
    throw error;
  };
  const document = documentOf(row);
  if (row.status === 'expired')
    await refuse(
      new IronflowError('INVALID_STATE', `batch ${row.id} expired at ${document.expiresAt}; ask again (a new run asks for a new batch)`, {
        reason: 'quorum-expired',
      }),
    );
  if (row.status === 'refused')
    await refuse(new IronflowError('INVALID_STATE', `batch ${row.id} was refused by an approver; it cannot be approved`, { reason: 'quorum-refused' }));
  const policyRow = await findQuorumPolicy(db, row.tenantId);
  if (!policyRow || policyRow.sha256 !== document.policySha256) {
    await refuse(
      new IronflowError('INVALID_STATE', `batch ${row.id} was asked for under a quorum policy the tenant no longer has; it cannot be approved`, {
        reason: 'quorum-policy-changed',
      }),
    );
  }
  const policy = policyOf(policyRow as NonNullable<typeof policyRow>);
  const earlier = await db.quorumApproval.findMany({ where: { batchId: row.id } });
  if (earlier.some((a) => a.approverId === input.approverId))
    await refuse(new IronflowError('CONFLICT', `${input.approverId} already approved batch ${row.id}`, { reason: 'quorum-duplicate' }));
  try {
    checkSignatures({ policy, signatures: [{ approverId: input.approverId, signature: input.signature }] }, row.sha256);
  } catch (err) {
    if (err instanceof QuorumRefusal) await refuse(err);
    throw err;
  }
  try {
    return await db.$transaction(async (tx) => {
      await tx.quorumApproval.create({ data: { batchId: row.id, approverId: input.approverId, signature: input.signature } });
      const approvals = await tx.quorumApproval.count({ where: { batchId: row.id } });
      await appendEvent(tx, {
        tenantId: row.tenantId,
        type: 'quorum.batch.approval',
        subjectId: row.id,
        data: { approverId: input.approverId, approvals, required: policy.required, actorId },
      });
      if (approvals >= policy.required && row.status === 'pending') {
        await tx.quorumBatch.updateMany({ where: { id: row.id, status: 'pending' }, data: { status: 'approved', approvedAt: new Date() } });
        await appendEvent(tx, {
          tenantId: row.tenantId,
          type: 'quorum.batch.approved',
          subjectId: row.id,
          data: {
            kind: row.kind,
            subject: row.subject,
            approvals,
            required: policy.required,
            approvers: [...earlier.map((a) => a.approverId), input.approverId],
          },
        });
      }
      return tx.quorumBatch.findUniqueOrThrow({ where: { id: row.id } });
    });
  } catch (err) {
    if (isUniqueViolation(err))
      await refuse(new IronflowError('CONFLICT', `${input.approverId} already approved batch ${row.id}`, { reason: 'quorum-duplicate' }));
    throw err;
  }
}

export interface RefusalInput extends ApprovalInput {
  /** Why, for the other approvers and the run's status. */
  reason: string;
}

/**
 * An approver's "no": one verified refusal ends a pending batch (refused), and the run it
 * serves fails without sending anything destructive. Signed like an approval, under its own prefix.
 */
export async function refuseBatch(db: Db, input: RefusalInput, actorId: string): Promise<QuorumBatch> {
  const row = await findBatch(db, input.tenantId, input.batchId);
  const document = documentOf(row);
  if (row.status !== 'pending')
    throw new IronflowError('INVALID_STATE', `batch ${row.id} is ${row.status}; only a pending batch can be refused`, { reason: `quorum-${row.status}` });
  const policyRow = await findQuorumPolicy(db, row.tenantId);
  const key =
    policyRow && policyRow.sha256 === document.policySha256 ? policyOf(policyRow).approvers.find((a) => a.id === input.approverId)?.publicKeyPem : undefined;
  if (!key || !batchSignatureValid(row.sha256, input.signature, key, BATCH_REFUSAL_PREFIX)) {
    const error = new QuorumRefusal('quorum-signatures', `the refusal of ${input.approverId} is not a verified refusal by an approver of batch ${row.id}`, {
      approverId: input.approverId,
    });
    await appendEvent(db, {
      tenantId: row.tenantId,
      type: 'quorum.refusal.refused',
      subjectId: row.id,
      data: { approverId: input.approverId.slice(0, 64), reason: 'quorum-signatures', actorId },
    });
    throw error;
  }
  return db.$transaction(async (tx) => {
    const changed = await tx.quorumBatch.updateMany({ where: { id: row.id, status: 'pending' }, data: { status: 'refused' } });
    if (changed.count !== 1) throw new IronflowError('CONFLICT', `batch ${row.id} changed meanwhile; read it again`, { reason: 'quorum-changed' });
    await appendEvent(tx, {
      tenantId: row.tenantId,
      type: 'quorum.batch.refused',
      subjectId: row.id,
      data: { kind: row.kind, subject: row.subject, approverId: input.approverId, reason: input.reason, actorId },
    });
    return tx.quorumBatch.findUniqueOrThrow({ where: { id: row.id } });
  });
}

/** What travels with a destructive command for `nodeId`: only an approved batch that covers it. */
export async function batchBundle(db: Db, row: QuorumBatch, nodeId: string): Promise<QuorumBundle> {
  const document = documentOf(row);
  const policyRow = await findQuorumPolicy(db, row.tenantId);
  if (row.status !== 'approved' || !policyRow || policyRow.sha256 !== document.policySha256) {
    throw new QuorumRefusal(
      'quorum-signatures',
      `batch ${row.id} is ${row.status}${row.status === 'approved' ? ' under a policy the tenant no longer has' : ''}`,
      { batchId: row.id },
    );
  }
  const approvals = await db.quorumApproval.findMany({ where: { batchId: row.id }, orderBy: { approverId: 'asc' } });
  const nodeIds = nodeIdsOf(row);
  if (!nodeIds.includes(nodeId)) throw new QuorumRefusal('quorum-out-of-scope', `batch ${row.id} does not cover node ${nodeId}`, { batchId: row.id, nodeId });
  const bundle: QuorumBundle = {
    policy: policyOf(policyRow),
    document,
    signatures: approvals.map((a) => ({ approverId: a.approverId, signature: a.signature })),
    proof: merkleProof(nodeIds, nodeId),
  };
  // The agents' own check, here too: rows edited behind the API (an approval, the policy) are caught before anything is sent.
  verifyQuorumBundle(bundle, { pins: [policyRow.sha256], nodeId, kind: document.commands[0] as string });
  return bundle;
}

export async function listBatches(
  db: Db,
  query: { tenantId: string; status?: BatchStatus; limit: number; cursor?: string },
): Promise<{ batches: BatchView[]; nextCursor: string | null }> {
  const rows = await db.quorumBatch.findMany({
    where: { tenantId: query.tenantId, ...(query.status ? { status: query.status } : {}), ...(query.cursor ? { id: { lt: query.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const batches: BatchView[] = [];
  for (const row of page) batches.push(await batchView(db, await settleExpiry(db, row)));
  return { batches, nextCursor: rows.length > query.limit ? (page[page.length - 1]?.id ?? null) : null };
}
