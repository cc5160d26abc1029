// A tenant's quorum policy in the database: set (a new version each time), read, removed.
// Turning it on or changing it changes its sha256, which site agents must pin before they
// enforce it (docs/quorum.md); the control plane enforces it from the moment it is set.
import type { QuorumPolicy } from '../../generated/prisma-sqlite/client';
import type { Db, DbOrTx } from '../db';
import { notFound, parseWith } from '../../core/errors';
import { appendEvent } from '../events';
import { policyDigest, policyDocumentSchema, type Approver, type PolicyDocument } from './documents';

export interface QuorumPolicyView {
  tenantId: string;
  required: number;
  approvers: Approver[];
  /** What site agents pin ([quorum] pinned_policies). */
  sha256: string;
  version: number;
  updatedAt: string;
}

export const policyOf = (row: QuorumPolicy): PolicyDocument => row.document as unknown as PolicyDocument;

export const quorumPolicyView = (row: QuorumPolicy): QuorumPolicyView => {
  const policy = policyOf(row);
  return {
    tenantId: row.tenantId,
    required: policy.required,
    approvers: policy.approvers,
    sha256: row.sha256,
    version: row.version,
    updatedAt: row.updatedAt.toISOString(),
  };
};

export const findQuorumPolicy = (db: DbOrTx, tenantId: string): Promise<QuorumPolicy | null> => db.quorumPolicy.findUnique({ where: { tenantId } });

export async function setQuorumPolicy(
  db: Db,
  input: { tenantId: string; required: number; approvers: Approver[] },
  actorId: string,
): Promise<QuorumPolicyView> {
  const document = parseWith(policyDocumentSchema, { v: 1, tenantId: input.tenantId, required: input.required, approvers: input.approvers });
  const sha256 = policyDigest(document);
  if (!(await db.tenant.findUnique({ where: { id: input.tenantId }, select: { id: true } }))) throw notFound('tenant', input.tenantId);
  const row = await db.$transaction(async (tx) => {
    const previous = await tx.quorumPolicy.findUnique({ where: { tenantId: input.tenantId } });
    const version = (previous?.version ?? 0) + 1;
    const saved = await tx.quorumPolicy.upsert({
      where: { tenantId: input.tenantId },
      create: { tenantId: input.tenantId, document: document as object, sha256, version },
      update: { document: document as object, sha256, version },
    });
    await appendEvent(tx, {
      tenantId: input.tenantId,
      type: 'quorum.policy.set',
      subjectId: input.tenantId,
      data: { version, sha256, required: document.required, approvers: document.approvers.map((a) => a.id), previousSha256: previous?.sha256 ?? null, actorId },
    });
    return saved;
  });
  return quorumPolicyView(row);
}

export async function removeQuorumPolicy(db: Db, tenantId: string, actorId: string): Promise<void> {
  await db.$transaction(async (tx) => {
    const previous = await tx.quorumPolicy.findUnique({ where: { tenantId } });
    if (!previous) throw notFound('quorum policy of tenant', tenantId);
    await tx.quorumPolicy.delete({ where: { tenantId } });
    await appendEvent(tx, {
      tenantId,
      type: 'quorum.policy.removed',
      subjectId: tenantId,
      data: { version: previous.version, sha256: previous.sha256, actorId },
    });
  });
}
