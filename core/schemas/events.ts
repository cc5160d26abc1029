import { z } from 'zod';
import { tenantIdSchema } from './common';

export const eventsQuerySchema = z.object({
  tenantId: tenantIdSchema,
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** An event type or a prefix of one (`security.`): the characters event types are made of. */
  type: z
    .string()
    .max(128)
    .regex(/^[a-z0-9][a-z0-9.-]*$/, 'an event type or a prefix of one: lower-case letters, digits, dots and dashes, e.g. security.site-token')
    .optional(),
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

/** `nextCursor` is the `after` of the next page, null on the last page (a follower polls from its last seq). */
export const eventsPageSchema = z.object({ events: z.array(eventSchema), nextCursor: z.number().nullable() });
