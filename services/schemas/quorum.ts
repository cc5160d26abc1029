// The destructive-batch quorum's API (docs/quorum.md): a tenant's policy, its batches, an
// approver's signature, and an agent's report of a command it refused.
import { z } from 'zod';
import { approverIdSchema, approverSchema, batchDocumentSchema, batchKinds, MAX_APPROVERS } from '../quorum/documents';
import { DESTRUCTIVE_KINDS } from '../../core/quorum/destructive';
import { quorumRefusalReasons } from '../quorum/verify';
import { idOf, tenantIdSchema } from '../../core/schemas/common';

export const quorumPolicySetSchema = z
  .object({
    tenantId: tenantIdSchema,
    required: z.number().int().min(1).max(MAX_APPROVERS),
    approvers: z.array(approverSchema).min(1).max(MAX_APPROVERS),
  })
  .strict();
export type QuorumPolicySet = z.infer<typeof quorumPolicySetSchema>;

export const quorumPolicySchema = z.object({
  tenantId: z.string(),
  required: z.number().int(),
  approvers: z.array(approverSchema),
  sha256: z.string().meta({ description: 'What site agents pin ([quorum] pinned_policies)' }),
  version: z.number().int(),
  updatedAt: z.string(),
});

export const batchStatuses = ['pending', 'approved', 'expired', 'refused'] as const;

export const batchParamsSchema = z.object({ batchId: idOf('quorumBatch') });
export const batchListQuerySchema = z
  .object({
    tenantId: tenantIdSchema,
    status: z.enum(batchStatuses).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: idOf('quorumBatch').optional(),
  })
  .strict();

export const batchViewSchema = z.object({
  batchId: z.string(),
  tenantId: z.string(),
  kind: z.enum(batchKinds),
  subject: z.string(),
  reason: z.string(),
  status: z.enum(batchStatuses),
  commands: z.array(z.string()),
  states: z.array(z.string()),
  nodeCount: z.number().int(),
  sha256: z.string().meta({ description: 'Approvers sign "ironflow-quorum-batch-v1\\n" + this (Ed25519)' }),
  document: batchDocumentSchema,
  required: z.number().int(),
  approvals: z.array(z.object({ approverId: z.string(), approvedAt: z.string() })),
  createdAt: z.string(),
  expiresAt: z.string(),
  approvedAt: z.string().nullable(),
});
export type BatchViewAnswer = z.infer<typeof batchViewSchema>;

/** One batch with its nodes (in Merkle order), so an approver's client recomputes the root before signing. */
export const batchDetailSchema = batchViewSchema.extend({ nodeIds: z.array(z.string()) });
export const batchListSchema = z.object({ batches: z.array(batchViewSchema), nextCursor: z.string().nullable() });

export const batchApprovalSchema = z
  .object({
    tenantId: tenantIdSchema,
    approverId: approverIdSchema,
    signature: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
  })
  .strict();

export const batchRefusalSchema = batchApprovalSchema.extend({ reason: z.string().min(1).max(512) }).strict();

/** An agent's word that it refused a destructive command (recorded as quorum.refused). */
export const quorumRefusalReportSchema = z
  .object({
    nodeId: idOf('node'),
    workflowId: z.string().min(1).max(256),
    kind: z.enum(DESTRUCTIVE_KINDS),
    reason: z.enum(quorumRefusalReasons),
    message: z.string().max(1024),
    batchId: z.string().max(64).optional(),
  })
  .strict();
export type QuorumRefusalReport = z.infer<typeof quorumRefusalReportSchema>;
