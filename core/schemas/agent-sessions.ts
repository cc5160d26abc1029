// An agent's session: each heartbeat answers with what the agent must know (its site spec,
// its boot lease state, when to renew its certificate).
import { z } from 'zod';

export const heartbeatSchema = z
  .object({
    /** Free-form agent facts for operators (version, hostname); bounded. */
    agentVersion: z.string().max(64).optional(),
    hostname: z.string().max(253).optional(),
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
    })
    .nullable(),
  /** A node agent's desired host state (Node.hostSpec: core/host-config/host-spec.ts); null for other roles. */
  host: z.object({ spec: z.record(z.string(), z.unknown()).nullable() }).nullable().optional(),
});
export type SessionAnswer = z.infer<typeof sessionAnswerSchema>;
