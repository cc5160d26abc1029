// metal.adoptToken: a join token of role `adopt`, bound to a pool, with which a machine that
// already runs its own OS joins as a new node of that pool (spec 004 "Adopt").
import { z } from 'zod';
import { idOf, tenantIdSchema } from './common';

export const ADOPT_TOKEN_MAX_TTL = 7 * 86_400;
export const ADOPT_TOKEN_MAX_USES = 1000;

export const adoptTokenCreateSchema = z
  .object({
    tenantId: tenantIdSchema,
    poolId: idOf('pool'),
    ttlSeconds: z.number().int().min(60).max(ADOPT_TOKEN_MAX_TTL).default(3600),
    /** One use per machine adopted. */
    maxUses: z.number().int().min(1).max(ADOPT_TOKEN_MAX_USES).default(1),
  })
  .strict();
export type AdoptTokenCreateInput = z.infer<typeof adoptTokenCreateSchema>;

export const adoptTokenSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  siteId: z.string(),
  poolId: z.string(),
  role: z.literal('adopt'),
  maxUses: z.number(),
  expiresAt: z.string(),
  /** The bearer, in this answer only (its hash is stored). */
  token: z.string(),
});
export type AdoptTokenView = z.infer<typeof adoptTokenSchema>;
