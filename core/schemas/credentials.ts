// API credentials' inputs and answers: create (mint), list, revoke, rotate. The bearer is
// in the answer that minted or rotated it, and nowhere else.
import { z } from 'zod';
import { ALL_PERMISSIONS, permissions } from '../permissions';
import { idOf, tenantIdSchema } from './common';
import { displayNameSchema } from './tenants';

export const credentialPermissionSchema = z.union([z.enum(permissions), z.literal(ALL_PERMISSIONS)]);

/** An instant with its offset, e.g. 2027-01-31T00:00:00Z. */
const expiresAtSchema = z.iso.datetime({ offset: true });

export const credentialCreateSchema = z
  .object({
    tenantId: tenantIdSchema,
    name: displayNameSchema,
    permissions: z
      .array(credentialPermissionSchema)
      .min(1)
      .max(permissions.length + 1),
    /** Refused from this instant on; without it the credential does not expire. */
    expiresAt: expiresAtSchema.optional(),
  })
  .strict();
export type CredentialCreateInput = z.infer<typeof credentialCreateSchema>;

export const credentialParamsSchema = z.object({ credentialId: idOf('credential') });

export const credentialListQuerySchema = z.object({
  tenantId: tenantIdSchema,
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: idOf('credential').optional(),
});

export const credentialRevokeSchema = z.object({ tenantId: tenantIdSchema }).strict();

export const credentialRotateSchema = z
  .object({
    tenantId: tenantIdSchema,
    /** A new expiry for the new secret; without it the credential keeps its own. */
    expiresAt: expiresAtSchema.optional(),
  })
  .strict();

export const credentialSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  name: z.string(),
  permissions: z.array(z.string()),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  rotatedAt: z.string().nullable(),
  /** The bearer `ifk_<id>.<secret>`: in the answer that minted or rotated it, and nowhere else. */
  credential: z.string().optional(),
});
export type CredentialView = z.infer<typeof credentialSchema>;

export const credentialListSchema = z.object({ credentials: z.array(credentialSchema), nextCursor: z.string().nullable() });
