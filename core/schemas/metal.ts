// metal.* inputs and answers (spec 004 "The metal API group"), shared by the API, the CLI
// and OpenAPI. Credentials are inputs only: no answer carries them.
import { z } from 'zod';
import { driverConcerns } from '../metal/hardware-profiles';
import { provisionStates, type ApiVerb } from '../provision-states';
import { bmcDriverNames, bmcTargetSchema, powerActions } from './bmc';
import { wipeModes } from './disk-wipe';
import { idempotencyKeySchema, idOf, labelKeySchema, labelsSchema, macSchema, tenantIdSchema } from './common';
import { profileIdSchema, profileVersionSchema } from './profiles';

export const bmcEnrollSchema = z
  .object({
    driver: z.enum(bmcDriverNames),
    address: z.string().min(1).max(255),
    username: z.string().min(1).max(128),
    password: z.string().min(1).max(256),
    caPem: z
      .string()
      .max(64 * 1024)
      .optional(),
  })
  .strict()
  .superRefine((bmc, ctx) => {
    // A Redfish address may name one system (…/redfish/v1/Systems/<id>: a BMC serving many
    // machines, as the site agent reads it); the rest is checked as a plain BMC address.
    const system = bmc.driver === 'redfish' ? /^(https?:\/\/[^/?#]+)\/redfish\/v1\/Systems\/[^/?#]+\/?$/.exec(bmc.address) : null;
    const address = system ? (system[1] as string) : bmc.address;
    const target = bmcTargetSchema.safeParse({ driver: bmc.driver, address, ...(bmc.caPem && bmc.driver === 'redfish' ? { caPem: bmc.caPem } : {}) });
    if (!target.success) for (const issue of target.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

/** The CPU architectures a machine is enrolled with (its boot firmware follows: core/boot/boot-entry.ts). */
export const machineArchs = ['x86_64', 'aarch64'] as const;
export const metalEnrollSchema = z
  .object({
    tenantId: tenantIdSchema,
    poolId: idOf('pool'),
    bmc: bmcEnrollSchema,
    hardwareProfile: labelKeySchema.optional(),
    drivers: z.partialRecord(z.enum(driverConcerns), labelKeySchema).optional(),
    macs: z.array(macSchema).max(16).optional(),
    productUuid: z
      .string()
      .regex(/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/, 'a UUID')
      .optional(),
    arch: z.enum(machineArchs).default('x86_64'),
    uefi: z.boolean().default(true),
    labels: labelsSchema.optional(),
  })
  .strict();
export type MetalEnrollInput = z.infer<typeof metalEnrollSchema>;

/** Every verb's body: the tenant, and optionally the node version read (a stale one is CONFLICT). */
const verbBase = { tenantId: tenantIdSchema, version: z.number().int().min(1).optional() };
export const metalVerbSchema = z.object(verbBase).strict();
export type MetalVerbInput = z.infer<typeof metalVerbSchema>;

/** A release's wipe: one of disk.wipe's modes, or none. */
export const releaseWipes = ['none', ...wipeModes] as const;
export const metalDeploySchema = z.object({ ...verbBase, profileId: profileIdSchema, profileVersion: profileVersionSchema }).strict();
export const metalUndeploySchema = z.object({ ...verbBase, wipe: z.enum(releaseWipes).default('quick') }).strict();
export const abortReasonSchema = z.string().min(1).max(512);
export const metalAbortSchema = z.object({ ...verbBase, reason: abortReasonSchema.default('aborted by an operator') }).strict();
export const metalPowerSchema = z.object({ ...verbBase, action: z.enum(powerActions).exclude(['reset']) }).strict();
/** metal.maintenance: the maintenance axis on or off, and why (recorded with who asked). */
export const metalMaintenanceSchema = z.object({ ...verbBase, on: z.boolean(), reason: z.string().min(1).max(512) }).strict();
export type MetalMaintenanceInput = z.infer<typeof metalMaintenanceSchema>;
export const macSources = ['operator', 'inspection', 'discovered'] as const;
export type MacSource = (typeof macSources)[number];

export const metalConfirmMacSchema = z.object({ tenantId: tenantIdSchema, mac: macSchema }).strict();

export const bulkVerbs = ['manage', 'inspect', 'provide', 'undeploy', 'rescue', 'retire'] as const satisfies readonly ApiVerb[];
export type BulkVerb = (typeof bulkVerbs)[number];
export const MAX_BULK_NODES = 10_000;
export const metalBulkSchema = z
  .object({
    tenantId: tenantIdSchema,
    poolId: idOf('pool'),
    verb: z.enum(bulkVerbs),
    /** Repeats are applied once (the run keeps the first place of each). */
    nodeIds: z.array(idOf('node')).min(1).max(MAX_BULK_NODES),
    wipe: z.enum(releaseWipes).optional(),
    /** What approvers of the run's destructive batch read. */
    reason: z.string().min(1).max(512),
    /** A retry under the same key answers the same run; another request under it is CONFLICT. */
    idempotencyKey: idempotencyKeySchema.optional(),
  })
  .strict()
  .refine((b) => b.wipe === undefined || b.verb === 'undeploy', { path: ['wipe'], message: 'only undeploy wipes: leave wipe out for other verbs' });
export type MetalBulkInput = z.infer<typeof metalBulkSchema>;

export const metalNodeParamsSchema = z.object({ nodeId: idOf('node') });
export const metalListQuerySchema = z.object({
  tenantId: tenantIdSchema,
  poolId: idOf('pool').optional(),
  siteId: idOf('site').optional(),
  state: z.enum(provisionStates).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: idOf('node').optional(),
});
export type MetalListQuery = z.infer<typeof metalListQuerySchema>;

export const metalNodeSchema = z.object({
  nodeId: z.string(),
  tenantId: z.string(),
  siteId: z.string(),
  poolId: z.string().nullable(),
  role: z.string(),
  provisionState: z.string().nullable(),
  provisionPhase: z.string().nullable(),
  version: z.number(),
  maintenance: z.boolean(),
  /** Why maintenance is on: an operator's reason, or the failure that set it. */
  maintenanceReason: z.string().nullable(),
  /** Who set it: operator (cleared only by an operator) or failure (cleared by an operator or recover). */
  maintenanceSource: z.enum(['operator', 'failure']).nullable(),
  power: z.string().nullable(),
  bmc: z.object({ driver: z.string().nullable(), address: z.string().nullable(), credentialsSet: z.boolean() }),
  macs: z.array(z.string()),
  /** Where `macs` came from: operator (enroll, metal.confirmMac), inspection, or discovered (policy.trustProvisioningNetwork). */
  macSource: z.enum(macSources).nullable(),
  /** A PXE-discovered candidate awaiting metal.confirmMac. */
  discoveredMac: z.string().nullable(),
  productUuid: z.string().nullable(),
  arch: z.string().nullable(),
  uefi: z.boolean(),
  hardwareProfile: z.string().nullable(),
  driverBindings: z.record(z.string(), z.object({ driver: z.string(), config: z.record(z.string(), z.string()).optional() })),
  labels: z.record(z.string(), z.string()),
  deployProfile: z.object({ id: z.string(), version: z.number() }).nullable(),
  releaseWipe: z.string().nullable(),
  workflowId: z.string().nullable(),
  failedFrom: z.string().nullable(),
  lastError: z.object({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MetalNodeView = z.infer<typeof metalNodeSchema>;
export const metalNodeListSchema = z.object({ nodes: z.array(metalNodeSchema), nextCursor: z.string().nullable() });

/**
 * A bulk run's node: pending until the workflow decides it; accepted (the verb moved the node:
 * its lifecycle now runs the chain), refused (the verb's own refusal: INVALID_STATE, CONFLICT…),
 * failed (the verb could not be applied: an error that is no refusal, after retries), or
 * cancelled (the run was cancelled before it got there).
 */
export const bulkOutcomes = ['pending', 'accepted', 'refused', 'failed', 'cancelled'] as const;
export type BulkOutcome = (typeof bulkOutcomes)[number];
export const bulkRunStatuses = ['running', 'finished', 'cancelled'] as const;

export const metalBulkParamsSchema = z.object({ bulkId: idOf('bulkRun') });
export const metalBulkCancelSchema = z.object({ tenantId: tenantIdSchema }).strict();
export const metalBulkQuerySchema = z.object({
  tenantId: tenantIdSchema,
  outcome: z.enum(bulkOutcomes).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** The nextCursor of the page before (a place in the run). */
  cursor: z.coerce.number().int().min(0).max(MAX_BULK_NODES).optional(),
});

export const metalBulkRunSchema = z.object({
  bulkId: z.string(),
  tenantId: z.string(),
  poolId: z.string(),
  verb: z.enum(bulkVerbs),
  wipe: z.string().nullable(),
  reason: z.string(),
  /** The credential that asked. */
  actorId: z.string(),
  status: z.enum(bulkRunStatuses),
  total: z.number(),
  counts: z.record(z.enum(bulkOutcomes), z.number()),
  workflowId: z.string(),
  cancelRequestedAt: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type MetalBulkRunView = z.infer<typeof metalBulkRunSchema>;

export const bulkNodeOutcomeSchema = z.object({
  seq: z.number(),
  nodeId: z.string(),
  outcome: z.enum(bulkOutcomes),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  decidedAt: z.string().nullable(),
  /** The node's state now (read when asked): where an accepted node's chain has got to. */
  provisionState: z.string().nullable(),
});
export const metalBulkPageSchema = metalBulkRunSchema.extend({ outcomes: z.array(bulkNodeOutcomeSchema), nextCursor: z.string().nullable() });
export type MetalBulkPage = z.infer<typeof metalBulkPageSchema>;
