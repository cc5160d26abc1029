// An agent's session: each heartbeat answers with what the agent must know (its site spec,
// its boot lease state, when to renew its certificate).
import { z } from 'zod';
import { discoveryReportSchema } from './discovery';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** A site agent's images inventory section: what its cache holds, pulls and failed to pull (bounded). */
export const cacheImageReportSchema = z
  .object({ sha256, state: z.enum(['pulling', 'ready', 'failed']), sizeBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) })
  .strict();
export type CacheImageReport = z.infer<typeof cacheImageReportSchema>;

/** The site section's status as the agent sees it (READY, PROGRESSING while images warm, FAILED naming one). */
export const siteSectionStatusSchema = z.object({ state: z.enum(['READY', 'PROGRESSING', 'FAILED']), message: z.string().max(512) }).strict();
export type SiteSectionStatus = z.infer<typeof siteSectionStatusSchema>;

export const heartbeatSchema = z
  .object({
    /** Free-form agent facts for operators (version, hostname); bounded. */
    agentVersion: z.string().max(64).optional(),
    hostname: z.string().max(253).optional(),
    /** A site agent's cache inventory; absent when the agent has no cache. */
    images: z.array(cacheImageReportSchema).max(1024).optional(),
    siteStatus: siteSectionStatusSchema.optional(),
    /** The agent's first heartbeat since it started (a node agent after a reboot): its running workflows hear it is back. */
    opened: z.boolean().optional(),
    /** The host's boot id (/proc/sys/kernel/random/boot_id) with `opened`: tells a reboot from an agent restart in the event. */
    bootId: z.string().max(64).optional(),
    /** A site agent's PXE clients without a boot entry (spec 001); ignored from other roles. */
    discovered: discoveryReportSchema.optional(),
  })
  .strict()
  .default({});

export const bootLeaseViewSchema = z.object({
  active: z.boolean(),
  epoch: z.number().int(),
  holderNodeId: z.string().nullable(),
  expiresAt: z.string().nullable(),
});

export const sessionAnswerSchema = z.object({
  nodeId: z.string(),
  role: z.string(),
  siteId: z.string().nullable(),
  taskQueue: z.string(),
  heartbeatIntervalMs: z.number().int(),
  certificate: z.object({ serial: z.string(), notAfter: z.string(), renewAfter: z.string() }),
  site: z
    .object({
      bootLease: bootLeaseViewSchema,
      cacheImages: z.array(z.object({ url: z.string(), sha256: z.string(), format: z.string() })),
      /** Digests deploys at the site stream (pinned): the agent never evicts them. Absent from older control planes. */
      pinnedImages: z.array(z.string()).optional(),
    })
    .nullable(),
  /** A node agent's desired host state (Node.hostSpec: core/host-config/host-spec.ts); null for other roles. */
  host: z
    .object({ spec: z.record(z.string(), z.unknown()).nullable() })
    .nullable()
    .optional(),
});
export type SessionAnswer = z.infer<typeof sessionAnswerSchema>;
