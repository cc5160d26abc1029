// siteTokens.* inputs and answers (spec 001, "Enroll site agents with site tokens").
import { z } from 'zod';
import { idempotencyKeySchema, idOf, tenantIdSchema } from './common';

export const SITE_TOKEN_MIN_TTL = 60;
export const SITE_TOKEN_MAX_TTL = 86_400;
export const SITE_TOKEN_MAX_USES = 16;

export const siteTokenCreateSchema = z
  .object({
    tenantId: tenantIdSchema,
    ttlSeconds: z.number().int().min(SITE_TOKEN_MIN_TTL).max(SITE_TOKEN_MAX_TTL),
    maxUses: z.number().int().min(1).max(SITE_TOKEN_MAX_USES).default(1),
    idempotencyKey: idempotencyKeySchema.optional(),
  })
  .strict();
export type SiteTokenCreateInput = z.infer<typeof siteTokenCreateSchema>;

export const siteTokenParamsSchema = z.object({ siteId: idOf('site'), tokenId: idOf('joinToken') });

export const siteTokenSchema = z.object({
  id: z.string(),
  siteId: z.string(),
  role: z.literal('site'),
  maxUses: z.number(),
  usesLeft: z.number(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
  /** The bearer `ifjt_<id>.<secret>`: in the answer that created the token, and nowhere else. */
  token: z.string().optional(),
});
export type SiteTokenView = z.infer<typeof siteTokenSchema>;
