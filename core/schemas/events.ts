import { z } from 'zod';
import { tenantIdSchema } from './common';

export const eventsQuerySchema = z.object({
  tenantId: tenantIdSchema,
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  type: z.string().max(128).optional(),
});

export const eventSchema = z.object({
  id: z.string(),
  seq: z.number(),
  tenantId: z.string(),
  type: z.string(),
  subjectId: z.string().nullable(),
  data: z.unknown(),
  createdAt: z.string(),
});

export const eventsPageSchema = z.object({ events: z.array(eventSchema), nextCursor: z.number().nullable() });
