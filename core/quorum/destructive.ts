// Which commands the destructive-batch quorum covers (spec 001 "The site agent", spec 004):
// every BMC command but a query, site.httpProxy, wipes and deploys. The agents check these
// kinds before running them; the control plane maps a plan's steps onto the kinds they send,
// so a workflow's batch names exactly what it may do.

/** Command kinds an agent runs only inside an approved batch (when its site pins a quorum policy). */
export const DESTRUCTIVE_KINDS = [
  'bmc.boot',
  'bmc.power',
  'bmc.rotate',
  'bmc.firmware',
  'bmc.storage',
  'site.httpProxy',
  // The engine's names of BMC commands (power, boot device, virtual media).
  'power.setPower',
  'management.setBootDevice',
  'media.insert',
  'media.eject',
  // Ramdisk.
  'disk.wipe',
  'deploy.image',
] as const;
export type DestructiveKind = (typeof DESTRUCTIVE_KINDS)[number];

export const isDestructiveKind = (kind: string): kind is DestructiveKind => (DESTRUCTIVE_KINDS as readonly string[]).includes(kind);

/** What metal.ensureRamdisk's boot sends the BMC: one by one, or together as boot.pxeBoot. */
const PXE_BOOT_SENDS: readonly DestructiveKind[] = ['management.setBootDevice', 'power.setPower'];

/**
 * Steps that send destructive commands under another name, by the kinds they send: control
 * steps that relay through an agent, and the site agent's boot.pxeBoot (checked for each).
 */
const RELAYED: Record<string, readonly DestructiveKind[]> = {
  'metal.ensureRamdisk': PXE_BOOT_SENDS,
  'boot.pxeBoot': PXE_BOOT_SENDS,
  'deploy.deploy': ['deploy.image'],
};

/** The destructive kinds a step or command sends: its own `use`, or what it relays. */
export function destructiveKindsOfStep(use: string): DestructiveKind[] {
  if (isDestructiveKind(use)) return [use];
  return [...(RELAYED[use] ?? [])];
}

/** Every destructive kind a list of step uses sends, sorted and once each. */
export function destructiveKindsOf(uses: Iterable<string>): DestructiveKind[] {
  const kinds = new Set<DestructiveKind>();
  for (const use of uses) for (const kind of destructiveKindsOfStep(use)) kinds.add(kind);
  return [...kinds].sort();
}
