import { z } from 'zod';
import { tenantIdSchema } from './common';

export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.object({ ok: z.boolean(), provider: z.string(), error: z.string().optional() }),
  temporal: z.object({ ok: z.boolean(), address: z.string(), namespace: z.string(), webUi: z.string(), error: z.string().optional() }),
});

export const systemCheckCreateSchema = z.object({ tenantId: tenantIdSchema }).strict();

export const systemCheckSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  workflowId: z.string(),
  status: z.enum(['running', 'succeeded']),
  workerId: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type SystemCheckView = z.infer<typeof systemCheckSchema>;
