// What inspect.oob (the BMC's view) and inventory.refresh (the machine's own view) answer: one
// schema per step, used by the agents to build their answer and by the lifecycle to read it,
// so the two sides cannot drift (a ramdisk answer the lifecycle does not recognise would
// leave node.inventory unset and site.httpProxy without targets).
import { z } from 'zod';

const mac = z.string().max(32);
const ip = z.string().max(45);

export const inspectOobOutputSchema = z.object({
  driver: z.string().max(32),
  power: z.string().max(16),
  macs: z.array(mac).max(64),
  productUuid: z.string().max(64).optional(),
  /** When the driver can tell (Redfish ProcessorSummary); otherwise the node keeps its own. */
  arch: z.enum(['x86_64', 'aarch64']).optional(),
  ips: z.array(ip).max(64),
});
export type InspectOobOutput = z.infer<typeof inspectOobOutputSchema>;

export const inventorySectionsSchema = z.object({
  system: z.object({
    productUuid: z.string().max(64).nullable(),
    vendor: z.string().max(256),
    model: z.string().max(256),
    serial: z.string().max(256),
    arch: z.string().max(32),
    uefi: z.boolean(),
    cpus: z.number().int().min(0),
    memoryBytes: z.number().int().min(0),
  }),
  nics: z.array(z.object({ mac, ip: ip.nullable() })).max(64),
  disks: z.array(z.object({ name: z.string().max(64), sizeBytes: z.number().int().min(0) })).max(256),
  gpus: z.array(z.object({ model: z.string().max(256), uuid: z.string().max(128) })).max(64),
});
export type InventorySections = z.infer<typeof inventorySectionsSchema>;

export const inventoryOutputSchema = z.object({ sections: inventorySectionsSchema, collectedAt: z.string().max(64) });
export type InventoryOutput = z.infer<typeof inventoryOutputSchema>;

/** What node.inventory holds: the machine's sections and every address it is known by. */
export type NodeInventory = InventorySections & { ips: string[] };
