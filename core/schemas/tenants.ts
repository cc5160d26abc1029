import { z } from 'zod';
import { permissions, ALL_PERMISSIONS } from '../permissions';
import { tenantIdSchema } from './common';

export const tenantCreateSchema = z.object({ id: tenantIdSchema, name: z.string().min(1).max(200) }).strict();

export const credentialCreateSchema = z
  .object({
    tenantId: tenantIdSchema,
    name: z.string().min(1).max(200),
    permissions: z.array(z.union([z.enum(permissions), z.literal(ALL_PERMISSIONS)])).min(1).max(permissions.length + 1),
  })
  .strict();

export const credentialCreatedSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  permissions: z.array(z.string()),
  /** Shown once: only its hash is stored. */
  credential: z.string(),
});
