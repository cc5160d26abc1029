// joinRequests.list / approve / reject (spec 001, the discovery attestor's approval modes).
import { z } from 'zod';
import { idOf, tenantIdSchema } from './common';

export const joinRequestsQuerySchema = z
  .object({
    tenantId: tenantIdSchema,
    siteId: idOf('site').optional(),
    status: z.enum(['open', 'approved', 'rejected', 'expired', 'used']).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

export const joinRequestParamsSchema = z.object({ id: idOf('joinRequest') }).strict();
export const joinRequestDecisionSchema = z.object({ tenantId: tenantIdSchema }).strict();

export const joinRequestSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  siteId: z.string(),
  status: z.string(),
  mac: z.string().nullable(),
  nodeId: z.string().nullable(),
  workflowId: z.string().nullable(),
  reason: z.string().nullable(),
  expiresAt: z.string(),
  decidedAt: z.string().nullable(),
  createdAt: z.string(),
});
export const joinRequestListSchema = z.object({ joinRequests: z.array(joinRequestSchema) });
