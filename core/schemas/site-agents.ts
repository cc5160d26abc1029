// What sites.get adds about a site's agents and its boot lease (spec 001, "One active
// boot server per site").
import { z } from 'zod';
import { siteSectionStatusSchema } from './agent-sessions';

export const siteAgentViewSchema = z.object({
  nodeId: z.string(),
  /** A heartbeat within the last 15 s. */
  connected: z.boolean(),
  lastSeenAt: z.string(),
  /** Holds the live boot lease. */
  bootServer: z.boolean(),
  /** Its site section as it last reported it: READY, PROGRESSING while cache images warm, FAILED naming one. */
  siteStatus: siteSectionStatusSchema.nullable(),
});

export const siteBootLeaseViewSchema = z.object({
  holderNodeId: z.string().nullable(),
  epoch: z.number().int(),
  expiresAt: z.string().nullable(),
  live: z.boolean(),
});

export const siteAgentsSchema = z.object({
  agents: z.array(siteAgentViewSchema),
  bootLease: siteBootLeaseViewSchema.nullable(),
});
export type SiteAgents = z.infer<typeof siteAgentsSchema>;
