// sites.* inputs and answers (spec 001, "Sites").
import { z } from 'zod';
import { ROOT_TENANT } from '../permissions';
import { idempotencyKeySchema, idOf, tenantIdSchema } from './common';

export const siteKinds = ['shared', 'dedicated', 'custom'] as const;

export const regionLabelSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'a region is lower-case letters, digits and dashes, e.g. eu-central-1');

export const siteCreateFields = z
  .object({
    tenantId: tenantIdSchema,
    kind: z.enum(siteKinds),
    region: regionLabelSchema,
    iamRegion: regionLabelSchema.optional(),
    idempotencyKey: idempotencyKeySchema,
  })
  .strict();

/** shared and dedicated sites are platform hardware: only the root tenant holds them. */
export const siteCreateSchema = siteCreateFields.superRefine((value, ctx) => {
  if (value.kind !== 'custom' && value.tenantId !== ROOT_TENANT) {
    ctx.addIssue({ code: 'custom', path: ['kind'], message: `a ${value.kind} site belongs to the root tenant; tenant ${value.tenantId} creates kind custom` });
  }
});
export type SiteCreateInput = z.infer<typeof siteCreateSchema>;

export const siteParamsSchema = z.object({ siteId: idOf('site') });

export const siteUpdateFields = z
  .object({
    tenantId: tenantIdSchema,
    region: regionLabelSchema.optional(),
    iamRegion: regionLabelSchema.optional(),
    clearIamRegion: z.boolean().optional(),
    /** The version read: a stale one is CONFLICT instead of a lost update. */
    version: z.number().int().min(1).optional(),
  })
  .strict();

export const siteUpdateSchema = siteUpdateFields.superRefine((value, ctx) => {
  if (value.iamRegion !== undefined && value.clearIamRegion) {
    ctx.addIssue({ code: 'custom', path: ['clearIamRegion'], message: 'give iamRegion or clearIamRegion, not both' });
  }
  if (value.region === undefined && value.iamRegion === undefined && !value.clearIamRegion) {
    ctx.addIssue({ code: 'custom', path: ['region'], message: 'nothing to change: give region, iamRegion or clearIamRegion' });
  }
});
export type SiteUpdateInput = z.infer<typeof siteUpdateSchema>;

export const siteSchema = z.object({
  id: z.string(),
  ownerTenantId: z.string(),
  kind: z.enum(siteKinds),
  region: z.string(),
  iamRegion: z.string().nullable(),
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SiteView = z.infer<typeof siteSchema>;

export const siteListSchema = z.object({ sites: z.array(siteSchema) });

export const siteDeletedSchema = z.object({
  deleted: z.boolean(),
  /** The row was kept as a tombstone because something referenced the site. */
  tombstoned: z.boolean(),
});
