// pools.* inputs and answers. The policy is read by later modules (provision, metal):
// stored now, validated strictly.
import { z } from 'zod';
import { builtinUnitSettings } from '../host-config/units';
import { durationPattern } from '../duration';
import { idempotencyKeySchema, idOf, labelKeySchema, tenantIdSchema } from './common';
import { wipeFallbackModes, wipeModes } from './disk-wipe';

/** A pool's host config unit: replaces the profile's unit of that concern (null: no override). */
const poolUnit = <S extends z.ZodObject>(settings: S) =>
  settings
    .extend({ when: z.string().min(1).max(512).optional() })
    .nullable()
    .optional();
const poolUnitFields = {
  hugepages: poolUnit(builtinUnitSettings.hugepages),
  kernelModules: poolUnit(builtinUnitSettings['kernel-modules']),
  cpu: poolUnit(builtinUnitSettings.cpu),
  iommu: poolUnit(builtinUnitSettings.iommu),
  gpu: poolUnit(builtinUnitSettings.gpu),
  kubernetes: poolUnit(builtinUnitSettings.kubernetes),
  /** For a pool shared by mps or timeslice. */
  gpuSharing: poolUnit(builtinUnitSettings['gpu-sharing']),
};

export const imageRefSchema = z
  .string()
  .max(200)
  .regex(/^[a-z0-9][a-z0-9._/-]*@[A-Za-z0-9][A-Za-z0-9._+-]*$/, 'an image ref is name@version, e.g. ubuntu-24.04@2025.06.1');

export const acceptanceCheckSchema = z
  .object({
    name: labelKeySchema,
    timeoutSeconds: z.number().int().min(1).max(86_400).default(600),
    params: z.record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()])).optional(),
  })
  .strict();

/**
 * What metal-retire's wipe does (docs/wiping.md): `mode` on every disk; a disk whose drive
 * cannot gets `fallback` instead, or, with 'fail', the retire fails naming the disk.
 */
export const retireWipeSchema = z
  .object({
    mode: z.enum(wipeModes).default('crypto-erase'),
    fallback: z.enum([...wipeFallbackModes, 'fail']).default('fail'),
  })
  .strict()
  .refine((w) => w.fallback === 'fail' || w.mode === 'crypto-erase' || (w.mode === 'secure-erase' && w.fallback === 'quick'), {
    path: ['fallback'],
    message: 'a fallback must be a weaker wipe than the mode (crypto-erase → secure-erase or quick, secure-erase → quick), or fail',
  });
export type RetireWipe = z.infer<typeof retireWipeSchema>;

/** `{ "<step use>": "<duration>" }`: the state workflows' step timeouts for this pool's machines (profiles/pool-step-timeouts.ts). */
const stepTimeoutsSchema = z
  .record(
    z
      .string()
      .max(64)
      .regex(/^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/, 'a step name, e.g. metal.ensureRamdisk'),
    z.string().regex(durationPattern, "a duration, e.g. '30s', '15m', '2h'"),
  )
  .refine((timeouts) => Object.keys(timeouts).length <= 32, 'at most 32 step timeouts');

export const poolPolicySchema = z
  .object({
    hardwareProfile: labelKeySchema.optional(),
    /** name@version refs the site's cache pre-warms. */
    prewarmImages: z.array(imageRefSchema).max(64).default([]),
    /** Bind PXE-discovered MACs without metal.confirmMac: only on a network no untrusted host reaches. */
    trustProvisioningNetwork: z.boolean().default(false),
    /** 'none': the machines never run our agent; out-of-band profiles only. */
    agent: z.enum(['ironflow', 'none']).default('ironflow'),
    acceptanceChecks: z.array(acceptanceCheckSchema).max(32).default([]),
    stepTimeouts: stepTimeoutsSchema.default({}),
    /** Count the machine emulator's reports (DCGM marked `emulated`) as the machines' own: test and demo pools only. */
    allowEmulatedMachines: z.boolean().default(false),
    retireWipe: retireWipeSchema.default({ mode: 'crypto-erase', fallback: 'fail' }),
    ...poolUnitFields,
  })
  .strict();
export type PoolPolicy = z.infer<typeof poolPolicySchema>;

/** A policy change: the given fields replace the stored ones. */
export const poolPolicyPatchSchema = z
  .object({
    hardwareProfile: labelKeySchema.nullable().optional(),
    prewarmImages: z.array(imageRefSchema).max(64).optional(),
    trustProvisioningNetwork: z.boolean().optional(),
    agent: z.enum(['ironflow', 'none']).optional(),
    acceptanceChecks: z.array(acceptanceCheckSchema).max(32).optional(),
    stepTimeouts: stepTimeoutsSchema.optional(),
    allowEmulatedMachines: z.boolean().optional(),
    retireWipe: retireWipeSchema.optional(),
    ...poolUnitFields,
  })
  .strict();

export const poolClassSchema = labelKeySchema;

export const poolCreateSchema = z
  .object({
    tenantId: tenantIdSchema,
    siteId: idOf('site'),
    class: poolClassSchema,
    policy: poolPolicySchema.default(poolPolicySchema.parse({})),
    idempotencyKey: idempotencyKeySchema.optional(),
  })
  .strict();
export type PoolCreateInput = z.infer<typeof poolCreateSchema>;

export const poolParamsSchema = z.object({ poolId: idOf('pool') });

export const poolUpdateSchema = z
  .object({
    tenantId: tenantIdSchema,
    class: poolClassSchema.optional(),
    policy: poolPolicyPatchSchema.optional(),
    version: z.number().int().min(1).optional(),
  })
  .strict();
export type PoolUpdateInput = z.infer<typeof poolUpdateSchema>;

export const poolListQuerySchema = z.object({ tenantId: tenantIdSchema, siteId: idOf('site').optional() });

export const poolSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  siteId: z.string(),
  class: z.string(),
  policy: poolPolicySchema,
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PoolView = z.infer<typeof poolSchema>;
export const poolListSchema = z.object({ pools: z.array(poolSchema) });
