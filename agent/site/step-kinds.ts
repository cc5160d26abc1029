// The step kinds a site agent runs: role-restricted to `site` (spec 001, "The site
// agent"), plus the engine's site steps power.setPower and management.setBootDevice. The
// worker registers exactly these; any other activity sent to its queue is refused.
export const SITE_STEP_KINDS = [
  'bmc.query',
  'bmc.boot',
  'bmc.power',
  'bmc.rotate',
  'bmc.firmware',
  'bmc.storage',
  'boot.prepareRamdisk',
  'boot.cleanUp',
  'site.httpProxy',
  'inventory.refresh',
  'logs.collect',
  'node.reboot',
  'power.setPower',
  'management.setBootDevice',
  'inspect.oob',
  'media.insert',
  'media.eject',
] as const;

export type SiteStepKind = (typeof SITE_STEP_KINDS)[number];

export const isSiteStepKind = (name: string): name is SiteStepKind => (SITE_STEP_KINDS as readonly string[]).includes(name);
