// PXE discovery (spec 001, "Discovering new machines"): one machine of a site agent's
// discovered list as its heartbeat reports it, and the site's merged list as
// metal.discovered answers it. The list comes from unauthenticated DHCP and HTTP, so every
// field is bounded and only well-formed values pass.
import { z } from 'zod';
import { macSchema } from './common';

/** The most machines one report carries (the agent's own bound, spec 001). */
export const MAX_DISCOVERED_ENTRIES = 256;
/** A sighting count stays a 32-bit integer, however long a machine keeps asking. */
export const MAX_DISCOVERED_COUNT = 2_147_483_647;

export const discoveredArchSchema = z.string().regex(/^[a-z0-9_-]{1,32}$/, 'an architecture name such as x86_64_efi');
/** Canonical only: 36 characters, lower case (the agent keeps nothing else). */
export const discoveredUuidSchema = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a canonical lower-case UUID');

export const discoveryEntrySchema = z
  .object({
    mac: macSchema,
    productUuid: discoveredUuidSchema.nullable(),
    arch: discoveredArchSchema,
    firstSeen: z.iso.datetime(),
    lastSeen: z.iso.datetime(),
    count: z.number().int().min(1).max(MAX_DISCOVERED_COUNT),
    /** The DHCP relay (giaddr) it came through. */
    relay: z.ipv4().nullable(),
  })
  .strict();
export type DiscoveryEntry = z.infer<typeof discoveryEntrySchema>;

export const discoveryReportSchema = z.array(discoveryEntrySchema).max(MAX_DISCOVERED_ENTRIES);

/** One MAC seen at the site in the last 24 h, merged over the site's agents. */
export const discoveredMachineSchema = z.object({
  mac: z.string(),
  productUuid: z.string().nullable(),
  arch: z.string(),
  firstSeen: z.string(),
  lastSeen: z.string(),
  /** Summed over the agents that saw it. */
  count: z.number().int(),
  relays: z.array(z.string()),
  agentNodeIds: z.array(z.string()),
  /** The enrolled machine that has this MAC. */
  nodeId: z.string().optional(),
  /** The machine this MAC is the candidate of, awaiting metal.confirmMac. */
  candidateFor: z.string().optional(),
});
export type DiscoveredMachine = z.infer<typeof discoveredMachineSchema>;

/** metal.discovered's answer: newest lastSeen first, at most MAX_DISCOVERED_ENTRIES. */
export const discoveredListSchema = z.object({ items: z.array(discoveredMachineSchema) });
