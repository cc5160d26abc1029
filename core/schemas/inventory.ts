// What inspect.oob (the BMC's view) and inventory.refresh (the machine's own view: the
// ramdisk's or the node agent's) answer: the step registry's output schemas, used by the
// agents to build their answer and by the lifecycle to read it, so the two sides cannot
// drift (a ramdisk answer the lifecycle does not read would leave node.inventory unset and
// site.httpProxy without targets).
import { z } from 'zod';

const mac = z.string().max(32);

/** inventory.refresh's input on the machine: `expect` is the enrolled identity (the lifecycle fills it); another machine fails. */
export const inventoryWithSchema = z
  .object({
    expect: z
      .object({ productUuid: z.string().max(64).optional(), macs: z.array(z.string().max(17)).max(64).optional() })
      .strict()
      .optional(),
  })
  .strict();
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

/** The installed OS's view (node agent): its system, GPUs and the host state its converger reports; no NICs or disks. */
export const nodeInventorySectionsSchema = z.object({
  system: z.object({
    hostname: z.string().max(256),
    productUuid: z.string().max(64).nullable(),
    arch: z.string().max(32),
    cpus: z.number().int().min(0),
    memoryBytes: z.number().int().min(0),
  }),
  gpus: inventorySectionsSchema.shape.gpus,
  host: z.record(z.string(), z.unknown()).nullable(),
});
export const nodeInventoryOutputSchema = z.object({ sections: nodeInventorySectionsSchema, collectedAt: z.string().max(64) });
export type NodeInventoryOutput = z.infer<typeof nodeInventoryOutputSchema>;

/** inventory.refresh's answer from the machine's own agent: the ramdisk's full sections, or the installed OS's. */
export const machineInventoryOutputSchema = z.union([inventoryOutputSchema, nodeInventoryOutputSchema]);

/** The site agent's inventory.refresh (a command kind): the agent's own host. */
export const siteHostInventorySchema = z.object({
  nodeId: z.string().max(64),
  hostname: z.string().max(256),
  platform: z.string().max(32),
  arch: z.string().max(32),
  cpus: z.number().int().min(0),
  memoryBytes: z.number().int().min(0),
  session: z.object({ connected: z.boolean(), active: z.boolean(), epoch: z.number().int().nullable() }),
});

/** What node.inventory holds: the sections its agent reported and every address the node is known by. */
export type NodeInventory = (InventorySections | z.infer<typeof nodeInventorySectionsSchema>) & { ips: string[] };
